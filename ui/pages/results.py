"""Page 5: the ranking, the recommendation with its evidence, and the config to paste.

Everything below the objective box follows the selected objective: the recommendation,
the ranking, the snippets (rendered for that objective's configuration) and the chart
per knob (app.session.results). A study (a load ladder, directory scaling) recommends no
knob: its page is the study's own view, as the review shows it (ui.review.study_views).
The page ends in what an admin does next: export the report, or start a new session (the
finished one stays in the database).
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.report import ObjectiveView, SessionData
from app.report.session_data import LATENCY_HEADERS
from app.session import GoalKind
from app.session.results import ExportError, ObjectiveResults, export_report, objective_results, saved_text
from app.vocabulary import config_text, interval_text, percent_text, signed_percent_text
from ui.pages.base import Page
from ui.pages.results_chart import KnobChart
from ui.pages.results_snippets import SnippetCard
from ui.review.dialogs import Dialogs
from ui.review.study_views import study_view
from ui.review.tables import fill_table, make_table
from ui.table_fit import ColumnFit
from ui.theme import buddy_label

STUDY_SUBTITLE = "The study's curve, where it bends or collapses and why, and the figures behind it."
RANK_COLUMNS = ("#", "Configuration", "Mean (95 % CI)", *LATENCY_HEADERS, "Median CV", "Runs")


class ResultsPage(Page):
    TITLE = "Results"
    SUBTITLE = "Ranked configurations, the recommendation and the evidence for it, and the config to apply."
    newSessionRequested = Signal()

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.data: SessionData | None = None
        self.shown: ObjectiveResults | None = None
        self._cache: dict[str, ObjectiveResults | None] = {}
        self._saved = ""  # where the session is kept, in true words
        self.study: QWidget | None = None  # a study's view, in place of the recommendation and its tabs
        self.dialogs = Dialogs(self)
        self.recommendation = QLabel(self)
        self.recommendation.setObjectName("recommendation")
        self.recommendation.setWordWrap(True)
        self.recommendation.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.objective = QComboBox(self)
        self.objective.setAccessibleName("Objective")
        self.objective.currentIndexChanged.connect(self._show_objective)
        self.workload = QLabel(self)
        self.workload.setObjectName("objectiveWorkload")
        self.workload.setWordWrap(True)
        rec_box = QWidget(self)  # no group box: its frame and title cost the ranking two rows on a short screen
        rec_box.setAccessibleName("Recommendation")
        rec_layout = QVBoxLayout(rec_box)
        rec_layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(buddy_label("&Objective:", self.objective, self))
        row.addWidget(self.objective)
        row.addWidget(self.workload, 1)
        rec_layout.addLayout(row)
        evidence = QScrollArea(rec_box)  # long evidence scrolls rather than squeezing the ranking
        evidence.setWidget(self.recommendation)
        evidence.setWidgetResizable(True)
        evidence.setFrameShape(QFrame.Shape.NoFrame)
        evidence.setAccessibleName("Recommendation and its evidence")  # it takes focus to scroll by keys
        rec_layout.addWidget(evidence, 1)

        self.ranking = make_table(RANK_COLUMNS, self, name="rankingTable")
        self.ranking.setAccessibleName("Ranking")
        self.ranking_fit = ColumnFit(self.ranking, narrow=(1,))  # a long configuration wraps, the figures stay whole

        self.chart = KnobChart(self)
        self.snippets = QTabWidget(self)
        self.snippets.setObjectName("snippetTabs")
        self.snippets.setUsesScrollButtons(True)
        self.snippet_views: list[SnippetCard] = []
        # One pane at a time, each the page's whole width: beside each other, the ranking's columns
        # (figures, latencies, CV, runs) and the fstab line both scrolled sideways below 1280 pixels.
        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("resultTabs")
        self.tabs.addTab(self.ranking, "&Ranking")
        self.tabs.addTab(self.snippets, "&Config snippets")
        self.tabs.addTab(self.chart, "&Per knob")  # &K is the chart's Knob field

        self.safety = QLabel(self)
        self.safety.setObjectName("safetyNotes")
        self.safety.setWordWrap(True)
        self.safety.hide()  # shown with notes only: no blank row above the buttons

        self.saved = QLabel(self)
        self.saved.setObjectName("savedLabel")
        self.saved.setWordWrap(True)
        self.saved.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.export_button = QPushButton("&Export report…", self)
        self.export_button.setToolTip("Write this session's self-contained HTML report: ranking, evidence, "
                                      "plots, snippets, host facts and the journal.")  # fmt: skip
        self.export_button.clicked.connect(self.ask_export)
        self.new_button = QPushButton("&New session", self)
        self.new_button.setToolTip("Back to the first page with nothing chosen; this session stays in the "
                                   "database (Sessions ▸ Review saved sessions).")  # fmt: skip
        self.new_button.clicked.connect(self.newSessionRequested)
        actions = QHBoxLayout()
        actions.addWidget(self.saved, 1)
        actions.addWidget(self.export_button)
        actions.addWidget(self.new_button)

        self.rec_box = rec_box
        upright = QSplitter(Qt.Orientation.Vertical, self)
        upright.addWidget(rec_box)
        upright.addWidget(self.tabs)
        upright.setStretchFactor(1, 1)
        upright.setSizes([190, 400])
        layout = self.body_layout()
        layout.addWidget(upright, 1)
        layout.addWidget(self.safety)
        layout.addLayout(actions)

    def initializePage(self) -> None:
        self.show_results(self.state.results or self.session.results())

    def show_results(self, data: SessionData) -> None:
        """A stored session as the read model gives it; the objective chooses what is shown."""
        self.data = data
        self._cache = {}
        self._saved = saved_text(self.session.store, data.session.id, demo=self.session.simulated,
                                 throwaway=self.session.throwaway is not None)
        self.saved.setText(self._saved)
        self._show_study(data.session.id)
        self.objective.blockSignals(True)
        self.objective.clear()
        self.objective.addItems([o.objective for o in data.objectives])
        self.objective.blockSignals(False)
        self._show_objective()

    def _show_study(self, session_id: int) -> None:
        """A study's view as the first tab and the sweep's panes hidden; a sweep's panes back otherwise."""
        if self.study is not None:
            self.tabs.removeTab(self.tabs.indexOf(self.study))
            self.study.deleteLater()
        self.study = study_view(self.session.store, session_id, self.tabs)
        if self.study is not None:
            self.tabs.setCurrentIndex(self.tabs.insertTab(0, self.study, self.study.TITLE))
        for index in range(self.tabs.count()):
            self.tabs.setTabVisible(index, self.study is None or self.tabs.widget(index) is self.study)
        self.rec_box.setVisible(self.study is None)
        self.header.subtitle.setText(self.SUBTITLE if self.study is None else STUDY_SUBTITLE)

    @property
    def view(self) -> ObjectiveView | None:
        return self.shown.view if self.shown is not None else None

    def _results_of(self, objective: str) -> ObjectiveResults | None:
        if self.data is None:
            return None
        if objective not in self._cache:
            self._cache[objective] = objective_results(self.session.store, self.data, objective)
        return self._cache[objective]

    def _show_objective(self, *_args: object) -> None:
        self.shown = shown = self._results_of(self.objective.currentText()) if self.objective.currentIndex() >= 0 \
            else None
        self._show_notes()
        if shown is None:
            self.recommendation.setText("No configuration could be ranked: every trial was left out (see the notes).")
            self.workload.setText("")
            self.ranking.setRowCount(0)
            self.chart.set_bars(())
            self._show_snippets(None)
            return
        view = shown.view
        self.workload.setText(f"Workload: {shown.workload}")
        what = "p99 " if view.goal.kind is GoalKind.LOWEST_P99 else ""  # that goal's gain is a change of p99
        gain = f" ({what}{signed_percent_text(view.gain_rel)} against today's configuration)" \
            if view.gain_rel is not None and view.plan is None else ""  # a plan's verdict says its confirmed gain
        evidence = "".join(f"<li>{html.escape(e)}</li>" for e in (*view.evidence, *view.warnings))
        self.recommendation.setText(f"<p><b>{html.escape(view.verdict())}</b>{html.escape(gain)}</p><ul>{evidence}</ul>")
        fill_table(self.ranking, [(r.rank, r.config_cell(), interval_text(r.mean, r.half_width, view.unit),
                                   *r.latency_cells(), percent_text(r.median_cv), r.n)
                                  for r in view.ranking], numeric=(0, *range(2, len(RANK_COLUMNS))))  # fmt: skip
        self.chart.set_bars(shown.knobs)
        self._show_snippets(shown)

    def _show_notes(self) -> None:
        """The session's notes and the shown objective's snippet trouble (its warnings stand with its evidence)."""
        if self.data is None:
            self.safety.setText("")
            self.safety.hide()
            return
        not_ranked = [f"Not ranked: {config_text(dict(e.get('config') or {}))}: {e.get('reason', '')}"
                      for e in self.data.excluded]  # fmt: skip
        trouble = [self.shown.snippet_error] if self.shown is not None and self.shown.snippet_error else []
        notes = [*self.data.notes, *not_ranked, *trouble]
        self.safety.setText("<br>".join(f"⚠ {html.escape(n)}" for n in notes))
        self.safety.setVisible(bool(notes))

    def _show_snippets(self, shown: ObjectiveResults | None) -> None:
        current = self.snippets.currentWidget()
        key = current.snippet.key if isinstance(current, SnippetCard) else None
        while self.snippets.count():
            widget = self.snippets.widget(0)
            self.snippets.removeTab(0)
            if widget is not None:
                widget.deleteLater()
        self.snippet_views = [SnippetCard(p, self.dialogs, self.snippets) for p in shown.snippets] if shown else []
        for card in self.snippet_views:
            self.snippets.addTab(card, card.snippet.title)
            self.snippets.setTabToolTip(self.snippets.count() - 1, f"{card.placed.where} — on {card.placed.on}")
        keys = [c.snippet.key for c in self.snippet_views]
        if key in keys:  # the same kind of snippet stays in front when the objective changes
            self.snippets.setCurrentIndex(keys.index(key))

    # --- what next -----------------------------------------------------------------------
    def ask_export(self) -> None:
        if self.data is None:
            return
        sid = self.data.session.id
        dest = self.dialogs.save_path("Export HTML report", f"nfs-tuner-session-{sid}.html", "HTML report (*.html)")
        if dest is not None:
            self.export_to(dest)

    def export_to(self, dest: Path) -> Path | None:
        if self.data is None:
            return None
        try:
            path = export_report(self.session.store, self.data, dest)
        except ExportError as exc:
            self.saved.setText(f"{self._saved} ⚠ {exc}")
            return None
        self.saved.setText(f"{self._saved} Report written to {path}.")
        return path
