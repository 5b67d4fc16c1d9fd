"""A table that keeps its columns inside its width: long text wraps, the table never scrolls sideways.

Columns sized to their contents (ResizeToContents) push a table wider than a 1024-pixel
window's page, and a horizontal scroll bar then hides whole columns (a host's storage, a
knob's safety class). Stretch columns share the width evenly whatever their text, and cut
their headers. Here every column gets its natural width when they all fit, the spare room
going to one column; when they do not, only the columns named as narrowing give up width,
in proportion to what they asked for and never below their longest word and their header,
and their rows grow to the wrapped text's height. A list that keeps one line a row (elide)
cuts their text with … instead, never below their header.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QHeaderView, QTableWidget

PADDING_CHARS = 2  # a cell's margins, in average characters


class ColumnFit(QObject):
    def __init__(self, table: QTableWidget, narrow: Iterable[int], spare: int | None = None, *,
                 elide: bool = False) -> None:  # fmt: skip
        """``narrow``: the columns that give up width when room is short, their text wrapped (or,
        with ``elide``, cut with … on its one line); ``spare``: the column that takes room left
        over (default: the last narrowing one)."""
        super().__init__(table)
        self.table = table
        self.narrow = tuple(narrow)
        self.spare = spare if spare is not None else self.narrow[-1]
        self.elide = elide
        header = table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # this fits them; a drag would be undone
        table.setWordWrap(not elide)
        table.setTextElideMode(Qt.TextElideMode.ElideRight if elide else Qt.TextElideMode.ElideNone)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.fit)
        model = table.model()
        for signal in (model.dataChanged, model.rowsInserted, model.rowsRemoved, model.modelReset,
                       model.layoutChanged):  # fmt: skip
            signal.connect(self.refit)
        table.viewport().installEventFilter(self)
        self._fitted_width = -1
        self._fitting = False

    def refit(self) -> None:
        """Fit again once the event loop is back (many changes in a row fit once)."""
        self._timer.start()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.Resize and self.table.viewport().width() != self._fitted_width:
            if self._fitting:  # rows grown by this fit brought a scroll bar: once this fit is done
                self.refit()
            else:  # now, so nothing is ever shown (or grabbed) with the old widths
                self.fit()
        return False

    def natural_width(self, column: int) -> int:
        """What ``column`` asks for: its widest cell or cell widget, or its header."""
        return max(self.table.sizeHintForColumn(column), self.table.horizontalHeader().sectionSizeHint(column))

    def narrowest(self, column: int) -> int:
        """How narrow a narrowing column may get: its header must fit, and its longest word unless it elides."""
        if self.elide:
            return self.table.horizontalHeader().sectionSizeHint(column)
        fm = self.table.fontMetrics()
        words = (word for r in range(self.table.rowCount()) if (item := self.table.item(r, column)) is not None
                 for word in item.text().split())  # fmt: skip
        longest = max((fm.horizontalAdvance(w) for w in words), default=0)
        return max(longest + PADDING_CHARS * fm.averageCharWidth(), self.table.horizontalHeader().sectionSizeHint(column))

    def fit(self) -> None:
        self._fitting = True
        try:
            self._fit()
        finally:
            self._fitting = False

    def _fit(self) -> None:
        table = self.table
        room = table.viewport().width()
        self._fitted_width = room
        natural = [self.natural_width(c) for c in range(table.columnCount())]
        widths = list(natural)
        short = sum(natural) - room
        if short > 0:
            give = {c: max(0, natural[c] - self.narrowest(c)) for c in self.narrow}
            can = sum(give.values())
            for c, most in give.items():  # rounded up: a pixel short is a scroll bar (the spare column takes any excess)
                widths[c] -= min(most, math.ceil(short * most / can)) if can else 0
        widths[self.spare] += max(0, room - sum(widths))
        for c, width in enumerate(widths):
            table.setColumnWidth(c, width)
        if not self.elide:
            table.resizeRowsToContents()
        least = table.verticalHeader().defaultSectionSize()  # one line keeps the row height it had
        for r in range(table.rowCount()):
            if table.rowHeight(r) < least:
                table.setRowHeight(r, least)
        table.updateGeometries()  # the scroll bars' ranges now, not on Qt's next pass (a test or a grab may come first)
