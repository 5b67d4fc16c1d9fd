"""Fairness between clients as text (experiments.fairness): shares, ratios and the short cell.

Shares read as percents, largest first (``client1 69 %, client2 31 %``); a ratio is
``2.1×``; a table cell is the ratio and Jain's index (``2.2×, Jain 0.87``), with
``, last done 2.1× after first`` for fixed-size work; a missing figure is ``—``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from app.vocabulary.figures import MISSING, percent_text


def ratio_text(x: float | None) -> str:
    """'2.1×', '2.0×', '12×'; '—' when missing or not finite."""
    if x is None or not math.isfinite(x):
        return MISSING
    return f"{x:.1f}×" if x < 9.95 else f"{x:.0f}×"


def shares_text(shares: Mapping[str, float]) -> str:
    """'client1 69 %, client2 31 %': largest share first, ties by name."""
    return ", ".join(f"{c} {percent_text(s)}" for c, s in sorted(shares.items(), key=lambda kv: (-kv[1], kv[0])))


def fairness_cell(ratio: float | None, jain: float | None, done_ratio: float | None = None) -> str:
    """A trials table's fairness cell: '2.2×, Jain 0.87' (largest/smallest share), '—' when not measured."""
    if jain is None or not math.isfinite(jain):
        return MISSING
    done = f", last done {ratio_text(done_ratio)} after first" if done_ratio is not None else ""
    return f"{ratio_text(ratio)}, Jain {jain:.2f}{done}"
