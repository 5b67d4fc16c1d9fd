"""Which study a face asked for: a knob sweep, a load ladder or directory scaling, with its settings.

The Plan page and the command line (`nfs-tuner sweep`, `nfs-tuner study ladder|dirs`)
end in one of three specs (app.session.plan, ladder_plan, dirs_plan); this names the
choice, checks it in those modules' words, and says how long a study takes (a sweep's
time comes from its strategy; a ladder's from its steps; a directory study's from the
entries it creates, at a stated rate, since no host has measured it yet).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

from app.session.dirs_plan import build_dirs, dirs_problems
from app.session.ladder_plan import build_ladder, ladder_problems
from app.session.plan import PLAN_PAGE_OPT_INS, OptInWords, PlanChoices, Where, build_spec, plan_problems
from app.sweep.dirs import LAYOUTS as LAYOUTS  # re-exported too
from app.sweep.ladder import MAX_STREAMS as MAX_STREAMS  # re-exported: a bound the faces take from here
from app.sweep.spec import SweepSpec
from experiments.estimate import DurationEstimate, estimate_duration
from experiments.plan import Value

DEFAULT_MAX_STREAMS = 64  # the faces' other bounds: MAX_STREAMS, LAYOUTS (from the engines that hold them)
DEFAULT_ENTRIES = 1_000_000
# A directory study's time is its entries over the create (and timed delete) rate, unknown
# until it runs: planned at this rate per client, which a LAN NFS server reaches early on.
PLANNED_CREATES_PER_S = 1000.0


class StudyKind(StrEnum):
    SWEEP = "sweep"
    LADDER = "ladder"
    DIRS = "dirs"


STUDY_TITLES = {
    StudyKind.SWEEP: "Knob sweep: find the best configuration",
    StudyKind.LADDER: "Load ladder: how much load it carries",
    StudyKind.DIRS: "Directory scaling: where creates collapse",
}
STUDY_HELP = {
    StudyKind.SWEEP: "Try the chosen knobs' values and recommend the configuration that serves the goal best.",
    StudyKind.LADDER: "Run one workload on every client at once with 1, 2, 4, … streams each and find the knee: the "
                      "most load carried while more load still paid, and the layer that saturated there.",
    StudyKind.DIRS: "Grow one directory on every client, flat and hashed over 256 subdirectories, and trace the "
                    "create rate against its entries to find where creates collapse.",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class StudyChoice:
    """What kind of run, and the settings only a study has (a sweep's are all in PlanChoices)."""

    kind: StudyKind = StudyKind.SWEEP
    max_streams: int = DEFAULT_MAX_STREAMS  # a ladder's last step, streams per client
    entries: int = DEFAULT_ENTRIES  # a directory study's files per directory
    layouts: tuple[str, ...] = LAYOUTS  # a directory study's layouts, each one trial


def as_study(choices: PlanChoices, kind: StudyKind) -> PlanChoices:
    """``choices`` as ``kind`` runs them: a study measures each step once, and a directory study's
    workload is its own (both faces take their choices through here)."""
    if kind is StudyKind.LADDER:
        return replace(choices, repetitions=1)
    if kind is StudyKind.DIRS:
        return replace(choices, workloads=("dir_scaling",), repetitions=1)
    return choices


def study_problems(choices: PlanChoices, study: StudyChoice, opt_ins: OptInWords = PLAN_PAGE_OPT_INS,
                   baseline: Mapping[str, Value] | None = None) -> dict[str, str]:  # fmt: skip
    """Everything wrong with ``choices`` for ``study``, by field, in the words of the face whose ``opt_ins``
    they are; empty when they make one (``baseline``: the hosts' values today, which a sweep's time budget
    counts)."""
    if study.kind is StudyKind.LADDER:
        return ladder_problems(choices, study.max_streams, opt_ins)
    if study.kind is StudyKind.DIRS:
        return dirs_problems(choices, study.entries, study.layouts, opt_ins)
    return plan_problems(choices, opt_ins, baseline=baseline)


def build_study(choices: PlanChoices, where: Where, study: StudyChoice,
                baseline: Mapping[str, Value] | None = None) -> SweepSpec:  # fmt: skip
    """The spec of ``study`` on ``where``; PlanError if the choices make none."""
    if study.kind is StudyKind.LADDER:
        return build_ladder(choices, where, study.max_streams)
    if study.kind is StudyKind.DIRS:
        return build_dirs(choices, where, study.entries, study.layouts)
    return build_spec(choices, where, baseline or {})


def spec_estimate(spec: SweepSpec) -> DurationEstimate:
    """Trials and time of a spec: a sweep's strategy, a ladder's steps, a directory study's entries."""
    timing = spec.plan.timing
    if spec.ladder:
        steps = len(spec.ladder)
        return DurationEstimate(steps, steps, steps * timing.expected_trial_s(), steps * timing.worst_trial_s(), False)
    if spec.dirs:
        layouts = len(spec.dirs)
        each = timing.setup_s + 2 * spec.entries / PLANNED_CREATES_PER_S  # creates, then the timed delete
        worst = timing.setup_s + spec.phased_cap_s  # where the engine calls it stuck
        return DurationEstimate(layouts, layouts, layouts * each, layouts * worst, False)
    return estimate_duration(spec.plan)
