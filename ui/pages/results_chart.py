"""The Results page's chart per knob: the selected objective's figure at each value of one knob.

Each bar is the recommended configuration with only this knob at that value where it was
measured (``app.session.results.knob_bars``): such bars differ in this knob alone. A bar
where that was not measured is the best-ranked configuration with the value, drawn hollow
and labelled "not comparable": other knobs differ too. Its whisker is the configuration's
95 % CI over its repeated runs, and the bar is labelled with its rank, its runs and its CV.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QPalette, QTextOption
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.vocabulary import OPS, knob_value_text, percent_text, unit_word
from app.session.results import KnobBars
from ui import theme
from ui.plot_clear import clear_plot
from ui.theme import buddy_label

CAPTION = ("Bar: the recommended configuration with only this knob changed (#rank in the ranking); hollow, "
           "\"not comparable\": not measured so, the best-ranked configuration with that value instead, other knobs "
           "differ too; whisker: the 95 % CI over the repeated runs; highlighted: the recommended value.")  # fmt: skip


class KnobChart(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bars: tuple[KnobBars, ...] = ()
        self.box = QComboBox(self)
        self.box.setAccessibleName("Knob to chart")
        self.box.currentIndexChanged.connect(self._draw)
        self.heading = QLabel(self)  # the chart's title: a label wraps where a plot title would be cut
        self.heading.setObjectName("chartTitle")
        self.heading.setWordWrap(True)
        self.heading.setAlignment(Qt.AlignmentFlag.AlignCenter)
        theme.emphasize(self.heading)
        self.plot = pg.PlotWidget()
        self.plot.setAccessibleName("Chart of the knob's values")
        self.plot.getPlotItem().setMenuEnabled(False)
        self.plot.getPlotItem().setMouseEnabled(x=False, y=False)
        theme.style_plot(self.plot)
        caption = QLabel(CAPTION, self)
        caption.setObjectName("chartCaption")
        caption.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(buddy_label("&Knob:", self.box, self))
        top.addWidget(self.box, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.heading)
        layout.addWidget(self.plot, 1)
        layout.addWidget(caption)
        # what was drawn, for tests and the accessible description
        self.heights: tuple[float, ...] = ()
        self.intervals: tuple[float, ...] = ()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:  # light/dark switch: bars and text follow
            theme.style_plot(self.plot, self.palette())
            self._draw()
        super().changeEvent(event)

    @property
    def current(self) -> KnobBars | None:
        i = self.box.currentIndex()
        return self.bars[i] if 0 <= i < len(self.bars) else None

    @property
    def title(self) -> str:
        return self.heading.text()

    def set_bars(self, bars: tuple[KnobBars, ...]) -> None:
        """The selected objective's charts; the knob shown stays the same when the new ones have it."""
        shown = self.current.knob if self.current is not None else None
        self.bars = bars
        self.box.blockSignals(True)
        self.box.clear()
        self.box.addItems([b.knob for b in bars])
        names = [b.knob for b in bars]
        self.box.setCurrentIndex(names.index(shown) if shown in names else (0 if bars else -1))
        self.box.blockSignals(False)
        self._draw()

    def _draw(self, *_args: object) -> None:
        item = self.plot.getPlotItem()
        clear_plot(item)
        b = self.current
        if b is None:
            self.heading.setText("No knob took two values or more: nothing to compare.")
            self.heights, self.intervals = (), ()
            return
        pal = self.palette()
        text = pal.color(QPalette.ColorRole.Text)
        self.heading.setText(b.title)
        scale, unit = (1.0 if b.unit == OPS else 1e-6), unit_word(b.unit)
        xs = np.arange(len(b.values), dtype=float)
        heights = np.array(b.means) * scale
        whiskers = np.array([hw or 0.0 for hw in b.half_widths]) * scale
        highlight = pal.color(QPalette.ColorRole.Highlight)
        others = theme.mix(highlight, pal.color(QPalette.ColorRole.Base), 0.55)
        alike = b.comparable or (True,) * len(xs)
        brushes = [(highlight if i == b.best else others) if alike[i] else pg.mkBrush(None) for i in range(len(xs))]
        item.addItem(pg.BarGraphItem(x=xs, height=heights, width=0.6, brushes=brushes,
                                     pen=pg.mkPen(theme.mix(highlight, text, 0.4))))  # fmt: skip
        item.addItem(pg.ErrorBarItem(x=xs, y=heights, top=whiskers, bottom=whiskers, beam=0.2,
                                     pen=pg.mkPen(text, width=1.5)))  # fmt: skip
        for x, h, w, rank, n, cv, same in zip(xs, heights, whiskers, b.ranks, b.runs, b.median_cv, alike, strict=True):
            words = f"#{rank}<br>{n} run{'s' * (n != 1)}" + (f"<br>CV {percent_text(cv)}" if cv is not None else "")
            words += "" if same else "<br>not comparable"
            label = pg.TextItem(html=f'<span style="color:{text.name()}">{words}</span>', anchor=(0.5, 1.0))
            label.textItem.setTextWidth(label.textItem.boundingRect().width())  # lines centred under each other
            label.textItem.document().setDefaultTextOption(QTextOption(Qt.AlignmentFlag.AlignHCenter))
            label.updateTextPos()
            label.setPos(x, h + w)
            item.addItem(label)
        item.getAxis("bottom").setTicks([[(x, knob_value_text(b.knob, v)) for x, v in zip(xs, b.values, strict=True)]])
        item.setLabel("bottom", b.knob)
        item.setLabel("left", f"mean {'operations' if b.unit == OPS else 'throughput'} ({unit})")
        item.setXRange(-0.6, len(xs) - 0.4, padding=0)
        item.setYRange(0, max(float((heights + whiskers).max()), 1e-9) * 1.5, padding=0)  # room for the labels
        self.heights = tuple(float(h) for h in heights)
        self.intervals = tuple(float(w) for w in whiskers)
