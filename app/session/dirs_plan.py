"""From what an admin chose to a directory-scaling study (app.sweep.dirs): knobs held fixed.

The same ``PlanChoices`` as a load ladder (app.session.ladder_plan): each ``--knob``
names one value held for the whole study; the workload is dir_scaling, one trial per layout.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.session.ladder_plan import held_problems
from app.session.plan import PLAN_PAGE_OPT_INS, OptInWords, PlanChoices, PlanError, Where, parse_knobs, where_problems
from app.sweep.dirs import LAYOUTS
from app.sweep.spec import SweepSpec
from experiments.plan import Plan

MAX_ENTRIES = 50_000_000  # the workload's own bound (experiments.workloads.DirScaling)


def dirs_problems(choices: PlanChoices, entries: int, layouts: Sequence[str],
                  opt_ins: OptInWords = PLAN_PAGE_OPT_INS) -> dict[str, str]:  # fmt: skip
    """Everything wrong with a directory study of ``choices``, by field; empty when they make one."""
    problems = {k: v for k, v in held_problems(choices, "directory study", opt_ins).items() if k != "workloads"}
    if not 1 <= entries <= MAX_ENTRIES:
        problems["entries"] = f"entries must be 1 to {MAX_ENTRIES:,}, got {entries:,}"
    if not layouts or any(x not in LAYOUTS for x in layouts) or len(set(layouts)) != len(layouts):
        problems["layouts"] = f"layouts are one each of {', '.join(LAYOUTS)}, got {', '.join(layouts) or 'none'}"
    return problems


def build_dirs(choices: PlanChoices, where: Where, entries: int, layouts: Sequence[str]) -> SweepSpec:
    """The study ``choices`` describe on ``where``; PlanError if they make none."""
    if problems := dirs_problems(choices, entries, layouts) | where_problems(where):
        raise PlanError(problems)
    knobs, _ = parse_knobs(choices)
    plan = Plan(knobs=knobs, workloads=("dir_scaling",), clients=where.clients, strategy="grid",
                min_runs=1, max_runs=1, seed=choices.seed, timing=choices.timing())  # fmt: skip
    return SweepSpec(
        where.server, where.clients, where.export, plan, server_address=where.server_address,
        async_opt_in=choices.allow_async, restart_opt_in=choices.allow_restart,
        measure_ceilings=choices.measure_ceilings, engine="agent",
        dirs=tuple(layouts), entries=entries,
    )  # fmt: skip
