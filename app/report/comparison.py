"""Two sessions side by side (e.g. before and after a server change), per objective and configuration.

Each row compares the per-repetition means of the ok trials (experiments.statistics.compare,
Welch): the difference is B − A, and "beyond noise" means its interval excludes zero.
A row per objective compares the two sessions' best configurations. Beside the means, each
side's p99: every operation of the configuration's ok runs in one histogram (None where the
session kept no latency).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.recommend.goal_rule import config_latency
from app.recommend.objectives import OBJECTIVES, objective_of
from app.recommend.ranking import config_key
from app.report.session_data import ok_means, trial_latency
from app.store.records import TrialRecord
from app.store.states import TrialState
from app.vocabulary import config_text, unit_of
from experiments.statistics import Comparison, compare, estimate


@dataclass(frozen=True, slots=True)
class Side:
    n: int
    mean: float | None
    half_width: float | None  # None: fewer than two runs


@dataclass(frozen=True, slots=True)
class ComparisonRow:
    objective: str
    label: str  # "best" or the configuration's text
    config_a: dict[str, Any] | None
    config_b: dict[str, Any] | None
    a: Side
    b: Side
    diff: float | None  # B − A, in the objective's unit (app.vocabulary.unit_of)
    rel: float | None  # diff / A
    low: float | None  # the difference's interval (None: too few runs)
    high: float | None
    beyond_noise: bool | None  # None: one side missing
    p99_a: float | None = None  # ms, over the side's ok runs; None: not measured
    p99_b: float | None = None

    @property
    def unit(self) -> str:
        return unit_of(self.objective)

    @property
    def verdict(self) -> str:
        if self.beyond_noise is None:
            return "only in A" if self.b.n == 0 else "only in B" if self.a.n == 0 else "—"
        if self.low is None:
            return "too few runs to tell"
        if not self.beyond_noise:
            return "within noise"
        return "B faster, beyond noise" if (self.diff or 0) > 0 else "B slower, beyond noise"


def _side(values: Sequence[float]) -> Side:
    if not values:
        return Side(0, None, None)
    e = estimate(values)
    return Side(e.n, e.mean, e.half_width if math.isfinite(e.half_width) else None)


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _row(objective: str, label: str, ca: dict[str, Any] | None, cb: dict[str, Any] | None,
         a: Sequence[float], b: Sequence[float], p99s: tuple[float | None, float | None] = (None, None)) -> ComparisonRow:
    if not a or not b:
        return ComparisonRow(objective, label, ca, cb, _side(a), _side(b), None, None, None, None, None, *p99s)
    c: Comparison = compare(a, b)
    return ComparisonRow(
        objective, label, ca, cb, _side(a), _side(b), c.diff, _finite(c.rel_diff),
        _finite(c.low), _finite(c.high), c.beyond_noise, *p99s,
    )


def _p99(trials: Sequence[TrialRecord], objective: str, key: str | None) -> float | None:
    """The configuration's p99 over its ok runs' merged histograms."""
    if key is None:
        return None
    lat = config_latency([trial_latency(t) for t in trials if t.state == TrialState.OK
                          and objective_of(t.workload) == objective and config_key(t.config) == key])  # fmt: skip
    return lat.p99_ms if lat is not None else None


def _configs(trials: Sequence[TrialRecord], objective: str) -> dict[str, dict[str, Any]]:
    return {config_key(t.config): dict(t.config) for t in trials if objective_of(t.workload) == objective}


def _best_key(trials: Sequence[TrialRecord], objective: str) -> str | None:
    means = {k: ok_means(trials, objective, k) for k in _configs(trials, objective)}
    scored = {k: sum(v) / len(v) for k, v in means.items() if v}
    return max(scored, key=lambda k: scored[k]) if scored else None


def compare_sessions(trials_a: Sequence[TrialRecord], trials_b: Sequence[TrialRecord]) -> list[ComparisonRow]:
    """Rows per objective: first the two bests, then every configuration either session ran."""
    rows: list[ComparisonRow] = []
    present = {objective_of(t.workload) for t in (*trials_a, *trials_b)} - {None}
    for objective in [o for o in OBJECTIVES if o in present]:
        ca, cb = _configs(trials_a, objective), _configs(trials_b, objective)
        ba, bb = _best_key(trials_a, objective), _best_key(trials_b, objective)
        rows.append(_row(
            objective, "best", ca.get(ba) if ba else None, cb.get(bb) if bb else None,
            ok_means(trials_a, objective, ba) if ba else [], ok_means(trials_b, objective, bb) if bb else [],
            (_p99(trials_a, objective, ba), _p99(trials_b, objective, bb)),
        ))
        for key in sorted(ca.keys() | cb.keys()):
            rows.append(_row(objective, config_text(ca.get(key) or cb.get(key) or {}), ca.get(key), cb.get(key),
                             ok_means(trials_a, objective, key), ok_means(trials_b, objective, key),
                             (_p99(trials_a, objective, key), _p99(trials_b, objective, key))))
    return rows
