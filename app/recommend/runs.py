"""A session's stored trials as its plan's steps saw them: the runs the verdicts are drawn from.

The engine feeds these to the steps when it resumes a session, and the recommendation
draws its verdicts (experiments.verdicts) from them, so both read one conversion: a
trial's figure is what it scored for the plan's goal, a broken one counts as a lost
run (an interrupted one not at all: it runs again), and one a host refused or that
broke a host is held against its configuration.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from app.store.records import TrialRecord
from app.store.states import TrialState
from experiments.board import Run
from experiments.goals import Goal, GoalKind
from experiments.plan import Config
from experiments.steps import DIRS, LADDER, SEARCH, STEP_NAMES

INTERRUPTED = "interrupted"  # reason prefix of a trial a lost host or a killed run cut (it runs again)
BLAMED = "recorded against it, as what may have broken the host"  # such a configuration is not tried again
REFUSED = "applying the configuration failed"  # a host refused it (a bad value, a shared transport): its own
VARIANT_FIELDS = {LADDER: "jobs", DIRS: "layout"}  # the workload field each study's step sets


def score_of(summary: Mapping[str, Any], goal: Goal) -> float | None:
    """What a trial's summary scores for the plan's steps, higher better: its mean figure, or for the
    lowest-p99 goal the inverse of its p99 (a trial with no p99 then scores nothing). Under a p99 cap a
    trial over it scores a thousandth of its figure: measured, never chosen."""
    mean = summary.get("mean")
    if not isinstance(mean, int | float) or isinstance(mean, bool) or not math.isfinite(mean):
        return None
    latency = summary.get("latency")
    p99 = latency.get("p99_ms") if isinstance(latency, Mapping) else None
    p99 = float(p99) if isinstance(p99, int | float) and not isinstance(p99, bool) and math.isfinite(p99) else None
    if goal.kind is GoalKind.LOWEST_P99:
        return 1.0 / p99 if p99 and p99 > 0 else None
    if goal.kind is GoalKind.P99_CAP and goal.p99_max_ms is not None and p99 is not None and p99 > goal.p99_max_ms:
        return float(mean) * 1e-3
    return float(mean)


def stored_step(step: str, workload: Mapping[str, Any], study: str = "") -> tuple[str, tuple[tuple[str, Any], ...]]:
    """(the step a stored trial ran for, the variant it set): "" in older sessions is a search, or the study's step
    (``study``: "ladder", "dirs" or "")."""
    if step not in STEP_NAMES:
        step = study if study in VARIANT_FIELDS else SEARCH
    field = VARIANT_FIELDS.get(step)
    return step, (((field, workload[field]),) if field and field in workload else ())


def runs_of(trials: Sequence[TrialRecord], goal: Goal, study: str = "") -> list[Run]:
    """Finished trials as the plan's steps see them; interrupted ones are left out (they run again)."""
    out = []
    for t in trials:
        if not isinstance(t.workload, dict) or not isinstance(t.workload.get("kind"), str):
            continue
        if t.state == TrialState.OK and isinstance(t.summary, dict) and "mean" in t.summary:
            value = score_of(t.summary, goal)
        elif t.state == TrialState.BROKEN and not t.reason.startswith(INTERRUPTED):
            value = None
        else:
            continue
        step, variant = stored_step(t.step, t.workload, study)
        blamed = BLAMED in t.reason or t.reason.startswith(REFUSED)
        out.append(Run(step, Config(t.config), str(t.workload["kind"]), value, variant, blamed))
    return out
