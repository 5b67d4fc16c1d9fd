"""A spec's plan as the engine runs it: its steps (experiments.steps), how many trials it expects,
and which step a stored trial ran for (older sessions stored none)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.sweep.spec import PHASED_SIZES, SweepSpec, workload_kind
from experiments.estimate import estimate_duration
from experiments.steps import DIRS, LADDER, SEARCH, STEP_NAMES, Step, dirs_step, ladder_step, plan_steps

VARIANT_FIELDS = {LADDER: "jobs", DIRS: "layout"}  # the workload field each study's step sets


def spec_steps(spec: SweepSpec) -> list[Step]:
    plan = spec.plan
    if spec.ladder:
        return [ladder_step(plan, spec.ladder)]
    if spec.dirs:
        return [dirs_step(plan, spec.dirs, spec.entries or PHASED_SIZES["dir_scaling"]["count"])]
    return plan_steps(plan, workloads(spec))


def workloads(spec: SweepSpec) -> tuple[str, ...]:
    """The plan's workloads by kind, as trials store them."""
    return tuple(dict.fromkeys(workload_kind(w) for w in spec.plan.workloads))


def estimated_trials(spec: SweepSpec) -> int:
    if spec.ladder or spec.dirs:
        return len(spec.ladder or spec.dirs)
    return estimate_duration(spec.plan).trials


def stored_step(spec: SweepSpec, step: str, workload: Mapping[str, Any]) -> tuple[str, tuple[tuple[str, Any], ...]]:
    """(the step a stored trial ran for, the variant it set): "" in older sessions is a search, or a study's step."""
    if step not in STEP_NAMES:
        step = LADDER if spec.ladder else DIRS if spec.dirs else SEARCH
    field = VARIANT_FIELDS.get(step)
    return step, (((field, workload[field]),) if field and field in workload else ())
