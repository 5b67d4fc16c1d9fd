"""Life cycles of sessions, trials and journal entries, with the moves each allows."""

from __future__ import annotations

from enum import StrEnum


class SessionState(StrEnum):
    RUNNING = "running"
    COMPLETE = "complete"
    INTERRUPTED = "interrupted"  # the process died; found on the next open
    CANCELLED = "cancelled"


class TrialState(StrEnum):
    RUNNING = "running"
    OK = "ok"
    BROKEN = "broken"  # conditions broke (host error, beyond the link's ceiling): not averaged in
    SKIPPED = "skipped"


class JournalState(StrEnum):
    """A host change: written as INTENDED before it is made (the journal comes first)."""

    INTENDED = "intended"
    APPLIED = "applied"
    REVERTED = "reverted"
    REVERTED_BY_HOST = "reverted_by_host"  # the host's dead-man switch put it back
    FAILED = "failed"  # applying or reverting failed: the host may hold either value
    DISMISSED = "dismissed"  # the admin checked the host and closed the entry


# Entries in these states may still hold a changed value on a host.
OPEN_JOURNAL_STATES: frozenset[JournalState] = frozenset(
    {JournalState.INTENDED, JournalState.APPLIED, JournalState.FAILED}
)

# An INTENDED entry can end in any state: after a crash nobody knows whether the
# change was made, so reverting it (writing the old value) or dismissing it is right.
JOURNAL_MOVES: dict[JournalState, frozenset[JournalState]] = {
    JournalState.INTENDED: frozenset(
        {
            JournalState.APPLIED,
            JournalState.FAILED,
            JournalState.REVERTED,
            JournalState.REVERTED_BY_HOST,
            JournalState.DISMISSED,
        }
    ),
    JournalState.APPLIED: frozenset(
        {JournalState.REVERTED, JournalState.REVERTED_BY_HOST, JournalState.FAILED, JournalState.DISMISSED}
    ),
    JournalState.FAILED: frozenset(
        {JournalState.REVERTED, JournalState.REVERTED_BY_HOST, JournalState.FAILED, JournalState.DISMISSED}
    ),
    JournalState.REVERTED: frozenset(),
    JournalState.REVERTED_BY_HOST: frozenset(),
    JournalState.DISMISSED: frozenset(),
}

SESSION_MOVES: dict[SessionState, frozenset[SessionState]] = {
    SessionState.RUNNING: frozenset(
        {SessionState.COMPLETE, SessionState.INTERRUPTED, SessionState.CANCELLED}
    ),
    # Interrupted and cancelled sessions can be resumed.
    SessionState.INTERRUPTED: frozenset({SessionState.RUNNING, SessionState.CANCELLED}),
    SessionState.CANCELLED: frozenset({SessionState.RUNNING}),
    SessionState.COMPLETE: frozenset(),
}
