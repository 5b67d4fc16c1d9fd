"""Items taken off a plot are deleted there and then, not left to Python's cyclic collector."""

from __future__ import annotations

import gc

import pyqtgraph as pg
from shiboken6 import Shiboken

from ui.plot_clear import clear_plot


def test_cleared_items_and_their_children_are_deleted_at_once(qtbot) -> None:  # type: ignore[no-untyped-def]
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    item = plot.getPlotItem()
    item.addLegend()
    curve = item.plot([1.0, 2.0, 3.0], [1.0, 4.0, 9.0], name="curve", symbol="o")
    text = pg.TextItem("a label")
    line = pg.InfiniteLine(2.0, angle=90, label="a mark")
    for graphic in (text, line):
        item.addItem(graphic)
    children = [text.textItem, line.label, curve.curve, curve.scatter]
    clear_plot(item)
    assert item.items == [] and item.listDataItems() == []
    assert not any(Shiboken.isValid(g) for g in (curve, text, line, *children))
    gc.collect()  # nothing left for the collector to tear down
    again = item.plot([1.0, 2.0], [2.0, 1.0], name="again")  # the plot itself goes on
    assert item.listDataItems() == [again] and Shiboken.isValid(item.vb)
