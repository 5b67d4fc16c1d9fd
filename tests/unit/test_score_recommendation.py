"""benchmarks/score_recommendation.py: the scoring drives the real steps and verdicts, and tiny grids whose
answer is obvious score as they must."""

from __future__ import annotations

import random

from benchmarks.score_recommendation import (
    READ,
    STRATEGIES,
    WRITE,
    Knobs,
    SyntheticSource,
    inert_knobs,
    score,
    table,
    verdicts,
)
from experiments.plan import Config

KNOBS: Knobs = {"a": [1, 2, 3], "b": [1, 2], "c": [1, 2]}
FILES = "small_files"


def doubling(c: Config, w: str, _base: Config, _knobs: Knobs, _rng: random.Random) -> float:
    """a=3 doubles every workload; c=2 gains 30 % on reads and loses 30 % on writes (on small files nothing); b is
    inert."""
    trade = {READ: 1.3, WRITE: 0.7}.get(w, 1.0) if c["c"] == 2 else 1.0
    return (200.0 if c["a"] == 3 else 100.0) * trade


def source(name: str, workloads: tuple[str, ...] = (FILES,), broken: bool = False) -> SyntheticSource:
    return SyntheticSource(name, KNOBS, doubling, workloads, cv=(0.01, 0.01), outliers=0.0, broken=broken)


def test_a_knob_is_inert_only_when_no_change_of_it_alone_moves_any_figure() -> None:
    inst = source("two", (READ, WRITE)).instance(0)
    assert inst.inert == frozenset({"b"})
    assert inert_knobs(KNOBS, {c: {READ: float(c["a"])} for c in inst.truth}) == frozenset({"b", "c"})


def test_a_run_is_the_same_draw_for_every_strategy_and_a_confirmation_draws_its_own() -> None:
    one, two = source("crn").instance(3), source("crn").instance(3)
    c = one.baseline
    assert one.run(c, FILES, 0, False) == two.run(c, FILES, 0, False)
    assert one.run(c, FILES, 0, False) != one.run(c, FILES, 1, False)
    assert one.run(c, FILES, 0, False) != one.run(c, FILES, 0, True)


def test_the_output_has_one_row_per_grid_and_strategy_and_a_verdict_per_goal() -> None:
    rows = score([source("tiny"), source("tiny+broken", broken=True)], 3)
    assert [(r.grid, r.strategy) for r in rows] == [(g, s) for g in ("tiny", "tiny+broken") for s in STRATEGIES]
    for r in rows:
        assert r.seeds == 3
        assert 0.0 <= r.quality_worst <= r.quality_mean
        assert r.time_mean > 0 and r.time_max >= r.time_mean and r.trials_mean > 0
        for k, n in (r.covered, r.covered_all, r.curse_before, r.curse_after, r.kept_default("2sd")):
            assert 0 <= k <= n <= 3
        assert r.covered[1] <= r.covered_all[1]  # the confirmed ones are among the confirmations run
    assert all(r.broken == 3 for r in rows if r.grid == "tiny+broken")
    assert all(r.broken == 0 for r in rows if r.grid == "tiny")
    lines = table(rows)
    assert lines[0].split()[:2] == ["grid", "strategy"] and len(lines) == 2 + len(rows)
    assert [g[:3] for g in verdicts(rows)] == ["(a)", "(b)", "(c)", "(d)", "(e)", "(e)", "(f)", "(f)"]


def test_an_obvious_winner_is_recommended_confirmed_and_alone_and_a_trade_between_workloads_is_refused() -> None:
    rows = score([source("one workload"), source("two workloads", (READ, WRITE))], 4)
    for r in rows:
        where = (r.grid, r.strategy)
        assert r.quality_worst == 1.0, where
        assert r.inert == 0 and r.idle == 0, where  # b and c never change: c is inert on small files, trades on two
        assert r.inert_tested <= r.seeds and r.below == (0, 0), where
        assert r.worse_change("2sd") == 0 and r.worse_change("5%") == 0, where
        kept, n = r.kept_default("2sd")
        assert kept == 0 and n > 0, where  # some seeds did start away from the winner
        assert r.covered[1] == n and r.covered[0] >= n - 1, where  # each confirmed; its interval holds the truth
    assert verdicts(rows)[0].startswith("(a) inert knobs changed = 0: met on all 8 (overall 0% of ")
