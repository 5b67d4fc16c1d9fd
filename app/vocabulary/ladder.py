"""A load ladder's knee and saturated layer as text (experiments.knee).

Load is streams in flight over all clients (``64 streams``); the knee sentence names the
step, the figures the rule decided on, and the layer with the figure that said so:
``Knee at 16 streams: going to 32 streams gained +0.3 % throughput per doubling while p99
grew +99 %; saturated there: nfsd threads (requests waiting for a thread: 94 % > 50 %).`` When the export's
disk's queue decided (experiments.knee: a busy disk holding at least 75 % as many requests
as nfsd has threads names the threads, one holding fewer the disk) the sentence gives it:
``saturated: nfsd threads (every thread waits on the disk: 1.9 requests in flight for 2
threads, the disk busy 97 %)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from experiments.knee import RULE, Knee, Saturated
from app.vocabulary.figures import percent_text, signed_percent_text

LAYER_TITLES = {
    "nfsd": "nfsd threads (requests waiting for a thread",
    "server_cpu": "the server's CPU (busy",
    "disk": "the export's disk (utilisation",
    "nic": "the network (NIC use of the link",
    "client_cpu": "a client's CPU (busy",
}  # the figure and its threshold close each


def load_text(load: int | None) -> str:
    return "—" if load is None else f"{load} stream{'s' if load != 1 else ''}"


def queue_text(queue: float | None) -> str:
    """A disk's average requests in flight: '1.9', '30', or '—' when not seen."""
    if queue is None or not math.isfinite(queue):
        return "—"
    return f"{queue:.1f}" if queue < 10 else f"{queue:.0f}"


def _in_flight(saturated: Saturated) -> str:
    """'1.9 requests in flight for 2 threads'."""
    n = saturated.nfsd_threads
    return f"{queue_text(saturated.disk_queue)} requests in flight for {n} thread{'s' if n != 1 else ''}"


def layer_text(saturated: Saturated) -> str:
    """'nfsd threads (requests waiting for a thread: 94 % > 50 %)', or why it is unknown."""
    title = LAYER_TITLES.get(saturated.layer)
    if title is None or saturated.figure is None:
        return "unknown (no telemetry figure over its threshold at that step)"
    if saturated.waits_on_disk:
        return (f"nfsd threads (every thread waits on the disk: {_in_flight(saturated)}, "
                f"the disk busy {percent_text(saturated.figure)})")  # fmt: skip
    queue = f"; {_in_flight(saturated)}" if saturated.disk_queue is not None else ""
    return f"{title}: {percent_text(saturated.figure)} > {percent_text(saturated.threshold)}{queue})"


def knee_text(knee: Knee, saturated: Saturated) -> str:
    """The knee sentence of a ladder, with the rule's figures or 'no knee up to N'."""
    if knee.index is None:
        if knee.last_load is None:
            return "No step was measured: no knee to name."
        return f"No knee up to {load_text(knee.last_load)} ({RULE})."
    p99 = "p99 was not kept" if knee.p99_growth is None else f"p99 grew {signed_percent_text(knee.p99_growth)}"
    return (f"Knee at {load_text(knee.load)}: going to {load_text(knee.past_load)} gained "
            f"{signed_percent_text(knee.gain)} throughput per doubling while {p99}; "
            f"saturated there: {layer_text(saturated)}.")  # fmt: skip


def knee_short_text(knee: Mapping[str, Any]) -> str:
    """A ladder in a list of sessions, from its --json knee: 'knee at 32 streams (nfsd)', 'no knee up to 128 streams'."""
    load, last = knee.get("load"), knee.get("last_load")
    if isinstance(load, int):
        return f"knee at {load_text(load)} ({knee.get('layer') or 'unknown'})"
    return f"no knee up to {load_text(last)}" if isinstance(last, int) else "no step measured"
