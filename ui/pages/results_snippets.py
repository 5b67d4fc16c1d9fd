"""The Results page's snippets: each says where it goes, on which host, with which caveat.

As the review window's SnippetPane (Copy, Save…), with the session's own host names and
the text in a monospace view that never wraps: an fstab line is one line, scrolled
sideways, so it is pasted as one.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from app.session.results import PlacedSnippet
from ui.review.dialogs import Dialogs
from ui.review.snippets_view import SnippetActions


def _field(text: str, parent: QWidget, name: str) -> QLabel:
    label = QLabel(text, parent)
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class SnippetCard(SnippetActions, QWidget):
    def __init__(self, placed: PlacedSnippet, dialogs: Dialogs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.placed = placed
        self.snippet = placed.snippet
        self.dialogs = dialogs
        self.where = _field(placed.where, self, "snippetWhere")
        self.on = _field(placed.on, self, "snippetHosts")
        self.caveat = _field(("⚠ " if placed.snippet.safety else "") + placed.caveat, self, "snippetCaveat")
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Goes to:", self.where)
        form.addRow("On:", self.on)
        form.addRow("Caveat:", self.caveat)
        self.text = QPlainTextEdit(placed.snippet.text, self)
        self.text.setObjectName("snippetText")
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)  # scrolls sideways instead
        self.text.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setAccessibleName(f"{placed.snippet.title}: text")
        self.status = QLabel(self)
        self.copy_button = QPushButton("&Copy", self)
        self.copy_button.clicked.connect(self.copy)
        self.save_button = QPushButton("&Save…", self)
        self.save_button.clicked.connect(self.ask_save)
        row = QHBoxLayout()
        row.addWidget(self.status, 1)
        row.addWidget(self.copy_button)
        row.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.text, 1)
        layout.addLayout(row)

    def save_name(self) -> str:  # a relative target (the playbook's nfs-tuner.yml) is a name too
        target = self.snippet.target
        return Path(target).name if target not in ("", "shell") else f"{self.snippet.key}.txt"
