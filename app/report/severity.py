"""How much a journal entry, a trial or a snippet's note asks of the admin: the report's colours.

Three marks, each a CSS class of the report. ``routine``: it went as planned (a change
applied and put back, a trial measured, a remount or cache drop, how to apply a
snippet); no colour. ``warn``: something did not go as planned but nothing is left
behind (a refused change, a host lost whose dead-man switch put the value back, lines a
host sent that could not be read, a broken trial); amber, marked ⚠. ``error``: it may
still need the admin (a change that could not be put back or is still applied); red,
marked ✖. A snippet note that is a risk (async, MTU, a refused file) is ``warn``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from app.runner.agent_handle import GARBAGE_WORDS
from app.snippets.model import Snippet
from app.store.records import JournalEntry, TrialRecord
from app.store.states import JournalState, TrialState

Mark = Literal["routine", "warn", "error"]

SYMBOL: dict[Mark, str] = {"routine": "", "warn": "⚠ ", "error": "✖ "}

LEGEND: tuple[tuple[Mark, str], ...] = (
    ("routine", "No colour: went as planned (a change applied and put back, a trial measured, a remount or a "
                "cache drop, how to apply a snippet)."),
    ("warn", "⚠ Amber: did not go as planned, but nothing was left behind (a refused change, a host lost "
             "whose dead-man switch put the value back, lines a host sent that could not be read, a broken "
             "trial), or a snippet whose use carries a risk."),
    ("error", "✖ Red: may still need you: a change that could not be put back or is still applied on a host; "
              "check that host."),
)

_JOURNAL: dict[JournalState, Mark] = {
    JournalState.REVERTED: "routine",
    JournalState.REVERTED_BY_HOST: "warn",  # the host was lost; its dead-man switch put the value back
    JournalState.DISMISSED: "warn",  # refused before it was made, or closed by the admin after a check
    JournalState.INTENDED: "error",  # nobody knows whether it was made
    JournalState.APPLIED: "error",
    JournalState.FAILED: "error",  # applying or putting back failed: the host may hold either value
}


def journal_mark(entry: JournalEntry) -> Mark:
    return _JOURNAL.get(entry.state, "error")


def trial_warnings(trial: TrialRecord) -> tuple[str, ...]:
    """The runner's warnings kept in the trial's summary (unreadable lines, cleanup problems)."""
    s = trial.summary if isinstance(trial.summary, Mapping) else {}
    w = s.get("warnings")
    return tuple(str(x) for x in w) if isinstance(w, list) else ()


def trial_mark(trial: TrialRecord) -> Mark:
    if trial.state == TrialState.BROKEN or any(GARBAGE_WORDS in w for w in trial_warnings(trial)):
        return "warn"
    return "routine"


def snippet_mark(snippet: Snippet) -> Mark:
    return "warn" if snippet.risky else "routine"
