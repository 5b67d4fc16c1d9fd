"""Filling read-only tables from rows of plain values."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget


def make_table(headers: Sequence[str], parent: QWidget | None = None, *, name: str = "") -> QTableWidget:
    table = QTableWidget(0, len(headers), parent)
    table.setHorizontalHeaderLabels(list(headers))
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
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


def cell_texts(table: QTableWidget, column: int) -> list[str]:
    return [item.text() if (item := table.item(r, column)) is not None else "" for r in range(table.rowCount())]
