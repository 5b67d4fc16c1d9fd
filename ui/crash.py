"""Unexpected exceptions: log them, put every host change back, and say so."""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import TracebackType

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from ui.async_tasks import spawn

log = logging.getLogger(__name__)


class CrashDialog(QDialog):
    def __init__(self, text: str, log_path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("crashDialog")
        self.setWindowTitle("nfs-tuner hit an unexpected error")
        intro = QLabel(
            "<p><b>Something went wrong inside nfs-tuner.</b> This is a bug, not something you did.</p>"
            "<p>Every change nfs-tuner made on your hosts is being put back now.</p>"
            f"<p>The full log is at <code>{log_path}</code>; please attach it to a bug report.</p>", self)
        intro.setWordWrap(True)
        intro.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details = QPlainTextEdit(text, self)
        self.details.setReadOnly(True)
        self.details.setAccessibleName("Details of the error")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        copy = buttons.addButton("Copy &details", QDialogButtonBox.ButtonRole.ActionRole)  # &C: Close
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(text))
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.details, 1)
        layout.addWidget(buttons)
        self.resize(640, 420)


class CrashHandler:
    """sys.excepthook that reverts first and then explains."""

    def __init__(self, parent: QWidget | None, revert: Callable[[], Awaitable[None]], log_path: Path) -> None:
        self.parent = parent
        self.revert = revert
        self.log_path = log_path
        self.dialog: CrashDialog | None = None
        self._previous = sys.excepthook

    def install(self) -> None:
        self._previous = sys.excepthook
        sys.excepthook = self.handle

    def uninstall(self) -> None:
        if sys.excepthook == self.handle:
            sys.excepthook = self._previous

    def handle(self, exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            self._previous(exc_type, exc, tb)
            return
        text = "".join(traceback.format_exception(exc_type, exc, tb))
        log.critical("unexpected exception\n%s", text)
        try:
            spawn(self._revert())
        except RuntimeError:  # no running loop (e.g. during shutdown): nothing async can run
            log.error("could not schedule the revert after a crash")
        if self.dialog is None or not self.dialog.isVisible():
            self.dialog = CrashDialog(text, self.log_path, self.parent)
            self.dialog.open()

    async def _revert(self) -> None:
        try:
            await self.revert()
        except Exception:  # the dialog already says to check the log
            log.exception("revert after a crash failed")
