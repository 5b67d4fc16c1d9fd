"""The Run page's live plots: the trial's throughput per client and summed, with its
rolling mean and stability band, and the server's disk and NIC beside it.

Efficiency: the trial's lines and band live in one CurveLayer, a picture that has only
each frame's new segments drawn into it and only that stripe repainted (as pyqtgraph
items, 64 clients' curves cost ~8 ms a frame to paint). That works because they only
grow at the right: client samples append, the sum shows complete buckets only, and its
rolling mean and band use trailing windows. A frame with no new data draws nothing.
"""

from __future__ import annotations

import math
import time
from functools import partial

import numpy as np
import pyqtgraph as pg
from numpy.typing import NDArray
from PySide6.QtCore import QEvent, Qt, Slot
from PySide6.QtGui import QColor, QFont, QFontInfo, QFontMetrics, QPalette, QPen
from PySide6.QtWidgets import QComboBox, QGraphicsItem, QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from app.session.stability import StabilityRule
from ui import theme
from ui.curve_layer import CurveLayer, Line
from ui.live_data import LiveData
from ui.plot_legend import PlotLegend
from ui.theme import buddy_label

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


def fast_curve(item: pg.PlotItem, **kwargs: object) -> pg.PlotDataItem:
    """A curve that peak-downsamples to about one vertex per pixel: painting 16
    curves of 2400 points otherwise dominates the frame."""
    curve = item.plot(**kwargs)
    curve.opts["autoDownsampleFactor"] = DOWNSAMPLE_FACTOR
    return curve


def _new_plot(title: str) -> pg.PlotWidget:
    plot = pg.PlotWidget()
    plot.setMinimumHeight(10 * plot.fontMetrics().lineSpacing())  # a page short of room shrinks the tables first
    plot.setAccessibleName(title)  # it takes focus: a screen reader names it by its title
    item = plot.getPlotItem()
    item.setClipToView(True)
    item.setDownsampling(auto=True, mode="peak")
    item.showGrid(x=True, y=True, alpha=0.25)
    # The title in the window's font, bold, one line high: pyqtgraph's own (11 pt in a 30-pixel
    # row) took the plot's data a sixth of its height on a 540-pixel screen.
    font = QFont(plot.font())
    font.setBold(True)
    item.setTitle(title, size=f"{QFontInfo(font).pointSizeF():g}pt", bold=True)
    item.titleLabel.setMaximumHeight(QFontMetrics(font).lineSpacing() + 4)
    item.layout.setRowFixedHeight(0, QFontMetrics(font).lineSpacing() + 4)
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


def pen_width(widget: QWidget, weight: float) -> int:
    """A cosmetic pen's width for ``widget``'s screen and font (theme.line_width)."""
    return theme.line_width(weight, widget.devicePixelRatioF(), QFontInfo(widget.font()).pixelSize())


