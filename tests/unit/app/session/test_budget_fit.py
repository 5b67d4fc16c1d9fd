"""The time budget: typed as the admin types it, a plan fitted to it in the stated order, the estimate
as the engine's steps run it, and a plan beyond any budget refused by both faces' one check."""

from __future__ import annotations

import argparse
import math
import random
from dataclasses import replace

import pytest

from app.commands.arguments import budget
from app.session.budget import budget_text, fit_text, parse_budget, unfit_text
from app.session.plan import PlanChoices, PlanError, Where, build_spec, plan_fit, plan_problems
from app.vocabulary import parse_duration, span_text
from experiments.budget import FLOOR_MEASURE_S, LONGEST_PLAN_S, fit, refit
from experiments.estimate import estimate_duration
from experiments.plan import Plan, Timing
from experiments.board import Ask
from experiments.steps import plan_steps, run_offline

KNOBS = {"read_ahead_kb": (128, 1024, 4096, 16384), "stripe_cache_size": (256, 1024, 4096, 8192),
         "nfsd_threads": (8, 16, 32, 64)}  # fmt: skip
TODAY = {"read_ahead_kb": 128, "stripe_cache_size": 256, "nfsd_threads": 8}
WHERE = Where("srv", ("c1", "c2"), "/srv/nfs")


@pytest.mark.parametrize(("text", "seconds"), [("45m", 2700), ("1h30m", 5400), ("90s", 90), ("2h", 7200),
                                               ("1h 30min", 5400), ("1.5h", 5400), (" 10 s ", 10)])  # fmt: skip
