"""Colours taken from the system palette, so light and dark desktops both read well."""

from __future__ import annotations

import sys

import pyqtgraph as pg
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from app.knobs.model import Safety

# Drawing speed first: no antialiasing, no OpenGL dependency.
pg.setConfigOptions(antialias=False, useOpenGL=False, foreground="k", background="w")

SAFETY_COLOURS = {  # by app.knobs.model.Safety: the text colour of a badge, readable on light and dark
    Safety.SAFE: "#2e8b57",
    Safety.MEMORY: "#1e78c8",
    Safety.SERVICE: "#1e78c8",
    Safety.CONNECTIVITY: "#d2691e",
    Safety.DATA_RISK: "#d03030",
}
ERROR_COLOUR = SAFETY_COLOURS[Safety.DATA_RISK]


def palette() -> QPalette:
    app = QApplication.instance()
    return app.palette() if isinstance(app, QApplication) else QPalette()


def is_dark() -> bool:
    return palette().color(QPalette.ColorRole.Window).lightness() < 128


def style_plot(widget: pg.PlotWidget, pal: QPalette | None = None) -> None:
    """Plot background and axes follow the window's palette.

    Pass the palette of the widget that got the PaletteChange: its children get
    theirs only after it, so ``widget.palette()`` can still be the old one."""
    pal = pal or widget.palette()
    widget.setBackground(pal.color(QPalette.ColorRole.Base))
    text = pal.color(QPalette.ColorRole.Text)
    item = widget.getPlotItem()
    for name in ("left", "bottom"):
        axis = item.getAxis(name)
        axis.setPen(pg.mkPen(text))
        axis.setTextPen(pg.mkPen(text))
    item.titleLabel.setText(item.titleLabel.text, color=text.name())
    if item.legend is not None:
        item.legend.setLabelTextColor(text)
        for _sample, label in item.legend.items:  # setLabelTextColor does not re-render them
            label.setText(label.text)


def client_colour(index: int, count: int) -> QColor:
    """Distinct hues, lighter on dark backgrounds."""
    colour = pg.intColor(index, hues=max(count, 8), values=1, maxValue=255 if is_dark() else 200)
    return QColor(colour)


def mix(a: QColor, b: QColor, f: float) -> QColor:
    return QColor(int(a.red() * (1 - f) + b.red() * f), int(a.green() * (1 - f) + b.green() * f),
                  int(a.blue() * (1 - f) + b.blue() * f))


def application() -> QApplication:
    """The one QApplication, named for settings and the desktop, in the app's style."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("nfs-tuner")
    app.setOrganizationName("nfs-tuner")
    app.setDesktopFileName("io.github.nfs_tuner.NfsTuner")
    apply_app_style(app)
    return app


def apply_app_style(app: QApplication) -> None:
    """Fusion draws from the palette on every desktop, so light and dark both work.

    No application style sheet: with one set, Qt stops passing palette changes on to
    many widgets, and a switch to dark mode at run time would leave white tables."""
    app.setStyle("Fusion")


def buddy_label(text: str, buddy: QWidget, parent: QWidget) -> QLabel:
    """A label whose mnemonic (&X in ``text``) moves the focus to ``buddy``."""
    label = QLabel(text, parent)
    label.setBuddy(buddy)
    return label


def emphasize(widget: QWidget) -> None:
    """Bold text without a style sheet (see apply_app_style)."""
    font = widget.font()
    font.setBold(True)
    widget.setFont(font)