READOUT_S = 0.25  # the readout changes at most this often: a sample interval, what a person can read
RESTYLE_EVENTS = (QEvent.Type.PaletteChange, QEvent.Type.FontChange, QEvent.Type.DevicePixelRatioChange)


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
    """Per-client curves plus the sum, its rolling mean and ± one-stddev band, their legend
    under the plot (the band's entry and the readout carry the stability rule as a tooltip)."""

    def __init__(self, live: LiveData, parent: QWidget | None = None, title: str = "Current trial",
                 rule: StabilityRule | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.live = live
        self.rule = rule or StabilityRule()
        self.metric_name = "throughput"
        self.plot = _new_plot(title)
        item = self.plot.getPlotItem()
        self.legend = PlotLegend("Lines of the current trial's plot", self)
        # Everything, drawn as its data arrives: the ± one-stddev band, over it the clients, over
        # them the sum and over that its rolling mean.
        self.layer = CurveLayer()
        item.addItem(self.layer)
        self.client_curves: dict[str, Line] = {}
        empty = np.zeros(0)
        self._sum: tuple[NDArray[np.float64], ...] = (empty, empty, empty, np.zeros((2, 0)))  # t, sum, mean, band
        self._sum_written = 0  # buckets completed since the trial started
        self.band = self.layer.add_line("band", lambda: self._sum_line(3), QPen(), z=-1, brush=pg.mkBrush(None))
        self.sum_curve = self.layer.add_line("sum of clients", lambda: self._sum_line(1), QPen(), z=1)
        self.mean_curve = self.layer.add_line("rolling mean", lambda: self._sum_line(2), QPen(), z=2)
        self.sum_entry = self.legend.add(self.sum_curve, "sum of clients")
        self.mean_entry = self.legend.add(self.mean_curve, self.rule.mean_name())
        self.band_entry = self.legend.add(self.band, self.rule.band_name())
        self.stability = QLabel("waiting for samples…", self)
        self.stability.setObjectName("stabilityLabel")
        theme.emphasize(self.stability)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.legend)
        self._drawn = -1
        self._resets_seen = -1
        self._judged = -1  # the sum's buckets when the readout was last worked out
        self._judged_at = 0.0  # and when (time.monotonic())
        self._held = -1  # LiveData.resets when the readout was given a trial's final figures
        self.ranges = RangeKeeper(item)
        self._sum_max: tuple[float, float] | None = None
        self.set_rule(self.rule)
        self._restyle()
        self.set_metric("throughput")

    def set_rule(self, rule: StabilityRule) -> None:
        """The run's stability rule: the band's window, the readout's check, their names."""
        self.rule = rule
        self.mean_entry.setText(rule.mean_name())
        self.band_entry.setText(rule.band_name())
        self.band_entry.setToolTip(rule.rule_text())
        self.stability.setToolTip(rule.rule_text())  # its live text gives the limits; this, the whole rule
        self._judged = -1
        self.layer.invalidate()  # another window: another band
        self.draw_all()

    def _restyle(self) -> None:
        pal = self.palette()
        text = pal.color(QPalette.ColorRole.Text)
        highlight = pal.color(QPalette.ColorRole.Highlight)
        self.sum_curve.setPen(pg.mkPen(text, width=pen_width(self, 2)))
        self.mean_curve.setPen(pg.mkPen(highlight, width=pen_width(self, 1)))  # dashes are slow to raster
        band = QColor(highlight)
        band.setAlpha(60)
        self.band.setBrush(pg.mkBrush(band))
        self._colour_clients()
        theme.style_plot(self.plot, pal)

    def _colour_clients(self) -> None:
        pal, width = self.palette(), pen_width(self, 1)
        for i, curve in enumerate(self.client_curves.values()):
            curve.setPen(pg.mkPen(theme.client_colour(i, pal), width=width))
        self.legend.restyle()

    def event(self, event: QEvent) -> bool:
        # not changeEvent: a new pixel ratio (another screen) never reaches it
        if event.type() in RESTYLE_EVENTS:
            self._restyle()
        return super().event(event)

    def set_metric(self, metric: str) -> None:
        label, units = METRICS[metric]
        self.metric_name = metric
        self.ranges.reset()
        self.plot.getPlotItem().setLabel("left", label, units=units)
        summed = metric == "throughput"  # summing latencies would mean nothing
        for item in (self.sum_curve, self.mean_curve, self.band):
            item.setVisible(summed)
        for entry in (self.sum_entry, self.mean_entry, self.band_entry):
            self.legend.show_entry(entry, summed)
        self.layer.invalidate()
        self._drawn = -1
        self.refresh()

    def _fetch(self, name: str) -> tuple[NDArray[np.float64], NDArray[np.float64], int]:
        series = self.live.clients[name].series[self.metric_name]
        t, y = series.view()
        return t, y, series.written()

    def _add_clients(self, names: list[str]) -> None:
        for name in names:  # in the order they came: it sets their colours and legend places
            line = self.layer.add_line(name, partial(self._fetch, name), QPen())
            self.client_curves[name] = line
            self.legend.add(line, name)
        self._colour_clients()

    @Slot()
    def refresh(self) -> None:
        """Redraw what changed: the sum and its band, and the new points of every client."""
        if not self.isVisible():  # a page not shown draws nothing; it catches up when shown
            return
        live = self.live
        if live.version == self._drawn:
            return
        self._drawn = live.version
        if live.resets != self._resets_seen:  # new trial: the view starts again from zero
            self._resets_seen = live.resets
            self._judged = -1
            self.ranges.reset()
            self.layer.invalidate()
        if len(live.clients) != len(self.client_curves):
            self._add_clients([name for name in live.clients if name not in self.client_curves])
        if self.metric_name == "throughput":
            self._draw_sum()
        self.layer.data_changed()  # it draws the new points when it paints
        t_max, y_max = live.t_last, live.column_max(self.metric_name)
        if self.metric_name == "throughput" and self._sum_max is not None:
            t_max, y_max = max(t_max, self._sum_max[0]), max(y_max, self._sum_max[1])
        self.ranges.update(t_max, y_max)

    def draw_all(self) -> None:
        """Bring every curve up to date now (screenshots, tests)."""
        self._drawn = -1
        self.refresh()

    def _sum_line(self, which: int) -> tuple[NDArray[np.float64], NDArray[np.float64], int]:
        return self._sum[0], self._sum[which], self._sum_written

    def _draw_sum(self) -> None:
        t, y = self.live.total_series()
        t, y = t.copy(), y.copy()  # views of buffers the next total_series() call overwrites
        mean, std = rolling_mean_std(y, self.rule.window)
        self._sum = (t, y, mean, np.stack((mean - std, mean + std)))
        self._sum_written = self.live.complete_key() - self.live.total.first_key + 1 if len(t) else 0
        self._sum_max = (float(t[-1]), float(y.max())) if len(t) else None
        now = time.monotonic()
        if self._sum_written != self._judged and self.live.resets != self._held and now >= self._judged_at + READOUT_S:
            self._judged, self._judged_at = self._sum_written, now
            self._set_readout(self.rule.readout(t, y))

    def hold_readout(self, text: str) -> None:
        """Show ``text`` (a finished trial's figures, how the run ended) instead of the live
        check until the next trial's samples come: late samples of this one must not undo it."""
        self._held = self.live.resets
        self._set_readout(text)

    def _set_readout(self, text: str) -> None:
        if text != self.stability.text():  # setText relayouts even when equal
            self.stability.setText(text)


