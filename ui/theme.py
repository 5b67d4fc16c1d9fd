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
    Safety.COHERENCE: "#d2691e",  # a caution like connectivity's: right for some data only
    Safety.RESTART: "#d2691e",  # a caution: every client pauses, but nothing is lost
    Safety.DATA_RISK: "#d03030",
}
ERROR_COLOUR = SAFETY_COLOURS[Safety.DATA_RISK]


def palette() -> QPalette:
    app = QApplication.instance()
    return app.palette() if isinstance(app, QApplication) else QPalette()


def is_dark(pal: QPalette | None = None) -> bool:
    return (pal or palette()).color(QPalette.ColorRole.Window).lightness() < 128


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


# One colour per client, the most distinct first. Picked greedily from an sRGB grid for the
# largest smallest CIEDE2000 difference (≥ 16 on light, ≥ 17 on dark; tests/ui/test_run_page.py),
# each at WCAG contrast ≥ 3 against the plot's background, never grey (the sum's colour) and
# ≥ 18 from the usual selection blues (the rolling mean is drawn in the palette's Highlight).
# Both lists start red, green, magenta.
CLIENT_COLOURS_LIGHT = ("#f00000", "#3c8700", "#ff00e1", "#4b0fd2", "#694b00", "#872d4b", "#b4874b", "#009687",
                        "#c37887", "#005a3c", "#8769b4", "#004b78", "#872d0f", "#b400a5", "#e1005a", "#5a3c69")
CLIENT_COLOURS_DARK = ("#ff0000", "#009600", "#f000d2", "#a57800", "#d2e100", "#00d2b4", "#ff96a5", "#c3a5ff",
                       "#ffb478", "#00ff4b", "#a5a569", "#ff0069", "#009696", "#b4785a", "#8769f0", "#a578a5")


def client_colour(index: int, pal: QPalette | None = None) -> QColor:
    """The ``index``-th client's colour for ``pal``'s background (past 16 they repeat; the legend names them)."""
    colours = CLIENT_COLOURS_DARK if is_dark(pal) else CLIENT_COLOURS_LIGHT
    return QColor(colours[index % len(colours)])


REFERENCE_FONT_PX = 13.0  # a default desktop font's pixel size: lines get wider only above it


def line_width(weight: float, device_pixel_ratio: float, font_px: float) -> int:
    """A cosmetic pen's width in device pixels for a line of ``weight`` logical pixels at the
    reference font: cosmetic widths are device pixels, so a 1 at 2× would be a hairline."""
    scale = max(1.0, font_px / REFERENCE_FONT_PX) * max(1.0, device_pixel_ratio)
    return max(1, round(weight * scale))


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
