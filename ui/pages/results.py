"""Page 5: the ranking, the recommendation with its evidence, and the config to paste."""

from __future__ import annotations

import html
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, Slot
from PySide6.QtGui import QFont, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ui import theme
from ui.core_api import KnobEffect, Results, Snippet
from ui.pages.base import Page, config_text, mb_s

RANK_COLUMNS = ("#", "Configuration", "Mean", "95 % CI", "CV", "Runs")


class SnippetView(QWidget):
    """One snippet with copy and save; ``save_to`` is what the Save button ends in."""

    def __init__(self, snippet: Snippet, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.snippet = snippet
        self.text = QPlainTextEdit(snippet.text, self)
        self.text.setReadOnly(True)
        self.text.setProperty("snippet", True)
        font = QFont("DejaVu Sans Mono")
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.text.setFont(font)
        self.copy_button = QPushButton("&Copy", self)
        self.copy_button.clicked.connect(self.copy)
        self.save_button = QPushButton("&Save…", self)
        self.save_button.clicked.connect(self._ask_save)
        self.status = QLabel(self)
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        buttons.addWidget(self.copy_button)
        buttons.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text, 1)
        layout.addLayout(buttons)

    @Slot()
    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.snippet.text)
        self.status.setText("Copied to the clipboard.")

    @Slot()
    def _ask_save(self) -> None:
        path, _filter = QFileDialog.getSaveFileName(self, f"Save {self.snippet.title}", self.snippet.filename)
        if path:
            self.save_to(Path(path))

    def save_to(self, path: Path) -> None:
        try:
            path.write_text(self.snippet.text, encoding="utf-8")
        except OSError as exc:
            self.status.setText(f"Could not save: {exc.strerror} ({path})")
        else:
            self.status.setText(f"Saved to {path}")


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
        top.addWidget(QLabel("&Knob:", self, buddy=self.box))
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
        for x, m, cv in zip(xs, e.mean_bps, e.cv):
            label = pg.TextItem(f"CV {cv * 100:.1f} %", anchor=(0.5, 1.2),
                                color=self.palette().color(self.palette().ColorRole.Text))
            label.setPos(x, m)
            item.addItem(label)
        item.getAxis("bottom").setTicks([list(zip(xs, e.values))])
        item.setLabel("bottom", e.knob)
        item.setYRange(0, max(e.mean_bps, default=1) * 1.15)


class ResultsPage(Page):
    TITLE = "Results"
    SUBTITLE = "Ranked configurations, the recommendation and the evidence for it, and the config to apply."

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.results: Results | None = None
        self.recommendation = QLabel(self)
        self.recommendation.setObjectName("recommendation")
        self.recommendation.setWordWrap(True)
        self.recommendation.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        rec_box = QGroupBox("Recommendation", self)
        QVBoxLayout(rec_box).addWidget(self.recommendation)

        self.objective = QComboBox(self)
        self.objective.setAccessibleName("Objective")
        self.objective.currentIndexChanged.connect(self._show_ranking)
        self.ranking = QTableWidget(0, len(RANK_COLUMNS), self)
        self.ranking.setObjectName("rankingTable")
        self.ranking.setHorizontalHeaderLabels(RANK_COLUMNS)
        self.ranking.verticalHeader().hide()
        self.ranking.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.ranking.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.ranking.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.ranking.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        rank_box = QGroupBox("Ranking", self)
        rank_layout = QVBoxLayout(rank_box)
        row = QHBoxLayout()
        row.addWidget(QLabel("&Objective:", self, buddy=self.objective))
        row.addWidget(self.objective, 1)
        rank_layout.addLayout(row)
        rank_layout.addWidget(self.ranking)

        self.chart = KnobChart(self)
        self.snippets = QTabWidget(self)
        self.snippets.setObjectName("snippetTabs")
        self.snippet_views: list[SnippetView] = []
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
        self.show_results(self.state.results or self.core.results())

    def show_results(self, results: Results) -> None:
        self.results = results
        rec = results.recommendation
        evidence = "".join(f"<li>{html.escape(e)}</li>" for e in rec.evidence)
        if results.ranked:
            self.recommendation.setText(
                f"<p><b>{html.escape(config_text(rec.config))}</b> — {rec.gain_pct:+.0f} % against today's "
                f"configuration on {html.escape(next(iter(results.ranked), ''))}.</p><ul>{evidence}</ul>")
        else:  # nothing could be ranked: only the why
            self.recommendation.setText(f"<ul>{evidence}</ul>")
        self.objective.blockSignals(True)
        self.objective.clear()
        self.objective.addItems(list(results.ranked))
        self.objective.blockSignals(False)
        self._show_ranking()
        self.chart.set_effects(results.effects)
        while self.snippets.count():
            self.snippets.removeTab(0)
        self.snippet_views = [SnippetView(s, self.snippets) for s in results.snippets]
        for view in self.snippet_views:
            self.snippets.addTab(view, view.snippet.title)
        icon = "⚠"
        self.safety.setText("<br>".join(f"{icon} {html.escape(n)}" for n in results.safety_notes))

    def _show_ranking(self, *_args: object) -> None:
        if self.results is None or self.objective.currentIndex() < 0:
            self.ranking.setRowCount(0)
            return
        rows = self.results.ranked[self.objective.currentText()]
        self.ranking.setRowCount(len(rows))
        for i, r in enumerate(rows):
            cells = (str(i + 1), config_text(r.config), mb_s(r.mean_bps),
                     f"{r.ci_low_bps / 1e6:,.0f} – {r.ci_high_bps / 1e6:,.0f}", f"{r.cv * 100:.1f} %", str(r.runs))
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col != 1:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.ranking.setItem(i, col, item)