def test_a_budget_reads_as_typed(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds
    assert parse_duration(budget_text(seconds)) == seconds  # the field's own text reads back


@pytest.mark.parametrize("text", ["45", "0m", "1m1h", "2h 2h", "abc", "-5m", "5 ms", ""])
def test_a_budget_that_is_no_time_is_refused_in_words(text: str) -> None:
    with pytest.raises(ValueError, match=r"hours, minutes or seconds, e\.g\. 45m"):
        parse_duration(text)
    with pytest.raises(argparse.ArgumentTypeError, match="or none for no budget"):
        budget(text)


def test_no_budget_is_a_word_on_the_command_line_and_an_empty_field_on_the_page() -> None:
    assert math.isinf(budget("none")) and parse_budget("  ") is None
    with pytest.raises(ValueError, match=r"^time budget: give a time"):
        parse_budget("soon")
    assert (span_text(1800), span_text(5400), span_text(45)) == ("30 min", "1 h 30 min", "45 s")


def _plan(**kw: object) -> Plan:
    # 20 s around each trial (the planning figure before the mount and the read data were kept): the budgets below
    # were chosen to walk the whole road at it
    kw.setdefault("timing", Timing(setup_s=20.0))
    return Plan(knobs=KNOBS, workloads=("seq_read", "seq_write"), baseline=TODAY, min_runs=2, max_runs=6, **kw)  # type: ignore[arg-type]


def test_a_plan_within_its_budget_is_left_as_it_is() -> None:
    plan = _plan()
    fitted = fit(plan, 10 * 3600)
    assert fitted.plan == plan and not fitted.changed and fitted.fits and fit_text(fitted) == ""
    assert fitted.estimate == estimate_duration(plan)


def test_fitting_shortens_trials_then_runs_then_drops_the_last_knobs() -> None:
    plan = _plan()
    road = [(None, None, ()), (30.0, None, ()), (20.0, None, ()), (20.0, (2, 4), ()), (10.0, (2, 4), ()),
            (10.0, (2, 4), ("nfsd_threads",)), (10.0, (2, 4), ("nfsd_threads", "stripe_cache_size"))]  # fmt: skip
    reached = []
    for minutes in (70, 60, 50, 40, 30, 25):
        f = fit(plan, minutes * 60)
        assert f.fits and f.estimate.seconds <= minutes * 60
        reached.append(road.index((f.measure_s, f.runs, f.dropped)))
    assert reached == sorted(reached) and reached[-1] == len(road) - 1  # ever further down the one road
    tight = fit(plan, 28 * 60)
    assert list(tight.plan.knobs) == ["read_ahead_kb", "stripe_cache_size"]  # the first kept longest
    assert tight.plan.timing.max_measure_s == 10 and tight.plan.min_runs == 2  # guided: never under two runs
    assert fit_text(tight) == ("to fit 28 min: 10 s measured per trial; 2 runs per configuration (up to 4 while "
                               "noisy); left out nfsd_threads (lowest priority)")  # fmt: skip


def test_a_plan_under_way_is_fitted_again_at_its_pace_by_knobs_alone() -> None:
    planned = fit(_plan(), 60 * 60).plan  # fits an hour at the planned pace
    pace = planned.timing.expected_trial_s()
    assert refit(planned, 60 * 60, pace) == (planned, ())  # the pace planned: nothing changes
    assert refit(planned, 60 * 60, 1.2 * pace) == (planned, ())  # within the slack: left to the search's deadline
    slower, held = refit(planned, 60 * 60, 1.5 * pace)
    assert held == ("nfsd_threads",)  # the lowest priority first
    assert slower.timing == planned.timing and slower.min_runs == planned.min_runs  # the trials stay comparable
    assert slower.knobs["nfsd_threads"] == (8,)  # held at today's: the runs so far still match what comes
    assert slower.start_config() == planned.start_config()
    paced = replace(slower, timing=replace(slower.timing, setup_s=slower.timing.setup_s + 0.5 * pace))
    assert estimate_duration(paced).seconds <= 60 * 60  # it fits at that pace
    assert refit(slower, 60 * 60, 1.5 * pace) == (slower, ())  # and is not cut again at the same pace
    slowest, held = refit(planned, 60 * 60, 3 * pace)  # the first knob stays: the search's deadline ends it then
    assert held == ("nfsd_threads", "stripe_cache_size") and len(slowest.knobs["read_ahead_kb"]) == 4


def test_a_plan_that_cannot_fit_says_what_it_needs_and_what_to_drop() -> None:
    f = fit(_plan(), 5 * 60)
    assert not f.fits and list(f.plan.knobs) == ["read_ahead_kb"]
    words = unfit_text(f, ("seq_read", "seq_write"))
    assert words.startswith("the plan does not fit 5 min even with 10 s measured per trial, 2 runs per configuration")
    assert "only read_ahead_kb" in words and "give at least that much time, or fewer workloads (2 now" in words
    assert "it needs about" in words


def test_a_plan_beyond_any_budget_is_refused_by_the_one_check_and_the_builder() -> None:
    grid = PlanChoices(knobs={"rsize": "4K,8K,16K,32K,64K,128K,256K,512K,1M", "wsize": "4K,8K,16K,32K,64K,128K,256K,512K,1M",
                              "read_ahead_kb": "0,128,1024,4096,16384,65536", "nfsd_threads": "1,2,4,8,16,32,64,128",
                              "nconnect": "1,2,4,8,16"}, strategy="grid")  # fmt: skip
    assert plan_fit(grid).estimate.seconds > LONGEST_PLAN_S
    problems = plan_problems(grid)
    assert set(problems) == {"budget"} and "far beyond any run (at most 72 h 00 min)" in problems["budget"]
    with pytest.raises(PlanError) as refused:
        build_spec(grid, WHERE)
    assert "budget" in refused.value.problems
    # given a budget the same grid is fitted: it loses knobs from the end, and starts
    spec = build_spec(PlanChoices(knobs=grid.knobs, strategy="grid", budget_s=8 * 3600), WHERE)
    assert list(spec.plan.knobs) == list(grid.knobs)[: len(spec.plan.knobs)] and len(spec.plan.knobs) < 5
    assert estimate_duration(spec.plan).seconds <= 8 * 3600


def test_the_spec_runs_the_fitted_plan_and_a_bad_budget_is_a_problem_of_its_own() -> None:
    choices = PlanChoices(knobs={k: ", ".join(map(str, v)) for k, v in KNOBS.items()},
                          workloads=("seq_read", "seq_write"), budget_s=25 * 60)  # fmt: skip
    spec = build_spec(choices, WHERE, TODAY)
    fitted = plan_fit(choices, TODAY, WHERE.clients)
    # the budget goes with the plan: the engine holds it while the plan runs (app.sweep.deadline)
    assert spec.plan == replace(fitted.plan, time_budget_s=25 * 60) and spec.plan.timing == Timing().measuring(FLOOR_MEASURE_S)
    assert plan_problems(PlanChoices(knobs={"rsize": "1M"}, budget_s=-1.0)) == {
        "budget": "the time budget must be a finite time above 0, got -1.0 s"}


def _demo(ask: Ask) -> float:
    """The demo's world in small: readahead moves reads, the stripe cache writes, threads nothing."""
    c = ask.config
    f = 0.7 + 0.3 * min(1, int(c["read_ahead_kb"]) / 4096) if ask.workload == "seq_read" else \
        0.85 + 0.15 * min(1, int(c["stripe_cache_size"]) / 4096)  # fmt: skip
    return 100.0 * f * (1 + random.gauss(0, 0.01))


def test_a_guided_estimate_counts_the_two_runs_the_steps_take_at_least() -> None:
    """The engine runs a guided plan at least twice per configuration (experiments.steps): so does its estimate."""
    once = Plan(knobs=KNOBS, workloads=("seq_read",), baseline=TODAY, min_runs=1, max_runs=3)
    twice = Plan(knobs=KNOBS, workloads=("seq_read",), baseline=TODAY, min_runs=2, max_runs=3)
    assert estimate_duration(once) == estimate_duration(twice)
    grid = Plan(knobs=KNOBS, workloads=("seq_read",), baseline=TODAY, min_runs=1, max_runs=3, strategy="grid")
    assert estimate_duration(grid).trials < estimate_duration(Plan(**{**_fields(grid), "min_runs": 2})).trials


def _fields(plan: Plan) -> dict[str, object]:
    return {f: getattr(plan, f) for f in ("knobs", "workloads", "baseline", "min_runs", "max_runs", "strategy")}


@pytest.mark.parametrize("reps", [1, 2, 3])
def test_the_estimate_is_near_what_the_steps_run(reps: int) -> None:
    random.seed(reps)
    plan = Plan(knobs=KNOBS, workloads=("seq_read", "seq_write"), baseline=TODAY, min_runs=reps, max_runs=3 * reps)
    ran = len(run_offline(plan_steps(plan, plan.workloads), _demo))
    est = estimate_duration(plan)
    assert 0.75 * ran <= est.trials <= 1.33 * ran, (ran, est.trials)
    assert ran * plan.timing.worst_trial_s() <= est.worst_seconds
