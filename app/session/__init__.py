"""The application layer: what the CLI's commands and the wizard's pages call (see service).

``UnknownHostKey`` (a key to trust), ``Pending`` (an earlier run's leftover) and ``GoalKind``
(what a plan optimises) are the core's types the faces meet through this layer, exported here with it.
"""

from app.hosts import UnknownHostKey
from app.knobs.recovery import Pending
from app.session.plan import STRATEGY_TEXT, PlanChoices, PlanError, Where, build_spec, plan_problems, strategy_label
from app.session.baseline import Baseline, BaselineStep, BaselineStepStarted, Ceiling
from app.session.preview import Change, HostChanges, RunPreview
from app.session.choices import WORKLOADS, KnobChoice, WorkloadChoice
from app.session.service import ConfirmKey, Role, SessionError, TuningSession
from experiments.goals import GoalKind

__all__ = [
    "STRATEGY_TEXT",
    "WORKLOADS",
    "Baseline",
    "BaselineStep",
    "BaselineStepStarted",
    "Ceiling",
    "Change",
    "GoalKind",
    "ConfirmKey",
    "HostChanges",
    "KnobChoice",
    "Pending",
    "PlanChoices",
    "PlanError",
    "Role",
    "RunPreview",
    "SessionError",
    "TuningSession",
    "UnknownHostKey",
    "Where",
    "WorkloadChoice",
    "build_spec",
    "plan_problems",
    "strategy_label",
]
