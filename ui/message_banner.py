"""A strip above the wizard for the core's messages, in words plus the log's path."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QStyle, QToolButton, QWidget

from app.events import Level, Message

LEVEL_COLOURS = {Level.INFO: "#1e78c8", Level.WARNING: "#d2a000", Level.ERROR: "#d03030"}
LEVEL_ICONS = {
    Level.INFO: QStyle.StandardPixmap.SP_MessageBoxInformation,
    Level.WARNING: QStyle.StandardPixmap.SP_MessageBoxWarning,
    Level.ERROR: QStyle.StandardPixmap.SP_MessageBoxCritical,
}


class MessageBanner(QFrame):
    def __init__(self, log_path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBanner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.log_path = log_path
        self.icon = QLabel(self)
        self.text = QLabel(self)
        self.text.setObjectName("messageText")
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton(self)
        close.setText("✕")
        close.setToolTip("Dismiss")
        close.setAccessibleName("Dismiss message")
        close.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(self.icon)
        layout.addWidget(self.text, 1)
        layout.addWidget(close)
        self.hide()

    def show_message(self, message: Message) -> None:
        detail = f" {html.escape(message.detail)}" if message.detail else ""
        where = (f"<br><small>The log is at <code>{html.escape(str(self.log_path))}</code></small>"
                 if message.level is not Level.INFO else "")
        self.text.setText(f"<b>{html.escape(message.text)}</b>{detail}{where}")
        self.icon.setPixmap(self.style().standardIcon(LEVEL_ICONS[message.level]).pixmap(24, 24))
        tint = QColor(LEVEL_COLOURS[message.level])
        tint.setAlpha(40)
        pal = self.palette()
        pal.setColor(QPalette.ColorRole.Window, tint)
        self.setPalette(pal)
        self.setAutoFillBackground(True)
        self.show()
