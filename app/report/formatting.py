"""Numbers and values as an admin reads them, shared by the HTML report and the review window."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

from app.recommend.evidence import config_text, mbps, pct

__all__ = ["ci_text", "config_text", "date_text", "mbps", "ops_text", "pct", "value_text"]


def date_text(t: float | None) -> str:
    return "—" if t is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(t))


def ci_text(mean: float | None, half_width: float | None, scale: float = 1e6, unit: str = "MB/s") -> str:
    """'112.3 ± 1.8 MB/s', or '112.3 MB/s (one run)' when no interval exists."""
    if mean is None or not math.isfinite(mean):
        return "—"
    if half_width is None or not math.isfinite(half_width):
        return f"{mean / scale:.1f} {unit} (one run)"
    return f"{mean / scale:.1f} ± {half_width / scale:.1f} {unit}"


def ops_text(ops: float | None) -> str:
    return "—" if ops is None or not math.isfinite(ops) else f"{ops:,.0f}"


def value_text(value: Any) -> str:
    """A JSON value as short text (knob values, journal old/new values)."""
    if value is None:
        return "—"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={value_text(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(value_text(v) for v in value)
    return str(value)
