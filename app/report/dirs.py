"""A stored directory-scaling study read back: each layout's create-rate curve and its collapse.

Every face reads a study here (``study dirs``, ``sessions show``/``list``, the HTML
report). A layout's curve is rebuilt from its trial's stored samples: each create-phase
sample carries the entries in the directory at its end (``count``) and the creates it
timed, so a point is (entries, creates per second); long runs are merged into at most
MAX_CURVE_POINTS points per client, as the agent bounds its own point records. The
collapse rule: experiments.knee.find_collapse; the sentence: app.vocabulary.dirs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.report.ladder import held_config
from app.report.session_data import study_sweep
from app.store.records import TrialRecord
from app.store.sample_blocks import SampleArrays
from app.store.states import TrialState
from app.store.store import Store
from app.vocabulary.dirs import collapse_clause, collapse_sentence, create_rate_text
from experiments.knee import Collapse, CurvePoint, find_collapse
from experiments.workloads import MAX_CURVE_POINTS

TABLE_ROWS = 10  # `study dirs` and the review window show about this many points per curve; --json and the report: all


@dataclass(frozen=True, slots=True)
class DirsCurve:
    trial_id: int
    layout: str
    client: str
    points: tuple[CurvePoint, ...]
    collapse: Collapse
    reason: str = ""  # why the trial broke


@dataclass(frozen=True, slots=True)
class DirsResult:
    entries: int  # files per directory the study asked for
    config: Mapping[str, Any]  # the knobs held for the whole study ({}: the hosts' own settings)
    curves: tuple[DirsCurve, ...]

    def label(self, c: DirsCurve) -> str:
        """The layout, with the client when several ran it."""
        return c.layout if len({x.client for x in self.curves}) <= 1 else f"{c.layout} ({c.client})"

    @property
    def sentence(self) -> str:
        return collapse_sentence({self.label(c): c.collapse for c in self.curves})

    @property
    def summary(self) -> str:
        """Every curve's clause without the rule (``sessions list``)."""
        return "; ".join(collapse_clause(self.label(c), c.collapse) for c in self.curves) or "no curve measured"

    def drawn(self) -> tuple[DirsCurve, ...]:
        """The curves with points to draw (a trial that broke at once has none)."""
        return tuple(c for c in self.curves if c.points)

    def table_marks(self, rows: int = TABLE_ROWS) -> list[int]:
        """About ``rows`` entry counts, evenly along the longest curve and ending at its last point."""
        if not (curves := self.drawn()):
            return []
        longest = max(curves, key=lambda c: len(c.points)).points
        step = max(1, -(-len(longest) // rows))
        marks = [p.entries for p in longest[step - 1 :: step]]
        return marks if marks[-1:] == [longest[-1].entries] else [*marks, longest[-1].entries]

    def table_rows(self, rows: int = TABLE_ROWS) -> list[tuple[str, ...]]:
        """Each mark's entries and every drawn curve's create rate once it got there (drawn()'s order)."""
        return [(f"{n:,}", *(create_rate_text(rate_at(c, n)) for c in self.drawn())) for n in self.table_marks(rows)]

    def to_json(self) -> dict[str, Any]:
        return {
            "entries": self.entries, "config": dict(self.config), "sentence": self.sentence,
            "curves": [{"trial": c.trial_id, "layout": c.layout, "client": c.client, "reason": c.reason,
                        "points": [{"entries": p.entries, "rate": p.rate} for p in c.points],
                        "collapse": {"entries": c.collapse.entries, "share": c.collapse.share,
                                     "early_rate": c.collapse.early_rate, "end_share": c.collapse.end_share,
                                     "last_entries": c.collapse.last_entries}}
                       for c in self.curves],
        }  # fmt: skip


def rate_at(c: DirsCurve, entries: int) -> float | None:
    """The curve's create rate at its first point with at least ``entries``; None past its end."""
    return next((p.rate for p in c.points if p.entries >= entries), None)


def curve_points(samples: SampleArrays, client: int) -> tuple[CurvePoint, ...]:
    """One client's create-phase samples as at most MAX_CURVE_POINTS (entries, rate) points."""
    rows = np.flatnonzero((samples.client_index == client) & (samples.count >= 0))
    rows = rows[samples.phase[rows] == "create"] if len(rows) else rows
    rows = rows[np.argsort(samples.t[rows], kind="stable")]
    per = -(-len(rows) // MAX_CURVE_POINTS) if len(rows) else 1  # samples merged into one point
    out: list[CurvePoint] = []
    for i in range(0, len(rows), per):
        chunk = rows[i:i + per]
        seconds = float(samples.interval[chunk].sum())
        if seconds > 0:
            out.append(CurvePoint(int(samples.count[chunk[-1]]), float(samples.ops[chunk].sum()) / seconds))
    return tuple(out)


def _layout(t: TrialRecord) -> str | None:
    layout = t.workload.get("layout") if isinstance(t.workload, Mapping) else None
    return layout if isinstance(layout, str) else None


def load_dirs(store: Store, session_id: int) -> DirsResult | None:
    """The directory study of a stored session; None when the session is no such study."""
    session = store.get_session(session_id)
    sweep = study_sweep(session.plan, "dirs")
    if sweep is None:
        return None
    layouts = sweep.get("dirs")
    order = [str(x) for x in layouts] if isinstance(layouts, list) else []  # an imported file may hold anything
    curves: list[DirsCurve] = []
    trials = [t for t in store.trials(session_id) if t.state in (TrialState.OK, TrialState.BROKEN)
              and _layout(t) in order]  # fmt: skip
    measured = {_layout(t) for t in trials if t.state == TrialState.OK}
    for t in trials:  # a layout measured ok shows that trial only, not the runs a cancel or a lost host cut
        layout = _layout(t)
        if t.state != TrialState.OK and layout in measured:
            continue
        samples = store.load_samples(t.id)
        for i, client in sorted(enumerate(samples.clients), key=lambda x: x[1]):
            points = curve_points(samples, i)
            curves.append(DirsCurve(t.id, str(layout), client, points, find_collapse(points),
                                    "" if t.state == TrialState.OK else t.reason))  # fmt: skip
    curves.sort(key=lambda c: (order.index(c.layout), c.client, c.trial_id))
    plan = session.plan if isinstance(session.plan, Mapping) else {}
    entries = sweep.get("entries")
    return DirsResult(entries if isinstance(entries, int) else 0, held_config(plan), tuple(curves))
