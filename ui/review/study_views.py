"""A study opened for review: a load ladder's knee or a directory study's collapse, as the report shows them.

A ladder: throughput and p99 (a second axis) against the offered load (streams over all
clients, a log axis since each step doubles it), the knee marked, the knee sentence above and
the steps' table below (app.report.ladder's columns and cells, the report's words). A
directory study: create rate against the entries in the directory, one line per curve,
each collapse marked, the sentence above and about ten points per curve below. Two
ladders compared: both throughput curves on one plot, each knee labelled with the
configuration that ladder held ("the knee moves with nfsd threads").
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QLabel, QSplitter, QTableWidget, QVBoxLayout, QWidget

from app.report.dirs import DirsResult, load_dirs
from app.report.ladder import STEP_COLUMNS, STEP_NUMERIC, LadderResult, load_ladder, step_cells
from app.store.store import Store
from app.vocabulary import held_text
from app.vocabulary.dirs import collapse_clause
from app.vocabulary.ladder import knee_short_text
from ui import theme
from ui.review.study_plots import (
    Mark,
    add_curve,
    add_mark,
    axis_label,
    from_zero,
    recolour_curve,
    restyle_on,
    right_view,
    study_plot,
    tick_loads,
)
from ui.review.tables import fill_table, make_table
from ui.tooltips import plain_tip

LOAD_AXIS = "offered load (streams over all clients)"
TABLE_ROWS = 3  # a table's rows in view however short the window: the rest scroll


def _text(words: str, parent: QWidget, *, bold: bool = False) -> QLabel:
    label = QLabel(words, parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if bold:
        theme.emphasize(label)
    return label


def knee_label(ladder: LadderResult) -> str:
    """'knee at 16 streams (nfsd)' or 'no knee up to 128 streams', as `sessions list` says it."""
    return knee_short_text(ladder.to_json()["knee"])


def _split(top: QWidget, bottom: QTableWidget, parent: QWidget) -> QSplitter:
    """Plot above, table below: the plot gets the room, the table TABLE_ROWS rows; the admin can drag the handle."""
    rows = min(bottom.rowCount(), TABLE_ROWS) * bottom.verticalHeader().defaultSectionSize()
    chrome = bottom.horizontalHeader().sizeHint().height() + bottom.horizontalScrollBar().sizeHint().height()
    bottom.setMinimumHeight(rows + chrome + 2 * bottom.frameWidth())
    split = QSplitter(Qt.Orientation.Vertical, parent)
    split.addWidget(top)
    split.addWidget(bottom)
    split.setStretchFactor(0, 3)
    split.setStretchFactor(1, 1)
    split.setChildrenCollapsible(False)
    return split


class _StudyView(QWidget):
    """What the study views share: what was held, the sentence in bold, and plots that follow a
    light/dark switch, curves and all. The curves and marks are made once and recoloured in place:
    items dropped from a plot are left to Python's cyclic collector, a known source of crashes with
    PySide and pyqtgraph (pyqtgraph issue #1628)."""

    plots: tuple[pg.PlotWidget, ...] = ()

    def __init__(self, held: str, sentence: str, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.held = _text(held, self)
        self.sentence = _text(sentence, self, bold=True)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        if restyle_on(event, self.plots, self.palette()):
            self.recolour()
        super().changeEvent(event)

    def recolour(self) -> None:
        raise NotImplementedError


class LadderView(_StudyView):
    TITLE = "&Ladder"

    def __init__(self, ladder: LadderResult, parent: QWidget | None = None) -> None:
        super().__init__(f"{ladder.workload} at {held_text(ladder.config)}.", ladder.sentence, parent)
        self.ladder = ladder
        # One plot, two axes: throughput flattening while p99 climbs at the same load is the knee.
        self.plot = study_plot("throughput and p99 against offered load", LOAD_AXIS, "throughput", units="B/s",
                               log_x=True)  # fmt: skip
        self.plot.setAccessibleDescription(ladder.sentence)  # what the picture says, for a screen reader
        self.p99_view = right_view(self.plot)
        self.plots = (self.plot,)
        self._draw()
        self.table = make_table(STEP_COLUMNS, self, name="ladder steps")
        fill_table(self.table, [step_cells(st) for st in ladder.steps], numeric=STEP_NUMERIC)
        layout = QVBoxLayout(self)
        layout.addWidget(self.held)
        layout.addWidget(self.sentence)
        layout.addWidget(_split(self.plot, self.table, self), 1)

    def _colours(self) -> tuple[QColor, QColor, QColor]:
        pal = self.palette()  # throughput red, p99 magenta (not the grid's grey); the knee the ladder's: neutral
        return theme.client_colour(0, pal), theme.client_colour(2, pal), pal.color(QPalette.ColorRole.Text)

    def _draw(self) -> None:
        tick_loads(self.plot, (st.load for st in self.ladder.steps))
        throughput, p99, text = self._colours()
        ok = [st for st in self.ladder.steps if st.throughput_bps is not None]
        loads = [float(st.load) for st in ok]
        self.curves = [add_curve(self.plot, loads, [st.throughput_bps for st in ok], throughput, "throughput", self),
                       add_curve(self.plot, loads, [st.p99_ms for st in ok], p99, "p99", self,
                                 view=self.p99_view, log_x=True, dashed=True)]  # fmt: skip
        from_zero(self.plot.getPlotItem().vb)
        from_zero(self.p99_view)
        knee = self.ladder.knee.load
        self.knee_marks = [] if knee is None else [add_mark(self.plot, knee, knee_label(self.ladder), text,
                                                            log_x=True, height=0.3)]  # fmt: skip
        self._axes(throughput, p99)

    def _axes(self, throughput: QColor, p99: QColor) -> None:
        axis_label(self.plot, "left", "throughput", throughput, units="B/s")  # no legend: each axis in its curve's colour
        axis_label(self.plot, "right", "p99 (ms)", p99)

    def recolour(self) -> None:
        throughput, p99, text = self._colours()
        recolour_curve(self.curves[0], throughput, self)
        recolour_curve(self.curves[1], p99, self, dashed=True)
        for mark in self.knee_marks:
            mark.recolour(text)
        self._axes(throughput, p99)


class DirsView(_StudyView):
    TITLE = "&Directory scaling"

    def __init__(self, result: DirsResult, parent: QWidget | None = None) -> None:
        super().__init__(f"{result.entries:,} entries at {held_text(result.config)}.", result.sentence, parent)
        self.result = result
        self.broke = [_text(f"{result.label(c)} broke: {c.reason}", self) for c in result.curves if c.reason]
        self.plot = study_plot("create rate against entries", "entries in the directory", "creates/s")
        # middle right: between a curve that held (high) and one that collapsed (low)
        self.plot.getPlotItem().addLegend().anchor((1, 0.5), (1, 0.5), offset=(-10, 0))
        self.plot.setAccessibleDescription(result.summary)  # what the picture says, for a screen reader
        self.plot.setToolTip(plain_tip(result.summary))
        self.plots = (self.plot,)
        self.curves: list[pg.PlotDataItem] = []
        self.collapse_marks: list[Mark] = []
        for i, c in enumerate(result.drawn()):
            colour = theme.client_colour(i, self.palette())
            name = result.label(c)
            self.curves.append(add_curve(self.plot, [p.entries for p in c.points], [p.rate for p in c.points], colour,
                                         name, self))  # fmt: skip
            if c.collapse.entries is not None:
                self.collapse_marks.append(add_mark(self.plot, c.collapse.entries, collapse_clause(name, c.collapse),
                                                    colour, height=0.6 - 0.12 * i))  # fmt: skip
        self._marked = [i for i, c in enumerate(result.drawn()) if c.collapse.entries is not None]
        from_zero(self.plot.getPlotItem().vb)
        self.table = make_table(("Entries", *(f"{result.label(c)} creates/s" for c in result.drawn())), self,
                                name="create rate by entries")  # fmt: skip
        fill_table(self.table, result.table_rows(), numeric=range(len(result.drawn()) + 1))
        layout = QVBoxLayout(self)
        for widget in (self.held, self.sentence, *self.broke):
            layout.addWidget(widget)
        layout.addWidget(_split(self.plot, self.table, self), 1)

    def recolour(self) -> None:
        for i, curve in enumerate(self.curves):
            recolour_curve(curve, theme.client_colour(i, self.palette()), self)
        for i, mark in zip(self._marked, self.collapse_marks, strict=True):
            mark.recolour(theme.client_colour(i, self.palette()))


class LadderCompare(_StudyView):
    """Two ladders' throughput against load on one plot, each knee labelled with its held configuration."""

    def __init__(self, a: LadderResult, b: LadderResult, parent: QWidget | None = None) -> None:
        ladders = {"A": a, "B": b}
        super().__init__(" ".join(f"{side}: {ld.workload} at {held_text(ld.config)}." for side, ld in ladders.items()),
                         "\n".join(f"{side}: {ld.sentence}" for side, ld in ladders.items()), parent)  # fmt: skip
        self.ladders = ladders
        self.plot = study_plot("throughput against offered load, both ladders", LOAD_AXIS, "throughput", units="B/s",
                               log_x=True)  # fmt: skip
        self.plot.getPlotItem().addLegend(offset=(10, 10))  # top left: throughput starts low there
        self.plots = (self.plot,)
        self.curves: list[pg.PlotDataItem] = []
        self.knee_marks: list[Mark] = []
        self._marked: list[int] = []
        tick_loads(self.plot, (st.load for ld in ladders.values() for st in ld.steps))
        for i, (side, ld) in enumerate(ladders.items()):
            colour = theme.client_colour(i, self.palette())
            ok = [st for st in ld.steps if st.throughput_bps is not None]
            held = held_text(ld.config)
            self.curves.append(add_curve(self.plot, [float(st.load) for st in ok], [st.throughput_bps for st in ok],
                                         colour, f"{side}: {held}", self))  # fmt: skip
            if ld.knee.load is not None:  # below the legend (top left), one above the other, two lines: narrow
                self.knee_marks.append(add_mark(self.plot, ld.knee.load, f"{side} ({held}):\n{knee_label(ld)}", colour,
                                                log_x=True, height=0.72 - 0.22 * i))  # fmt: skip
                self._marked.append(i)
        from_zero(self.plot.getPlotItem().vb)
        layout = QVBoxLayout(self)
        layout.addWidget(self.held)
        layout.addWidget(self.sentence)
        layout.addWidget(self.plot, 1)

    def recolour(self) -> None:
        for i, curve in enumerate(self.curves):
            recolour_curve(curve, theme.client_colour(i, self.palette()), self)
        for i, mark in zip(self._marked, self.knee_marks, strict=True):
            mark.recolour(theme.client_colour(i, self.palette()))


def study_view(store: Store, session_id: int, parent: QWidget | None = None) -> LadderView | DirsView | None:
    """The study tab of a stored session; None for a sweep."""
    if (ladder := load_ladder(store, session_id)) is not None:
        return LadderView(ladder, parent)
    if (dirs := load_dirs(store, session_id)) is not None:
        return DirsView(dirs, parent)
    return None


def ladder_pair(store: Store, session_a: int, session_b: int) -> tuple[LadderResult, LadderResult] | None:
    """Both sessions' ladders when both are ladders, else None."""
    if (a := load_ladder(store, session_a)) is None or (b := load_ladder(store, session_b)) is None:
        return None
    return a, b
