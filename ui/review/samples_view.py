"""Every sample of every trial on one zoomable time axis, beside the trials and their knob values.

Samples load when the tab is first shown (they can be a million rows); pyqtgraph draws
them clipped to the view and peak-downsampled, so zooming stays fast. Selecting a trial
zooms to it; the label above the plot names the trial in view and its knob values.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from app.report import trial_mean, workload_kind
from app.report.formatting import config_text
from app.report.session_data import trial_figure_text
from app.store.records import TrialRecord
from app.store.store import Store
from ui import theme
from ui.review.tables import fill_table, make_table
from ui.review.timeline import Timeline, session_timeline


class _PaintWatch(QObject):
    """Tells when the plot's viewport has been painted (the benchmark waits for it)."""

    painted = Signal()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.Paint:
            self.painted.emit()
        return False


class SamplesView(QWidget):
    painted = Signal()

    def __init__(self, store: Store, session_id: int, trials: Sequence[TrialRecord],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.session_id = session_id
        self.trials = list(trials)
        self.timeline: Timeline | None = None
        self.knobs = list(dict.fromkeys(k for t in self.trials for k in t.config))
        self.table = make_table(("Trial", "Workload", "Rep", *self.knobs, "State", "Mean"), self, name="trials")
        fill_table(self.table, [
            (f"#{t.id}", workload_kind(t.workload), t.repetition, *(str(t.config.get(k, "—")) for k in self.knobs),
             t.state.value, trial_figure_text(t)) for t in self.trials],
            numeric=(2,))
        self.table.itemSelectionChanged.connect(self._zoom_to_selected)
        self.caption = QLabel("Select a trial to zoom to it; drag or wheel to zoom, right-drag to stretch.", self)
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        self.plot = pg.PlotWidget(self)
        self.plot.setAccessibleName("sample streams")
        item = self.plot.getPlotItem()
        item.setLabel("left", "throughput", units="B/s")
        item.setLabel("bottom", "session time (trials end to end)", units="s")
        item.showGrid(x=True, y=True, alpha=0.2)
        item.addLegend()
        theme.style_plot(self.plot)
        item.getViewBox().sigXRangeChanged.connect(self._caption_for_view)
        self._watch = _PaintWatch(self)
        self._watch.painted.connect(self.painted)
        self.plot.viewport().installEventFilter(self._watch)
        right = QWidget(self)
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.caption)
        rl.addWidget(self.plot, 1)
        split = QSplitter(self)
        split.addWidget(self.table)
        split.addWidget(right)
        split.setStretchFactor(1, 3)
        QVBoxLayout(self).addWidget(split)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        if self.timeline is None:
            self.load()
        super().showEvent(event)

    def load(self) -> None:
        samples = self.store.load_session_samples(self.session_id)
        self.timeline = session_timeline(samples)
        item = self.plot.getPlotItem()
        count = len(self.timeline.streams)
        for i, s in enumerate(self.timeline.streams):
            curve = item.plot(s.x, s.y, connect=s.connect, name=s.client,
                              pen=pg.mkPen(theme.client_colour(i, count), width=1))
            curve.setDownsampling(auto=True, method="peak")
            curve.setClipToView(True)
            curve.setSkipFiniteCheck(True)
        for a, _b in self.timeline.spans.values():
            item.addItem(pg.InfiniteLine(a, angle=90, pen=pg.mkPen((128, 128, 128, 90), width=1)))
        item.enableAutoRange()

    def trial(self, trial_id: int) -> TrialRecord | None:
        return next((t for t in self.trials if t.id == trial_id), None)

    def describe(self, trial_id: int) -> str:
        t = self.trial(trial_id)
        if t is None:
            return ""
        mean = trial_mean(t)
        return (f"Trial #{t.id} · {workload_kind(t.workload)} · repetition {t.repetition} · {t.state.value} · "
                f"{config_text(t.config)}" + (f" · mean {trial_figure_text(t)}" if mean is not None else "")
                + (f" · {t.reason}" if t.reason else ""))

    def zoom_to(self, trial_id: int) -> None:
        if self.timeline is None:
            self.load()
        assert self.timeline is not None
        span = self.timeline.spans.get(trial_id)
        if span is None:
            self.caption.setText(self.describe(trial_id) + " · no samples stored")
            return
        self.plot.getPlotItem().setXRange(span[0], span[1], padding=0.02)
        self.plot.getPlotItem().enableAutoRange(axis="y")
        self.caption.setText(self.describe(trial_id))

    def _zoom_to_selected(self) -> None:
        rows = {i.row() for i in self.table.selectedIndexes()}
        if rows:
            self.zoom_to(self.trials[min(rows)].id)

    def _caption_for_view(self, _vb: object, rng: tuple[float, float]) -> None:
        if self.timeline is None:
            return
        tid = self.timeline.trial_at((rng[0] + rng[1]) / 2)
        if tid is not None and rng[1] - rng[0] < 3 * (self.timeline.spans[tid][1] - self.timeline.spans[tid][0] + 1):
            self.caption.setText(self.describe(tid))
