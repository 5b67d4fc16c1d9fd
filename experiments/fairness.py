"""Fairness between the clients of one trial: each one's share of the total, and for
fixed-size work who finished first and last.

A trial runs the same workload on every client at once, so an even path gives each of
``n`` clients about ``1/n`` of the total (bytes after the warm-up, or operations for the
phased workloads), and a phased workload (a fixed amount of work per client) ends at
about the same time on each. The figures: each client's share, the largest share over
the smallest (``ratio``; None when a client moved nothing), Jain's index
``(Σx)² / (n·Σx²)`` (1: even, 1/n: one client got it all), and for fixed-size work the
first and last client's time to finish and their ratio.

The noise rule ("differ by more than the noise"): ``noise_cv`` is the clients' pooled
within-client noise, the root mean square of each client's coefficient of variation of
its per-interval rate (over the measured window; for phased workloads within each phase,
whose rates differ by nature), floored at ``MIN_NOISE_CV``. A trial is **uneven** when
some client's share lies outside the equal share ``1/n × (1 ± 2 × noise_cv)``, and
**late** when the last client took longer than ``1 + 2 × noise_cv`` times the first. A
per-interval CV is far wider than the noise of a whole run's share, so the rule is
conservative: what it calls beyond the noise is. Without a measurable noise (fewer than
``MIN_INTERVALS`` intervals for every client) neither is claimed. Across repeated runs a
configuration's clients count as unfair only when every run that measured it says so
(``consistent``).

Figures come from hosts: anything missing, negative or non-finite counts as nothing
and never raises.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from experiments.agent_protocol import AgentSummary
from experiments.samples import Sample

MIN_NOISE_CV = 0.02  # even a smooth run needs a 4 % difference before it counts
MIN_INTERVALS = 3  # a client's rate needs this many intervals to have a CV
NOISE_RULE = "a client's share outside the equal share × (1 ± 2 × the clients' pooled per-interval CV)"
LATE_RULE = "the last client took longer than 1 + 2 × that CV times the first"


def _amount(value: Any) -> float:
    """A host's figure as a finite, non-negative number; anything else is nothing."""
    return _figure(value) or 0.0


def _figure(value: Any) -> float | None:
    """A finite, non-negative number, or None."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    return float(value) if ok else None


def _cv(values: Sequence[float]) -> float | None:
    if len(values) < MIN_INTERVALS:
        return None
    mean = sum(values) / len(values)
    if mean <= 0:
        return None
    var = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    return math.sqrt(var) / mean


def pooled_cv(groups: Iterable[Sequence[float]]) -> float | None:
    """Root mean square of the groups' CVs (those with enough positive intervals); None when none has."""
    cvs = [c for g in groups if (c := _cv([_amount(v) for v in g])) is not None and math.isfinite(c)]
    return math.sqrt(sum(c * c for c in cvs) / len(cvs)) if cvs else None


@dataclass(frozen=True, slots=True)
class Fairness:
    """One trial's fairness figures (see the module docstring for the rule)."""

    basis: str  # "bytes" or "ops": what the shares are of
    shares: dict[str, float]  # client -> share of the total (they sum to 1)
    ratio: float | None  # largest share / smallest; None when a client moved nothing
    jain: float  # Jain's fairness index, 1/n … 1
    noise_cv: float | None  # the pooled within-client CV the rule used; None: not measurable
    uneven: bool  # a share beyond the noise
    first_done_s: float | None = None  # fixed-size work: the first client to finish
    last_done_s: float | None = None
    done_ratio: float | None = None  # last / first
    late: bool = False  # the last client beyond the noise after the first

    @property
    def lowest(self) -> str:
        """The client with the smallest share."""
        return min(sorted(self.shares), key=lambda c: self.shares[c])

    def to_json(self) -> dict[str, Any]:
        return {"basis": self.basis, "shares": dict(self.shares), "ratio": self.ratio, "jain": self.jain,
                "noise_cv": self.noise_cv, "uneven": self.uneven, "first_done_s": self.first_done_s,
                "last_done_s": self.last_done_s, "done_ratio": self.done_ratio, "late": self.late}  # fmt: skip

    @classmethod
    def from_json(cls, data: Any) -> Fairness | None:
        """A stored trial's figures; None for older trials or anything malformed."""
        if not isinstance(data, Mapping) or not isinstance(data.get("shares"), Mapping):
            return None
        shares = {str(k): _amount(v) for k, v in data["shares"].items()}
        if len(shares) < 2:
            return None
        def opt(key: str) -> float | None:
            return _figure(data.get(key))

        return cls(basis=str(data.get("basis", "bytes")), shares=shares, ratio=opt("ratio"),
                   jain=opt("jain") or 0.0, noise_cv=opt("noise_cv"), uneven=data.get("uneven") is True,
                   first_done_s=opt("first_done_s"), last_done_s=opt("last_done_s"),
                   done_ratio=opt("done_ratio"), late=data.get("late") is True)  # fmt: skip


