from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QLabel

from ui.main_window import MainWindow


def test_main_window_shows_the_database_path(qtbot, tmp_path: Path) -> None:
    window = MainWindow(db_path=tmp_path / "s.db")
    qtbot.addWidget(window)
    window.show()
    label = window.findChild(QLabel, "dbPathLabel")
    assert label is not None and str(tmp_path / "s.db") in label.text()
