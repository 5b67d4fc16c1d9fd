"""Sweeps: the trial loop over a plan's configurations, with everything kept in the store."""

from app.sweep.apply import ConfigApplier
from app.sweep.host_side import Applying, HostSide
from app.sweep.engine import SweepEngine
from app.sweep.events import Progress, SweepFinished, SweepStarted, TrialFinished, TrialStarted
from app.sweep.spec import SweepSpec, workload_kind

__all__ = [
    "Applying",
    "HostSide",
    "ConfigApplier",
    "Progress",
    "SweepEngine",
    "SweepFinished",
    "SweepSpec",
    "SweepStarted",
    "TrialFinished",
    "TrialStarted",
    "workload_kind",
]
