"""The application layer: what the CLI's commands and the wizard's pages call (see service)."""

from app.session.plan import STRATEGY_TEXT, PlanChoices, PlanError, Where, build_spec, plan_problems
from app.session.service import (
    WORKLOADS,
    Baseline,
    Ceiling,
    ConfirmKey,
    KnobChoice,
    Role,
    SessionError,
    TuningSession,
    WorkloadChoice,
)

__all__ = [
    "STRATEGY_TEXT",
    "WORKLOADS",
    "Baseline",
    "Ceiling",
    "ConfirmKey",
    "KnobChoice",
    "PlanChoices",
    "PlanError",
    "Role",
    "SessionError",
    "TuningSession",
    "Where",
    "WorkloadChoice",
    "build_spec",
    "plan_problems",
]
