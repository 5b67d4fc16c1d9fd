"""A spec's plan as the engine runs it: its steps (experiments.steps), and how many trials it expects."""

from __future__ import annotations

import math
from collections.abc import Sequence

from app.sweep.spec import PHASED_SIZES, SweepSpec, workload_kind
from experiments.board import Run
from experiments.estimate import estimate_duration, trials_after_screening
from experiments.steps import Step, dirs_step, ladder_step, plan_steps


def spec_steps(spec: SweepSpec) -> list[Step]:
    plan = spec.plan
    if spec.ladder:
        return [ladder_step(plan, spec.ladder)]
    if spec.dirs:
        return [dirs_step(plan, spec.dirs, spec.entries or PHASED_SIZES["dir_scaling"]["count"])]
    return plan_steps(plan, workloads(spec), p99_cap=spec.goal.p99_max_ms)


def workloads(spec: SweepSpec) -> tuple[str, ...]:
    """The plan's workloads by kind, as trials store them."""
    return tuple(dict.fromkeys(workload_kind(w) for w in spec.plan.workloads))


def estimated_trials(spec: SweepSpec) -> int:
    if spec.ladder or spec.dirs:
        return len(spec.ladder or spec.dirs)
    return estimate_duration(spec.plan).trials


def trials_after(spec: SweepSpec, runs: Sequence[Run]) -> int:
    """The trials still expected once a guided plan's screening has ended (what it found decides them)."""
    return math.ceil(trials_after_screening(spec.plan, workloads(spec), runs, p99_cap=spec.goal.p99_max_ms))
