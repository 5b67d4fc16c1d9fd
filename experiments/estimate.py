"""How long a plan takes: its steps' configurations × workloads × runs × trial time, and the confirmation.

A guided sweep screens every knob at its extremes (known in advance), refines the knobs
that move the figure (unknown in advance: planned at half of them, the ones with the
most values, and at worst all), checks its changes (the candidate and each change put back,
measured afresh) and confirms in pairs. A chosen strategy's search is its own estimate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from experiments.board import Board, Run
from experiments.plan import Plan
from experiments.steps import GUIDED_MIN_RUNS, SEARCH_STEPS, RefineStep, checking, repeat_policy
from experiments.strategies import make_strategy
from experiments.verdicts import MAX_PAIRS, MIN_PAIRS, candidate, changed_knobs, probe_values

MOVING_SHARE = 0.5  # of a guided plan's knobs, the share planned to move the figure


@dataclass(frozen=True, slots=True)
class DurationEstimate:
    configs: int  # configurations the plan expects to measure (each on every workload)
    trials: int  # including repetitions and the confirmation, over all workloads
    seconds: float  # expected
    worst_seconds: float  # every trial at its cap, max_runs where noise demands, every knob moving
    capped_by_budget: bool
    # a guided plan's screening alone at its fewest runs: where a session ends whose screening finds nothing worth
    # a closer look (no refinement, no checks; the lab's sessions mostly); None when the plan has no such step
    least_seconds: float | None = None


def _probes(plan: Plan) -> dict[str, int]:
    """Per knob, the values a guided plan's screening measures it at besides today's."""
    today = plan.start_config()
    return {k: len(probe_values(v, today[k])) for k, v in plan.knobs.items()}


def _guided_configs(plan: Plan, moving_share: float) -> tuple[int, int, int]:
    """(screened, expected, worst) configurations of a guided plan: its screening, and with its refinement."""
    probes = _probes(plan)
    screened = 1 + sum(probes.values())  # today's configuration, then each knob at its probes
    middles = {k: max(0, len(plan.knobs[k]) - 1 - probes[k]) for k in plan.searched_knobs()}  # what refinement adds
    ranked = sorted(middles.values(), reverse=True)
    moving = max(1, math.ceil(moving_share * len(ranked))) if ranked else 0
    return screened, screened + sum(ranked[:moving]), screened + sum(ranked)


def _expected_runs(low: int, high: int) -> float:
    # Most configurations meet the stddev limit at their fewest runs; allow one extra run for a third.
    return low + (1 if high > low else 0) / 3


def checks_trials(changed: int, workloads: int, runs: float = GUIDED_MIN_RUNS) -> float:
    """Trials the put-back checks and the confirmation take for a candidate that changes ``changed`` knobs: the
    candidate and each change put back, measured afresh ``runs`` times on every workload, then the pairs."""
    return (1 + changed) * workloads * runs + 2 * workloads * (MIN_PAIRS + 0.5)


def estimate_duration(plan: Plan, moving_share: float = MOVING_SHARE) -> DurationEstimate:
    """What the plan will cost; cheap enough to call on every edit in the plan page."""
    w = len(plan.workloads)
    low, high = plan.min_runs, plan.max_runs
    screened: int | None = None  # a fixed design has no screening to end at
    if plan.strategy == "guided":
        screened, configs, worst_configs = _guided_configs(plan, moving_share)
        low, high = max(low, GUIDED_MIN_RUNS), max(high, GUIDED_MIN_RUNS)  # as experiments.steps runs it
    else:
        configs = worst_configs = make_strategy(plan).estimated_configs()
    # the put-back checks measure afresh the candidate and, per knob it changes (planned: the moving share), the
    # candidate with that knob put back; at worst every knob changed, and a second round after one is put back
    searched = len(plan.searched_knobs())
    changed = max(1, math.ceil(moving_share * searched)) if searched else 0
    worst_configs += 2 * searched + 1
    expected_runs = _expected_runs(low, high)
    trials = configs * w * expected_runs + checks_trials(changed, w, expected_runs)
    configs += 1 + changed
    worst_trials = worst_configs * w * high + 2 * w * MAX_PAIRS
    seconds = trials * plan.timing.expected_trial_s()
    worst = worst_trials * plan.timing.worst_trial_s()
    least = None if screened is None else screened * w * low * plan.timing.expected_trial_s()
    capped = plan.time_budget_s is not None and seconds > plan.time_budget_s
    if plan.time_budget_s is not None:
        seconds = min(seconds, plan.time_budget_s)
        worst = min(worst, plan.time_budget_s)
    return DurationEstimate(configs, math.ceil(trials), seconds, worst, capped,
                            None if least is None else min(least, seconds))  # fmt: skip


def checks_ahead(plan: Plan, workloads: Sequence[str], runs: Sequence[Run], confidence: float = 0.95,
                 p99_cap: float | None = None) -> float:  # fmt: skip
    """Trials the put-back checks and the confirmation would take if the search ended at ``runs``: its candidate's
    changes (at least one: the next trial may find one) checked and confirmed."""
    w = tuple(workloads)
    today = plan.start_config()
    cand = candidate(Board([r for r in runs if r.step in SEARCH_STEPS], w, repeat_policy(plan)), today, confidence,
                     p99_cap=p99_cap)  # fmt: skip
    changed = len(changed_knobs(cand, today)) if cand is not None else 0
    return checks_trials(max(1, changed), len(w), checking(repeat_policy(plan)).min_runs)


def trials_after_screening(plan: Plan, workloads: Sequence[str], runs: Sequence[Run], confidence: float = 0.95,
                           p99_cap: float | None = None) -> float:  # fmt: skip
    """Trials a guided plan still expects once its screening has ended, from what it found: the knobs it found
    moving refined (their middle values, then the other knobs probed again around what that finds) and the
    candidate's changes checked and confirmed; when nothing moved, only the put-back checks of a lead within the
    noise, and none when today's settings lead. The plan's own estimate assumed half its knobs would move; the
    live progress uses this from the screening's end."""
    w = tuple(workloads)
    policy = repeat_policy(plan)
    today = plan.start_config()
    moving = RefineStep(dict(plan.knobs), today, w, policy, confidence).moving(runs)
    probes = _probes(plan)
    # the moving knobs' middle values, then the other knobs probed again around the best the search finds
    configs = sum(max(0, len(plan.knobs[k]) - 1 - probes[k]) for k in moving) + \
        (sum(n for k, n in probes.items() if k not in moving) if moving else 0)
    runs_each = _expected_runs(policy.min_runs, policy.max_runs)
    cand = candidate(Board([r for r in runs if r.step in SEARCH_STEPS], w, policy), today, confidence, p99_cap=p99_cap)
    changed = len(changed_knobs(cand, today)) if cand is not None else 0
    checks = checking(policy).min_runs
    if not moving:  # a lead within the noise: its changes measured afresh and, most likely, all put back unconfirmed
        return (1 + changed) * len(w) * checks if changed else 0.0
    return configs * len(w) * runs_each + checks_trials(max(changed, 1), len(w), checks)
