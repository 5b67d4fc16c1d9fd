"""The recommendation under a latency goal (issue 17): a p99 limit, or the lowest p99 at a load.

Synthetic sessions handed straight to the real recommender: each run's figure and its
clients' merged latency histogram in, configuration, ranking and evidence out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from app.recommend.build import TrialFigures, recommend_objective
from app.recommend.model import Ceilings
from app.recommend.telemetry import TelemetryDigest
from app.vocabulary import latency_text
from experiments.goals import Goal, GoalKind
from experiments.latency import Latency, bucket_of_us, upper_ms

MB = 1e6
BASE = {"nfsd_threads": 8}
_ids = iter(range(1, 1_000_000))


def _latency(p50_ms: float, p99_ms: float, ops: int = 1000) -> Latency:
    """A run whose operations take ``p50_ms``, 2 % of them ``p99_ms``: its p99 is ``p99_ms``'s bucket edge."""
    lat = Latency.of({bucket_of_us(p50_ms * 1e3): ops - ops // 50, bucket_of_us(p99_ms * 1e3): ops // 50}, p99_ms)
    assert lat is not None
    return lat


def runs(config: dict[str, Any], values: Sequence[float], p99s: Sequence[float | None],
         ops_per_s: float | None = None) -> list[TrialFigures]:  # fmt: skip
    out = []
    for v, p99 in zip(values, p99s, strict=True):
        i = next(_ids)
        out.append(TrialFigures(i, i, dict(config), v, v, v * 0.95, 0.02, 0.05, 0, TelemetryDigest(),
                                latency=None if p99 is None else _latency(p99 / 4, p99), ops_per_s=ops_per_s))
    return out


def edge(ms: float) -> float:
    """What a p99 of ``ms`` reads as: its bucket's upper edge."""
    return upper_ms(bucket_of_us(ms * 1e3))


CAP = Goal(GoalKind.P99_CAP, p99_max_ms=5.0)


def test_the_throughput_goal_shows_the_latency_change_and_the_configurations_merged_p99() -> None:
    figures = [*runs(BASE, [80 * MB, 81 * MB, 79 * MB], [4.0, 4.0, 4.0]),
               *runs({"nfsd_threads": 64}, [120 * MB, 121 * MB, 119 * MB], [2.0, 2.0, 8.0])]  # fmt: skip
    o = recommend_objective("seq_read", figures, baseline=BASE)
    assert o is not None and o.changed and o.config == {"nfsd_threads": 64}
    best = o.ranking[0]
    assert best.latency is not None and best.latency.n == 3
    # the p99 of all 3000 operations, where 1 run in 3 had an 8 ms tail: 20 ops of 8 ms are 0.67 %, under 1 %
    assert best.latency.p99_ms == pytest.approx(edge(2.0))
    assert best.latency.p999_ms == pytest.approx(8.0)  # capped at the largest latency seen
    # the current settings' p99 is capped at their largest latency (4 ms), the new one's is its bucket's edge
    assert f"Latency against the current settings: p99 {latency_text(4.0)} → {latency_text(edge(2.0))}" in \
        " ".join(o.evidence)  # fmt: skip
    assert any(line.startswith("Latency over 3 run(s), every client's operations in one histogram") for line in o.evidence)


def test_a_p99_limit_leaves_out_the_fastest_configuration_and_says_so() -> None:
    figures = [*runs(BASE, [80 * MB, 81 * MB, 79 * MB], [4.0, 4.2, 3.9]),
               *runs({"nfsd_threads": 64}, [150 * MB, 151 * MB, 149 * MB], [12.0, 11.0, 13.0]),
               *runs({"nfsd_threads": 32}, [120 * MB, 121 * MB, 119 * MB], [3.0, 3.1, 2.9])]  # fmt: skip
    plain = recommend_objective("seq_read", figures, baseline=BASE)
    assert plain is not None and plain.config == {"nfsd_threads": 64}  # without the goal the fastest wins
    o = recommend_objective("seq_read", figures, baseline=BASE, goal=CAP)
    assert o is not None and o.changed and o.met_goal and o.config == {"nfsd_threads": 32}
    assert [(r.config["nfsd_threads"], r.meets_goal) for r in o.ranking] == [(32, True), (8, True), (64, False)]
    assert [r.rank for r in o.ranking] == [1, 2, 3]
    said = " ".join(o.evidence)
    assert "Goal: the most throughput with p99 ≤ 5.00 ms." in said
    assert "Left out of the choice by the goal" in said and "nfsd_threads=64 (its p99 " in said and "exceeds 5.00 ms" in said
    assert o.gain is not None and o.gain.beyond_noise and o.gain.rel > 0.4  # still the rule's tested gain
    assert o.to_json()["goal"] == {"kind": "p99_cap", "p99_max_ms": 5.0, "load_iops": None}


def test_when_no_configuration_meets_the_limit_nothing_is_recommended() -> None:
    figures = [*runs(BASE, [80 * MB, 81 * MB], [9.0, 9.5]), *runs({"nfsd_threads": 64}, [150 * MB, 151 * MB], [12.0, 11.0])]
    o = recommend_objective("seq_read", figures, baseline=BASE, goal=CAP)
    assert o is not None and not o.met_goal and not o.changed and o.gain is None
    assert o.config == BASE  # keep what the hosts have
    assert o.evidence[0] == ("No configuration measured for seq_read meets the goal (the most throughput with "
                             "p99 ≤ 5.00 ms): nothing is recommended; keep the current settings nfsd_threads=8.")
    assert all(not r.meets_goal for r in o.ranking)
    assert any("nothing is recommended" in w for w in o.warnings)


def test_current_settings_over_the_limit_give_way_to_one_within_it_without_a_gain_test() -> None:
    figures = [*runs(BASE, [120 * MB, 121 * MB], [9.0, 9.5]), *runs({"nfsd_threads": 64}, [100 * MB, 99 * MB], [3.0, 3.2])]
    o = recommend_objective("seq_read", figures, baseline=BASE, goal=CAP)
    assert o is not None and o.changed and o.config == {"nfsd_threads": 64}
    assert "miss the goal" in o.rule and o.baseline is not None and not o.baseline.meets_goal
    assert any("which miss the goal" in line and "the change stands on meeting the goal" in line for line in o.evidence)


def test_unmeasured_latency_never_meets_a_latency_goal() -> None:
    figures = [*runs(BASE, [80 * MB, 81 * MB], [None, None]), *runs({"nfsd_threads": 64}, [150 * MB, 151 * MB], [None, None])]
    o = recommend_objective("seq_read", figures, baseline=BASE, goal=CAP)
    assert o is not None and not o.met_goal and "its latency was not measured" in " ".join(o.evidence)


LOWEST = Goal(GoalKind.LOWEST_P99)


def test_lowest_p99_ranks_by_p99_and_chooses_a_reduction_beyond_the_noise() -> None:
    figures = [*runs(BASE, [100 * MB, 101 * MB, 99 * MB], [4.0, 4.1, 3.9]),
               *runs({"nfsd_threads": 64}, [90 * MB, 91 * MB, 89 * MB], [2.0, 2.05, 1.95]),
               *runs({"nfsd_threads": 32}, [130 * MB, 131 * MB, 129 * MB], [3.0, 3.1, 2.9])]  # fmt: skip
    o = recommend_objective("seq_read", figures, baseline=BASE, goal=LOWEST)
    assert o is not None and o.changed and o.config == {"nfsd_threads": 64}  # less throughput, lowest p99
    assert [r.config["nfsd_threads"] for r in o.ranking] == [64, 32, 8]
    assert o.gain is not None and o.gain.beyond_noise and o.gain.rel == pytest.approx(-0.5, abs=0.05)
    assert o.gain.rel_low is not None and o.gain.rel_high is not None and o.gain.rel_low < o.gain.rel < o.gain.rel_high < 0
    assert o.evidence[0].startswith("Recommended for seq_read: nfsd_threads=64 — p50 ")
    assert "p99 reduction against the current settings" in o.rule and "Holm" in o.rule
    assert any(f"p99 {latency_text(edge(4.0))} → {latency_text(edge(2.0))} (−" in line and "beyond the run-to-run noise" in line
               for line in o.evidence), o.evidence  # fmt: skip


def test_lowest_p99_within_the_noise_keeps_the_current_settings() -> None:
    figures = [*runs(BASE, [100 * MB, 101 * MB], [4.0, 2.5]), *runs({"nfsd_threads": 64}, [90 * MB, 91 * MB], [2.2, 2.4])]
    o = recommend_objective("seq_read", figures, baseline=BASE, goal=LOWEST)
    assert o is not None and not o.changed and o.config == BASE
    assert o.ranking[0].config == {"nfsd_threads": 64}  # its merged p99 is lower, but the current settings' runs disagree
    assert o.gain is not None and not o.gain.beyond_noise and o.gain.rel < 0
    assert any("within the run-to-run noise: keep the current settings" in line for line in o.evidence)


def test_at_a_given_load_a_configuration_that_cannot_carry_it_is_left_out() -> None:
    goal = Goal(GoalKind.LOWEST_P99, load_iops=200)  # per client; two clients ask for 400 ops/s
    figures = [*runs(BASE, [100 * MB, 101 * MB], [4.0, 4.1], ops_per_s=399.0),
               *runs({"nfsd_threads": 2}, [50 * MB, 51 * MB], [1.0, 1.1], ops_per_s=250.0),  # fast, but did not keep up
               *runs({"nfsd_threads": 64}, [100 * MB, 101 * MB], [2.0, 2.1], ops_per_s=400.0)]  # fmt: skip
    o = recommend_objective("seq_read", figures, baseline=BASE, goal=goal, ceilings=Ceilings(clients=2))
    assert o is not None and o.config == {"nfsd_threads": 64}
    assert [(r.config["nfsd_threads"], r.meets_goal) for r in o.ranking] == [(64, True), (8, True), (2, False)]
    assert "it served 250 ops/s of the 400 ops/s asked: it cannot carry the load" in " ".join(o.evidence)
    assert "Goal: the lowest p99 at 200 ops/s per client." in o.evidence
