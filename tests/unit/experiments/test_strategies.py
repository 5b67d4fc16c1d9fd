"""Plans, duration estimates and the sweep strategies (pure, seeded, resumable)."""

from __future__ import annotations

import math

import pytest

from experiments.estimate import estimate_duration
from experiments.plan import Config, Plan, Timing
from experiments.strategies import (
    CoordinateStrategy,
    GridStrategy,
    OneFactorStrategy,
    TrialResult,
    aggregate,
    best_config,
    make_strategy,
    run_offline,
)

KNOBS = {
    "rsize": (32768, 65536, 131072, 262144, 524288, 1048576),
    "threads": (8, 16, 32, 64, 128),
    "ra": (128, 512, 1024, 4096, 16384),
}


def surface(c: Config) -> float:
    """Smooth, with an rsize × readahead interaction, best at (1 MiB, 32, 4096)."""
    r, t, a = math.log2(int(c["rsize"])), math.log2(int(c["threads"])), math.log2(int(c["ra"]))
    return 100 + 4 * r - (t - 5) ** 2 - 0.5 * (a - 12) ** 2 + 0.3 * r * (a - 7)


def grid_best() -> tuple[Config, float]:
    res = run_offline(GridStrategy(KNOBS, Config(rsize=32768, threads=8, ra=128)), surface)
    found = best_config(res)
    assert found is not None
    return found


def test_config_is_an_order_free_hashable_mapping() -> None:
    a, b = Config(x=1, y=2), Config({"y": 2, "x": 1})
    assert a == b and hash(a) == hash(b) and dict(a) == {"x": 1, "y": 2}
    assert a.replace("x", 5)["x"] == 5 and a["x"] == 1
    assert len({a, b}) == 1


def test_plan_validates_and_roundtrips_json() -> None:
    p = Plan(knobs=KNOBS, workloads=("seqread", "seqwrite"), clients=("c1",), strategy="grid",
             time_budget_s=3600, seed=3, baseline={"threads": 8})
    assert Plan.from_json(p.to_json()) == p
    assert p.grid_size == 150
    assert p.start_config() == Config(rsize=131072, threads=8, ra=1024)  # threads from baseline
    with pytest.raises(ValueError):
        Plan(knobs={"rsize": (1, 1)})
    with pytest.raises(ValueError):
        Plan(knobs=KNOBS, strategy="random")


def test_grid_is_complete_shuffled_by_seed_and_resumable() -> None:
    start = Config(rsize=32768, threads=8, ra=128)
    g1, g2 = GridStrategy(KNOBS, start, seed=1), GridStrategy(KNOBS, start, seed=2)
    assert len(set(g1.order())) == 150 and g1.order() == GridStrategy(KNOBS, start, seed=1).order()
    assert g1.order() != g2.order()
    done = [TrialResult(c, 1.0) for c in g1.order()[:40]]
    assert g1.next_trials(done) == g1.order()[40:]
    assert len(GridStrategy(KNOBS, start, seed=1, max_configs=50).next_trials(done)) == 10


