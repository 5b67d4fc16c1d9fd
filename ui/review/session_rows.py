"""The session list: one row per session, filtered by text, host and date."""

from __future__ import annotations

from dataclasses import dataclass

from app.report import objective_views, plan_summary
from app.report.session_data import NOT_STORED, not_stored
from app.vocabulary import date_text
from app.store.records import SessionRecord
from app.store.store import Store

COLUMNS = ("#", "Date", "Hosts", "Plan", "State", "Recommended", "Notes")  # recommended: each objective's figure


@dataclass(frozen=True, slots=True)
class SessionRow:
    id: int
    created: float
    date: str
    hosts: tuple[str, ...]
    plan: str
    state: str
    best: str
    origin: str | None
    notes: str

    @classmethod
    def of(cls, store: Store, s: SessionRecord) -> SessionRow:
        views, _ = objective_views(store, s.id, telemetry=False)
        state = s.state.value + (" (imported)" if s.origin else "")
        best = ", ".join(f"{v.objective} {v.figure_text()}" for v in views if v.figure is not None)
        if best and not_stored(views):
            best = f"{NOT_STORED}: {best}"
        return cls(s.id, s.created, date_text(s.created), s.hosts, plan_summary(s.plan), state,
                   best or "no results", s.origin, s.notes)

    def cells(self) -> tuple[str, ...]:
        return (str(self.id), self.date, ", ".join(self.hosts) or "—", self.plan, self.state, self.best,
                " ".join(self.notes.split()))  # one line in the list; the cell's tooltip has it as written

    def matches(self, text: str) -> bool:
        needle = text.strip().lower()
        return not needle or any(needle in c.lower() for c in (*self.cells(), self.origin or "", self.notes))
