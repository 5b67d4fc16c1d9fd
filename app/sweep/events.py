"""What the sweep tells its faces (GUI, CLI) while it runs; published on the EventBus."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.store.records import JournalEntry


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
    cv: float | None = None  # stddev / mean of the measured window
    stable: bool | None = None  # the steady-state detector was satisfied
    skipped: bool = False  # the admin ended its measuring early (stored as broken)


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


@dataclass(frozen=True, slots=True)
class JournalChanged:
    """The session's journal of host changes after a change or a revert (whole, oldest first)."""

    session_id: int
    entries: tuple[JournalEntry, ...]
