"""What the sweep tells its faces (GUI, CLI) while it runs; published on the EventBus."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class SweepStarted:
    session_id: int
    total: int  # trials the plan expects (an estimate for adaptive strategies)
    resumed: int  # trials already stored when a session is resumed


@dataclass(frozen=True, slots=True)
class TrialStarted:
    session_id: int
    trial_id: int
    config: Mapping[str, Any]
    workload: str
    repetition: int


@dataclass(frozen=True, slots=True)
class TrialFinished:
    session_id: int
    trial_id: int
    config: Mapping[str, Any]
    workload: str
    state: str  # TrialState value: ok / broken
    value_bps: float | None  # the trial's mean throughput when ok
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Progress:
    done: int
    total: int
    eta_s: float | None  # None until one trial has been timed


@dataclass(frozen=True, slots=True)
class SweepFinished:
    session_id: int
    state: str  # SessionState value: complete / cancelled / interrupted
    trials: int
    problems: tuple[str, ...] = ()  # reverts that failed: the admin must look at these hosts
