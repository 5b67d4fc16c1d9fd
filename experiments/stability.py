"""Stability inside one trial: steady-state detection and the trial's summary.

Steady state follows fio's ``steadystate=``: over a sliding window of throughput
samples, the run is steady when the least-squares slope (as the relative change it
makes across the window) and the spread (range or stddev, relative to the window's
mean) both fall under their limits. The summary keeps dips as well as means, because
a setting that bursts higher but dips deeper can sustain less.
"""

from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass
from enum import StrEnum

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


class Spread(StrEnum):
    RANGE = "range"  # (max - min) / mean
    STDDEV = "stddev"  # stddev / mean


@dataclass(frozen=True, slots=True)
class SteadyCriteria:
    window: int = 40  # samples: 10 s at 4 Hz
    max_slope: float = 0.05  # |slope| x window length / mean: the drift across the window
    max_spread: float = 0.20
    spread: Spread = Spread.RANGE
    ramp: int = 0  # samples ignored at the start (warm-up)

    def __post_init__(self) -> None:
        if self.window < 3:
            raise ValueError("a window needs at least 3 samples to fit a slope")


@dataclass(frozen=True, slots=True)
class WindowCheck:
    slope: float  # relative drift across the window
    spread: float  # relative spread
    steady: bool


def check_window(values: np.ndarray, criteria: SteadyCriteria) -> WindowCheck:
    """Judge one window of equally spaced throughput values."""
    v = np.asarray(values, dtype=np.float64)
    n = len(v)
    mean = float(v.mean()) if n else 0.0
    if n < 3 or mean <= 0:
        return WindowCheck(float("inf"), float("inf"), False)
    x = np.arange(n, dtype=np.float64)
    slope = float(np.polyfit(x, v, 1)[0])
    drift = abs(slope) * (n - 1) / mean
    spread = float(v.max() - v.min()) / mean if criteria.spread == Spread.RANGE else float(v.std()) / mean
    return WindowCheck(drift, spread, drift <= criteria.max_slope and spread <= criteria.max_spread)


def steady_mask(values: np.ndarray, criteria: SteadyCriteria) -> np.ndarray:
    """For every index i, whether the window ending at i (inclusive) is steady. Vectorised."""
    v = np.asarray(values, dtype=np.float64)
    w = criteria.window
    out = np.zeros(len(v), dtype=bool)
    if len(v) - criteria.ramp < w:
        return out
    win = sliding_window_view(v[criteria.ramp:], w)
    mean = win.mean(axis=1)
    x = np.arange(w, dtype=np.float64) - (w - 1) / 2  # centred: slope = Σx·v / Σx²
    slope = (win @ x) / float(x @ x)
    with np.errstate(divide="ignore", invalid="ignore"):
        drift = np.abs(slope) * (w - 1) / mean
        if criteria.spread == Spread.RANGE:
            spread = (win.max(axis=1) - win.min(axis=1)) / mean
        else:
            spread = win.std(axis=1) / mean
    ok = (mean > 0) & (drift <= criteria.max_slope) & (spread <= criteria.max_spread)
    out[criteria.ramp + w - 1:] = ok
    return out


def first_steady_index(values: np.ndarray, criteria: SteadyCriteria) -> int | None:
    """Index of the sample that closes the first steady window, or None."""
    hits = np.flatnonzero(steady_mask(values, criteria))
    return int(hits[0]) if len(hits) else None


class SteadyStateDetector:
    """Streaming form: push samples as they arrive; ``steady`` turns True once, and stays."""

    def __init__(self, criteria: SteadyCriteria | None = None) -> None:
        self.criteria = criteria or SteadyCriteria()
        self._window: deque[float] = deque(maxlen=self.criteria.window)
        self._seen = 0
        self.steady_at: float | None = None  # t of the sample that closed the first steady window
        self.last: WindowCheck | None = None

    @property
    def steady(self) -> bool:
        return self.steady_at is not None

    def push(self, t: float, value: float) -> bool:
        self._seen += 1
        if self._seen <= self.criteria.ramp:
            return self.steady
        self._window.append(float(value))
        if len(self._window) == self.criteria.window:
            self.last = check_window(np.fromiter(self._window, dtype=np.float64), self.criteria)
            if self.last.steady and self.steady_at is None:
                self.steady_at = t
        return self.steady

    def push_many(self, t: np.ndarray, values: np.ndarray) -> bool:
        for ti, vi in zip(t, values, strict=True):
            self.push(float(ti), float(vi))
        return self.steady


@dataclass(frozen=True, slots=True)
class TrialSummary:
    n: int
    mean: float
    median: float
    p5: float  # the floor the admin can count on
    cv: float  # stddev / mean
    deepest_dip: float  # 1 - min / median: 0.4 means it fell to 60 % of the median
    dips: int  # separate stretches below dip_fraction x median
    time_to_steady: float | None  # seconds from the trial's start; None if never steady

    def to_dict(self) -> dict[str, float | int | None]:
        return asdict(self)


def count_dips(values: np.ndarray, threshold: float) -> int:
    """Number of separate runs of consecutive values below ``threshold``."""
    below = np.asarray(values) < threshold
    if not below.any():
        return 0
    starts = below & ~np.concatenate(([False], below[:-1]))
    return int(starts.sum())


def summarize(
    t: np.ndarray,
    values: np.ndarray,
    *,
    criteria: SteadyCriteria | None = None,
    dip_fraction: float = 0.8,
    from_steady: bool = False,
) -> TrialSummary:
    """Summarise a trial's throughput series (t in seconds since start, equally spaced values).

    With ``from_steady`` the statistics cover only the samples after steady state was
    reached (all of them if it never was).
    """
    t = np.asarray(t, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if len(v) == 0:
        return TrialSummary(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, None)
    crit = criteria or SteadyCriteria()
    idx = first_steady_index(v, crit)
    time_to_steady = float(t[idx]) if idx is not None else None
    if from_steady and idx is not None:
        v = v[idx - crit.window + 1:]
    mean = float(v.mean())
    median = float(np.median(v))
    deepest = max(0.0, 1.0 - float(v.min()) / median) if median > 0 else 0.0
    return TrialSummary(
        n=len(v),
        mean=mean,
        median=median,
        p5=float(np.percentile(v, 5)),
        cv=float(v.std(ddof=1)) / mean if len(v) > 1 and mean > 0 else 0.0,
        deepest_dip=deepest,
        dips=count_dips(v, dip_fraction * median) if median > 0 else 0,
        time_to_steady=time_to_steady,
    )


def total_throughput(t: np.ndarray, bps: np.ndarray, interval: float) -> tuple[np.ndarray, np.ndarray]:
    """Sum clients' throughput per interval slot: returns (slot end times, total bytes/s).

    Agents' clocks are aligned to the trial start, so a sample belongs to the slot
    its end time rounds into. A slot some client missed counts what arrived.
    """
    slots = np.rint(np.asarray(t) / interval).astype(np.int64)
    if len(slots) == 0:
        return np.zeros(0), np.zeros(0)
    uniq, inverse = np.unique(slots, return_inverse=True)
    total = np.bincount(inverse, weights=np.asarray(bps, dtype=np.float64))
    return uniq * interval, total
