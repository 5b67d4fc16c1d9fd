"""The one question the wizard asks before stopping a run: revert, or keep running."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QMessageBox, QWidget


def ask_to_revert(parent: QWidget, name: str, title: str, text: str, yes_label: str,
                  on_yes: Callable[[], object]) -> QMessageBox:
    """Open a non-blocking Yes/No box ("Keep running" is the default); ``on_yes`` runs on Yes."""
    box = QMessageBox(QMessageBox.Icon.Question, title, text,
                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, parent)
    box.setObjectName(name)
    box.setDefaultButton(QMessageBox.StandardButton.No)
    yes = box.button(QMessageBox.StandardButton.Yes)
    yes.setText(yes_label)
    box.button(QMessageBox.StandardButton.No).setText("&Keep running")
    box.finished.connect(lambda _r: box.clickedButton() is yes and on_yes())
    box.open()
    return box
