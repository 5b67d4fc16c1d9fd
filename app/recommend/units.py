"""The figure each objective is judged by, and how it is written.

Streaming objectives are judged by bytes per second; small-file, tree and directory
work by file operations per second over whole phases (creates, stats, reads, deletes,
as bonnie++ reports them): their bytes are incidental, and a byte rate over a short
window of zero-byte operations reads as 0.
"""

from __future__ import annotations

import math

from experiments.workloads import OPS_OBJECTIVES

BYTES = "B/s"
OPS = "ops/s"


def unit_of(objective: str | None) -> str:
    return OPS if objective in OPS_OBJECTIVES else BYTES


def figure_text(value: float | None, unit: str = BYTES) -> str:
    """'112.3 MB/s' or '1,234 ops/s'; '—' for a missing or non-finite figure."""
    if value is None or not math.isfinite(value):
        return "—"
    if unit == OPS:
        return f"{value:,.0f} ops/s"
    return f"{value / 1e6:.1f} MB/s"
