"""The Run page's live plots: the trial's throughput per client and summed, with its
rolling mean and stability band, and the server's disk and NIC beside it.

Efficiency: curves are created once per client; every frame calls ``setData`` with
views into the ring buffers (no copies), the view clips to what is visible and
downsamples by peak, and a frame with no new data draws nothing.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from numpy.typing import NDArray
from PySide6.QtCore import QEvent, Qt, Slot
from PySide6.QtGui import QColor, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import QComboBox, QGraphicsItem, QGraphicsPathItem, QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from ui import theme
from ui.theme import buddy_label
from ui.live_data import LiveData

CLIENTS_PER_FRAME = 4  # client curves redrawn per frame, round robin: each still ≥ 7 Hz at 30 Hz
ROLLING_WINDOW = 20  # samples: 5 s at 4 Hz, the window the stability check uses
STABLE_CV = 0.03  # coefficient of variation below which a trial counts as stable (display only)
METRICS = {  # metric → (axis label, units for SI prefixes)
    "throughput": ("throughput", "B/s"),
    "ops": ("operations", "op/s"),
    "lat_p99": ("p99 latency (ms)", ""),
}


def rolling_mean_std(y: NDArray[np.float64], window: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Trailing mean and standard deviation over ``window`` samples (shorter at the start)."""
    n = len(y)
    if n == 0:
        return y.copy(), y.copy()
    c1 = np.concatenate(([0.0], np.cumsum(y)))
    c2 = np.concatenate(([0.0], np.cumsum(y * y)))
    hi = np.arange(1, n + 1)
    lo = np.maximum(0, hi - window)
    count = hi - lo
    mean = (c1[hi] - c1[lo]) / count
    var = np.maximum((c2[hi] - c2[lo]) / count - mean * mean, 0.0)
    return mean, np.sqrt(var)


DOWNSAMPLE_FACTOR = 0.5  # data points per pixel before peak downsampling (pyqtgraph's default: 5)
BAND_POINTS = 600  # the band is smooth: this many vertices are plenty


def fast_curve(item: pg.PlotItem, **kwargs: object) -> pg.PlotDataItem:
    """A curve that peak-downsamples to about one vertex per pixel: painting 16
    curves of 2400 points otherwise dominates the frame."""
    curve = item.plot(**kwargs)
    curve.opts["autoDownsampleFactor"] = DOWNSAMPLE_FACTOR
    return curve


def _new_plot(title: str) -> pg.PlotWidget:
    plot = pg.PlotWidget()
    item = plot.getPlotItem()
    item.setClipToView(True)
    item.setDownsampling(auto=True, mode="peak")
    item.showGrid(x=True, y=True, alpha=0.25)
    item.setTitle(title)
    item.setLabel("bottom", "time in trial", units="s")
    item.setMenuEnabled(False)
    item.setMouseEnabled(x=False, y=False)  # the view follows the data; nothing to pan
    # Ranges are set by hand in coarse steps (see nice_ceiling), so the axes stay still
    # for most frames and their cached pixmaps are reused instead of re-rendered.
    item.disableAutoRange()
    for name in ("left", "bottom"):
        axis = item.getAxis(name)
        axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        axis.setStyle(maxTickLevel=1)  # major and one minor level: fewer grid lines to draw
    theme.style_plot(plot)
    return plot


def add_legend(item: pg.PlotItem, columns: int = 1) -> pg.LegendItem:
    legend = item.addLegend(offset=(6, 6), colCount=columns)
    legend.setLabelTextColor(theme.palette().color(QPalette.ColorRole.Text))
    legend.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)  # it sits over moving curves
    return legend


def nice_ceiling(value: float) -> float:
    """The next of 1, 1.5, 2, 3, 5, 7.5 × 10^n at or above ``value`` (an axis end that moves rarely)."""
    if value <= 0 or not math.isfinite(value):
        return 1.0
    exp = 10.0 ** math.floor(math.log10(value))
    return next(m * exp for m in (1.0, 1.5, 2.0, 3.0, 5.0, 7.5, 10.0) if m * exp >= value)


class RangeKeeper:
    """Changes a view's range only when the data leaves it or shrinks well inside it."""

    def __init__(self, item: pg.PlotItem, min_x: float = 30.0) -> None:
        self.item = item
        self.min_x = min_x
        self.x = 0.0
        self.y = 0.0

    def reset(self) -> None:
        self.x = self.y = 0.0

    def update(self, t_max: float, y_max: float) -> None:
        x = max(self.min_x, self.min_x * math.ceil(t_max / self.min_x))
        if x != self.x:
            self.x = x
            self.item.setXRange(0, x, padding=0)
        want = y_max * 1.08
        if want > self.y or want < self.y * 0.4:
            self.y = nice_ceiling(want)
            self.item.setYRange(0, self.y, padding=0)


