"""File pickers and message boxes behind one small object, so tests can answer them."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget


class Dialogs:
    """What the review window asks the admin; swap in a scripted one for tests."""

    def __init__(self, parent: QWidget | None = None) -> None:
        self.parent = parent

    def save_path(self, title: str, suggested: str, filters: str) -> Path | None:
        path, _ = QFileDialog.getSaveFileName(self.parent, title, suggested, filters)
        return Path(path) if path else None

    def open_path(self, title: str, filters: str) -> Path | None:
        path, _ = QFileDialog.getOpenFileName(self.parent, title, "", filters)
        return Path(path) if path else None

    def choose_dir(self, title: str) -> Path | None:
        path = QFileDialog.getExistingDirectory(self.parent, title)
        return Path(path) if path else None

    def error(self, title: str, text: str) -> None:
        QMessageBox.warning(self.parent, title, text)

    def info(self, title: str, text: str) -> None:
        QMessageBox.information(self.parent, title, text)
