"""Measured figures as text: rates with their unit, intervals, shares, gains, memory sizes.

Streaming objectives are judged by bytes per second; small-file, tree and directory
work by file operations per second over whole phases (creates, stats, reads, deletes,
as bonnie++ reports them): their bytes are incidental, and a byte rate over a short
window of zero-byte operations reads as 0. ``BYTES`` and ``OPS`` are the unit names the
trial summaries store; the text says MB/s (decimal, as ``--link-mbps``) or ops/s.
"""

from __future__ import annotations

import math

from experiments.workloads import OPS_OBJECTIVES

BYTES = "B/s"
OPS = "ops/s"
MISSING = "—"
MINUS = "\u2212"  # a real minus sign: a hyphen reads as a dash in running text
MB = 1e6


def unit_of(objective: str | None) -> str:
    """The unit an objective's figures are in (``BYTES`` or ``OPS``)."""
    return OPS if objective in OPS_OBJECTIVES else BYTES


def unit_word(unit: str) -> str:
    """How a unit reads next to a number: 'MB/s' or 'ops/s'."""
    return "ops/s" if unit == OPS else "MB/s"


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _signed(text: str, negative: bool, *, plus: bool = False) -> str:
    """``text`` (of an absolute value) with its sign; a figure that rounds to zero gets none unless ``plus``."""
    if negative and any(c in "123456789" for c in text):
        return MINUS + text
    return "+" + text if plus else text


def _number(value: float, unit: str) -> str:
    """The absolute value in the unit's own resolution: '1,234.5' MB/s or '1,234' ops/s."""
    return f"{abs(value):,.0f}" if unit == OPS else f"{abs(value) / MB:,.1f}"


def figure_text(value: float | None, unit: str = BYTES) -> str:
    """'112.3 MB/s' or '1,234 ops/s'; '—' for a missing or non-finite figure."""
    if value is None or not math.isfinite(value):
        return MISSING
    return f"{_signed(_number(value, unit), value < 0)} {unit_word(unit)}"


def signed_figure_text(value: float | None, unit: str = BYTES) -> str:
    """A difference: '+12.3 MB/s' or '−12.3 MB/s'."""
    if value is None or not math.isfinite(value):
        return MISSING
    return f"{_signed(_number(value, unit), value < 0, plus=True)} {unit_word(unit)}"


def signed_range_text(low: float | None, high: float | None, unit: str = BYTES) -> str:
    """A difference's interval: '[−1.2, +3.4] MB/s'; '—' when either end is missing."""
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return MISSING
    ends = (_signed(_number(x, unit), x < 0, plus=True) for x in (low, high))
    return f"[{', '.join(ends)}] {unit_word(unit)}"


def interval_text(mean: float | None, half_width: float | None, unit: str = BYTES) -> str:
    """'112.3 ± 1.8 MB/s' or '1,234 ± 56 ops/s' (a 95 % CI); '112.3 MB/s (one run)' without one."""
    if mean is None or not math.isfinite(mean):
        return MISSING
    if half_width is None or not math.isfinite(half_width):
        return f"{figure_text(mean, unit)} (one run)"
    return f"{_signed(_number(mean, unit), mean < 0)} ± {_number(half_width, unit)} {unit_word(unit)}"


def _percent(x: float) -> str:
    return f"{abs(x) * 100:.0f} %" if abs(x) >= 0.095 else f"{abs(x) * 100:.1f} %"


def percent_text(x: float | None) -> str:
    """A share: '18 %', '3.2 %' (one decimal below 9.5 %), '−4.0 %'; '—' when missing."""
    if x is None or not math.isfinite(x):
        return MISSING
    return _signed(_percent(x), x < 0)


def signed_percent_text(x: float | None) -> str:
    """A relative change: '+18 %' or '−4.0 %'."""
    if x is None or not math.isfinite(x):
        return MISSING
    return _signed(_percent(x), x < 0, plus=True)


def gain_text(rel: float | None, rel_low: float | None, rel_high: float | None) -> str:
    """'+18 % ± 3 %' (the 95 % CI's half width), or '+18 % (too few runs for an interval)'."""
    if rel is None or not math.isfinite(rel):
        return MISSING
    if not (_finite(rel_low) and _finite(rel_high)):
        return f"{signed_percent_text(rel)} (too few runs for an interval)"
    assert rel_low is not None and rel_high is not None
    return f"{signed_percent_text(rel)} ± {percent_text((rel_high - rel_low) / 2)}"


def memory_text(kib: float | None) -> str:
    """An amount of memory from KiB: '15.5 GiB', or '768 MiB' below one GiB; '—' when unknown."""
    if kib is None or not math.isfinite(kib) or kib < 0:
        return MISSING
    return f"{kib / (1 << 20):,.1f} GiB" if kib >= 1 << 20 else f"{kib / 1024:,.0f} MiB"


def latency_text(ms: float | None) -> str:
    """A latency in three significant figures: '0.412 ms', '4.12 ms', '41.2 ms', '412 ms', '4,120 ms'; '—' when missing."""
    if ms is None or not math.isfinite(ms) or ms < 0:
        return MISSING
    digits = 0 if ms >= 100 else 1 if ms >= 10 else 2 if ms >= 1 else 3
    return f"{ms:,.{digits}f} ms"


def latencies_text(p50: float | None, p99: float | None, p999: float | None) -> str:
    """'p50 1.23 ms, p99 4.12 ms, p99.9 9.87 ms' ('—' for each one missing)."""
    return f"p50 {latency_text(p50)}, p99 {latency_text(p99)}, p99.9 {latency_text(p999)}"
