"""The Run page's finished trials: a tile each that says which configuration ran, its
figure and CV, and its latency (p99 on the tile, p50 and p99.9 too in the tooltip), so the
admin can follow the sweep without opening the results. When its clients differed beyond
the noise (experiments.fairness) a fifth line says so in the report's words, the tooltip
in full; even clients add nothing. A column beside the journal,
newest at the bottom: a row under the plots cost them its height."""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QListView, QListWidget, QListWidgetItem, QStyle, QWidget

from app.sweep.events import TrialFinished
from app.vocabulary import (
    TIME_LIMITED,
    clients_note,
    trial_config_text,
    fairness_sentences,
    figure_text,
    latencies_text,
    latency_text,
    percent_text,
    time_limited_text,
)
from ui.tooltips import plain_tip

TILE_CHARS = 28  # a tile's least width in average characters: "nfsd_threads=64, rsize=…"
MAX_TILE_CHARS = 64  # a tile grows to its widest line up to this; wider lines elide (the tooltip has them)
LINES = 4  # head, configuration, figures, latency; and the clients' note when some tile has one
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
    limited = f" ({TIME_LIMITED})" if ev.limited else ""  # the rate of what completed: the tooltip says which phases
    return figure_text(ev.value_bps, ev.unit) + limited + (f", CV {percent_text(ev.cv)}" if ev.cv is not None else "")


def trial_latency(ev: TrialFinished, *, full: bool = False) -> str:
    """'p99 4.12 ms' (``full``: p50, p99 and p99.9), or that it was not measured."""
    lat = ev.latency
    if lat is None:
        return "latency not measured"
    return latencies_text(lat.p50_ms, lat.p99_ms, lat.p999_ms) if full else f"p99 {latency_text(lat.p99_ms)}"


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
        self._wanted = 0  # the widest line so far, in pixels: a configuration cut short would hide the knob that changed
        self._lines = LINES  # the most lines a tile has: one grid height for all
        self._fitted = (0, 0)  # the text width and lines the grid was sized for
        self._fit()

    def add(self, ev: TrialFinished) -> QListWidgetItem:
        self.trials.append(ev)
        item = QListWidgetItem()
        self._describe(item, len(self.trials), ev)
        good = ev.value_bps is not None and bool(ev.stable)
        icon = QStyle.StandardPixmap.SP_DialogApplyButton if good else QStyle.StandardPixmap.SP_MessageBoxWarning
        item.setIcon(self.style().standardIcon(icon))
        self.addItem(item)
        if (self._text_width(), self._lines) != self._fitted:  # its lines asked for wider or taller tiles
            self._fit()
        self.scrollToItem(item)
        return item

    def clear(self) -> None:
        self.trials.clear()
        super().clear()
        if self._lines != LINES:  # the next run's tiles start even
            self._lines = LINES
            self._fit()

    def _describe(self, item: QListWidgetItem, number: int, ev: TrialFinished) -> None:
        """Four lines (which trial and how it went, the configuration, the figures, the latency) and the
        clients' note when they differed, each cut to the tile; the tooltip has them whole."""
        config, figures = trial_config_text(dict(ev.config), ev.step), trial_figures(ev)
        head = f"#{number} {ev.workload} · {trial_mark(ev)}"
        note = clients_note(ev.fairness)
        lines = (head, config, figures, trial_latency(ev), *((note,) if note is not None else ()))
        self._lines = max(self._lines, len(lines))
        fm = self.fontMetrics()
        exact = QFontMetricsF(self.font())  # whole pixels round down ("2.1×" is 287.3): the elision would cut it
        self._wanted = max(self._wanted, *(math.ceil(exact.horizontalAdvance(line)) for line in lines))
        width = self._text_width()
        item.setText("\n".join(fm.elidedText(line, Qt.TextElideMode.ElideRight, width) for line in lines))
        item.setToolTip(plain_tip(f"Trial {number}: {ev.workload}, {trial_mark(ev)}\n{config}\n{figures}\n"
                        f"{trial_latency(ev, full=True)}"
                        + (f"\n{ev.reason}" if ev.reason and ev.reason != figures else "")
                        + (f"\n{time_limited_text(ev.limited, ev.time_limit_s)}" if ev.limited and ev.value_bps is not None else "")
                        + "".join(f"\n{sentence}" for sentence in fairness_sentences(ev.fairness))))  # fmt: skip

    def _text_width(self) -> int:
        average = self.fontMetrics().averageCharWidth()
        return min(max(average * TILE_CHARS, self._wanted), average * MAX_TILE_CHARS)

    def _fit(self) -> None:
        """Tiles and the column sized by the font and the widest line, so a larger font or a longer
        configuration gets larger tiles, never cut lines."""
        for row, ev in enumerate(self.trials):  # their lines in this font: how wide the tiles must be
            self._describe(self.item(row), row + 1, ev)
        self._fitted = (self._text_width(), self._lines)
        grid = QSize(ICON + 16 + self._text_width(), self._lines * self.fontMetrics().lineSpacing() + 10)
        self.setGridSize(grid)
        self.setMinimumHeight(grid.height() + 2 * self.frameWidth())
        self.setFixedWidth(grid.width() + self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
                           + 2 * self.frameWidth() + 4)  # fmt: skip
        for row, ev in enumerate(self.trials):
            self._describe(self.item(row), row + 1, ev)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:
            self._wanted = 0  # measured again in the new font
            self._fit()
        super().changeEvent(event)
