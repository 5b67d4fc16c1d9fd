"""The Plan page's choice of run: a knob sweep, a load ladder or directory scaling, with a study's own fields.

The choice and its checks are the core's (app.session.study), the same as `nfs-tuner
study`; these are only its fields. A study holds each checked knob at one value; the page
switches its knobs' table and its sweep-only fields (strategy, repetitions, goal) with it.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QSpinBox, QWidget

from app.session.dirs_plan import MAX_ENTRIES
from app.session.study import LAYOUTS, MAX_STREAMS, STUDY_HELP, STUDY_TITLES, StudyChoice, StudyKind
from ui.theme import buddy_label

LAYOUT_CHOICES = {"flat and hashed": LAYOUTS, **{layout: (layout,) for layout in LAYOUTS}}
ENTRIES_STEP = 100_000


class StudyFields(QWidget):
    """The kind of run and, for a study, its settings; ``changed`` on any edit."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        defaults = StudyChoice()
        self.kind_box = QComboBox(self)
        self.kind_box.setObjectName("studyKind")
        self.kind_box.setAccessibleName("What to run")
        for kind, title in STUDY_TITLES.items():
            self.kind_box.addItem(title, kind)
            self.kind_box.setItemData(self.kind_box.count() - 1, STUDY_HELP[kind], Qt.ItemDataRole.ToolTipRole)
        self.streams = QSpinBox(self)
        self.streams.setObjectName("maxStreams")
        self.streams.setRange(1, MAX_STREAMS)
        self.streams.setValue(defaults.max_streams)
        self.streams.setToolTip("The ladder's last step: 1, 2, 4, … streams per client up to this, on every client at once.")
        self.entries = QSpinBox(self)
        self.entries.setObjectName("entries")
        self.entries.setRange(1, MAX_ENTRIES)
        self.entries.setSingleStep(ENTRIES_STEP)
        self.entries.setGroupSeparatorShown(True)
        self.entries.setValue(defaults.entries)
        self.entries.setToolTip("Files each client creates in its directory (then deletes, timed). The seed "
                                "article's server collapsed between 700,000 and 1.6 million.")
        self.layouts = QComboBox(self)
        self.layouts.setObjectName("layouts")
        self.layouts.setAccessibleName("Directory layouts")
        for text, layouts in LAYOUT_CHOICES.items():
            self.layouts.addItem(text, layouts)
        self.layouts.setToolTip("flat: every file in one directory; hashed: spread over 256 subdirectories by a "
                                "hash of the name. Each layout is one trial.")
        # One row above the knobs' table: the side column's fields keep their room on a short screen.
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.streams_label = buddy_label("Most streams per c&lient:", self.streams, self)
        self.entries_label = buddy_label("E&ntries per directory:", self.entries, self)
        self.layouts_label = buddy_label("La&youts:", self.layouts, self)
        for widget in (buddy_label("R&un:", self.kind_box, self), self.kind_box, self.streams_label, self.streams,
                       self.entries_label, self.entries, self.layouts_label, self.layouts):  # fmt: skip
            row.addWidget(widget)
        row.addStretch(1)
        self.kind_box.currentIndexChanged.connect(self._kind_changed)
        for box in (self.streams, self.entries):
            box.valueChanged.connect(self.changed)
        self.layouts.currentIndexChanged.connect(self.changed)
        self._kind_changed()

    @property
    def kind(self) -> StudyKind:
        return StudyKind(self.kind_box.currentData())

    def set_kind(self, kind: StudyKind) -> None:
        self.kind_box.setCurrentIndex(self.kind_box.findData(kind))

    def study(self) -> StudyChoice:
        return StudyChoice(self.kind, max_streams=self.streams.value(), entries=self.entries.value(),
                           layouts=tuple(self.layouts.currentData()))  # fmt: skip

    def _kind_changed(self, *_args: object) -> None:
        kind = self.kind
        self.kind_box.setToolTip(STUDY_HELP[kind])
        ladder: list[QWidget] = [self.streams_label, self.streams]
        dirs: list[QWidget] = [self.entries_label, self.entries, self.layouts_label, self.layouts]
        for widgets, shown in ((ladder, kind is StudyKind.LADDER), (dirs, kind is StudyKind.DIRS)):
            for widget in widgets:
                widget.setVisible(shown)
        self.changed.emit()
