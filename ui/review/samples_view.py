"""Every sample of every trial on one zoomable time axis, beside the trials and their knob values.

Samples load when the tab is first shown (they can be ten million rows), a trial at a
time, straight into the per-client streams. The plot gets at most LIMIT points a client
for any view: every sample when few are in view, else min/max pairs from a level of
``Decimated`` (pyqtgraph's own downsampling walks every sample in view on each range
change). Selecting a trial zooms to it; the label above the plot names the trial in view
and its knob values.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from app.report import trial_mean, workload_kind
from app.report.session_data import LATENCY_HEADERS, trial_fairness_cell, trial_figure_text, trial_latency_cells
from app.vocabulary import config_text, knob_value_text
from app.store.records import TrialRecord
from app.store.store import Store
from ui import theme
from ui.review.tables import fill_table, make_table
from ui.review.timeline import Decimated, Timeline, TimelineBuilder

LIMIT = 20_000  # points a client the plot gets for a view (several a pixel: pyqtgraph peak-downsamples those)


class _StreamCurve(pg.PlotDataItem):  # type: ignore[misc]  # pyqtgraph is untyped
    """A client's curve: it shows what ``Decimated.view`` gives for the view, and tells
    auto-range the bounds of the samples themselves, read from the levels."""

    def __init__(self, levels: Decimated, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.levels = levels

    def dataBounds(self, ax: int, frac: float = 1.0,  # noqa: N802 (pyqtgraph's name)
                   orthoRange: tuple[float, float] | None = None) -> tuple[float, float]:  # noqa: N803
        vb = self.getViewBox()
        if ax == 1 and orthoRange is None and vb is not None and not vb.autoRangeEnabled()[0]:
            orthoRange = vb.viewRange()[0]  # y fits what is in view, as for a curve clipped to the view
        return self.levels.data_bounds(ax, orthoRange)


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
        self.levels: list[Decimated] = []
        self.curves: list[_StreamCurve] = []
        self.knobs = list(dict.fromkeys(k for t in self.trials for k in t.config))
        self.table = make_table(("Trial", "Workload", "Rep", *self.knobs, "State", "Mean", *LATENCY_HEADERS, "Fairness"),
                                self, name="trials")  # fmt: skip
        fill_table(self.table, [
            (f"#{t.id}", workload_kind(t.workload), t.repetition, *(knob_value_text(k, t.config.get(k)) for k in self.knobs),
             t.state.value, trial_figure_text(t), *trial_latency_cells(t), trial_fairness_cell(t)) for t in self.trials],
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
        item.getViewBox().sigXRangeChanged.connect(self._show_view)
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
        # A trial at a time: the session's samples are never all in memory as records at once
        # (load_session_samples joins every block into one buffer: 760 MB at 10 million). The
        # next trial is read on a worker thread (SQLite lets go of the GIL) while this one is laid out.
        builder = TimelineBuilder()
        ids = [t.id for t in self.store.trials(self.session_id)]
        with ThreadPoolExecutor(1, thread_name_prefix="samples") as reader:
            ahead = [reader.submit(self.store.load_samples, tid) for tid in ids[:1]]
            for i, tid in enumerate(ids):
                samples = ahead.pop().result()
                ahead.extend(reader.submit(self.store.load_samples, t) for t in ids[i + 1 : i + 2])
                builder.add_trial(tid, samples)
                del samples  # its records go before the next trial's arrive
        self.timeline = builder.timeline()
        self.levels = [Decimated.of(s) for s in self.timeline.streams]
        item = self.plot.getPlotItem()
        for i, (s, levels) in enumerate(zip(self.timeline.streams, self.levels, strict=True)):
            curve = _StreamCurve(levels, name=s.client, pen=pg.mkPen(theme.client_colour(i, self.palette()), width=1))
            item.addItem(curve)
            curve.setDownsampling(auto=True, method="peak")
            curve.setClipToView(True)
            curve.setSkipFiniteCheck(True)
            self.curves.append(curve)
        for a, _b in self.timeline.spans.values():
            item.addItem(pg.InfiniteLine(a, angle=90, pen=pg.mkPen((128, 128, 128, 90), width=1)))
        item.enableAutoRange()
        self._show_view(item.getViewBox(), item.getViewBox().viewRange()[0])

    def _show_view(self, _vb: object, rng: tuple[float, float]) -> None:
        for curve, levels in zip(self.curves, self.levels, strict=True):
            x, y, connect = levels.view(rng[0], rng[1], LIMIT)
            curve.setData(x, y, connect=connect)

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
