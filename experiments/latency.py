"""Latency histograms: one bucket scheme for the agent and fio, merged across clients, read as percentiles.

A trial's p50/p99/p99.9 come from the histogram of every operation of every client in
its measured window, never from averaging the clients' own percentiles: a client ten
times slower than the others owns the tail, and an average would hide it.

The scheme is the load agent's (``experiments/agent.py``, ``Recorder``; a test ties the
two): an operation of ``us`` microseconds counts in bucket ``int(log(us + 1) / log(1.02))``,
so each bucket is 2 % wide and a percentile read off it is within 2 % of the truth. A
percentile is its bucket's upper edge, capped at the largest latency seen. fio's
completion-latency bins (``--output-format=json+``: ``clat_ns`` → ``bins``, nanoseconds →
count) are converted into the same buckets, so agent and fio trials merge alike.

A histogram comes from a host: ``read_histogram`` refuses anything but at most
``MAX_KEY + 1`` buckets with keys in range and finite, whole, non-negative counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from experiments.record_fields import BadRecord, count, finite, mapping

BASE = math.log(1.02)  # the agent's _HIST_BASE
MAX_KEY = 2047  # bucket of ~4e11 s: no real operation takes longer; the agent clamps to it
MAX_FIO_BINS = 4096  # fio has 1856 bins per direction (FIO_IO_U_PLAT_NR)
MAX_FIO_NS = 10**18
QUANTILES = {"p50_ms": 0.50, "p99_ms": 0.99, "p999_ms": 0.999}

Histogram = dict[int, int]  # bucket -> operations


def bucket_of_us(us: float) -> int:
    """The bucket of a latency in microseconds (the agent's formula)."""
    return min(int(math.log(max(us, 0.0) + 1.0) / BASE), MAX_KEY)


def upper_ms(key: int) -> float:
    """A bucket's upper edge in milliseconds."""
    return (math.exp((key + 1) * BASE) - 1.0) / 1e3


def _buckets(value: Any, name: str, most: int, digits: int, top: int, key_of: Callable[[int], int]) -> Histogram:
    """{"<whole number ≤ top>": count} with at most ``most`` entries, each number put in its bucket by ``key_of``."""
    raw = mapping(value, name)
    if len(raw) > most:
        raise BadRecord(f"{name} has {len(raw)} entries, more than {most}")
    out: Histogram = {}
    for k, v in raw.items():
        if not (isinstance(k, str) and k.isdigit() and k.isascii() and len(k) <= digits and int(k) <= top):
            raise BadRecord(f"{name} has a key out of range: {str(k)[:20]!r}")
        if n := count(v, f"{name} {k}"):
            key = key_of(int(k))
            out[key] = out.get(key, 0) + n
    return out


def read_histogram(value: Any, name: str) -> Histogram:
    """A histogram as a host sends it ({"<bucket>": count}); BadRecord for anything else."""
    return _buckets(value, name, MAX_KEY + 1, 4, MAX_KEY, int)


def read_fio_bins(value: Any, name: str) -> Histogram:
    """fio's json+ bins ({"<nanoseconds>": count}) in this module's buckets; BadRecord for anything else."""
    return _buckets(value, name, MAX_FIO_BINS, 19, MAX_FIO_NS, lambda ns: bucket_of_us(ns / 1e3))


def merge(histograms: Iterable[Mapping[int, int]]) -> Histogram:
    """Every operation of every histogram in one."""
    out: Histogram = {}
    for h in histograms:
        for k, n in h.items():
            out[k] = out.get(k, 0) + n
    return out


def subtract(after: Mapping[int, int], before: Mapping[int, int]) -> Histogram:
    """What a cumulative histogram gained since an earlier one (fio's measured window)."""
    return {k: d for k, n in after.items() if (d := n - before.get(k, 0)) > 0}


def quantile_ms(hist: Mapping[int, int], q: float, max_ms: float | None = None) -> float | None:
    """The nearest-rank ``q`` quantile (0 < q ≤ 1) as its bucket's upper edge, at most ``max_ms``; None when empty."""
    total = sum(hist.values())
    if not total:
        return None
    want, seen = max(1, math.ceil(q * total)), 0
    for key in sorted(hist):
        seen += hist[key]
        if seen >= want:
            edge = upper_ms(key)
            return min(edge, max_ms) if max_ms is not None and max_ms > 0 else edge
    return None  # unreachable: the counts add up to total


@dataclass(frozen=True, slots=True)
class Latency:
    """A trial's latency over its measured window, from the clients' merged histogram (ms)."""

    ops: int
    p50_ms: float
    p99_ms: float
    p999_ms: float
    max_ms: float
    hist: Mapping[int, int]

    @classmethod
    def of(cls, hist: Mapping[int, int], max_ms: float | None = None) -> Latency | None:
        """Percentiles of ``hist``; ``max_ms`` the largest latency seen (else the top bucket's edge). None when empty."""
        if not hist or not sum(hist.values()):
            return None
        top = upper_ms(max(hist))
        biggest = min(max_ms, top) if max_ms is not None and max_ms > 0 and math.isfinite(max_ms) else top
        p = {name: quantile_ms(hist, q, biggest) or 0.0 for name, q in QUANTILES.items()}
        return cls(sum(hist.values()), p["p50_ms"], p["p99_ms"], p["p999_ms"], biggest, dict(hist))

    def figures(self) -> dict[str, Any]:
        """The figures without the histogram (what --json prints per trial)."""
        return {"ops": self.ops, "p50_ms": self.p50_ms, "p99_ms": self.p99_ms, "p999_ms": self.p999_ms,
                "max_ms": self.max_ms}

    def to_json(self) -> dict[str, Any]:
        """As a trial's summary stores it: the figures and the histogram they came from."""
        return self.figures() | {"hist": {str(k): n for k, n in sorted(self.hist.items())}}

    @classmethod
    def from_json(cls, value: Any) -> Latency | None:
        """A stored trial's latency; None for a summary without one (older sessions) or a damaged one."""
        if not isinstance(value, Mapping):
            return None
        try:
            figures = {k: finite(value.get(k), k, 0.0) for k in ("p50_ms", "p99_ms", "p999_ms", "max_ms")}
            hist = read_histogram(value.get("hist", {}), "latency hist")
            return cls(count(value.get("ops"), "ops"), hist=hist, **figures)
        except BadRecord:
            return None


def clients_latency(hists: Sequence[Mapping[int, int] | None], max_ms: Sequence[float] = ()) -> Latency | None:
    """The trial's latency from each client's histogram (None: a client sent none, so no honest merge)."""
    if not hists or any(h is None for h in hists):
        return None
    return Latency.of(merge(h for h in hists if h is not None), max(max_ms, default=None))
