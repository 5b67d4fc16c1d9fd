"""The application's main window (the wizard takes its place as it lands)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMainWindow, QVBoxLayout, QWidget

from app import __version__


class MainWindow(QMainWindow):
    def __init__(self, db_path: Path) -> None:
        super().__init__()
        self.db_path = db_path
        self.setWindowTitle(f"nfs-tuner {__version__}")
        body = QWidget(self)
        layout = QVBoxLayout(body)
        title = QLabel("<h2>nfs-tuner</h2>", body)
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        info = QLabel(f"Sessions are kept in {db_path}", body)
        info.setObjectName("dbPathLabel")
        info.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(title)
        layout.addWidget(info)
        self.setCentralWidget(body)
        self.resize(1280, 800)
