"""A sweep plan: which knob values to try, on which workloads and clients, how, and how long."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

Value = int | float | str | bool


class Config(Mapping[str, Value]):
    """An immutable, hashable assignment of knob values (order of knobs does not matter)."""

    __slots__ = ("_items",)

    def __init__(self, values: Mapping[str, Value] | None = None, **kw: Value) -> None:
        merged = dict(values or {})
        merged.update(kw)
        self._items: tuple[tuple[str, Value], ...] = tuple(sorted(merged.items()))

    def __getitem__(self, key: str) -> Value:
        for k, v in self._items:
            if k == key:
                return v
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Config):
            return self._items == other._items
        if isinstance(other, Mapping):
            return dict(self._items) == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return "Config(" + ", ".join(f"{k}={v!r}" for k, v in self._items) + ")"

    def with_(self, **changes: Value) -> Config:
        return Config(dict(self._items), **changes)

    def replace(self, knob: str, value: Value) -> Config:
        return Config({**dict(self._items), knob: value})


STRATEGIES = ("guided", "grid", "ofat", "adaptive")


@dataclass(frozen=True, slots=True)
class Timing:
    """Seconds one trial costs besides measuring, and the measuring bounds."""

    # around the measuring: apply and read back, a mount when one is needed, drop caches, start and stop the agents,
    # a read's first layout shared by the trials after it; 4-7 s a trial on the lab (docs/lab.md), less on a LAN
    setup_s: float = 8.0
    warmup_s: float = 5.0
    min_measure_s: float = 15.0  # a steady trial stops here at the earliest
    max_measure_s: float = 60.0  # the cap when it never settles

    def expected_trial_s(self) -> float:
        # Most trials settle well before the cap; plan with the midpoint.
        return self.setup_s + self.warmup_s + (self.min_measure_s + self.max_measure_s) / 2.0

    def worst_trial_s(self) -> float:
        return self.setup_s + self.warmup_s + self.max_measure_s

    def measuring(self, cap_s: float) -> Timing:
        """These bounds with the measuring capped at ``cap_s``: the warm-up at most a quarter of it, and a
        steady trial stopping no later than the cap."""
        return Timing(setup_s=self.setup_s, warmup_s=min(self.warmup_s, cap_s / 4),
                      min_measure_s=min(self.min_measure_s, cap_s), max_measure_s=cap_s)  # fmt: skip


def with_baseline(knobs: Mapping[str, tuple[Value, ...]], baseline: Mapping[str, Value]) -> dict[str, tuple[Value, ...]]:
    """The candidates with each knob's current value among them: what the hosts had is always
    measured, so "keep the current settings" means keep what they had, never a plan's first guess."""
    out: dict[str, tuple[Value, ...]] = {}
    for knob, values in knobs.items():
        base = baseline.get(knob)
        if base is None or base in values:
            out[knob] = tuple(values)
        elif all(isinstance(v, int) for v in (*values, base)):
            out[knob] = tuple(sorted((*values, base)))
        else:
            out[knob] = (*values, base)
    return out


@dataclass(frozen=True, slots=True)
class Plan:
    knobs: Mapping[str, tuple[Value, ...]]  # knob -> candidate values, in their natural order
    workloads: tuple[str, ...] = ("seqread",)
    clients: tuple[str, ...] = ()
    strategy: str = "guided"
    min_runs: int = 3  # repetitions per configuration (RepeatPolicy bounds)
    max_runs: int = 10
    max_rel_stddev: float = 0.035
    time_budget_s: float | None = None
    seed: int = 0
    baseline: Mapping[str, Value] = field(default_factory=dict)  # the hosts' current values
    timing: Timing = Timing()

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {self.strategy!r}; choose one of {', '.join(STRATEGIES)}")
        for knob, values in self.knobs.items():
            if not values:
                raise ValueError(f"knob {knob!r} has no candidate values")
            if len(set(values)) != len(values):
                raise ValueError(f"knob {knob!r} lists a value twice")
        if not self.workloads:
            raise ValueError("a plan needs at least one workload")
        if not 1 <= self.min_runs <= self.max_runs:
            raise ValueError("need 1 <= min_runs <= max_runs")
        object.__setattr__(self, "knobs", with_baseline(self.knobs, self.baseline))

    def searched_knobs(self) -> list[str]:
        """The knobs with more than one candidate, in priority order: a knob held at one value is not searched."""
        return [k for k, v in self.knobs.items() if len(v) > 1]

    @property
    def grid_size(self) -> int:
        return math.prod(len(v) for v in self.knobs.values())

    def start_config(self) -> Config:
        """The baseline where a knob's current value is a candidate, else its middle candidate."""
        out: dict[str, Value] = {}
        for knob, values in self.knobs.items():
            base = self.baseline.get(knob)
            out[knob] = base if base in values else values[(len(values) - 1) // 2]
        return Config(out)

    def to_json(self) -> dict[str, Any]:
        return {
            "knobs": {k: list(v) for k, v in self.knobs.items()},
            "workloads": list(self.workloads),
            "clients": list(self.clients),
            "strategy": self.strategy,
            "min_runs": self.min_runs,
            "max_runs": self.max_runs,
            "max_rel_stddev": self.max_rel_stddev,
            "time_budget_s": self.time_budget_s,
            "seed": self.seed,
            "baseline": dict(self.baseline),
            "timing": {
                "setup_s": self.timing.setup_s,
                "warmup_s": self.timing.warmup_s,
                "min_measure_s": self.timing.min_measure_s,
                "max_measure_s": self.timing.max_measure_s,
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Plan:
        return cls(
            knobs={k: tuple(v) for k, v in data["knobs"].items()},
            workloads=tuple(data.get("workloads", ("seqread",))),
            clients=tuple(data.get("clients", ())),
            strategy=data.get("strategy", "adaptive"),  # sessions before the guided plan searched so
            min_runs=int(data.get("min_runs", 3)),
            max_runs=int(data.get("max_runs", 10)),
            max_rel_stddev=float(data.get("max_rel_stddev", 0.035)),
            time_budget_s=data.get("time_budget_s"),
            seed=int(data.get("seed", 0)),
            baseline=dict(data.get("baseline", {})),
            timing=Timing(**data.get("timing", {})),
        )

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)
