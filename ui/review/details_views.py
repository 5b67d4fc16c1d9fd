"""Host facts as they were when the session ran, and the journal of host changes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from app.vocabulary import data_text, date_text, knob_value_text
from app.store.records import HostFactsRecord, JournalEntry
from ui.review.tables import fill_table, make_table

JOURNAL_COLUMNS = ("When", "Host", "Knob", "Target", "Old", "New", "State", "Detail")


def _add(parent: QTreeWidgetItem, key: str, value: Any) -> None:
    if isinstance(value, Mapping):
        item = QTreeWidgetItem(parent, [key, ""])
        for k, v in value.items():
            _add(item, str(k), v)
    elif isinstance(value, list) and any(isinstance(v, Mapping | list) for v in value):
        item = QTreeWidgetItem(parent, [key, f"{len(value)} item(s)"])
        for i, v in enumerate(value):
            name = v.get("name") or v.get("path") or v.get("mount_point") if isinstance(v, Mapping) else None
            _add(item, str(name or i), v)
    else:
        QTreeWidgetItem(parent, [key, data_text(value)])


class FactsView(QTreeWidget):
    """One top item per stored snapshot (host, role, time), its facts as a tree below."""

    def __init__(self, facts: tuple[HostFactsRecord, ...], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setColumnCount(2)
        self.setHeaderLabels(["Fact", "Value"])
        self.setAccessibleName("host facts")
        for r in facts:
            top = QTreeWidgetItem(self, [f"{r.host} ({r.role})", f"as seen {date_text(r.taken_at)}"])
            if isinstance(r.facts, Mapping):
                for k, v in r.facts.items():
                    _add(top, str(k), v)
            else:
                QTreeWidgetItem(top, ["facts", data_text(r.facts)])
            top.setExpanded(True)
        self.resizeColumnToContents(0)


class JournalView(QWidget):
    def __init__(self, journal: tuple[JournalEntry, ...], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = make_table(JOURNAL_COLUMNS, self, name="journal")
        fill_table(self.table, [(date_text(j.created_at), j.host, j.knob, j.target, knob_value_text(j.knob, j.old_value),
                                 knob_value_text(j.knob, j.new_value), j.state.value, j.detail) for j in journal])
        QVBoxLayout(self).addWidget(self.table)
