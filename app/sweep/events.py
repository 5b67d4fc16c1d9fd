"""What the sweep tells its faces (GUI, CLI) while it runs; published on the EventBus."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from app.store.records import JournalEntry
from experiments.fairness import Fairness
from experiments.latency import Latency


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
    step: str = ""  # a study's step: "8 streams per client", "flat layout"; "" in a sweep


@dataclass(frozen=True, slots=True)
class TrialFinished:
    session_id: int
    trial_id: int
    config: Mapping[str, Any]
    workload: str
    state: str  # TrialState value: ok / broken
    value_bps: float | None  # the trial's figure when ok: mean bytes/s, or ops/s where ``unit`` says so
    reason: str = ""
    cv: float | None = None  # stddev / mean of the measured window
    stable: bool | None = None  # the steady-state detector was satisfied
    skipped: bool = False  # the admin ended its measuring early (stored as broken)
    unit: str = "B/s"  # "ops/s" for small files, tree and directory scaling
    latency: Latency | None = None  # p50/p99/p99.9 of the clients' merged histogram; None: not measured
    fairness: Fairness | None = None  # the clients' shares as stored with the trial; None: one client or nothing moved
    step: str = ""  # as TrialStarted's
    limited: tuple[str, ...] = ()  # phases that ended at their time limit: the figure is the rate of what completed
    time_limit_s: float | None = None  # the time a phased trial's phases were given in all


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
    topups: int = 0  # trials run again for configurations that had lost runs to broken trials
    paused_for: str = ""  # the host that stopped answering, when that ended the run (resume it later)


Decision = Literal["wait", "drop", "stop"]  # what to do about a lost host (HostLost)


@dataclass(frozen=True, slots=True)
class HostLost:
    """A host stopped answering during a trial; the sweep waits for a decision (wait, drop, stop)."""

    session_id: int
    host: str
    doing: str  # what the sweep was doing there, in words
    config: Mapping[str, Any]
    droppable: bool  # a client, and not the last one: the sweep can go on without it
    trial_id: int = 0  # the trial it interrupted
    cause: str = ""  # what was seen: "SSH connection lost", "a command did not finish within 30 s" …


@dataclass(frozen=True, slots=True)
class JournalChanged:
    """The session's journal of host changes after a change or a revert (whole, oldest first)."""

    session_id: int
    entries: tuple[JournalEntry, ...]
