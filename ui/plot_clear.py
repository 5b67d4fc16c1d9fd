"""Taking items off a pyqtgraph plot for good, at a known moment.

``PlotItem.clear()`` only takes its items out of the scene: Python then owns them, and
pyqtgraph's items hold reference cycles, so they wait for Python's cyclic collector. A
collection of PySide wrappers whose C++ side Qt also tore down is a known source of
crashes (pyqtgraph issue #1628; the UI suite saw one). Deleting the C++ items here, once,
leaves the collector nothing but empty wrappers.
"""

from __future__ import annotations

import pyqtgraph as pg
from shiboken6 import Shiboken


def clear_plot(item: pg.PlotItem) -> None:
    """Every item the plot was given is removed and deleted (its children with it)."""
    gone = list(item.items)
    item.clear()
    for graphic in gone:
        if Shiboken.isValid(graphic) and graphic.scene() is None and graphic.parentItem() is None:
            Shiboken.delete(graphic)  # none of them is shared: each was made for this plot alone
