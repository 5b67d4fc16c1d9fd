"""One opened session: a header, then tabs for results, samples, snippets, host facts and journal
(and first, for a study, its ladder or directory-scaling tab: ui.review.study_views)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout, QWidget

from app.report import SessionData, load_session_data, plan_summary
from app.vocabulary import date_text
from app.store.store import Store
from ui.review.details_views import FactsView, JournalView
from ui.review.dialogs import Dialogs
from ui.review.results_view import ResultsView
from ui.review.samples_view import SamplesView
from ui.review.snippets_view import SnippetsView
from ui.review.study_views import study_view


class SessionView(QWidget):
    def __init__(self, store: Store, session_id: int, dialogs: Dialogs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.session_id = session_id
        self.data: SessionData = load_session_data(store, session_id)
        s = self.data.session
        head = (f"Session {s.id} · {date_text(s.created)} · {s.state.value} · hosts {', '.join(s.hosts) or '—'}\n"
                f"Plan: {plan_summary(s.plan)} · {len(self.data.trials)} trial(s) · "
                f"{self.data.sample_count:,} samples" + (f"\n{s.origin}" if s.origin else "")
                + (f"\nNotes: {s.notes}" if s.notes else ""))
        self.header = QLabel(head, self)
        self.header.setTextFormat(Qt.TextFormat.PlainText)
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tabs = QTabWidget(self)
        self.results = ResultsView(self.data, self.tabs)
        self.samples = SamplesView(store, session_id, self.data.trials, self.tabs)
        self.snippets = SnippetsView(self.data, dialogs, self.tabs)
        self.facts = FactsView(self.data.host_facts, self.tabs)
        self.journal = JournalView(self.data.journal, self.tabs)
        self.tabs.addTab(self.results, "&Results")
        self.tabs.addTab(self.samples, "S&amples")
        self.tabs.addTab(self.snippets, "S&nippets")
        self.tabs.addTab(self.facts, "Host &facts")
        self.tabs.addTab(self.journal, "&Journal")
        self.study = study_view(store, session_id, self.tabs)  # a ladder's knee, a directory study's collapse
        if self.study is not None:  # what such a session is for: its tab comes first
            self.tabs.setCurrentIndex(self.tabs.insertTab(0, self.study, self.study.TITLE))
        layout = QVBoxLayout(self)
        layout.addWidget(self.header)
        layout.addWidget(self.tabs, 1)
