"""A session's samples laid out end to end: every trial one after the other on one time axis.

Pure numpy (no per-sample Python). Per client: x (session seconds), y (bytes/s) and a
connect mask that breaks the line between trials; per trial: where it starts and ends
on the axis. Trials are added one at a time as they are read, so a 10-million-sample
session is never held twice (the samples of all trials at once, then the streams).

``Decimated`` keeps a stream at full resolution and as min/max pairs of ever coarser
buckets, so a view of any width gives the plot a bounded number of points: pyqtgraph's
own peak downsampling walks every sample in view on every range change (~0.1 s a view
at 5 million samples a client).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from app.store.sample_blocks import SampleArrays

GAP_S = 2.0  # blank seconds between trials on the axis
DECIMATE = 8  # each level holds one min/max pair for this many buckets of the level below
COARSEST = 4096  # buckets: levels stop here


class ClientStream:
    """One client's samples on the session axis, kept as one part per trial (no session-wide
    copy); ``x``, ``y`` and ``connect`` join them on first use."""

    def __init__(self, client: str, parts: list[tuple[NDArray[np.float64], NDArray[np.float64]]]) -> None:
        self.client = client
        self.parts = parts  # (x, y) per trial, in session order

    def __len__(self) -> int:
        return sum(len(x) for x, _y in self.parts)

    @cached_property
    def x(self) -> NDArray[np.float64]:
        return np.concatenate([x for x, _y in self.parts])

    @cached_property
    def y(self) -> NDArray[np.float64]:
        return np.concatenate([y for _x, y in self.parts])

    @cached_property
    def connect(self) -> NDArray[np.bool_]:
        """connect[i]: draw a line from point i to i + 1 (not from a trial's last point)."""
        return _part_breaks([len(x) for x, _y in self.parts])


def _part_breaks(lengths: list[int]) -> NDArray[np.bool_]:
    connect = np.ones(sum(lengths), dtype=bool)
    connect[np.cumsum(lengths) - 1] = False
    return connect


@dataclass(frozen=True, slots=True)
class Timeline:
    streams: tuple[ClientStream, ...]
    spans: dict[int, tuple[float, float]]  # trial id -> (start, end) on the axis

    def trial_at(self, x: float) -> int | None:
        for tid, (a, b) in self.spans.items():
            if a <= x <= b + GAP_S:
                return tid
        return None


@dataclass(slots=True)
class TimelineBuilder:
    """Lays out trials as they are added, in session order."""

    offset: float = 0.0  # where the next trial starts on the axis
    spans: dict[int, tuple[float, float]] = field(default_factory=dict)
    _parts: dict[str, list[tuple[NDArray[np.float64], NDArray[np.float64]]]] = field(default_factory=dict)

    def add_trial(self, trial_id: int, samples: SampleArrays) -> None:
        """One trial's samples, by client then time (as Store.load_samples returns them)."""
        n = len(samples)
        if n == 0:
            return
        t = samples.t
        ci = samples.client_index
        bounds = np.r_[0, np.flatnonzero(ci[1:] != ci[:-1]) + 1, n]
        duration = float(t.max())
        x = t + self.offset
        y = _throughput(samples.records)
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            self._parts.setdefault(samples.clients[int(ci[a])], []).append((x[a:b], y[a:b]))
        self.spans[trial_id] = (self.offset, self.offset + duration)
        self.offset += duration + GAP_S

    def timeline(self) -> Timeline:
        return Timeline(tuple(ClientStream(c, parts) for c, parts in self._parts.items()), dict(self.spans))


def _throughput(records: NDArray[np.void]) -> NDArray[np.float64]:
    """SampleArrays.throughput_bps in two passes instead of five (an int sum, its float copy, zeros)."""
    interval = records["interval"]
    y: NDArray[np.float64] = np.add(records["bytes_read"], records["bytes_written"], dtype=np.float64)
    idle = interval <= 0
    np.divide(y, interval, out=y, where=~idle)
    y[idle] = 0.0
    return y


def session_timeline(samples: SampleArrays) -> Timeline:
    """Samples as Store.load_session_samples returns them (trial order, then client, then time)."""
    builder = TimelineBuilder()
    tid = samples.trial_id
    bounds = np.r_[0, np.flatnonzero(tid[1:] != tid[:-1]) + 1, len(samples)]
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        if b > a:
            builder.add_trial(int(tid[a]), SampleArrays(tid[a:b], samples.client_index[a:b], samples.clients,
                                                        samples.records[a:b]))
    return builder.timeline()


@dataclass(frozen=True, slots=True)
class Decimated:
    """A stream at full resolution (level 0: its trials' parts) and peak-decimated by DECIMATE,
    DECIMATE², … (levels 1 on: one array each)."""

    parts: list[tuple[NDArray[np.float64], NDArray[np.float64]]]
    offsets: NDArray[np.int64]  # where each part starts in the stream
    firsts: NDArray[np.float64]  # each part's first x
    x: tuple[NDArray[np.float64], ...]  # per level from 1: each bucket's first x
    hi: tuple[NDArray[np.float64], ...]  # per level from 1: each bucket's largest y
    lo: tuple[NDArray[np.float64], ...]  # per level from 1: each bucket's smallest y
    joined: tuple[NDArray[np.bool_], ...]  # per level from 1: whether the line goes on to the next bucket

    @classmethod
    def of(cls, stream: ClientStream) -> Decimated:
        lengths = [len(px) for px, _py in stream.parts]
        offsets = np.r_[0, np.cumsum(lengths)].astype(np.int64)
        firsts = np.array([float(px[0]) for px, _py in stream.parts])
        x: list[NDArray[np.float64]] = []
        hi: list[NDArray[np.float64]] = []
        lo: list[NDArray[np.float64]] = []
        joined: list[NDArray[np.bool_]] = []
        if offsets[-1] > COARSEST:  # level 1 trial by trial: a bucket never spans two trials
            firsts_of = [np.arange(0, len(px), DECIMATE) for px, _py in stream.parts]
            x.append(np.concatenate([px[i] for (px, _py), i in zip(stream.parts, firsts_of, strict=True)]))
            hi.append(np.concatenate([np.maximum.reduceat(py, i) for (_px, py), i in zip(stream.parts, firsts_of, strict=True)]))
            lo.append(np.concatenate([np.minimum.reduceat(py, i) for (_px, py), i in zip(stream.parts, firsts_of, strict=True)]))
            joined.append(_part_breaks([len(i) for i in firsts_of]))
        while x and len(x[-1]) > COARSEST:
            starts = np.arange(0, len(x[-1]), DECIMATE)
            x.append(x[-1][starts])
            hi.append(np.maximum.reduceat(hi[-1], starts))
            lo.append(np.minimum.reduceat(lo[-1], starts))
            joined.append(np.logical_and.reduceat(joined[-1], starts))  # a trial's end breaks its bucket's line
        return cls(stream.parts, offsets, firsts, tuple(x), tuple(hi), tuple(lo), tuple(joined))

    def data_bounds(self, axis: int, x_range: tuple[float, float] | None = None) -> tuple[float, float]:
        """The extent of every sample along ``axis`` (y: of those within ``x_range``), read from
        a level with few buckets instead of a pass over them all."""
        if axis == 0:
            return float(self.firsts[0]), float(self.parts[-1][0][-1])
        x0, x1 = x_range or (-np.inf, np.inf)
        level, a, b = self._slice(x0, x1, COARSEST)
        if b <= a:
            return 0.0, 0.0
        if level == 0:
            y = np.concatenate([py for _px, py in self._full(a, b)[1]])
            return float(y.min()), float(y.max())
        return float(self.lo[level - 1][a:b].min()), float(self.hi[level - 1][a:b].max())

    def _index(self, x: float, side: Literal["left", "right"]) -> int:
        """Where x would go among all samples (their parts joined)."""
        p = max(0, int(np.searchsorted(self.firsts, x, side="right")) - 1)
        return int(self.offsets[p]) + int(np.searchsorted(self.parts[p][0], x, side=side))

    def _slice(self, x0: float, x1: float, limit: int) -> tuple[int, int, int]:
        """The finest level with at most ``limit`` points or buckets between x0 and x1, and their
        indexes (one more at each end, so a line runs out of view rather than stopping short)."""
        n = int(self.offsets[-1])
        a, b = max(0, self._index(x0, "left") - 1), min(n, self._index(x1, "right") + 1)
        if b - a <= limit or not self.x:
            return 0, a, b
        for level, xs in enumerate(self.x, start=1):
            a = max(0, int(np.searchsorted(xs, x0)) - 1)
            b = min(len(xs), int(np.searchsorted(xs, x1, side="right")) + 1)
            if b - a <= limit or level == len(self.x):
                return level, a, b
        raise AssertionError("not reached: there is a level")

    def _full(self, a: int, b: int) -> tuple[list[int], list[tuple[NDArray[np.float64], NDArray[np.float64]]]]:
        """Samples a..b of the joined parts, as slices of the parts (and each slice's length)."""
        pieces = []
        for p in range(int(np.searchsorted(self.offsets, a, side="right")) - 1, len(self.parts)):
            start = int(self.offsets[p])
            if start >= b:
                break
            px, py = self.parts[p]
            pieces.append((px[max(0, a - start) : b - start], py[max(0, a - start) : b - start]))
        return [len(px) for px, _py in pieces], pieces

    def view(self, x0: float, x1: float, limit: int) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
        """x, y, connect for the plot between x0 and x1: every sample if at most ``limit`` are in
        view, else the finest level with at most ``limit`` buckets, each as its max and its min."""
        level, a, b = self._slice(x0, x1, limit)
        if level == 0:
            lengths, pieces = self._full(a, b)
            connect = _part_breaks(lengths)  # only the last piece can end inside a trial: nothing follows it
            return (np.concatenate([px for px, _py in pieces]), np.concatenate([py for _px, py in pieces]), connect)
        xs, n = self.x[level - 1], b - a
        y = np.empty(2 * n)
        y[0::2], y[1::2] = self.hi[level - 1][a:b], self.lo[level - 1][a:b]  # as pyqtgraph's peak mode: max then min
        connect = np.ones(2 * n, dtype=bool)
        connect[1::2] = self.joined[level - 1][a:b]
        return np.repeat(xs[a:b], 2), y, connect
