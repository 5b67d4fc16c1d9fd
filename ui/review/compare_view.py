"""Two sessions side by side, per objective and configuration: the difference and whether it is noise."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.report import ComparisonRow, compare_sessions
from app.report.comparison import Side
from app.report.formatting import ci_text, config_text, date_text, pct
from app.store.store import Store
from ui.review.tables import fill_table, make_table

COLUMNS = ("Objective", "Configuration", "A: mean (95 % CI)", "A runs", "B: mean (95 % CI)", "B runs",
           "B − A", "B − A (%)", "Difference 95 % CI", "Verdict")


def _side(s: Side) -> str:
    return ci_text(s.mean, s.half_width)


def _label(row: ComparisonRow) -> str:
    if row.label != "best":
        return row.label
    a = config_text(row.config_a) if row.config_a is not None else "—"
    b = config_text(row.config_b) if row.config_b is not None else "—"
    return f"best: A {a} · B {b}"


def row_cells(r: ComparisonRow) -> tuple[str, ...]:
    diff = f"{r.diff / 1e6:+.1f} MB/s" if r.diff is not None else "—"
    rel = ("+" if (r.rel or 0) >= 0 else "−") + pct(abs(r.rel)) if r.rel is not None else "—"
    ci = f"[{r.low / 1e6:+.1f}, {r.high / 1e6:+.1f}] MB/s" if r.low is not None and r.high is not None else "—"
    return (r.objective, _label(r), _side(r.a), str(r.a.n), _side(r.b), str(r.b.n), diff, rel, ci, r.verdict)


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
        fill_table(self.table, [row_cells(r) for r in self.rows], numeric=(2, 3, 4, 5, 6, 7, 8))
        layout = QVBoxLayout(self)
        layout.addWidget(head)
        layout.addWidget(self.table, 1)
