"""How long a plan takes: its strategy's configurations × workloads × repetitions × trial time."""

from __future__ import annotations

import math
from dataclasses import dataclass

from experiments.plan import Plan
from experiments.strategies import make_strategy


@dataclass(frozen=True, slots=True)
class DurationEstimate:
    configs: int  # configurations the strategy expects to try, per workload
    trials: int  # including repetitions, over all workloads
    seconds: float  # expected
    worst_seconds: float  # every trial at its cap and max_runs where noise demands
    capped_by_budget: bool


def estimate_duration(plan: Plan) -> DurationEstimate:
    """What the plan will cost; cheap enough to call on every edit in the plan page."""
    configs = make_strategy(plan).estimated_configs()
    # Most configurations meet the stddev limit at min_runs; allow one extra run for a third.
    expected_runs = plan.min_runs + (1 if plan.max_runs > plan.min_runs else 0) / 3
    trials = configs * len(plan.workloads)
    seconds = trials * expected_runs * plan.timing.expected_trial_s()
    worst = trials * plan.max_runs * plan.timing.worst_trial_s()
    capped = plan.time_budget_s is not None and seconds > plan.time_budget_s
    if plan.time_budget_s is not None:
        seconds = min(seconds, plan.time_budget_s)
        worst = min(worst, plan.time_budget_s)
    return DurationEstimate(configs, math.ceil(trials * expected_runs), seconds, worst, capped)
