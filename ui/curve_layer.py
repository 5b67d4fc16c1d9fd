"""Many lines kept as one picture that grows as data arrives (the live plot's curves and band).

Why: with 64 clients, painting 64 pyqtgraph curves of 2400 points took most of every
frame, though a frame only adds a point or two to each, and the whole view was
repainted because the summed curve and its band changed across the full width. The
layer keeps what it drew as an image in device pixels. A frame clears the stripe right
of the oldest new point, draws every line again there (a few points each, in z order,
so crossings stack as in a full draw) and asks Qt to repaint only that stripe, so the
legend and axes beside it are not painted either. Everything is drawn again only when
the mapping to the screen changes (a range step, a resize, another pixel ratio: then
over a few frames), a pen or a visibility changes, or the data restarted or scrolled
out of a full ring.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyqtgraph as pg
from numpy.typing import NDArray
from PySide6.QtCore import QLineF, QPointF, QRect, QRectF, Qt, QTimer
from PySide6.QtGui import QBrush, QImage, QPainter, QPen, QTransform
from PySide6.QtWidgets import QStyleOptionGraphicsItem, QWidget

RESUME_MS = 33  # about a frame
PIXELS_PER_PEAK = 2  # a full draw keeps one min/max pair per this many pixel columns
# (t, y, values written so far); a band's y is two rows, its low and high edge
Fetch = Callable[[], tuple[NDArray[np.float64], NDArray[np.float64], int]]


class Line:
    """One line (or band) of a layer. It paints nothing itself; it carries what pyqtgraph's
    legend reads from a curve (``opts['pen']``, visibility: a click on its sample hides it)."""

    def __init__(self, layer: CurveLayer, name: str, fetch: Fetch, pen: QPen, z: float = 0.0,
                 brush: QBrush | None = None) -> None:
        self.layer = layer
        self.fetch = fetch
        self.z = z  # lines with a higher z are drawn over those with a lower one
        self.brush = brush  # set: a band filled between its two edges, no outline
        self._name = name
        self.opts: dict[str, Any] = {"pen": pen, "name": name}
        self._visible = True
        self.drawn = 0  # values written when this line was last brought up to date in the picture
        self.first_t = 0.0  # its oldest point then: a full ring drops points, which must leave the picture

    def name(self) -> str:
        return self._name

    def setPen(self, pen: QPen) -> None:  # noqa: N802 (pyqtgraph's name)
        self.opts["pen"] = pen
        self.layer.invalidate()

    def setBrush(self, brush: QBrush) -> None:  # noqa: N802
        self.brush = brush
        self.layer.invalidate()

    def isVisible(self) -> bool:  # noqa: N802
        return self._visible

    def setVisible(self, visible: bool) -> None:  # noqa: N802
        if visible != self._visible:
            self._visible = visible
            self.layer.invalidate()

    def getData(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:  # noqa: N802
        t, y, _ = self.fetch()
        return t, y

    def render(self, p: QPainter, t: NDArray[np.float64], y: NDArray[np.float64], columns: float = math.inf) -> None:
        """Draw t, y reduced to what ``columns`` device pixel columns show."""
        if self.brush is not None:
            step = max(1, int(len(t) / max(columns, 1.0)))  # a smooth band: a vertex a column is plenty
            t, lo, hi = t[::step], y[0, ::step], y[1, ::step]
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(self.brush)
            p.drawPolygon(pg.functions.arrayToQPolygonF(np.concatenate((t, t[::-1])), np.concatenate((hi, lo[::-1]))))
            return
        pen = self.opts["pen"]
        p.setPen(pen)
        ds = int(len(t) * PIXELS_PER_PEAK / max(columns, 1.0))
        if ds >= 2:  # pyqtgraph's peak mode at the factor the plots used before (0.5 points a pixel)
            n = len(t) // ds
            starts = np.arange(0, n * ds, ds)
            ys = np.empty(2 * n)
            ys[0::2] = np.maximum.reduceat(y[: n * ds], starts)  # 2× faster than reshape(n, ds).max(axis=1)
            ys[1::2] = np.minimum.reduceat(y[: n * ds], starts)
            t = np.concatenate((np.repeat(t[starts], 2), t[n * ds :]))  # the tail as it is: it ends at the newest
            y = np.concatenate((ys, y[n * ds :]))
        if pen.widthF() <= 1:
            p.drawPolyline(pg.functions.arrayToQPolygonF(t, y))
            return
        # A wide polyline is stroked with joins, ~8× slower than its segments (pyqtgraph does the same).
        segments = pg.Qt.internals.PrimitiveArray(QLineF, 4)
        segments.resize(len(t) - 1)
        a = segments.ndarray()
        a[:, 0], a[:, 1], a[:, 2], a[:, 3] = t[:-1], y[:-1], t[1:], y[1:]
        p.drawLines(*segments.drawargs())


@dataclass(slots=True)
class _Picture:
    image: QImage
    key: tuple[float, ...]  # the mapping it was drawn for
    to_device: QTransform  # data → viewport pixels then
    rect: QRect  # where it sits in the viewport

    def painter(self, from_x: float | None = None) -> QPainter:
        """A painter in data coordinates; with ``from_x`` (viewport pixels) it first clears the
        picture right of that and draws nowhere else."""
        painter = QPainter(self.image)
        if from_x is not None:
            stripe = QRect(math.floor(from_x) - self.rect.x(), 0, self.rect.width(), self.rect.height())
            painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)
            painter.fillRect(stripe, Qt.GlobalColor.transparent)
            painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceOver)
            painter.setClipRect(stripe)
        painter.setTransform(self.to_device * QTransform.fromTranslate(-self.rect.x(), -self.rect.y()))
        return painter

    def columns(self, t: NDArray[np.float64]) -> float:
        """Device pixel columns that t spans."""
        return float(t[-1] - t[0]) * abs(self.to_device.m11()) * self.image.devicePixelRatio()


class CurveLayer(pg.GraphicsObject):  # type: ignore[misc]  # pyqtgraph is untyped
    """Lines drawn into a cached picture; add it to a PlotItem like a curve, and call
    ``data_changed`` when their data grew.

    When only the mapping changed (a range step, a resize) the lines are drawn again over
    a few frames, ``budget_s`` of drawing each, and meanwhile the old picture is shown
    stretched onto the new mapping: drawing all of 64 clients' lines at once took ~8 ms,
    which made every range step the slowest frame. A change of content (pens,
    visibility, a reset) is drawn at once.
    """

    def __init__(self, budget_s: float = 0.003) -> None:
        super().__init__()
        self.lines: dict[str, Line] = {}
        self._order: list[Line] = []  # by z, then as added
        self._shown: _Picture | None = None
        self._next: _Picture | None = None  # being drawn for a new mapping
        self._todo: list[Line] = []  # lines not yet in _next
        self._stale = True
        self._asked_from = math.inf  # the left edge of the stripe data_changed asked Qt to repaint (data units)
        self.budget_s = budget_s
        self.full_draws = 0  # pictures drawn from scratch (tests, the benchmark)
        # Drawing for a new mapping goes on a frame later (new data repaints sooner): going on at
        # once would only put all the parts back into one frame.
        self._resume = QTimer(self)
        self._resume.setSingleShot(True)
        self._resume.setInterval(RESUME_MS)
        self._resume.timeout.connect(self.update)

    def add_line(self, name: str, fetch: Fetch, pen: QPen, z: float = 0.0, brush: QBrush | None = None) -> Line:
        line = self.lines[name] = Line(self, name, fetch, pen, z, brush)
        self._order = sorted(self.lines.values(), key=lambda ln: ln.z)
        self.invalidate()
        return line

    def invalidate(self) -> None:
        """Draw every line again at the next paint (new pens, visibility, another metric, a reset)."""
        self._stale = True
        self.update()

    def data_changed(self) -> None:
        """Repaint what new points change: the stripe right of the oldest new one, or everything
        when the picture is not up to date anyway."""
        data = [line.fetch() for line in self._order]
        start = self._new_from(data)
        if start == math.inf:
            return
        shown, vb = self._shown, self.getViewBox()
        if self._stale or self._next is not None or shown is None or vb is None or start is None:
            self.update()
            return
        pixel = vb.viewPixelSize()[0]
        view = vb.viewRect()
        left = max(view.left(), start - 4 * pixel)
        end = max((float(t[-1]) for t, _y, _w in data if len(t)), default=start)  # nothing is drawn right of it
        self._asked_from = min(self._asked_from, left)
        self.update(QRectF(left, view.top(), min(view.right(), end + 4 * pixel) - left, view.height()))

    def settled(self) -> bool:
        """Whether the picture shown is complete for the current mapping (tests)."""
        return self._next is None and not self._stale

    # -- QGraphicsItem ----------------------------------------------------------

    def boundingRect(self) -> QRectF:  # noqa: N802
        vb = self.getViewBox()
        return QRectF() if vb is None else vb.viewRect()

    def viewRangeChanged(self) -> None:  # noqa: N802 (pyqtgraph calls it; the bounding rect follows the view)
        self.prepareGeometryChange()

    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange: Any = None) -> None:  # noqa: N802, N803
        return None  # the owner sets the ranges; auto-range does not look at the layer

    def paint(self, p: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        to_device = p.transform()  # data → viewport pixels
        rect = to_device.mapRect(self.boundingRect()).toAlignedRect()
        if rect.isEmpty():
            return
        dpr = widget.devicePixelRatioF() if widget is not None else p.device().devicePixelRatioF()
        key: tuple[float, ...] = (to_device.m11(), to_device.m12(), to_device.m21(), to_device.m22(),
                                  to_device.dx(), to_device.dy(), rect.x(), rect.y(), rect.width(), rect.height(), dpr)
        shown = self._shown
        if self._stale or shown is None:
            shown = self._shown = self._draw_all(_Picture(_image(rect, dpr), key, to_device, rect))
        elif key != shown.key:
            if self._next is None or self._next.key != key:
                self._next = _Picture(_image(rect, dpr), key, to_device, rect)
                self._todo = list(self._order)
            if self._draw_some():
                shown = self._shown
            else:
                self._resume.start()
        elif not self._draw_new(shown, self._asked_from):
            shown = self._shown = self._draw_all(shown)
        self._asked_from = math.inf
        assert shown is not None
        p.save()
        if shown.key == key:
            p.resetTransform()  # blit in device pixels: no resampling
        else:  # the old picture stretched onto the new mapping, until the new one is complete
            old_to_data, _ok = shown.to_device.inverted()
            p.setTransform(QTransform.fromTranslate(shown.rect.x(), shown.rect.y()) * old_to_data * to_device)
            rect = QRect(0, 0, 0, 0)
        p.drawImage(rect.topLeft(), shown.image)
        p.restore()

    # -- drawing ----------------------------------------------------------------

    def _draw_all(self, picture: _Picture) -> _Picture:
        picture.image.fill(0)  # it may be the one shown, with every line in it
        painter = picture.painter()
        for line in self._order:
            self._draw_line(painter, picture, line)
        painter.end()
        self._stale = False
        self._next = None
        self.full_draws += 1
        return picture

    def _draw_some(self) -> bool:
        """Draw lines into the picture being built for a new mapping, for ``budget_s`` but at least
        one; True when it is complete and shown."""
        picture = self._next
        assert picture is not None
        painter = picture.painter()
        deadline = time.perf_counter() + self.budget_s
        while self._todo:
            self._draw_line(painter, picture, self._todo.pop(0))
            if time.perf_counter() > deadline:
                break
        painter.end()
        if self._todo:
            return False
        self._shown, self._next = picture, None
        self.full_draws += 1
        if not self._draw_new(picture, -math.inf):  # points that came while it was built (this paint shows all)
            self._draw_all(picture)
        return True

    def _draw_line(self, painter: QPainter, picture: _Picture, line: Line) -> None:
        t, y, written = line.fetch()
        line.drawn = written
        line.first_t = float(t[0]) if len(t) else 0.0
        if line.isVisible() and len(t) > 1:
            line.render(painter, t, y, picture.columns(t))

    def _new_from(self, data: list[tuple[NDArray[np.float64], NDArray[np.float64], int]]) -> float | None:
        """Where the oldest new segment of a shown line begins (data units; inf: nothing new),
        or None when the picture must be drawn again: the data restarted, or more came than
        a ring kept, or a full ring dropped points."""
        start = math.inf
        pixel = 0.0
        if self._shown is not None and (m11 := self._shown.to_device.m11()) > 0:
            pixel = 1.0 / m11
        for line, (t, _y, written) in zip(self._order, data, strict=True):
            new = written - line.drawn
            if new == 0:
                continue
            if new < 0 or new > len(t) or (written > len(t) and line.drawn and t[0] - line.first_t > pixel):
                return None
            if line.isVisible():
                start = min(start, float(t[-min(len(t), new + 1)]))
        return start

    def _draw_new(self, picture: _Picture, asked_from: float) -> bool:
        """Add the points that came since the last paint; False when only a full draw is right.
        ``asked_from``: the left edge of what this paint shows again (data units).

        The picture right of the oldest new segment is cleared and every line drawn again there
        in z order (a few points each), so lines keep their stacking where they cross, as in a
        full draw (a new segment of a wide line would otherwise cover a line drawn over it)."""
        data = [line.fetch() for line in self._order]
        start = self._new_from(data)
        if start is None:
            return False
        for line, (t, _y, written) in zip(self._order, data, strict=True):
            if line.drawn == 0 and len(t):
                line.first_t = float(t[0])
            line.drawn = written
        if start == math.inf:
            return True
        if start < asked_from:  # more came after data_changed asked for less: repaint all of it next
            QTimer.singleShot(0, self.update)
        if picture.to_device.m11() <= 0:
            return False
        pixel = 1.0 / picture.to_device.m11()
        from_x = picture.to_device.map(QPointF(start, 0.0)).x() - 2  # wide pens' caps reach a pixel back
        painter = picture.painter(from_x)
        for line, (t, y, _written) in zip(self._order, data, strict=True):
            i = max(0, int(np.searchsorted(t, start - 3 * pixel)) - 1)  # and the segment that crosses into the stripe
            if line.isVisible() and len(t) - i > 1:
                line.render(painter, t[i:], y[..., i:])
        painter.end()
        return True


def _image(rect: QRect, dpr: float) -> QImage:
    image = QImage(rect.size() * dpr, QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(dpr)
    image.fill(0)
    return image
