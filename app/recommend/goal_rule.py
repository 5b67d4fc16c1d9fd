"""The goal's part of the choice (experiments.goals): latency per configuration, who the goal leaves out, p99 gains.

A configuration's latency merges the histograms of every run it kept (each already every
client's operations in one), so its p99 is the p99 of all its operations, never an
average of percentiles. The rule that picks among the configurations the goal keeps is
the one of app.recommend.choice; for "lowest p99" it tests the runs' p99s, inverted
(lower is better), on the same log scale with the same pooled noise and Holm correction.
"""

from __future__ import annotations

import math
import statistics as st
from collections.abc import Mapping, Sequence

from experiments.noise import Versus
from app.recommend.model import ConfigResult, Gain, LatencyFigures
from app.vocabulary import OPS, figure_text, latency_text
from experiments.goals import Goal, GoalKind
from experiments.latency import Latency, merge
from experiments.statistics import compare

LOAD_SHARE = 0.9  # served less than this share of the goal's load: the configuration could not carry it
FLOOR_MS = 1e-6  # a p99 of 0 (an empty bucket's edge) inverted
P99_CLAIM = "p99 reduction against the current settings"


def config_latency(runs: Sequence[Latency | None]) -> LatencyFigures | None:
    """One configuration's latency over the runs that measured it; None when none did."""
    got = [r for r in runs if r is not None]
    if not got:
        return None
    merged = Latency.of(merge(r.hist for r in got), max(r.max_ms for r in got))
    if merged is None:  # figures stored without their histogram: the median run's
        return LatencyFigures(len(got), float(st.median(r.p50_ms for r in got)), float(st.median(r.p99_ms for r in got)),
                              float(st.median(r.p999_ms for r in got)), max(r.max_ms for r in got))  # fmt: skip
    return LatencyFigures(len(got), merged.p50_ms, merged.p99_ms, merged.p999_ms, merged.max_ms)


def left_out(goal: Goal, results: Mapping[str, ConfigResult], served: Mapping[str, float | None],
             clients: int) -> dict[str, str]:  # fmt: skip
    """The configurations the goal keeps out of the choice, each with why in words; ``served``: ops/s measured."""
    out: dict[str, str] = {}
    if not goal.latency:
        return out
    asked = goal.load_iops * max(clients, 1) if goal.load_iops else None
    for key, r in results.items():
        if r.latency is None:
            out[key] = "its latency was not measured"
        elif goal.kind is GoalKind.P99_CAP and goal.p99_max_ms is not None and r.latency.p99_ms > goal.p99_max_ms:
            out[key] = f"its p99 {latency_text(r.latency.p99_ms)} exceeds {latency_text(goal.p99_max_ms)}"
        elif asked is not None and (got := served.get(key)) is not None and got < LOAD_SHARE * asked:
            out[key] = (f"it served {figure_text(got, OPS)} of the {figure_text(asked, OPS)} asked: "
                        "it cannot carry the load")
    return out


def inverse_p99s(runs: Sequence[Latency | None]) -> list[float]:
    """The runs' p99s as figures where higher is better, for app.recommend.choice."""
    return [1.0 / max(r.p99_ms, FLOOR_MS) for r in runs if r is not None]


def p99_gain(base: Sequence[Latency | None], best: Sequence[Latency | None], verdict: Versus | None,
             confidence: float) -> Gain:  # fmt: skip
    """The p99 change of ``best`` against ``base`` (negative: lower); the interval and the verdict the rule's."""
    c = compare([r.p99_ms for r in base if r], [r.p99_ms for r in best if r], confidence)
    low = high = None
    if verdict is not None:  # the rule's interval is of the inverse's ratio: turn it back into p99's
        lo_inv, hi_inv = verdict.ratio_interval(confidence)
        if math.isfinite(lo_inv) and math.isfinite(hi_inv) and lo_inv > -1.0:
            low, high = 1.0 / (1.0 + hi_inv) - 1.0, 1.0 / (1.0 + lo_inv) - 1.0
    elif c.a.n >= 2 and c.b.n >= 2 and math.isfinite(c.rel_low) and math.isfinite(c.rel_high):
        low, high = c.rel_low, c.rel_high
    beyond = verdict.beyond_noise if verdict is not None else (c.beyond_noise and c.diff < 0)
    return Gain(diff=c.diff, rel=c.rel_diff if math.isfinite(c.rel_diff) else 0.0, rel_low=low, rel_high=high,
                beyond_noise=beyond)


def goal_claim(goal: Goal) -> str:
    """What the rule's test shows under this goal, in its words."""
    return P99_CLAIM if goal.kind is GoalKind.LOWEST_P99 else "gain over the current settings"
