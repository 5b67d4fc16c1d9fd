"""A session's samples laid out end to end: every trial one after the other on one time axis.

Pure numpy (no per-sample Python), so a million samples are arranged in milliseconds.
Per client: x (session seconds), y (bytes/s) and a connect mask that breaks the line
between trials; per trial: where it starts and ends on the axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.store.sample_blocks import SampleArrays

GAP_S = 2.0  # blank seconds between trials on the axis


@dataclass(frozen=True, slots=True)
class ClientStream:
    client: str
    x: np.ndarray
    y: np.ndarray
    connect: np.ndarray  # connect[i]: draw a line from point i to i + 1


@dataclass(frozen=True, slots=True)
class Timeline:
    streams: tuple[ClientStream, ...]
    spans: dict[int, tuple[float, float]]  # trial id -> (start, end) on the axis

    def trial_at(self, x: float) -> int | None:
        for tid, (a, b) in self.spans.items():
            if a <= x <= b + GAP_S:
                return tid
        return None


def session_timeline(samples: SampleArrays) -> Timeline:
    """Samples as Store.load_session_samples returns them (trial order, then client, then time)."""
    n = len(samples)
    if n == 0:
        return Timeline((), {})
    tid = samples.trial_id
    t = samples.t
    starts = np.flatnonzero(np.r_[True, tid[1:] != tid[:-1]])
    block_tid = tid[starts]
    lengths = np.diff(np.r_[starts, n])
    ends = np.maximum.reduceat(t, starts)
    # a trial's clients are consecutive blocks with the same id: merge them into one span
    firsts = np.flatnonzero(np.r_[True, block_tid[1:] != block_tid[:-1]])
    trial_ids = block_tid[firsts]
    durations = np.maximum.reduceat(ends, firsts)
    offsets = np.r_[0.0, np.cumsum(durations + GAP_S)[:-1]]
    block_offset = np.repeat(offsets, np.diff(np.r_[firsts, len(starts)]))
    x = t + np.repeat(block_offset, lengths)
    y = samples.throughput_bps
    streams = []
    for ci, client in enumerate(samples.clients):
        mask = samples.client_index == ci
        xc, yc, tc = x[mask], y[mask], tid[mask]
        connect = np.r_[tc[1:] == tc[:-1], False]
        streams.append(ClientStream(client, xc, yc, connect))
    spans = {int(a): (float(o), float(o + d)) for a, o, d in zip(trial_ids, offsets, durations, strict=True)}
    return Timeline(tuple(streams), spans)