class ThroughputPlot(QWidget):
    """Per-client curves plus the sum, its rolling mean and ± one-stddev band."""

    def __init__(self, live: LiveData, parent: QWidget | None = None, title: str = "Current trial") -> None:
        super().__init__(parent)
        self.live = live
        self.metric_name = "throughput"
        self.plot = _new_plot(title)
        item = self.plot.getPlotItem()
        self.legend = add_legend(item, columns=2)
        self.client_curves: dict[str, pg.PlotDataItem] = {}
        self.sum_curve = fast_curve(item, name="sum of clients")
        self.mean_curve = fast_curve(item, name="rolling mean (5 s)")
        # The band is one closed path built by numpy (FillBetweenItem re-walks both
        # curves in Python on every change: ~25 ms a frame at 2400 points).
        self.band = QGraphicsPathItem()
        self.band.setZValue(-10)
        item.addItem(self.band)
        self.band_data: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]] | None = None
        self.stability = QLabel("waiting for samples…", self)
        self.stability.setObjectName("stabilityLabel")
        theme.emphasize(self.stability)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)
        self._drawn = -1
        self._resets_seen = -1
        self._stale: dict[str, None] = {}  # clients with data newer than their curve, oldest first
        self.clients_per_frame = CLIENTS_PER_FRAME
        self.ranges = RangeKeeper(item)
        self._client_max: dict[str, tuple[float, float]] = {}
        self._sum_max: tuple[float, float] | None = None
        self._restyle()
        self.set_metric("throughput")

    def _restyle(self) -> None:
        pal = self.palette()
        text = pal.color(QPalette.ColorRole.Text)
        highlight = pal.color(QPalette.ColorRole.Highlight)
        self.sum_curve.setPen(pg.mkPen(text, width=2))
        self.mean_curve.setPen(pg.mkPen(highlight, width=1))  # dashes and wide pens are slow to raster
        band = QColor(highlight)
        band.setAlpha(60)
        self.band.setBrush(pg.mkBrush(band))
        self.band.setPen(QPen(Qt.PenStyle.NoPen))
        for i, curve in enumerate(self.client_curves.values()):
            curve.setPen(pg.mkPen(theme.client_colour(i, len(self.client_curves))))
        theme.style_plot(self.plot, pal)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._restyle()
        super().changeEvent(event)

    def set_metric(self, metric: str) -> None:
        label, units = METRICS[metric]
        self.metric_name = metric
        self.ranges.reset()
        self.plot.getPlotItem().setLabel("left", label, units=units)
        summed = metric == "throughput"  # summing latencies would mean nothing
        for item in (self.sum_curve, self.mean_curve, self.band):
            item.setVisible(summed)
        self._drawn = -1
        self._stale = dict.fromkeys(self.live.clients)
        self.refresh(budget=len(self._stale))

    def _client_curve(self, name: str) -> pg.PlotDataItem:
        curve = self.client_curves.get(name)
        if curve is None:
            curve = fast_curve(self.plot.getPlotItem(), name=name)
            curve.setZValue(-5)
            self.client_curves[name] = curve
            for i, c in enumerate(self.client_curves.values()):  # re-spread hues as clients appear
                c.setPen(pg.mkPen(theme.client_colour(i, len(self.client_curves))))
        return curve

    @Slot()
    def refresh(self, budget: int | None = None) -> None:
        """Redraw what changed: the sum every frame, at most ``budget`` client curves."""
        if not self.isVisible():  # a page not shown draws nothing; it catches up when shown
            return
        live = self.live
        if live.version != self._drawn:
            self._drawn = live.version
            if live.resets != self._resets_seen:  # new trial: the view starts again from zero
                self._resets_seen = live.resets
                self.ranges.reset()
                self._client_max.clear()
            self._stale.update(dict.fromkeys(live.clients))
            if self.metric_name == "throughput":
                self._draw_sum()
        elif not self._stale:
            return
        for _ in range(min(len(self._stale), self.clients_per_frame if budget is None else budget)):
            name = next(iter(self._stale))
            del self._stale[name]
            t, y = live.clients[name].series[self.metric_name].view()
            self._client_curve(name).setData(t, y, skipFiniteCheck=True)
            self._client_max[name] = (float(t[-1]), float(y.max())) if len(t) else (0.0, 0.0)
        t_max = max((m[0] for m in self._client_max.values()), default=0.0)
        y_max = max((m[1] for m in self._client_max.values()), default=0.0)
        if self.metric_name == "throughput" and self._sum_max is not None:
            t_max, y_max = max(t_max, self._sum_max[0]), max(y_max, self._sum_max[1])
        self.ranges.update(t_max, y_max)

    def draw_all(self) -> None:
        """Bring every curve up to date now (screenshots, tests, a metric switch)."""
        self.refresh(budget=len(self.live.clients))

    def _draw_sum(self) -> None:
        t, y = self.live.total_series()
        self.sum_curve.setData(t, y, skipFiniteCheck=True)
        mean, std = rolling_mean_std(y, ROLLING_WINDOW)
        self.mean_curve.setData(t, mean, skipFiniteCheck=True)
        self._set_band(t, mean - std, mean + std)
        self._update_stability(mean, std)
        self._sum_max = (float(t[-1]), float(y.max())) if len(t) else None

    def _set_band(self, t: NDArray[np.float64], lo: NDArray[np.float64], hi: NDArray[np.float64]) -> None:
        self.band_data = (t, lo, hi)
        if len(t) < 2:
            self.band.setPath(QPainterPath())
            return
        step = max(1, len(t) // BAND_POINTS)
        t, lo, hi = t[::step], lo[::step], hi[::step]
        path = pg.arrayToQPath(np.concatenate((t, t[::-1])), np.concatenate((hi, lo[::-1])), connect="all")
        path.closeSubpath()
        self.band.setPath(path)

    def _update_stability(self, mean: NDArray[np.float64], std: NDArray[np.float64]) -> None:
        if len(mean) < ROLLING_WINDOW:
            self.stability.setText("warming up…" if len(mean) else "waiting for samples…")
            return
        cv = float(std[-1] / mean[-1]) if mean[-1] > 0 else 1.0
        state = "stable" if cv < STABLE_CV else "settling"
        text = f"{state}: {mean[-1] / 1e6:,.0f} MB/s, CV {cv * 100:.1f} % over 5 s"
        if text != self.stability.text():  # setText relayouts even when equal
            self.stability.setText(text)


class ServerPlot(QWidget):
    """The server's disk and NIC throughput, like ``iostat 1`` and ``sar -n DEV 1``."""

    SERIES = (("disk_read", "disk read"), ("disk_write", "disk write"), ("net_rx", "NIC rx"), ("net_tx", "NIC tx"))

    def __init__(self, live: LiveData, parent: QWidget | None = None, host: str | None = None) -> None:
        super().__init__(parent)
        self.live = live
        self.host = host
        self.plot = _new_plot("Server disk and NIC")
        item = self.plot.getPlotItem()
        item.setLabel("left", "throughput", units="B/s")
        add_legend(item)
        colours = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e")
        styles = (Qt.PenStyle.SolidLine, Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DashLine)
        self.curves = {
            key: fast_curve(item, name=label, pen=pg.mkPen(colour, width=1, style=style))
            for (key, label), colour, style in zip(self.SERIES, colours, styles, strict=True)
        }
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)
        self._drawn = -1
        self.ranges = RangeKeeper(item)
        self._resets_seen = -1

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            theme.style_plot(self.plot, self.palette())
        super().changeEvent(event)

    @Slot()
    def refresh(self) -> None:
        if not self.isVisible() or self.live.hosts_version == self._drawn:
            return
        self._drawn = self.live.hosts_version
        if self.live.resets != self._resets_seen:
            self._resets_seen = self.live.resets
            self.ranges.reset()
        host = self.live.hosts.get(self.host) if self.host else next(iter(self.live.hosts.values()), None)
        t_max = y_max = 0.0
        for key, curve in self.curves.items():
            if host is None:
                curve.setData([], [])
                continue
            t, y = host.series[key].view()
            curve.setData(t, y, skipFiniteCheck=True)
            if len(t):
                t_max, y_max = max(t_max, float(t[-1])), max(y_max, float(y.max()))
        self.ranges.update(t_max, y_max)


class LivePlots(QWidget):
    """Both plots side by side with a metric switch and the stability readout."""

    def __init__(self, live: LiveData, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.trial = ThroughputPlot(live, self)
        self.server = ServerPlot(live, self)
        self.metric_box = QComboBox(self)
        self.metric_box.addItem("Throughput", "throughput")
        self.metric_box.addItem("Operations per second", "ops")
        self.metric_box.addItem("p99 latency", "lat_p99")
        self.metric_box.setAccessibleName("Metric shown per client")
        self.metric_box.currentIndexChanged.connect(
            lambda _i: self.trial.set_metric(str(self.metric_box.currentData())))
        top = QHBoxLayout()
        top.addWidget(buddy_label("&Show:", self.metric_box, self))
        top.addWidget(self.metric_box)
        top.addStretch(1)
        top.addWidget(self.trial.stability)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(self.trial)
        split.addWidget(self.server)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(split, 1)

    @Slot()
    def refresh(self) -> None:
        self.trial.refresh()
        self.server.refresh()

    def draw_all(self) -> None:
        self.trial.draw_all()
        self.server.refresh()
