"""Keyboard focus in lists, tables and trees: the arrow keys move inside, Tab moves on."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractItemView


def tab_moves_on(view: QAbstractItemView) -> QAbstractItemView:
    """One Tab (or Shift+Tab) leaves ``view``; the arrow keys still walk its cells.

    A QTableView's default walks Tab cell by cell: over the Results ranking that was
    40 presses before the next button. Every list, table and tree of the app gets
    this, so a keyboard user never meets one that holds Tab."""
    view.setTabKeyNavigation(False)
    return view
