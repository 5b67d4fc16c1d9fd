"""Ranked configurations per objective with their CIs, and the recommendation with its evidence."""

from __future__ import annotations

from PySide6.QtWidgets import QGroupBox, QLabel, QScrollArea, QTableWidget, QVBoxLayout, QWidget

from app.report import ObjectiveView, SessionData, workload_table
from app.report.session_data import LATENCY_HEADERS
from app.vocabulary import OPS, config_text, figure_text, interval_text, percent_text
from ui.review.tables import fill_table, make_table
from ui.theme import emphasize

RANK_COLUMNS = ("#", "Configuration", "Sustainable (95 % CI)", "Mean (95 % CI)", *LATENCY_HEADERS,
                "Runs", "Median CV", "Deepest dip", "Trials")


def _label(text: str, parent: QWidget, *, wrap: bool = True) -> QLabel:
    label = QLabel(text, parent)
    label.setWordWrap(wrap)
    label.setTextFormat(label.textFormat().PlainText)
    return label


class ObjectiveBox(QGroupBox):
    """One objective: the verdict, the evidence sentences, warnings and the ranking."""

    def __init__(self, view: ObjectiveView, parent: QWidget | None = None) -> None:
        super().__init__(view.objective, parent)
        self.view = view
        layout = QVBoxLayout(self)
        self.verdict = _label(view.verdict(), self)
        emphasize(self.verdict)
        layout.addWidget(self.verdict)
        self.evidence = _label("\n".join(f"• {e}" for e in view.evidence), self)
        layout.addWidget(self.evidence)
        for w in view.warnings:
            layout.addWidget(_label(f"⚠ {w}", self))
        self.ranking: QTableWidget = make_table(RANK_COLUMNS, self, name=f"ranking {view.objective}")
        fill_table(self.ranking, [
            (r.rank, r.config_cell(), interval_text(r.sustainable, r.sustainable_half_width, view.unit),
             interval_text(r.mean, r.half_width, view.unit), *r.latency_cells(), r.n, percent_text(r.median_cv),
             percent_text(r.deepest_dip), ", ".join(f"#{t}" for t in r.trial_ids))
            for r in view.ranking], numeric=(0, *range(2, len(RANK_COLUMNS) - 1)))
        self.ranking.setMinimumHeight(min(60 + 30 * len(view.ranking), 320))
        layout.addWidget(self.ranking)


class ResultsView(QScrollArea):
    """The bonnie-style table, then one box per objective, then the excluded trials."""

    def __init__(self, data: SessionData, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setAccessibleName("Results")  # the scroll area takes focus to scroll by keys
        inner = QWidget(self)
        layout = QVBoxLayout(inner)
        for note in data.notes:
            layout.addWidget(_label(note, inner))
        table = workload_table(data.trials)
        headers = ["Configuration", *[f"{w} {unit}" for w in table.workloads for unit in ("mean (95 % CI)", "ops/s")]]
        self.table = make_table(headers, inner, name="results by workload")
        rows = []
        for i, config in enumerate(table.configs):
            row: list[str] = [config_text(config)]
            for w in table.workloads:
                c = table.cell(i, w)
                row += ["—", "—"] if c is None else [interval_text(c.mean, c.half_width, c.unit), figure_text(c.ops, OPS)]
            rows.append(row)
        fill_table(self.table, rows, numeric=range(1, len(headers)))
        self.table.setMinimumHeight(min(60 + 30 * len(rows), 300))
        layout.addWidget(self.table)
        self.boxes = [ObjectiveBox(v, inner) for v in data.objectives]
        if not self.boxes:
            layout.addWidget(_label("No recommendation: no ok trial informs an objective.", inner))
        for box in self.boxes:
            layout.addWidget(box)
        if data.excluded:
            excluded_box = QGroupBox("Excluded trials", inner)
            v = QVBoxLayout(excluded_box)
            self.excluded = make_table(("Trial", "Configuration", "State", "Reason"), excluded_box, name="excluded trials")
            fill_table(self.excluded, [(f"#{e.get('trial_id')}", config_text(dict(e.get("config") or {})),
                                        e.get("state", ""), e.get("reason", "")) for e in data.excluded])
            v.addWidget(self.excluded)
            layout.addWidget(excluded_box)
        layout.addStretch(1)
        self.setWidget(inner)
