"""A plot's legend as a Qt list under the plot, never over its data.

pyqtgraph's legend sits inside the view, over the curves; with 16 clients it covered
much of the data. This one is a wrapping row of entries (a swatch of the line's pen,
its name, a check box that shows or hides the line) as tall as its rows, up to
MAX_ROWS, then it scrolls. It changes only when lines come or their pens change, so it
costs the live plot's frames nothing, and screen readers can read it.
"""

from __future__ import annotations

from typing import Any, Protocol

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QSize, Qt, Signal
from PySide6.QtGui import QBrush, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QAbstractItemView, QFrame, QListView, QListWidget, QListWidgetItem, QWidget

MAX_ROWS = 6  # 16 clients and the sum's three lines under a half-width plot; more rows scroll
SWATCH = QSize(22, 12)  # logical pixels


class LegendTarget(Protocol):
    """What an entry reads and switches: a CurveLayer Line or a pyqtgraph curve."""

    opts: dict[str, Any]

    def name(self) -> str | None: ...

    def isVisible(self) -> bool: ...  # noqa: N802 (Qt's names)

    def setVisible(self, visible: bool) -> None: ...  # noqa: N802


class PlotLegend(QListWidget):
    wantedChanged = Signal(int)  # the height its entries need: a legend beside it may take it as its own least

    def __init__(self, accessible_name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("plotLegend")
        self.setAccessibleName(accessible_name)
        self.setViewMode(QListView.ViewMode.ListMode)
        self.setFlow(QListView.Flow.LeftToRight)
        self.setWrapping(True)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.viewport().setAutoFillBackground(False)  # the page's background: it reads as a caption
        self.setIconSize(SWATCH)
        self.targets: list[LegendTarget] = []  # by row: entries are only ever added
        self.itemChanged.connect(self._toggled)
        self.wanted = 0  # what its entries need
        self.least = 0  # what it takes at least: a partner's need, so the plots above both end level
        self.setFixedHeight(0)

    def add(self, target: LegendTarget, label: str) -> QListWidgetItem:
        """An entry for ``target``; call ``restyle`` when the lines are added and have their pens."""
        item = QListWidgetItem(label)
        item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked if target.isVisible() else Qt.CheckState.Unchecked)
        item.setToolTip(f"{label}: click to hide or show its line")
        self.targets.append(target)
        self.blockSignals(True)  # the new check state is the target's own
        self.addItem(item)
        self.blockSignals(False)
        return item  # its swatch comes with the next restyle(), once for all the lines added with it

    def entry(self, label: str) -> QListWidgetItem:
        return next(self.item(i) for i in range(self.count()) if self.item(i).text() == label)

    def show_entry(self, item: QListWidgetItem, shown: bool) -> None:
        """Show or hide an entry with its line (a metric without a sum has no sum to name)."""
        item.setHidden(not shown)
        self.blockSignals(True)
        item.setCheckState(Qt.CheckState.Checked if self.targets[self.row(item)].isVisible() else Qt.CheckState.Unchecked)
        self.blockSignals(False)

    def restyle(self) -> None:
        """Draw the swatches again: pens changed (a palette, a pixel ratio, new clients)."""
        for i in range(self.count()):
            self._swatch(self.item(i))

    def _swatch(self, item: QListWidgetItem) -> None:
        target = self.targets[self.row(item)]
        dpr = self.devicePixelRatioF()
        pixmap = QPixmap(SWATCH * dpr)
        pixmap.setDevicePixelRatio(dpr)
        pixmap.fill(Qt.GlobalColor.transparent)
        brush = getattr(target, "brush", None)
        pen = pg.mkPen(target.opts["pen"])  # a pyqtgraph curve may hold its pen as a colour tuple
        painter = QPainter(pixmap)
        if isinstance(brush, QBrush):  # a band: its fill
            painter.fillRect(0, 1, SWATCH.width(), SWATCH.height() - 2, brush)
        else:
            painter.setPen(pen)
            y = SWATCH.height() / 2
            painter.drawLine(QPointF(0, y), QPointF(SWATCH.width(), y))
        painter.end()
        self.blockSignals(True)  # a new icon is no toggle
        item.setIcon(QIcon(pixmap))
        self.blockSignals(False)

    def _toggled(self, item: QListWidgetItem) -> None:
        self.targets[self.row(item)].setVisible(item.checkState() == Qt.CheckState.Checked)

    def updateGeometries(self) -> None:  # noqa: N802 (Qt's name; called after every layout of the entries)
        super().updateGeometries()
        if not self.count():
            want = 0
        else:
            row = self.visualItemRect(self.item(0)).height()
            want = min(self.contentsSize().height(), MAX_ROWS * row) + 2 * self.frameWidth()
        if want != self.wanted:
            self.wanted = want
            self.wantedChanged.emit(want)
        self._set_height()

    def set_least_height(self, least: int) -> None:
        self.least = least
        self._set_height()

    def _set_height(self) -> None:
        if (height := max(self.wanted, self.least)) != self.height():
            self.setFixedHeight(height)
