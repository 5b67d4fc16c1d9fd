"""The snippets for the recommended configuration(s), each with Copy and Save."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QFont, QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QTabWidget, QVBoxLayout, QWidget

from app.report import SessionData
from app.report.formatting import config_text
from app.snippets.model import Snippet
from ui.review.dialogs import Dialogs


class SnippetActions:
    """Copy and Save… for a pane that has ``snippet``, ``dialogs`` and a ``status`` label."""

    snippet: Snippet
    dialogs: Dialogs
    status: QLabel

    def save_name(self) -> str:
        return Path(self.snippet.target).name if self.snippet.target.startswith("/") else f"{self.snippet.key}.txt"

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.snippet.text)
        self.status.setText("Copied to the clipboard.")

    def ask_save(self) -> None:
        path = self.dialogs.save_path(f"Save {self.snippet.title}", self.save_name().replace(":", "_"), "All files (*)")
        if path is not None:
            self.save_to(path)

    def save_to(self, path: Path) -> None:
        try:
            path.write_text(self.snippet.text, encoding="utf-8")
        except OSError as exc:
            self.status.setText(f"Could not save: {exc.strerror} ({path})")
        else:
            self.status.setText(f"Saved to {path}")


class SnippetPane(SnippetActions, QWidget):
    def __init__(self, snippet: Snippet, dialogs: Dialogs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.snippet = snippet
        self.dialogs = dialogs
        layout = QVBoxLayout(self)
        where = QLabel(f"→ {snippet.target}" + (f"   ({snippet.host_role})" if snippet.host_role else ""), self)
        layout.addWidget(where)
        if snippet.safety:
            warn = QLabel(f"⚠ {snippet.safety}", self)
            warn.setWordWrap(True)
            layout.addWidget(warn)
        self.text = QPlainTextEdit(snippet.text, self)
        self.text.setReadOnly(True)
        font = QFont("DejaVu Sans Mono")
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.text.setFont(font)
        layout.addWidget(self.text, 1)
        self.status = QLabel(self)
        self.copy_button = QPushButton("&Copy", self)
        self.copy_button.clicked.connect(self.copy)
        self.save_button = QPushButton("&Save…", self)
        self.save_button.clicked.connect(self.ask_save)
        row = QHBoxLayout()
        row.addWidget(self.status, 1)
        row.addWidget(self.copy_button)
        row.addWidget(self.save_button)
        layout.addLayout(row)



class SnippetsView(QWidget):
    def __init__(self, data: SessionData, dialogs: Dialogs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        self.panes: list[SnippetPane] = []
        if not data.snippet_groups:
            layout.addWidget(QLabel("No snippets: there is no recommendation.", self))
        for g in data.snippet_groups:
            head = QLabel(f"For {', '.join(g.objectives)}: {config_text(g.config)}" + (f" — {g.error}" if g.error else ""),
                          self)
            head.setWordWrap(True)
            layout.addWidget(head)
            tabs = QTabWidget(self)
            for s in g.snippets:
                pane = SnippetPane(s, dialogs, tabs)
                self.panes.append(pane)
                tabs.addTab(pane, s.title)
            layout.addWidget(tabs, 1)
