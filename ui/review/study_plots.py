"""The study tabs' plots: a load axis that doubles (log scale, ticked at the ladder's loads), an
entries axis with thousands separators, and labelled vertical marks (a knee, a collapse)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPalette
from PySide6.QtWidgets import QWidget

from ui import theme
from ui.live_plot import pen_width


WRAP_CHARS = 24  # a mark's label wraps past about this many characters


class CountAxis(pg.AxisItem):  # type: ignore[misc]  # pyqtgraph is untyped
    """Whole counts with thousands separators: 200,000 entries, not 2e+05."""

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:  # noqa: N802 (pyqtgraph's name)
        return [f"{v * scale:,.0f}" for v in values]


def _label_fill() -> QColor:
    fill = QColor(theme.palette().color(QPalette.ColorRole.Base))
    fill.setAlpha(200)  # the grid shows through, the words stay readable
    return fill


class Mark(pg.InfiniteLine):  # type: ignore[misc]
    """A labelled vertical line at ``at`` in data units (on a log axis it stands at log10 of it); its
    label keeps to the side of the line with more room (pyqtgraph's own anchors)."""

    def __init__(self, at: float, text: str, colour: QColor, *, log_x: bool, height: float) -> None:
        fill = _label_fill()
        super().__init__(math.log10(at) if log_x else at, angle=90, movable=False,
                         pen=pg.mkPen(colour, width=1, style=Qt.PenStyle.DashLine),
                         label=text.replace("{", "{{").replace("}", "}}") or None,  # the label formats {value}
                         labelOpts={"position": height, "color": colour, "fill": fill})  # fmt: skip
        self.at = at
        self.text = text
        if self.label is not None:  # a long clause wraps: beside a line near the edge it would be cut
            metrics = QFontMetricsF(self.label.textItem.font())
            if metrics.horizontalAdvance(max(text.splitlines() or [""], key=len)) > WRAP_CHARS * metrics.averageCharWidth():
                self.label.setTextWidth(WRAP_CHARS * metrics.averageCharWidth())

    def recolour(self, colour: QColor) -> None:
        """A light/dark switch: the same line and label in new colours (nothing made anew)."""
        self.setPen(pg.mkPen(colour, width=1, style=Qt.PenStyle.DashLine))
        if self.label is not None:
            self.label.setColor(colour)
            self.label.fill = pg.mkBrush(_label_fill())
            self.label.update()


def study_plot(name: str, x_label: str, y_label: str, *, units: str | None = None, log_x: bool = False) -> pg.PlotWidget:
    """A plot that takes focus (so it is named), with a grid and fixed axes: a study's few points need no panning."""
    plot = pg.PlotWidget(axisItems=None if log_x else {"bottom": CountAxis("bottom")})
    plot.setAccessibleName(name)
    plot.setMinimumHeight(8 * plot.fontMetrics().lineSpacing())
    item = plot.getPlotItem()
    item.setLogMode(x=log_x)
    item.showGrid(x=True, y=True, alpha=0.2)
    item.setLabel("bottom", x_label)
    item.setLabel("left", y_label, units=units)
    item.setMenuEnabled(False)
    item.setMouseEnabled(x=False, y=False)
    theme.style_plot(plot)
    return plot


def tick_loads(plot: pg.PlotWidget, loads: Iterable[int]) -> None:
    """Ticks at the loads themselves on a log axis: 2, 4, 8, … rather than 10^0.5."""
    plot.getPlotItem().getAxis("bottom").setTicks([[(math.log10(x), str(x)) for x in sorted(set(loads)) if x > 0]])


def add_curve(plot: pg.PlotWidget, x: Sequence[float], y: Sequence[float | None], colour: QColor, name: str | None,
              widget: QWidget, *, view: pg.ViewBox | None = None, log_x: bool = False,
              dashed: bool = False) -> pg.PlotDataItem:  # fmt: skip
    """A line through the points, each point marked (a study's steps are few and each counts); into
    ``view`` (a right_view, whose x is the plot's: ``log_x`` as the plot's) when given."""
    ys = np.array([np.nan if v is None else v for v in y], dtype=float)
    curve = pg.PlotDataItem(np.asarray(x, dtype=float), ys, name=name, connect="finite", symbol="o", symbolSize=6)
    recolour_curve(curve, colour, widget, dashed=dashed)
    item = plot.getPlotItem()
    if view is None:
        item.addItem(curve)
        return curve
    curve.setLogMode(log_x, False)
    view.addItem(curve)
    return curve


def recolour_curve(curve: pg.PlotDataItem, colour: QColor, widget: QWidget, *, dashed: bool = False) -> None:
    """A curve's line and points in ``colour``: when drawn, and in place on a light/dark switch."""
    style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
    curve.setPen(pg.mkPen(colour, width=pen_width(widget, 2), style=style))
    curve.setSymbolBrush(colour)
    curve.setSymbolPen(colour)


def right_view(plot: pg.PlotWidget) -> pg.ViewBox:
    """A second y axis on the right with a view of its own over the same x (p99 beside throughput)."""
    item = plot.getPlotItem()
    view = pg.ViewBox(enableMenu=False)
    view.setMouseEnabled(x=False, y=False)
    item.showAxis("right")
    # A child of the plot item, not a loose scene item: Qt then deletes it with the plot, once
    # (a view added to the scene alone was freed twice when a window went: a segfault in GC).
    view.setParentItem(item)
    item.getAxis("right").linkToView(view)
    item.getAxis("right").setGrid(False)  # the left axis's grid is the one: two would cross
    view.setXLink(item)
    main = item.vb

    def follow(*_: object) -> None:
        view.setGeometry(main.geometry())  # both in the plot item's coordinates

    main.sigResized.connect(follow)
    follow()
    return view


def from_zero(view: pg.ViewBox) -> None:
    """The y axis from 0 to a little above the highest point: a rate or a latency read against zero."""
    top = max((float(np.nanmax(y)) for c in view.addedItems if isinstance(c, pg.PlotDataItem)
               and (y := c.yData) is not None and len(y) and np.isfinite(y).any()), default=1.0)  # fmt: skip
    view.setYRange(0.0, top * 1.08 if top > 0 else 1.0, padding=0)


def axis_label(plot: pg.PlotWidget, side: str, text: str, colour: QColor, units: str | None = None) -> None:
    """An axis titled in its curve's colour, so a two-axis plot says which axis is whose."""
    axis = plot.getPlotItem().getAxis(side)
    axis.setLabel(text, units=units, color=colour.name())
    axis.setPen(pg.mkPen(colour))
    axis.setTextPen(pg.mkPen(colour))


def add_mark(plot: pg.PlotWidget, at: float, text: str, colour: QColor, *, log_x: bool = False,
             height: float = 0.92) -> Mark:  # fmt: skip
    """A mark at ``at``, its label ``height`` up the view (0 bottom, 1 top)."""
    mark = Mark(at, text, colour, log_x=log_x, height=height)
    plot.getPlotItem().addItem(mark)
    return mark


def restyle_on(event: QEvent, plots: Iterable[pg.PlotWidget], palette: QPalette) -> bool:
    """Light/dark switch: the plots follow; True when the caller should recolour its curves and marks."""
    if event.type() != QEvent.Type.PaletteChange:
        return False
    for plot in plots:
        theme.style_plot(plot, palette)
    return True
