"""The Run page's finished trials: a tile each that says which configuration ran, its
figure and CV, so the admin can follow the sweep without opening the results. A column
beside the journal, newest at the bottom: a row under the plots cost them its height."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtWidgets import QListView, QListWidget, QListWidgetItem, QStyle, QWidget

from app.sweep.events import TrialFinished
from app.vocabulary import config_text, figure_text, percent_text

TILE_CHARS = 28  # a tile's width in average characters: "nfsd_threads=64, rsize=…"
ICON = 16


def trial_mark(ev: TrialFinished) -> str:
    if ev.skipped:
        return "skipped"
    if ev.value_bps is None:
        return "broken"
    return "stable" if ev.stable else "unstable"


def trial_figures(ev: TrialFinished) -> str:
    """'112.3 MB/s, CV 2.8 %', or why there is no figure: what a tile and the plot's readout say."""
    if ev.skipped:
        return "not ranked"
    if ev.value_bps is None:
        return ev.reason or "no figure"
    return figure_text(ev.value_bps, ev.unit) + (f", CV {percent_text(ev.cv)}" if ev.cv is not None else "")


class TrialStrip(QListWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("trialStrip")
        self.setAccessibleName("Finished trials")
        self.setViewMode(QListView.ViewMode.ListMode)
        self.setFlow(QListView.Flow.TopToBottom)
        self.setWrapping(False)
        self.setMovement(QListView.Movement.Static)
        self.setIconSize(QSize(ICON, ICON))
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.trials: list[TrialFinished] = []
        self._fit()

    def add(self, ev: TrialFinished) -> QListWidgetItem:
        self.trials.append(ev)
        item = QListWidgetItem()
        self._describe(item, len(self.trials), ev)
        good = ev.value_bps is not None and bool(ev.stable)
        icon = QStyle.StandardPixmap.SP_DialogApplyButton if good else QStyle.StandardPixmap.SP_MessageBoxWarning
        item.setIcon(self.style().standardIcon(icon))
        self.addItem(item)
        self.scrollToItem(item)
        return item

    def clear(self) -> None:
        self.trials.clear()
        super().clear()

    def _describe(self, item: QListWidgetItem, number: int, ev: TrialFinished) -> None:
        """Three lines (which trial and how it went, the configuration, the figures), each cut to
        the tile; the tooltip has them whole."""
        config, figures = config_text(dict(ev.config)), trial_figures(ev)
        head = f"#{number} {ev.workload} · {trial_mark(ev)}"
        fm, width = self.fontMetrics(), self._text_width()
        item.setText("\n".join(fm.elidedText(line, Qt.TextElideMode.ElideRight, width)
                               for line in (head, config, figures)))  # fmt: skip
        item.setToolTip(f"Trial {number}: {ev.workload}, {trial_mark(ev)}\n{config}\n{figures}"
                        + (f"\n{ev.reason}" if ev.reason and ev.reason != figures else ""))  # fmt: skip

    def _text_width(self) -> int:
        return self.fontMetrics().averageCharWidth() * TILE_CHARS

    def _fit(self) -> None:
        """Tiles and the column sized by the font, so a larger font gets larger tiles, never cut lines."""
        fm = self.fontMetrics()
        grid = QSize(ICON + 16 + self._text_width(), 3 * fm.lineSpacing() + 10)
        self.setGridSize(grid)
        self.setMinimumHeight(grid.height() + 2 * self.frameWidth())
        self.setFixedWidth(grid.width() + self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
                           + 2 * self.frameWidth() + 4)  # fmt: skip
        for row, ev in enumerate(self.trials):
            self._describe(self.item(row), row + 1, ev)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:
            self._fit()
        super().changeEvent(event)
