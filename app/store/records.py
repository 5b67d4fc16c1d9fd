"""Rows of the store as plain frozen objects; JSON columns arrive decoded."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.store.states import JournalState, SessionState, TrialState

JsonValue = Any  # what json.loads returns


@dataclass(frozen=True, slots=True)
class SessionRecord:
    id: int
    created: float
    updated: float
    state: SessionState
    hosts: tuple[str, ...]
    plan: JsonValue | None
    notes: str
    origin: str | None  # None: made on this machine; else the file it was imported from


@dataclass(frozen=True, slots=True)
class HostFactsRecord:
    id: int
    session_id: int
    host: str
    role: str
    taken_at: float
    facts: JsonValue


@dataclass(frozen=True, slots=True)
class PlanRecord:
    id: int
    session_id: int
    created: float
    plan: JsonValue


@dataclass(frozen=True, slots=True)
class TrialRecord:
    id: int
    session_id: int
    plan_id: int | None
    config: dict[str, JsonValue]
    workload: JsonValue
    repetition: int
    order_index: int
    state: TrialState
    reason: str
    started: float | None
    ended: float | None
    summary: JsonValue | None
    step: str = ""  # the plan's step that asked for it (experiments.steps); "" in older sessions: a search


@dataclass(frozen=True, slots=True)
class JournalEntry:
    id: int
    session_id: int | None
    host: str
    knob: str
    target: str
    old_value: JsonValue
    new_value: JsonValue
    created_at: float
    updated_at: float
    state: JournalState
    detail: str


@dataclass(frozen=True, slots=True)
class RecommendationRecord:
    id: int
    session_id: int
    objective: str
    config: dict[str, JsonValue]
    evidence: JsonValue
    created_at: float


@dataclass(frozen=True, slots=True)
class TelemetryArrays:
    """Host telemetry of a trial, column-wise, ordered by host then time."""

    host: tuple[str, ...]  # per row
    t: Any  # numpy float64 arrays
    interval: Any
    disk_read_bps: Any
    disk_write_bps: Any
    net_rx_bps: Any
    net_tx_bps: Any
    cpu_busy: Any
    extra: tuple[dict[str, float], ...]
