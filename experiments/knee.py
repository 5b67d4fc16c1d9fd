"""The load ladder's saturation point (the knee) and the layer that saturated there.

The rule (stated in every report): going from one step to the next — the offered load
doubling — find the first doubling where throughput gains less than ``MIN_GAIN`` (10 %)
while p99 grows by more than ``MAX_P99_GROWTH`` (50 %): more load buys little and costs
waiting. The knee is the load just before it, the most the server carried while more
load still paid (what an admin sizes for); the step after it, where saturation shows,
is where the layer is read. Where a step lacks p99, the gain alone decides.
The gain is scaled to a doubling (a step of ×4 counts as two), so uneven ladders compare.
Steps whose throughput is missing (broken trials) are skipped: the next measured step
is compared with the last measured one. No step meeting the rule: no knee up to the
ladder's last load.

The layer at the knee: the first that holds at the knee's step, in this order —
1. nfsd threads: the share of requests that found no idle thread > 50 %, or the export's
   disk busy > 90 % while it holds on average at least 75 % as many requests as nfsd has
   threads (every thread waits on the disk: more threads would keep more requests in
   flight; pool_stats' share undercounts when few TCP connections carry many requests);
2. server CPU: busy > 90 %;
3. disk: the busiest export device's utilisation > 90 % and its queue not bounded by the
   threads that way;
4. NIC: > 90 % of the link or its measured ceiling;
5. client CPU: busy > 90 %.
With the disk's queue and the thread count known, the disk (3) is judged after the NIC and
the client CPU: utilisation (io_ticks) only says a request was in flight, which a device
that serves many at once (RAID, dm, SSD, NVMe) reads long before it is full, so a measured
share of a known capacity outranks it. Without them (telemetry from before the agent sent
the queue) the disk is judged by its utilisation alone, in its place. None holding, or no
figures: "unknown".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

MIN_GAIN = 0.10  # throughput growth per doubling below this: load buys little
MAX_P99_GROWTH = 0.50  # p99 growth per doubling above this: requests wait
BUSY = 0.90  # CPU, disk, NIC: a share above this is saturated
NFSD_WAITING = 0.50  # nfsd: a share of requests that found no idle thread above this
THREADS_BOUND = 0.75  # a busy disk holding this share of nfsd's thread count: every thread waits on it

RULE = (f"the knee is the load before the first doubling that gains less than {MIN_GAIN * 100:.0f} % "
        f"throughput while p99 grows more than {MAX_P99_GROWTH * 100:.0f} %")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Step:
    """One rung: offered load (streams in flight over all clients) and what it gave."""

    load: int
    throughput_bps: float | None  # None: the step broke
    p99_ms: float | None = None


@dataclass(frozen=True, slots=True)
class Layers:
    """The saturation figures at one step, shares 0..1 (the disk's queue and the threads are counts); None when not seen."""

    nfsd_waiting: float | None = None
    server_cpu: float | None = None
    disk_util: float | None = None
    nic_util: float | None = None
    client_cpu: float | None = None
    disk_queue: float | None = None  # the busiest export device's average requests in flight (not 0..1)
    nfsd_threads: int | None = None  # the server's nfsd threads at the step


@dataclass(frozen=True, slots=True)
class Knee:
    """The knee (the load carried before the doubling that did not pay) and the step after it,
    where saturation shows (index into the ladder, or None: no knee), with the figures."""

    index: int | None  # the saturated step, past the knee: its telemetry names the layer
    load: int | None = None  # the knee: the last load before that step
    past_load: int | None = None  # the saturated step's load
    gain: float | None = None  # throughput growth per doubling past the knee
    p99_growth: float | None = None  # p99 growth per doubling (None: no p99 to judge)
    last_load: int | None = None  # the ladder's highest measured load


@dataclass(frozen=True, slots=True)
class Saturated:
    """The layer that saturated at the knee and the figure that said so."""

    layer: str  # nfsd, server_cpu, disk, nic, client_cpu or unknown
    figure: float | None = None
    threshold: float | None = None
    disk_queue: float | None = None  # set when the disk's queue against the threads decided (nfsd or disk)
    nfsd_threads: int | None = None

    @property
    def waits_on_disk(self) -> bool:
        """nfsd named because every thread waits on the disk (not by the waiting share)."""
        return self.layer == "nfsd" and self.disk_queue is not None


def _per_doubling(before: float, after: float, doublings: float) -> float:
    return float((after / before) ** (1.0 / doublings) - 1.0)


def find_knee(steps: Sequence[Step]) -> Knee:
    """The knee by the module's rule; ``Knee(None, …)`` when none is seen."""
    measured = [(i, s) for i, s in enumerate(steps)
                if s.throughput_bps is not None and math.isfinite(s.throughput_bps) and s.throughput_bps > 0 and s.load > 0]  # fmt: skip
    last = measured[-1][1].load if measured else None
    for (_, a), (j, b) in zip(measured, measured[1:], strict=False):
        doublings = math.log2(b.load / a.load)
        if doublings <= 0:
            continue
        assert a.throughput_bps is not None and b.throughput_bps is not None
        gain = _per_doubling(a.throughput_bps, b.throughput_bps, doublings)
        growth = None
        if a.p99_ms and b.p99_ms and a.p99_ms > 0 and math.isfinite(a.p99_ms) and math.isfinite(b.p99_ms):
            growth = _per_doubling(a.p99_ms, b.p99_ms, doublings)
        if gain < MIN_GAIN and (growth is None or growth > MAX_P99_GROWTH):
            return Knee(j, a.load, b.load, gain, growth, last)
    return Knee(None, last_load=last)


def _over(figure: float | None, threshold: float) -> bool:
    return figure is not None and math.isfinite(figure) and figure > threshold


def thread_count(value: object) -> int | None:
    """A thread count: a positive whole number (a knob's value may be text, a digest's an average), else None."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, float) and math.isfinite(value):
        value = round(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def threads_wait_on_disk(layers: Layers) -> bool | None:
    """Whether the disk's queue is bounded by nfsd's threads (≥ THREADS_BOUND of them); None: a figure unknown."""
    queue, threads = layers.disk_queue, layers.nfsd_threads
    if queue is None or not math.isfinite(queue) or queue < 0 or threads is None or threads <= 0:
        return None
    return queue >= THREADS_BOUND * threads


def saturated_layer(layers: Layers | None) -> Saturated:
    """The first layer that holds by the module's rule, with the figures that said so."""
    if layers is None:
        return Saturated("unknown")
    if _over(layers.nfsd_waiting, NFSD_WAITING):
        return Saturated("nfsd", layers.nfsd_waiting, NFSD_WAITING)
    bound = threads_wait_on_disk(layers)
    if bound and _over(layers.disk_util, BUSY):
        return Saturated("nfsd", layers.disk_util, BUSY, layers.disk_queue, layers.nfsd_threads)
    checks = [("server_cpu", layers.server_cpu), ("disk", layers.disk_util), ("nic", layers.nic_util),
              ("client_cpu", layers.client_cpu)]  # fmt: skip
    if bound is not None:  # the queue known: the disk's utilisation comes after every measured capacity
        checks.append(checks.pop(1))
    for name, figure in checks:
        if _over(figure, BUSY):
            if name == "disk" and bound is not None:
                return Saturated(name, figure, BUSY, layers.disk_queue, layers.nfsd_threads)
            return Saturated(name, figure, BUSY)
    return Saturated("unknown")


# --------------------------------------------------------------------------- directory scaling
# The create-rate curve of one directory growing to N entries (``study dirs``). The early
# rate is the mean over the points within the first ``EARLY_SHARE`` (10 %) of the
# entries (the first point at least). The collapse is the first point whose rate is below
# ``COLLAPSE_SHARE`` (50 %) of the early rate and stays below over the ``SUSTAIN``
# points from it (3: one slow bucket is noise), or over every point left when the curve
# ends sooner (two at least). A curve of fewer than ``MIN_POINTS`` measured points is too
# short to judge. No such point: "no collapse up to N entries"; the share held at the
# end (mean over the last 10 % of entries) says how close it came.

EARLY_SHARE = 0.10
COLLAPSE_SHARE = 0.50
SUSTAIN = 3
MIN_POINTS = 4

COLLAPSE_RULE = (f"the collapse is the first point where the create rate falls below "
                 f"{COLLAPSE_SHARE * 100:.0f} % of its rate over the first {EARLY_SHARE * 100:.0f} % of the "
                 f"entries and stays below for {SUSTAIN} points")  # fmt: skip


class CurvePoint(NamedTuple):
    """Entries in the directory so far and the create rate (per second) over the bucket just ended."""

    entries: int
    rate: float


@dataclass(frozen=True, slots=True)
class Collapse:
    """Where the create rate collapsed (index into the measured points) or None, and the figures."""

    index: int | None
    entries: int | None = None  # entries when it collapsed
    share: float | None = None  # the rate there as a share of the early rate
    early_rate: float | None = None
    end_share: float | None = None  # the share held over the last 10 % of entries
    last_entries: int | None = None  # the curve's last point (None: too short to judge)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def find_collapse(points: Sequence[CurvePoint]) -> Collapse:
    """The collapse by COLLAPSE_RULE; points out of order or without a finite rate are ignored."""
    measured: list[CurvePoint] = []
    for p in points:
        if p.entries > 0 and math.isfinite(p.rate) and p.rate >= 0 and (not measured or p.entries > measured[-1].entries):
            measured.append(p)
    if len(measured) < MIN_POINTS:
        return Collapse(None)
    last = measured[-1].entries
    early = _mean([p.rate for p in measured if p.entries <= last * EARLY_SHARE] or [measured[0].rate])
    if early <= 0:
        return Collapse(None, last_entries=last)
    tail = [p.rate for p in measured if p.entries > last * (1 - EARLY_SHARE)] or [measured[-1].rate]
    end_share = _mean(tail) / early
    below = [p.rate < early * COLLAPSE_SHARE for p in measured]
    for i, p in enumerate(measured):
        run = below[i:i + SUSTAIN]
        if all(run) and (len(run) == SUSTAIN or len(run) >= 2):
            return Collapse(i, p.entries, p.rate / early, early, end_share, last)
    return Collapse(None, early_rate=early, end_share=end_share, last_entries=last)
