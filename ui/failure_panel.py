"""A failure shown as one: an error icon, a red headline, the host's words large, and a retry."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QStyle, QVBoxLayout, QWidget

from ui.theme import ERROR_COLOUR, emphasize


class FailurePanel(QFrame):
    """Hidden until ``show_failure``; ``retry_button`` is the page's to connect."""

    def __init__(self, retry_text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("failurePanel")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        tint = QColor(ERROR_COLOUR)
        tint.setAlpha(40)  # a tint, so the text reads on light and dark palettes
        pal = self.palette()
        pal.setColor(QPalette.ColorRole.Window, tint)
        self.setPalette(pal)
        self.setAutoFillBackground(True)
        icon = QLabel(self)
        icon.setPixmap(self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxCritical).pixmap(32, 32))
        self.headline = QLabel(self)
        self.headline.setObjectName("failureHeadline")
        self.headline.setWordWrap(True)
        self.headline.setTextFormat(Qt.TextFormat.PlainText)  # host names and errors are data, never markup
        emphasize(self.headline)
        red = self.headline.palette()
        red.setColor(QPalette.ColorRole.WindowText, QColor(ERROR_COLOUR))
        self.headline.setPalette(red)
        self.error = QLabel(self)
        self.error.setObjectName("failureText")
        self.error.setWordWrap(True)
        self.error.setTextFormat(Qt.TextFormat.PlainText)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.error.font()
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.error.setFont(font)
        self.retry_button = QPushButton(retry_text, self)
        self.retry_button.setAutoDefault(False)
        text = QVBoxLayout()
        text.addWidget(self.headline)
        text.addWidget(self.error)
        layout = QHBoxLayout(self)
        layout.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(text, 1)
        layout.addWidget(self.retry_button, 0, Qt.AlignmentFlag.AlignVCenter)
        self.hide()

    def show_failure(self, headline: str, error: str) -> None:
        self.headline.setText(headline)
        self.error.setText(error)
        self.show()
