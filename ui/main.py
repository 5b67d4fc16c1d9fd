"""Start the desktop application."""

from __future__ import annotations

import argparse
import sys

from app.paths import resolve_db_path


def run_gui(args: argparse.Namespace) -> int:
    from PySide6.QtWidgets import QApplication

    from ui.main_window import MainWindow

    qapp = QApplication.instance() or QApplication(sys.argv[:1])
    qapp.setApplicationName("nfs-tuner")
    qapp.setOrganizationName("nfs-tuner")
    qapp.setDesktopFileName("io.github.nfs_tuner.NfsTuner")
    window = MainWindow(db_path=resolve_db_path(args.db))
    window.show()
    return qapp.exec()