def fairness(amounts: Mapping[str, Any], noise_cv: float | None, basis: str = "bytes",
             done_s: Mapping[str, Any] | None = None) -> Fairness | None:  # fmt: skip
    """The figures from each client's total (``amounts``) and, for fixed-size work, its time to
    finish (``done_s``); None with fewer than two clients or nothing moved at all."""
    x = {str(c): _amount(v) for c, v in amounts.items()}
    total = sum(x.values())
    if len(x) < 2 or total <= 0 or not math.isfinite(total):
        return None
    n = len(x)
    shares = {c: v / total for c, v in x.items()}
    low, high = min(shares.values()), max(shares.values())
    jain = 1.0 / (n * sum(v * v for v in shares.values()))  # (Σx)²/(n·Σx²), from the shares: no overflow
    noise = max(cv, MIN_NOISE_CV) if (cv := _figure(noise_cv)) is not None else None
    uneven = noise is not None and any(abs(s * n - 1.0) > 2.0 * noise for s in shares.values())
    first = last = ratio_done = None
    late = False
    times = [t for t in (_amount(v) for v in (done_s or {}).values()) if t > 0]
    if done_s is not None and len(times) == n:  # every client must have finished to compare
        first, last = min(times), max(times)
        ratio_done = last / first
        late = noise is not None and ratio_done > 1.0 + 2.0 * noise
    return Fairness(basis, shares, high / low if low > 0 else None, jain, noise, uneven, first, last, ratio_done, late)


def run_fairness(summaries: Mapping[str, AgentSummary | None], samples: Sequence[Sample], *, phased: bool,
                 warmup_s: float = 0.0) -> Fairness | None:  # fmt: skip
    """One run's figures from the clients' summaries and per-interval samples.

    Throughput workloads: bytes each client moved after the warm-up (its summary's rate when
    it sent no samples), noise from its per-interval rate. Phased workloads: each client's
    operations and the sum of its phases' times, noise within each phase.
    """
    got = {c: s for c, s in summaries.items() if s is not None}
    groups: dict[tuple[str, str], list[float]] = {}
    moved: dict[str, float] = {}
    for s in samples:
        if s.client not in got or (not phased and s.t <= warmup_s):
            continue
        rate = s.ops_per_s if phased else s.throughput_bps
        groups.setdefault((s.client, s.phase if phased else ""), []).append(rate)
        moved[s.client] = moved.get(s.client, 0.0) + _amount(s.bytes_read) + _amount(s.bytes_written)
    noise = pooled_cv(groups.values())
    if phased:
        amounts = {c: sum(_amount(p.get("ops")) for p in s.phases.values()) for c, s in got.items()}
        done = {c: sum(_amount(p.get("seconds")) for p in s.phases.values()) for c, s in got.items()}
        return fairness(amounts, noise, "ops", done)
    amounts = {c: moved.get(c, s.throughput_bps) for c, s in got.items()}
    return fairness(amounts, noise, "bytes")


@dataclass(frozen=True, slots=True)
class ConfigFairness:
    """A configuration's fairness over the runs that measured it."""

    runs: int  # runs with figures
    shares: dict[str, float]  # each client's mean share over them
    uneven_runs: int  # runs whose shares were beyond the noise
    late_runs: int
    lowest: str | None  # the client with the smallest share in every uneven run; None: it changed
    done_ratio: float | None  # mean last/first over the runs with fixed-size times
    noise_cv: float | None  # the widest noise any run used

    @property
    def consistent(self) -> bool:
        """Beyond the noise in every run, with the same client last."""
        return self.runs > 0 and self.uneven_runs == self.runs and self.lowest is not None

    @property
    def consistently_late(self) -> bool:
        return self.runs > 0 and self.late_runs == self.runs


def config_fairness(runs: Sequence[Fairness | None]) -> ConfigFairness | None:
    """The runs' figures together; None when none measured them."""
    got = [f for f in runs if f is not None]
    if not got:
        return None
    clients = sorted({c for f in got for c in f.shares})
    shares = {c: sum(f.shares.get(c, 0.0) for f in got) / len(got) for c in clients}
    uneven = [f for f in got if f.uneven]
    lows = {f.lowest for f in uneven}
    ratios = [f.done_ratio for f in got if f.done_ratio is not None]
    noises = [f.noise_cv for f in got if f.noise_cv is not None]
    return ConfigFairness(
        runs=len(got), shares=shares, uneven_runs=len(uneven), late_runs=sum(f.late for f in got),
        lowest=lows.pop() if len(lows) == 1 else None, done_ratio=sum(ratios) / len(ratios) if ratios else None,
        noise_cv=max(noises) if noises else None,
    )
