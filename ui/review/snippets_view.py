"""The snippets for the recommended configuration(s): each says where it goes, on which host, with which caveat.

One pane serves the review window and the wizard's Results page (ui/pages/results_snippets.py):
the file it goes to, the session's hosts by name and role, the caveat, then the text in a
monospace view that never wraps (an fstab line is one line, scrolled sideways, so it is
pasted as one), with Copy and Save…. With several recommended configurations each group
says whether it is the one to apply (app.report.config_advice).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.report import SessionData
from app.report.config_advice import config_advice
from app.session.results import PlacedSnippet, placed_snippets
from app.vocabulary import config_text
from app.snippets.model import Snippet
from ui.review.dialogs import Dialogs
from ui.tooltips import plain_tip


class SnippetActions:
    """Copy and Save… for a pane that has ``snippet``, ``dialogs`` and a ``status`` label."""

    snippet: Snippet
    dialogs: Dialogs
    status: QLabel

    def save_name(self) -> str:
        """The one suggested file name: the target's own (a path's last part, or a relative file such as
        nfs-tuner.yml); commands for a shell, or no target, by the snippet's key ('mtu-nmcli_client1.txt')."""
        target = self.snippet.target
        name = Path(target).name if target not in ("", "shell") else f"{self.snippet.key}.txt"
        return name.replace(":", "_")

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.snippet.text)
        self.status.setText("Copied to the clipboard.")

    def ask_save(self) -> None:
        path = self.dialogs.save_path(f"Save {self.snippet.title}", self.save_name(), "All files (*)")
        if path is not None:
            self.save_to(path)

    def save_to(self, path: Path) -> None:
        try:
            path.write_text(self.snippet.text, encoding="utf-8")
        except OSError as exc:
            self.status.setText(f"Could not save: {exc.strerror} ({path})")
        else:
            self.status.setText(f"Saved to {path}")


def _field(text: str, parent: QWidget, name: str) -> QLabel:
    label = QLabel(text, parent)
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class SnippetPane(SnippetActions, QWidget):
    """One snippet placed on the session's hosts: Goes to / On / Caveat, the text, Copy and Save…."""

    def __init__(self, placed: PlacedSnippet, dialogs: Dialogs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.placed = placed
        self.snippet = placed.snippet
        self.dialogs = dialogs
        self.where = _field(placed.where, self, "snippetWhere")
        self.on = _field(placed.on, self, "snippetHosts")
        self.caveat = _field(("⚠ " if placed.snippet.risky else "") + placed.caveat, self, "snippetCaveat")
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
        self.copy_button = QPushButton("Cop&y", self)  # &C and &S are a tab's and a menu's beside it
        self.copy_button.clicked.connect(self.copy)
        self.save_button = QPushButton("Sa&ve…", self)
        self.save_button.clicked.connect(self.ask_save)
        row = QHBoxLayout()
        row.addWidget(self.status, 1)
        row.addWidget(self.copy_button)
        row.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.text, 1)
        layout.addLayout(row)


class SnippetsView(QWidget):
    """One group of snippets per recommended configuration, each opening with what it is for.

    With several, each group is a tab ('seq_read (recommended)', 'seq_write (alternative)'),
    the recommended one shown first, and the rule that chose it is the tabs' tooltip.
    """

    def __init__(self, data: SessionData, dialogs: Dialogs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        self.panes: list[SnippetPane] = []
        self.heads: list[QLabel] = []
        self.groups: QTabWidget | None = None
        advice = config_advice(data)
        if advice is None:
            layout.addWidget(QLabel("No snippets: there is no recommendation.", self))
            return
        if advice.rule:
            self.groups = QTabWidget(self)
            self.groups.setObjectName("snippetGroups")
            self.groups.setToolTip(plain_tip(advice.rule))
            layout.addWidget(self.groups, 1)
        for a in advice.groups:
            box = QWidget(self)
            inner = QVBoxLayout(box)
            inner.setContentsMargins(0, 0, 0, 0)
            g = a.group
            head = _field(f"For {', '.join(g.objectives)}: {config_text(g.shown)}\n{a.words}"
                          + (f"\n⚠ {g.error}" if g.error else ""), box, "snippetGroup")
            self.heads.append(head)
            inner.addWidget(head)
            tabs = QTabWidget(box)
            for placed in placed_snippets(data, g.snippets):
                pane = SnippetPane(placed, dialogs, tabs)
                self.panes.append(pane)
                tabs.setTabToolTip(tabs.addTab(pane, placed.snippet.title), placed.where)
            inner.addWidget(tabs, 1)
            if self.groups is None:
                layout.addWidget(box, 1)
                continue
            at = self.groups.addTab(box, f"{', '.join(g.objectives)} ({'recommended' if a.recommended else 'alternative'})")
            self.groups.setTabToolTip(at, a.badge)
            if a.recommended:
                self.groups.setCurrentIndex(at)
