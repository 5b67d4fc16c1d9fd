"""Two sessions side by side, per objective and configuration: the difference and whether it is noise;
two load ladders also overlaid, each knee labelled with the configuration its ladder held."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout, QWidget

from app.report import ComparisonRow, compare_sessions
from app.report.comparison import Side
from app.vocabulary import (
    config_text,
    date_text,
    interval_text,
    latency_text,
    signed_figure_text,
    signed_percent_text,
    signed_range_text,
)
from app.store.store import Store
from ui.review.study_views import LadderCompare, ladder_pair
from ui.review.tables import cap_columns, fill_table, make_table

COLUMNS = ("Objective", "Configuration", "A: mean (95 % CI)", "A runs", "B: mean (95 % CI)", "B runs",
           "B − A", "B − A (%)", "Difference 95 % CI", "Verdict", "A: p99", "B: p99")
# What an admin comparing two sessions came for, shown right after the configuration's name
# (the header's visual order; the columns keep their indexes); the means and runs follow.
FIRST = ("B − A (%)", "B − A", "Verdict")
CONFIG_MAX_PX = 240  # the best row names two configurations: it elides, its tooltip has them


def _side(s: Side, unit: str) -> str:
    return interval_text(s.mean, s.half_width, unit)


def _label(row: ComparisonRow) -> str:
    if row.label != "best":
        return row.label
    a = config_text(row.config_a) if row.config_a is not None else "—"
    b = config_text(row.config_b) if row.config_b is not None else "—"
    return f"best: A {a} · B {b}"


def row_cells(r: ComparisonRow) -> tuple[str, ...]:
    diff, rel, ci = signed_figure_text(r.diff, r.unit), signed_percent_text(r.rel), signed_range_text(r.low, r.high, r.unit)
    return (r.objective, _label(r), _side(r.a, r.unit), str(r.a.n), _side(r.b, r.unit), str(r.b.n), diff, rel, ci,
            r.verdict, latency_text(r.p99_a), latency_text(r.p99_b))


class CompareView(QWidget):
    def __init__(self, store: Store, session_a: int, session_b: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        a, b = store.get_session(session_a), store.get_session(session_b)
        self.rows = compare_sessions(store.trials(session_a), store.trials(session_b))
        head = QLabel(
            f"A: session {a.id} ({date_text(a.created)}, {', '.join(a.hosts)})   ·   "
            f"B: session {b.id} ({date_text(b.created)}, {', '.join(b.hosts)})\n"
            "Means of the ok trials per configuration; the difference's interval is Welch's at 95 %. "
            "“Beyond noise” means the interval excludes zero.", self)
        head.setWordWrap(True)
        head.setTextFormat(Qt.TextFormat.PlainText)
        self.table = make_table(COLUMNS, self, name="comparison")
        self.table.setWordWrap(False)  # one line a row: columns sized to their texts, the configuration elided
        self.table.horizontalHeader().setStretchLastSection(False)  # Verdict, the last column, moves forward
        fill_table(self.table, [row_cells(r) for r in self.rows], numeric=(2, 3, 4, 5, 6, 7, 8, 10, 11))
        header = self.table.horizontalHeader()
        for place, name in enumerate(FIRST, start=2):
            header.moveSection(header.visualIndex(COLUMNS.index(name)), place)
        cap_columns(self.table, {COLUMNS.index("Configuration"): CONFIG_MAX_PX})
        layout = QVBoxLayout(self)
        layout.addWidget(head)
        ladders = ladder_pair(store, session_a, session_b)
        self.ladders = LadderCompare(*ladders, self) if ladders is not None else None
        self.tabs: QTabWidget | None = None
        if self.ladders is None:
            layout.addWidget(self.table, 1)
            return
        self.tabs = QTabWidget(self)  # two ladders: their knees first ("the knee moves with nfsd threads")
        self.tabs.addTab(self.ladders, "&Ladders")
        self.tabs.addTab(self.table, "&By configuration")
        layout.addWidget(self.tabs, 1)
