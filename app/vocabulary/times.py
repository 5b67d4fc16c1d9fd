"""Durations and moments as text."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence

from app.vocabulary.figures import MISSING
from experiments.estimate import DurationEstimate

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


def span_text(seconds: float) -> str:
    """A budget in running text: '30 min', '1 h 30 min', '45 s' (duration_text's, without a lone '00 s')."""
    text = duration_text(seconds)
    return text.removesuffix(" 00 s") if "min" in text else text


def planned_text(seconds: float | None, speed: float = 1.0, bounds: str = "") -> str:
    """A planned time: 'about 4 h 30 min', with ``bounds`` in parentheses after it; on hosts that run ``speed``
    times faster than real ones (the demo's), both clocks: 'about 4 h 30 min on real hosts; the demo runs 20×
    faster: about 13 min 30 s here'."""
    text = f"about {duration_text(seconds)}" + (f" ({bounds})" if bounds else "")
    if speed == 1.0 or seconds is None:
        return text
    return f"{text} on real hosts; the demo runs {speed:g}× faster: about {duration_text(seconds / speed)} here"


def bounds_text(est: DurationEstimate) -> str:
    """What an estimate's parentheses say: 'at most 1 h 49 min'; for a guided plan also where it ends when its
    screening finds nothing worth a closer look (no refinement, no checks), which is often."""
    most = f"at most {duration_text(est.worst_seconds)}"
    if est.least_seconds is None or est.least_seconds >= 0.9 * est.seconds:
        return most
    return f"about {duration_text(est.least_seconds)} if the screening finds nothing worth a closer look; {most}"


def pace_note(speed: float = 1.0) -> str:
    """What a clock running on the demo's time adds: ' (the demo runs 20× faster than real hosts)'; else ''."""
    return "" if speed == 1.0 else f" (the demo runs {speed:g}× faster than real hosts)"


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


TIME_LIMITED = "time-limited"  # a phased figure's mark in a table cell: the rate of what completed


def time_limited_text(phases: Sequence[str], limit_s: float | None = None) -> str:
    """Why a phased trial's figure is the rate of what completed: 'create and delete ended at their share of
    the 1 min 05 s limit: the rate of what they completed'; '' when no phase ended at its limit."""
    names = [str(p) for p in phases]
    if not names:
        return ""
    which = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    limit = f"the {duration_text(limit_s)} limit" if limit_s is not None and math.isfinite(limit_s) else "the time limit"
    their, they = ("its", "it") if len(names) == 1 else ("their", "they")
    return f"{which} ended at {their} share of {limit}: the rate of what {they} completed"
