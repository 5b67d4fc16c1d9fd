"""Filling read-only tables from rows of plain values."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from ui.focus import tab_moves_on
from ui.tooltips import plain_tip


def make_table(headers: Sequence[str], parent: QWidget | None = None, *, name: str = "") -> QTableWidget:
    table = QTableWidget(0, len(headers), parent)
    table.setHorizontalHeaderLabels(list(headers))
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    tab_moves_on(table)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setAlternatingRowColors(True)
    table.verticalHeader().setVisible(False)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    table.horizontalHeader().setStretchLastSection(True)
    if name:
        table.setObjectName(name)
        table.setAccessibleName(name)
    return table


def fill_table(table: QTableWidget, rows: Iterable[Sequence[Any]], numeric: Iterable[int] = ()) -> None:
    nums = set(numeric)
    rows = list(rows)
    table.setSortingEnabled(False)
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            item = QTableWidgetItem("" if value is None else str(value))
            if c in nums:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            table.setItem(r, c, item)
    table.resizeColumnsToContents()


def tip_columns(table: QTableWidget, columns: Iterable[int]) -> None:
    """Each cell of ``columns`` carries its full text as a tooltip: the column may elide it (…)."""
    for c in columns:
        for r in range(table.rowCount()):
            if (item := table.item(r, c)) is not None:
                item.setToolTip(plain_tip(item.text()))


def cap_columns(table: QTableWidget, widths: Mapping[int, int]) -> None:
    """Narrow these columns to at most their width in px (their long cells elide); call after filling."""
    for c, most in widths.items():
        table.setColumnWidth(c, min(table.columnWidth(c), most))
    tip_columns(table, widths)


def cell_texts(table: QTableWidget, column: int) -> list[str]:
    return [item.text() if (item := table.item(r, column)) is not None else "" for r in range(table.rowCount())]
