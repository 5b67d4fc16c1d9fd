"""Numbers and values as an admin reads them, shared by the HTML report and the review window."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

from app.recommend.evidence import config_text, mbps, pct
from app.recommend.units import BYTES, OPS, figure_text

__all__ = ["ci_text", "config_text", "date_text", "figure_text", "mbps", "ops_text", "pct", "value_text"]


def date_text(t: float | None) -> str:
    return "—" if t is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(t))


def ci_text(mean: float | None, half_width: float | None, unit: str = BYTES) -> str:
    """'112.3 ± 1.8 MB/s' or '1,234 ± 56 ops/s' (unit: app.recommend.units); '(one run)' without an interval."""
    if mean is None or not math.isfinite(mean):
        return "—"
    if half_width is None or not math.isfinite(half_width):
        return f"{figure_text(mean, unit)} (one run)"
    if unit == OPS:
        return f"{mean:,.0f} ± {half_width:,.0f} ops/s"
    return f"{mean / 1e6:.1f} ± {half_width / 1e6:.1f} MB/s"


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
