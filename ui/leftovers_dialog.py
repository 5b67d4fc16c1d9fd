"""On start: changes an earlier run left on the hosts (it crashed or was killed), to revert or dismiss."""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.session import Pending, SessionError, TuningSession
from app.vocabulary import about_host
from ui.async_tasks import spawn
from ui.focus import tab_moves_on


class LeftoversDialog(QDialog):
    def __init__(self, session: TuningSession, leftovers: Sequence[Pending], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.leftovers = list(leftovers)
        self.setObjectName("leftoversDialog")
        self.setWindowTitle("Changes from an earlier run")
        text = QLabel(
            "<p>An earlier run ended without putting these changes back (it crashed or was killed). "
            "Where the host's dead-man switch has not restored them, they may still be in effect.</p>"
            "<p><b>Revert</b> writes the old values back now. <b>Dismiss</b> only if you checked the hosts "
            "yourself.</p>", self)
        text.setWordWrap(True)
        self.table = QTableWidget(len(self.leftovers), 4, self)
        self.table.setHorizontalHeaderLabels(("Host", "Change", "From → to", "Found"))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAccessibleName("Changes left on the hosts")
        tab_moves_on(self.table)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        for i, lo in enumerate(self.leftovers):
            e = lo.entry
            for col, value in enumerate((e.host, f"{e.knob} ({e.target})", f"{e.old_value} → {e.new_value}", lo.status)):
                self.table.setItem(i, col, QTableWidgetItem(value))
        self.status = QLabel(self)
        self.status.setObjectName("leftoversStatus")
        self.status.setWordWrap(True)
        buttons = QDialogButtonBox(self)
        self.revert_button = buttons.addButton("&Revert all", QDialogButtonBox.ButtonRole.AcceptRole)
        self.dismiss_button = buttons.addButton("&Dismiss (I checked)", QDialogButtonBox.ButtonRole.DestructiveRole)
        self.later_button = buttons.addButton("&Later", QDialogButtonBox.ButtonRole.RejectRole)
        self.revert_button.setDefault(True)
        self.revert_button.clicked.connect(self.revert)
        self.dismiss_button.clicked.connect(self.dismiss)
        self.later_button.clicked.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(text)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)
        layout.addWidget(buttons)
        self.resize(760, 320)

    def revert(self) -> None:
        self._busy(True)
        spawn(self._revert(), owner=self)

    async def _revert(self) -> None:
        failed = []
        for lo in self.leftovers:
            try:
                await self.session.revert_leftover(lo.entry.id)
            except SessionError as exc:
                failed.append(about_host(lo.entry.host, str(exc)))
        self._busy(False)
        if failed:
            self.status.setText("Not reverted: " + html.escape("; ".join(failed)))
        else:
            self.accept()

    def dismiss(self) -> None:
        for lo in self.leftovers:
            self.session.dismiss_leftover(lo.entry.id)
        self.accept()

    def _busy(self, busy: bool) -> None:
        self.status.setText("Putting the old values back…" if busy else "")
        for b in (self.revert_button, self.dismiss_button, self.later_button):
            b.setEnabled(not busy)
