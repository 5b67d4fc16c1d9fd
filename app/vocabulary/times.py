"""Durations and moments as text."""

from __future__ import annotations

import math
import re
import time

from app.vocabulary.figures import MISSING

_UNITS = {"h": 3600.0, "m": 60.0, "min": 60.0, "s": 1.0}
_PART = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(h|min|m|s)", re.ASCII)
DURATION_FORM = "hours, minutes or seconds, e.g. 45m, 1h30m, 90s or 2h"


def duration_text(seconds: float | None) -> str:
    """'1 h 05 min', '3 min 07 s' or '42 s'; '—' when unknown."""
    if seconds is None or not math.isfinite(seconds):
        return MISSING
    whole = max(0, int(seconds))
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    return f"{h} h {m:02d} min" if h else (f"{m} min {s:02d} s" if m else f"{s} s")


def parse_duration(text: str) -> float:
    """Seconds in '45m', '1h30m', '1h 30min', '90s', '2h' (each unit at most once, largest first);
    ValueError saying the form otherwise."""
    rest, seconds, seen = text.strip().lower(), 0.0, []
    while rest:
        match = _PART.match(rest)
        if match is None:
            break
        seen.append(_UNITS[match.group(2)])
        seconds += float(match.group(1)) * _UNITS[match.group(2)]
        rest = rest[match.end():].strip()
    if not seen or rest or seen != sorted(set(seen), reverse=True) or not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"give a time in {DURATION_FORM}; got {text.strip()!r}" if text.strip() else
                         f"the time is empty; give {DURATION_FORM}")  # fmt: skip
    return seconds


def date_text(t: float | None) -> str:
    """A moment in local time to the minute: '2025-03-14 09:26'; '—' when unknown."""
    if t is None or not math.isfinite(t):
        return MISSING
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t))
