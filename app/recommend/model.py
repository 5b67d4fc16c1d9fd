"""The recommendation as typed, frozen records that serialise to plain JSON.

Figures are in the objective's unit (app.vocabulary.unit_of): bytes per second for the
streaming objectives, file operations per second for small files, tree and directory
scaling. The field names say "throughput" for both.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from experiments.goals import Goal
from experiments.statistics import Estimate

Knobs = dict[str, Any]  # knob name -> value, as stored with the trials


class Layer(StrEnum):
    """What stops the result from going higher."""

    NETWORK = "network"
    SERVER_DISK = "server_disk"
    NFS_CPU = "nfs_cpu"  # neither ceiling is near: the NFS path itself (threads, RPC, CPU)
    UNKNOWN = "unknown"  # no ceilings were measured


def plain(value: Any) -> Any:
    """asdict output as JSON-native values: tuples become lists, enums their text."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, StrEnum):
        return value.value
    return value


def _finite(x: float | None) -> float | None:
    """JSON has no inf/nan: an unknown bound is stored as null."""
    if x is None or not math.isfinite(x):
        return None
    return x


@dataclass(frozen=True, slots=True)
class Interval:
    """A mean with its confidence interval; half_width None when one run gives no CI."""

    n: int
    mean: float
    stddev: float
    half_width: float | None
    confidence: float

    @classmethod
    def of(cls, e: Estimate) -> Interval:
        return cls(e.n, e.mean, e.stddev, _finite(e.half_width), e.confidence)

    @property
    def rel_half_width(self) -> float | None:
        if self.half_width is None or not self.mean:
            return None
        return self.half_width / abs(self.mean)


@dataclass(frozen=True, slots=True)
class Stability:
    """Across a configuration's trials: typical noise and the worst dips seen."""

    median_cv: float  # median over trials of the within-trial coefficient of variation
    p5_floor: float  # the lowest per-trial p5: the floor the admin can count on (bytes/s)
    deepest_dip: float  # median over trials of 1 - min/median
    dips: float  # median number of dips per trial


@dataclass(frozen=True, slots=True)
class LatencyFigures:
    """A configuration's latency: every operation of every client in every run it kept, in one histogram (ms)."""

    n: int  # runs that measured latency
    p50_ms: float
    p99_ms: float
    p999_ms: float
    max_ms: float


@dataclass(frozen=True, slots=True)
class ConfigResult:
    """One configuration on one objective, over its ok trials."""

    config: Knobs
    trial_ids: tuple[int, ...]
    throughput: Interval  # mean of the trials' means
    sustainable: Interval  # the ranked figure: means penalised by deep dips (see ranking)
    stability: Stability
    rank: int = 0  # 1 = best
    latency: LatencyFigures | None = None  # None: no run measured it (sessions before latency was kept)
    meets_goal: bool = True  # False: the goal leaves it out of the choice (its p99 over the limit, …)


@dataclass(frozen=True, slots=True)
class Gain:
    """Best minus baseline, on the sustainable figure, with a Welch CI."""

    diff: float  # bytes/s
    rel: float  # fraction of the baseline
    rel_low: float | None  # None: too few runs for an interval
    rel_high: float | None
    beyond_noise: bool


@dataclass(frozen=True, slots=True)
class Ceilings:
    """Measured ceilings, as plain numbers in bytes/s (None: not measured).

    The network ceiling of a run is per-client TCP throughput times the clients, capped
    by the server's own NIC figure when one was measured.
    """

    network_per_client_bps: float | None = None
    clients: int = 1
    server_network_bps: float | None = None
    disk_read_bps: float | None = None
    disk_write_bps: float | None = None

    @property
    def network_bps(self) -> float | None:
        if self.network_per_client_bps is None:
            return self.server_network_bps
        total = self.network_per_client_bps * max(self.clients, 1)
        return min(total, self.server_network_bps) if self.server_network_bps else total


@dataclass(frozen=True, slots=True)
class CeilingShare:
    network: float | None  # result / network ceiling
    disk: float | None  # result / server disk ceiling (read or write by objective)
    layer: Layer


@dataclass(frozen=True, slots=True)
class ExcludedTrial:
    trial_id: int
    config: Knobs
    state: str
    reason: str


@dataclass(frozen=True, slots=True)
class ObjectiveRecommendation:
    objective: str
    config: Knobs  # what to apply: the best beyond the noise, else the baseline
    best: ConfigResult
    baseline: ConfigResult | None
    gain: Gain | None
    ceiling: CeilingShare
    evidence: tuple[str, ...]
    ranking: tuple[ConfigResult, ...]
    changed: bool  # False: keep the baseline (no gain beyond the noise)
    # async only when the admin opted in; then the best sync configuration stands beside it
    best_sync: ConfigResult | None = None
    async_gain: Gain | None = None
    warnings: tuple[str, ...] = ()
    unit: str = "B/s"  # "ops/s" for small files, tree and directory scaling
    rule: str = ""  # how the configuration was chosen, in words (app.recommend.choice)
    runner_up: ConfigResult | None = None  # the next candidate, named when it was close
    goal: Goal = field(default_factory=Goal)  # what the choice optimised (experiments.goals)
    met_goal: bool = True  # False: no configuration met the goal, so nothing is recommended (config: keep today's)
    # The plan's one configuration (app.recommend.plan_choice), the same on every objective: its config is
    # the plan's, its gain this workload's confirmed one. None: a session recorded before plans chose one.
    plan: Any = None

    def to_json(self) -> dict[str, Any]:
        out = dict(plain(asdict(self)))
        out["plan"] = self.plan.to_json() if self.plan is not None else None
        return out


@dataclass(frozen=True, slots=True)
class SessionRecommendation:
    session_id: int
    objectives: tuple[ObjectiveRecommendation, ...]
    excluded: tuple[ExcludedTrial, ...]
    ceilings: Ceilings
    allow_async: bool
    notes: tuple[str, ...] = field(default_factory=tuple)

    def for_objective(self, objective: str) -> ObjectiveRecommendation | None:
        return next((o for o in self.objectives if o.objective == objective), None)

    def to_json(self) -> dict[str, Any]:
        return dict(plain(asdict(self)))
