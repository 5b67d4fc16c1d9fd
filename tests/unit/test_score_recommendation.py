"""Smoke test of benchmarks/score_recommendation.py: the scoring runs and an obvious grid scores perfectly."""

from __future__ import annotations

import random

from benchmarks.score_recommendation import (
    STRATEGIES,
    Knobs,
    Row,
    SyntheticSource,
    score,
    table,
    verdicts,
)
from experiments.plan import Config

def obvious(c: Config, _base: Config, _knobs: Knobs, _rng: random.Random) -> float:
    """One configuration (a=3, and b=2 where there is a b) twice as good as all the others, which are all equal."""
    return 200.0 if c["a"] == 3 and c.get("b", 2) == 2 else 100.0


def source(name: str, knobs: Knobs, broken: bool = False) -> SyntheticSource:
    return SyntheticSource(name, knobs, obvious, cv=(0.0, 0.0), outliers=0.0, broken=broken)


def test_the_output_has_one_row_per_grid_and_strategy_and_a_verdict_per_goal() -> None:
    rows = score([source("tiny", {"a": [1, 2, 3], "b": [1, 2]}), source("tiny+broken", {"a": [1, 2, 3]}, True)], 4)
    assert [(r.grid, r.strategy) for r in rows] == [(g, s) for g in ("tiny", "tiny+broken") for s in STRATEGIES]
    for r in rows:
        assert r.seeds == 4
        assert 0.0 <= r.quality_worst <= r.quality_mean <= 1.0
        assert r.time_mean > 0 and r.time_max >= r.time_mean
        kept, n = r.kept_default("2sd")
        assert 0 <= kept <= n <= 4 and 0 <= r.worse_change("5%") <= 4
    assert all(r.broken == 4 for r in rows if r.grid == "tiny+broken")
    assert all(r.broken == 0 for r in rows if r.grid == "tiny")
    lines = table(rows)
    assert lines[0].split()[:2] == ["grid", "strategy"] and len(lines) == 2 + len(rows)
    goals = verdicts(rows)
    assert [g[:3] for g in goals] == ["(a)", "(b)", "(b)", "(b'", "(c)", "(c)", "(d)"]


def test_an_obvious_winner_is_always_recommended() -> None:
    grid_rows = score([source("obvious", {"a": [1, 2, 3], "b": [1, 2]})], 6, ["grid"])
    line_rows = score([source("one knob", {"a": [1, 2, 3]})], 6)  # every strategy scans the one knob fully

    def check(r: Row) -> None:
        assert r.quality_worst == 1.0, (r.grid, r.strategy)
        assert r.kept_default("2sd")[0] == 0 and r.kept_default("5%")[0] == 0
        assert r.kept_default("2sd")[1] > 0  # some seeds did start away from the winner
        assert r.worse_change("2sd") == 0

    for r in grid_rows + line_rows:
        check(r)
