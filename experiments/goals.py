"""What the recommendation optimises: the most throughput, under a p99 limit, or the lowest p99 at a load.

Chosen with the plan (the Plan page, ``nfs-tuner sweep --goal … --p99-max-ms X --load-iops N``)
and stored with it, so a session reviewed later is judged by the goal it ran for.

- ``throughput``: the most sustainable throughput (the default, and every older session's).
- ``p99_cap``: the most throughput among the configurations whose p99 stays at or under
  ``p99_max_ms``; the others are left out of the choice, and when none stays under it
  nothing is recommended.
- ``lowest_p99``: the lowest p99 at a given load. With ``load_iops`` each client's workload
  is held to that many operations per second (the agent's and fio's rate cap), so every
  configuration serves the same load and a configuration that cannot carry it is left out;
  without it the load is the plan's own: its jobs per client × its clients, unthrottled.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

MAX_P99_MS = 3.6e6  # an hour: a limit above it limits nothing
MAX_LOAD_IOPS = 1e7


class GoalKind(StrEnum):
    THROUGHPUT = "throughput"
    P99_CAP = "p99_cap"
    LOWEST_P99 = "lowest_p99"


GOALS: tuple[str, ...] = tuple(g.value for g in GoalKind)


def _positive(value: float | None, name: str, most: float) -> None:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if value is not None and not (number and math.isfinite(value) and 0 < value <= most):
        raise ValueError(f"{name} must be a finite number above 0 and at most {most:g}, got {value!r}")


@dataclass(frozen=True, slots=True)
class Goal:
    kind: GoalKind = GoalKind.THROUGHPUT
    p99_max_ms: float | None = None  # p99_cap: the limit
    load_iops: float | None = None  # lowest_p99: operations per second per client; None: the plan's own load

    def __post_init__(self) -> None:
        if self.kind not in GOALS:
            raise ValueError(f"unknown goal {self.kind!r:.40}; choose one of {', '.join(GOALS)}")
        object.__setattr__(self, "kind", GoalKind(self.kind))
        _positive(self.p99_max_ms, "the p99 limit (ms)", MAX_P99_MS)
        _positive(self.load_iops, "the load (operations per second per client)", MAX_LOAD_IOPS)
        if self.kind is GoalKind.P99_CAP and self.p99_max_ms is None:
            raise ValueError("the goal p99_cap needs a p99 limit in ms (--p99-max-ms)")
        if self.kind is not GoalKind.P99_CAP and self.p99_max_ms is not None:
            raise ValueError(f"a p99 limit belongs to the goal p99_cap, not {self.kind.value}")
        if self.kind is not GoalKind.LOWEST_P99 and self.load_iops is not None:
            raise ValueError(f"a load (ops/s per client) belongs to the goal lowest_p99, not {self.kind.value}")

    @property
    def latency(self) -> bool:
        """Whether the goal judges by p99 at all."""
        return self.kind is not GoalKind.THROUGHPUT

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "p99_max_ms": self.p99_max_ms, "load_iops": self.load_iops}

    @classmethod
    def from_json(cls, value: Any) -> Goal:
        """A stored goal; the default (throughput) for a session that has none. ValueError for a damaged one."""
        if value is None:
            return cls()
        if not isinstance(value, Mapping):
            raise ValueError(f"a goal is an object, got {value!r:.60}")
        return cls(value.get("kind", GoalKind.THROUGHPUT), value.get("p99_max_ms"), value.get("load_iops"))

    @classmethod
    def stored(cls, value: Any) -> Goal:
        """A goal read back from a session: the default (throughput) for a missing or damaged one."""
        try:
            return cls.from_json(value)
        except ValueError:
            return cls()
