"""The recommendation's goal in words (experiments.goals): what the plan chose it to optimise."""

from __future__ import annotations

from app.vocabulary.figures import OPS, figure_text, latency_text
from experiments.goals import Goal, GoalKind

GOAL_TITLES: dict[str, str] = {
    GoalKind.THROUGHPUT.value: "most throughput",
    GoalKind.P99_CAP.value: "most throughput with p99 under a limit",
    GoalKind.LOWEST_P99.value: "lowest p99 at a given load",
}


def goal_text(goal: Goal) -> str:
    """'the most throughput', 'the most throughput with p99 ≤ 5.00 ms', 'the lowest p99 at 200 ops/s per client'."""
    if goal.kind is GoalKind.P99_CAP:
        return f"the most throughput with p99 ≤ {latency_text(goal.p99_max_ms)}"
    if goal.kind is GoalKind.LOWEST_P99:
        if goal.load_iops is None:
            return "the lowest p99 at the plan's own load (its jobs on every client, unthrottled)"
        return f"the lowest p99 at {figure_text(goal.load_iops, OPS)} per client"
    return "the most throughput"