@pytest.mark.parametrize("cls", [OneFactorStrategy, CoordinateStrategy])
def test_searches_are_deterministic_and_resume_from_stored_results(cls: type) -> None:
    start = Config(rsize=65536, threads=8, ra=128)
    s = cls(KNOBS, start, seed=4)
    full = run_offline(s, surface)
    again = run_offline(cls(KNOBS, start, seed=4), surface)
    assert [r.config for r in full] == [r.config for r in again]
    # A fresh object fed half the results continues with the same configurations.
    half = full[: len(full) // 2]
    resumed = run_offline_from(cls(KNOBS, start, seed=4), half)
    assert [r.config for r in resumed] == [r.config for r in full]
    assert s.done(full) and not s.done(half)


def run_offline_from(strategy: CoordinateStrategy | OneFactorStrategy, results: list[TrialResult]) -> list[TrialResult]:
    results = list(results)
    while todo := strategy.next_trials(results):
        results.extend(TrialResult(c, surface(c)) for c in todo)
    return results


def test_adaptive_finds_the_grid_best_with_a_fraction_of_the_trials() -> None:
    best, best_v = grid_best()
    for seed in range(5):
        res = run_offline(CoordinateStrategy(KNOBS, Config(rsize=32768, threads=128, ra=128), seed=seed), surface)
        found = best_config(res)
        assert found is not None
        assert found[1] >= 0.95 * best_v
        assert len({r.config for r in res}) <= 0.25 * 150


def test_interaction_check_escapes_a_ridge() -> None:
    # Only moving both knobs together helps: a ridge along the diagonal.
    knobs = {"a": (0, 1, 2, 3), "b": (0, 1, 2, 3)}

    def ridge(c: Config) -> float:
        a, b = int(c["a"]), int(c["b"])
        return 10.0 + a + b if a == b else 5.0

    res = run_offline(CoordinateStrategy(knobs, Config(a=0, b=0)), ridge)
    found = best_config(res)
    assert found is not None and found[0] == Config(a=3, b=3)
    ofat = best_config(run_offline(OneFactorStrategy(knobs, Config(a=0, b=0)), ridge))
    assert ofat is not None and ofat[0] == Config(a=0, b=0)  # what the interaction check buys


def test_broken_configs_are_not_asked_again_and_rank_last() -> None:
    start = Config(rsize=65536, threads=8, ra=128)
    res = run_offline(CoordinateStrategy(KNOBS, start), lambda c: None if c["rsize"] == 1048576 else surface(c))
    configs = [r.config for r in res]
    assert len(configs) == len(set(configs))
    found = best_config(res)
    assert found is not None and found[0]["rsize"] != 1048576
    assert aggregate([TrialResult(start, None)])[start] == -math.inf


def test_noise_below_min_gain_does_not_move_the_search() -> None:
    knobs = {"a": (0, 1, 2, 3, 4)}
    res = run_offline(CoordinateStrategy(knobs, Config(a=2), min_gain=0.05), lambda c: 100 + 0.01 * int(c["a"]))
    assert {r.config for r in res} == {Config(a=i) for i in range(5)}  # one scan, then stops


def test_budget_caps_the_number_of_configs() -> None:
    res = run_offline(CoordinateStrategy(KNOBS, Config(rsize=32768, threads=8, ra=128), max_configs=7), surface)
    assert len({r.config for r in res}) == 7


def test_duration_estimate_follows_strategy_and_budget() -> None:
    t = Timing(setup_s=10, warmup_s=5, min_measure_s=10, max_measure_s=30)
    grid = estimate_duration(Plan(knobs=KNOBS, strategy="grid", min_runs=3, max_runs=3, timing=t))
    # every configuration three times, the candidate and two put-back twins (half the three knobs) measured afresh,
    # and three and a half confirmation pairs
    assert grid.configs == 153 and grid.trials == 153 * 3 + 7 and grid.seconds == pytest.approx((153 * 3 + 7) * 35)
    adaptive = estimate_duration(Plan(knobs=KNOBS, strategy="adaptive", timing=t))
    ofat = estimate_duration(Plan(knobs=KNOBS, strategy="ofat", timing=t))
    guided = estimate_duration(Plan(knobs=KNOBS, strategy="guided", timing=t))
    assert ofat.configs < adaptive.configs < grid.configs and guided.configs < adaptive.configs
    capped = estimate_duration(Plan(knobs=KNOBS, strategy="grid", time_budget_s=600, timing=t))
    assert capped.capped_by_budget and capped.seconds == 600
    two = estimate_duration(Plan(knobs=KNOBS, strategy="grid", workloads=("a", "b"), min_runs=3, max_runs=3, timing=t))
    assert two.trials == 2 * grid.trials


def test_make_strategy_picks_by_name() -> None:
    assert isinstance(make_strategy(Plan(knobs=KNOBS, strategy="grid")), GridStrategy)
    assert isinstance(make_strategy(Plan(knobs=KNOBS, strategy="ofat")), OneFactorStrategy)
    assert isinstance(make_strategy(Plan(knobs=KNOBS)), CoordinateStrategy)


def test_adaptive_search_copes_with_a_knob_that_has_one_value() -> None:
    from experiments.plan import Plan
    from experiments.strategies import make_strategy, run_offline

    plan = Plan(knobs={"rsize": (32768, 1048576), "wsize": (1048576,)}, strategy="adaptive")
    results = run_offline(make_strategy(plan), lambda c: float(c["rsize"]))
    assert max(r.value for r in results if r.value is not None) == 1048576.0


def test_the_adaptive_search_moves_only_for_gains_beyond_the_plans_noise() -> None:
    # a 2 % gain is real only if the plan's runs are steadier than that
    for noise, moves in ((0.035, False), (0.01, True)):
        plan = Plan(knobs={"rsize": (65536, 1048576)}, strategy="adaptive", max_rel_stddev=noise)
        strategy = make_strategy(plan)
        assert isinstance(strategy, CoordinateStrategy) and strategy.min_gain == noise
        assert strategy._better(102.0, 100.0) == moves


def test_a_guided_estimate_spans_a_session_that_finds_nothing_and_one_that_finds_a_knob() -> None:
    from experiments.steps import plan_steps
    from experiments.steps import run_offline as run_steps

    knobs = {"stripe_cache_size": (256, 1024), "read_ahead_kb": (128, 1024, 4096, 16384)}
    plan = Plan(knobs=knobs, workloads=("seq_read", "seq_write"), min_runs=2, max_runs=6,
                baseline={"stripe_cache_size": 256, "read_ahead_kb": 128}, timing=Timing().measuring(30))  # fmt: skip
    est = estimate_duration(plan)
    assert est.least_seconds is not None and est.least_seconds < est.seconds
    least_trials = est.least_seconds / plan.timing.expected_trial_s()
    assert least_trials == 12  # today's, stripe at 1024, readahead at 16384; two workloads; twice each

    def flat(ask: object) -> float:  # nothing moves: every run the same figure
        return 100.0

    def readahead(ask: object) -> float:  # one knob moves the figure well beyond the noise
        return 100.0 * (1 + int(ask.config["read_ahead_kb"]) / 16384)  # type: ignore[attr-defined]

    nothing = run_steps(plan_steps(plan, plan.workloads), flat)
    found = run_steps(plan_steps(plan, plan.workloads), readahead)
    # a session that finds nothing ends at the estimate's lower end; one that finds a knob refines and checks it,
    # within the expected figure
    assert len(nothing) == least_trials
    assert least_trials < len(found) <= est.trials
    # a fixed design has no such range
    assert estimate_duration(Plan(knobs=knobs, strategy="grid")).least_seconds is None
