"""The results as a bonnie++-style table: configuration rows × workload columns, the figure and ops/s."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.recommend.ranking import config_key
from app.report.session_data import trial_mean, trial_ops, trial_unit, workload_kind
from app.store.records import TrialRecord
from app.store.states import TrialState
from experiments.statistics import estimate

# The order bonnie++ and the sweep present them: writes, then reads, then metadata.
WORKLOAD_ORDER = ("seq_write", "rewrite", "seq_read", "rand_read", "rand_write", "mixed",
                  "small_files", "tree", "dir_scaling")


@dataclass(frozen=True, slots=True)
class Cell:
    n: int
    mean: float  # over the ok trials, in ``unit``
    half_width: float | None  # 95 % CI, in ``unit``; None for one run
    unit: str  # the trials' figure: bytes/s, or ops/s for phased work (app.vocabulary.unit_of)
    ops: float | None  # ops/s, when the summaries kept it


@dataclass(frozen=True, slots=True)
class WorkloadTable:
    workloads: tuple[str, ...]
    configs: tuple[dict[str, Any], ...]
    cells: dict[tuple[int, str], Cell]  # (config row, workload) -> cell

    def cell(self, row: int, workload: str) -> Cell | None:
        return self.cells.get((row, workload))


def workload_table(trials: Sequence[TrialRecord]) -> WorkloadTable:
    ok = [t for t in trials if t.state == TrialState.OK and trial_mean(t) is not None]
    kinds = list(dict.fromkeys(workload_kind(t.workload) for t in ok))
    kinds.sort(key=lambda k: WORKLOAD_ORDER.index(k) if k in WORKLOAD_ORDER else len(WORKLOAD_ORDER))
    configs: dict[str, dict[str, Any]] = {}
    for t in ok:
        configs.setdefault(config_key(t.config), dict(t.config))
    row_of = {k: i for i, k in enumerate(configs)}
    groups: dict[tuple[int, str], list[TrialRecord]] = {}
    for t in ok:
        groups.setdefault((row_of[config_key(t.config)], workload_kind(t.workload)), []).append(t)
    cells: dict[tuple[int, str], Cell] = {}
    for key, group in groups.items():
        e = estimate([trial_mean(t) or 0.0 for t in group])
        ops = [o for o in (trial_ops(t) for t in group) if o is not None]
        cells[key] = Cell(e.n, e.mean, e.half_width if math.isfinite(e.half_width) else None, trial_unit(group[0]),
                          sum(ops) / len(ops) if ops else None)
    return WorkloadTable(tuple(kinds), tuple(configs.values()), cells)
