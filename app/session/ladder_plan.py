"""From what an admin chose to a load ladder (app.sweep.ladder): one workload, knobs held fixed.

The same ``PlanChoices`` as a sweep, read differently: each ``--knob`` names one value
held for the whole ladder (none: the hosts' own settings), the first workload is the
ladder's, one trial per step. Checked with the sweep's own words (``plan_problems``).
"""

from __future__ import annotations

from app.session.plan import (
    PLAN_PAGE_OPT_INS,
    OptInWords,
    PlanChoices,
    PlanError,
    Where,
    parse_knobs,
    plan_problems,
    where_problems,
)
from app.sweep.ladder import ladder_steps
from app.sweep.spec import LOOPING, SweepSpec, workload_kind
from experiments.plan import Plan


def held_problems(choices: PlanChoices, study: str, opt_ins: OptInWords = PLAN_PAGE_OPT_INS) -> dict[str, str]:
    """A study's (ladder, directory scaling) sweep problems but its knobs', each knob held at one value."""
    # a study runs its own steps, each once: a sweep's time budget is not its
    problems = {k: v for k, v in plan_problems(choices, opt_ins).items() if k not in ("knobs", "strategy", "budget")}
    knobs, _ = parse_knobs(choices)
    for knob, values in knobs.items():
        if len(values) != 1:
            problems[knob] = f"a {study} holds {knob} at one value for every step; give it one"
    return problems


def ladder_problems(choices: PlanChoices, max_streams: int, opt_ins: OptInWords = PLAN_PAGE_OPT_INS) -> dict[str, str]:
    """Everything wrong with a ladder of ``choices``, by field; empty when they make one."""
    problems = held_problems(choices, "ladder", opt_ins)
    if len(choices.workloads) != 1:
        problems["workloads"] = "a ladder climbs one workload"
    elif "workloads" not in problems and workload_kind(choices.workloads[0]) not in LOOPING:
        problems["workloads"] = (f"a ladder needs a workload with streams (one of {', '.join(sorted(LOOPING))}), "
                                 f"not {choices.workloads[0]}")  # fmt: skip
    try:
        ladder_steps(max_streams)
    except ValueError as exc:
        problems["max_streams"] = str(exc)
    return problems


def build_ladder(choices: PlanChoices, where: Where, max_streams: int) -> SweepSpec:
    """The ladder ``choices`` describe on ``where``; PlanError if they make none."""
    if problems := ladder_problems(choices, max_streams) | where_problems(where):
        raise PlanError(problems)
    knobs, _ = parse_knobs(choices)
    plan = Plan(knobs=knobs, workloads=(workload_kind(choices.workloads[0]),), clients=where.clients, strategy="grid",
                min_runs=1, max_runs=1, seed=choices.seed, timing=choices.timing())  # fmt: skip
    return SweepSpec(
        where.server, where.clients, where.export, plan, server_address=where.server_address,
        async_opt_in=choices.allow_async, restart_opt_in=choices.allow_restart, file_size=choices.file_size,
        link_bps=choices.link_bps, measure_ceilings=choices.measure_ceilings, engine=choices.engine,
        ladder=ladder_steps(max_streams),
    )  # fmt: skip
