"""Page 5: the ranking, the recommendation with its evidence, and the config to paste."""

from __future__ import annotations

import html

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.recommend.evidence import config_text, pct
from app.report import KnobEffect, ObjectiveView, SessionData, knob_effects
from app.report.formatting import ci_text
from ui import theme
from ui.theme import buddy_label
from ui.pages.base import Page
from ui.review.dialogs import Dialogs
from ui.review.snippets_view import SnippetPane
from ui.review.tables import fill_table, make_table

RANK_COLUMNS = ("#", "Configuration", "Mean (95 % CI)", "Median CV", "Runs")


class KnobChart(QWidget):
    """Mean throughput for each value of one knob, with its CV written on the bar."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.effects: tuple[KnobEffect, ...] = ()
        self.box = QComboBox(self)
        self.box.setAccessibleName("Knob to chart")
        self.box.currentIndexChanged.connect(self._draw)
        self.plot = pg.PlotWidget()
        self.plot.getPlotItem().setLabel("left", "mean throughput", units="B/s")
        self.plot.getPlotItem().setMenuEnabled(False)
        theme.style_plot(self.plot)
        top = QHBoxLayout()
        top.addWidget(buddy_label("&Knob:", self.box, self))
        top.addWidget(self.box, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.plot, 1)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:  # light/dark switch: bars and text follow
            theme.style_plot(self.plot, self.palette())
            self._draw()
        super().changeEvent(event)

    def set_effects(self, effects: tuple[KnobEffect, ...]) -> None:
        self.effects = effects
        self.box.blockSignals(True)
        self.box.clear()
        self.box.addItems([e.knob for e in effects])
        self.box.blockSignals(False)
        self._draw()

    def _draw(self, *_args: object) -> None:
        item = self.plot.getPlotItem()
        item.clear()
        if not self.effects or self.box.currentIndex() < 0:
            return
        e = self.effects[self.box.currentIndex()]
        xs = list(range(len(e.values)))
        colour = self.palette().color(self.palette().ColorRole.Highlight)
        item.addItem(pg.BarGraphItem(x=xs, height=list(e.mean_bps), width=0.6, brush=colour))
        for x, m, cv in zip(xs, e.mean_bps, e.median_cv, strict=True):
            label = pg.TextItem(f"CV {cv * 100:.1f} %", anchor=(0.5, 1.2),
                                color=self.palette().color(self.palette().ColorRole.Text))
            label.setPos(x, m)
            item.addItem(label)
        item.getAxis("bottom").setTicks([list(zip(xs, map(str, e.values), strict=True))])
        item.setLabel("bottom", e.knob)
        item.setYRange(0, max(e.mean_bps, default=1) * 1.15)


class ResultsPage(Page):
    TITLE = "Results"
    SUBTITLE = "Ranked configurations, the recommendation and the evidence for it, and the config to apply."

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.data: SessionData | None = None
        self.dialogs = Dialogs(self)
        self.recommendation = QLabel(self)
        self.recommendation.setObjectName("recommendation")
        self.recommendation.setWordWrap(True)
        self.recommendation.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.objective = QComboBox(self)
        self.objective.setAccessibleName("Objective")
        self.objective.currentIndexChanged.connect(self._show_objective)
        rec_box = QGroupBox("Recommendation", self)
        rec_layout = QVBoxLayout(rec_box)
        row = QHBoxLayout()
        row.addWidget(buddy_label("&Objective:", self.objective, self))
        row.addWidget(self.objective, 1)
        rec_layout.addLayout(row)
        rec_layout.addWidget(self.recommendation)

        self.ranking = make_table(RANK_COLUMNS, self, name="rankingTable")
        rank_box = QGroupBox("Ranking", self)
        QVBoxLayout(rank_box).addWidget(self.ranking)

        self.chart = KnobChart(self)
        self.snippets = QTabWidget(self)
        self.snippets.setObjectName("snippetTabs")
        self.snippet_views: list[SnippetPane] = []
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self.snippets, "&Config snippets")
        self.tabs.addTab(self.chart, "Per &knob")

        self.safety = QLabel(self)
        self.safety.setObjectName("safetyNotes")
        self.safety.setWordWrap(True)

        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(rank_box)
        split.addWidget(self.tabs)
        split.setSizes([640, 560])
        layout = QVBoxLayout(self)
        layout.addWidget(rec_box)
        layout.addWidget(split, 1)
        layout.addWidget(self.safety)

    def initializePage(self) -> None:
        self.show_results(self.state.results or self.session.results())

    def show_results(self, data: SessionData) -> None:
        """A stored session as the read model gives it; the objective chooses what is shown."""
        self.data = data
        self.objective.blockSignals(True)
        self.objective.clear()
        self.objective.addItems([o.objective for o in data.objectives])
        self.objective.blockSignals(False)
        # the objective's warnings stand with its evidence, each snippet's with the snippet
        not_ranked = [f"Not ranked: {config_text(dict(e.get('config') or {}))}: {e.get('reason', '')}"
                      for e in data.excluded]  # fmt: skip
        notes = [*data.notes, *not_ranked, *(g.error for g in data.snippet_groups if g.error)]
        self.safety.setText("<br>".join(f"⚠ {html.escape(n)}" for n in notes))
        self._show_objective()

    @property
    def view(self) -> ObjectiveView | None:
        if self.data is None or self.objective.currentIndex() < 0:
            return None
        return self.data.objective(self.objective.currentText())

    def _show_objective(self, *_args: object) -> None:
        view = self.view
        if view is None:
            self.recommendation.setText("No configuration could be ranked: every trial was left out (see the notes).")
            self.ranking.setRowCount(0)
            self.chart.set_effects(())
            self._show_snippets(None)
            return
        gain = f" ({'+' if view.gain_rel >= 0 else '−'}{pct(abs(view.gain_rel))} against today's configuration)" \
            if view.gain_rel is not None else ""
        evidence = "".join(f"<li>{html.escape(e)}</li>" for e in (*view.evidence, *view.warnings))
        self.recommendation.setText(f"<p><b>{html.escape(view.verdict())}</b>{html.escape(gain)}</p><ul>{evidence}</ul>")
        fill_table(self.ranking, [(r.rank, config_text(r.config), ci_text(r.mean, r.half_width, view.unit),
                                   pct(r.median_cv) if r.median_cv is not None else "—", r.n)
                                  for r in view.ranking], numeric=(0, 2, 3, 4))  # fmt: skip
        self.chart.set_effects(knob_effects(view))
        self._show_snippets(view)

    def _show_snippets(self, view: ObjectiveView | None) -> None:
        while self.snippets.count():
            self.snippets.removeTab(0)
        group = self.data.snippet_group(view.objective) if self.data is not None and view is not None else None
        self.snippet_views = [SnippetPane(s, self.dialogs, self.snippets) for s in group.snippets] if group else []
        for pane in self.snippet_views:
            self.snippets.addTab(pane, pane.snippet.title)