class ServerPlot(QWidget):
    """The server's disk and NIC throughput, like ``iostat 1`` and ``sar -n DEV 1``."""

    SERIES = (("disk_read", "disk read"), ("disk_write", "disk write"), ("net_rx", "NIC rx"), ("net_tx", "NIC tx"))
    COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e")
    STYLES = (Qt.PenStyle.SolidLine, Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DashLine)

    def __init__(self, live: LiveData, parent: QWidget | None = None, host: str | None = None) -> None:
        super().__init__(parent)
        self.live = live
        self.host = host
        self.plot = _new_plot("Server disk and NIC")
        item = self.plot.getPlotItem()
        item.setLabel("left", "throughput", units="B/s")
        self.legend = PlotLegend("Lines of the server's plot", self)
        self.curves = {key: fast_curve(item, name=label) for key, label in self.SERIES}
        for (_key, label), curve in zip(self.SERIES, self.curves.values(), strict=True):
            self.legend.add(curve, label)
        self._restyle()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.legend)
        self._drawn = -1
        self.ranges = RangeKeeper(item)
        self._resets_seen = -1

    def _restyle(self) -> None:
        width = pen_width(self, 1)
        for curve, colour, style in zip(self.curves.values(), self.COLOURS, self.STYLES, strict=True):
            curve.setPen(pg.mkPen(colour, width=width, style=style))
        self.legend.restyle()
        theme.style_plot(self.plot, self.palette())

    def event(self, event: QEvent) -> bool:
        if event.type() in RESTYLE_EVENTS:
            self._restyle()
        return super().event(event)

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
        top.addWidget(buddy_label("Sho&w:", self.metric_box, self))
        top.addWidget(self.metric_box)
        top.addStretch(1)
        top.addWidget(self.trial.stability)
        # legends of one height, so both plots' time axes run level whatever their rows of entries
        self.trial.legend.wantedChanged.connect(self.server.legend.set_least_height)
        self.server.legend.wantedChanged.connect(self.trial.legend.set_least_height)
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
