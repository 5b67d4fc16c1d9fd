"""Server telemetry of a configuration boiled down to the few figures evidence cites.

The telemetry agent reports nfsd's pool_stats as per-second rates in ``extra``
(``nfsd.packets_arrived_per_s``, ``nfsd.sockets_enqueued_per_s``,
``nfsd.threads_woken_per_s`` …). A request that finds an idle nfsd thread wakes it
(threads-woken); one that does not waits. So 1 − woken / arrived is the share of
requests that waited for a thread, on every kernel: before 4.0 only the waiting ones
were counted as enqueued, since then every one is (measured on the lab's 6.1: at 1
thread 94 % found none idle, at 32 threads none, while enqueued stayed = arrived). On
the lab's 7.2 a transport is enqueued again after each request (enqueued 1.0–1.6 ×
arrived) and a wake-up may serve one without a new request, so woken can exceed arrived:
the share is held to 0–1 (2 threads 97 %, 32 none). enqueued / arrived is the fallback
for telemetry recorded without threads-woken (also held to 1).

Each export device reports ``disk.<dev>.util`` (share of the interval with a request in
flight, io_ticks) and, since the agent read diskstats' weighted time, ``disk.<dev>.queue``
(average requests in flight). The digest keeps the busiest device's utilisation and the
queue of that device: the top of an md or dm stack is as busy as its members and holds
every request they serve, so among devices within ``UTIL_TIE`` of the busiest the one
holding most requests is it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.store.records import TelemetryArrays

ARRIVED = "nfsd.packets_arrived_per_s"
ENQUEUED = "nfsd.sockets_enqueued_per_s"
WOKEN = "nfsd.threads_woken_per_s"
THREADS = "nfsd.threads"
UTIL_TIE = 0.02  # utilisations this close are one: a stack's top and its members


@dataclass(frozen=True, slots=True)
class TelemetryDigest:
    """Means over a configuration's trials of the server's figures; None when not seen."""

    host: str | None = None
    cpu_busy: float | None = None  # 0..1
    iowait: float | None = None  # 0..1
    disk_util: float | None = None  # the busiest export device, 0..1
    disk_queue: float | None = None  # the busiest export device's average requests in flight
    arrived_per_s: float | None = None
    enqueued_per_s: float | None = None
    nfsd_threads: float | None = None
    woken_per_s: float | None = None

    @property
    def waiting_share(self) -> float | None:
        """Share of requests that found no free nfsd thread."""
        if self.arrived_per_s is None or self.arrived_per_s <= 0:
            return None
        if self.woken_per_s is not None:
            return min(1.0, max(0.0, 1.0 - self.woken_per_s / self.arrived_per_s))
        if self.enqueued_per_s is None:
            return None
        return min(1.0, self.enqueued_per_s / self.arrived_per_s)


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    return sum(vals) / len(vals) if vals else None


def _queue_mean(values: Iterable[Any]) -> float | None:
    return _mean(v for v in values if isinstance(v, int | float) and not isinstance(v, bool) and v >= 0)


def _disks(extras: Sequence[Mapping[str, Any]]) -> tuple[float | None, float | None]:
    """(utilisation, queue) of the busiest export device over these rows (see the module docstring)."""
    names = {k[5:].rsplit(".", 1)[0] for e in extras for k in e if k.startswith("disk.") and k.endswith((".util", ".queue"))}
    figures = [(_mean(e.get(f"disk.{d}.util") for e in extras), _queue_mean(e.get(f"disk.{d}.queue") for e in extras))
               for d in sorted(names)]  # fmt: skip
    utils = [u for u, _ in figures if u is not None]
    if not utils:
        return None, None
    top = max(utils)
    queues = [q for u, q in figures if u is not None and u >= top - UTIL_TIE]
    # a busy device without its queue: which one holds most cannot be said
    return top, None if None in queues else max(q for q in queues if q is not None)


def _pick_server(arrays: TelemetryArrays, server: str | None) -> str | None:
    hosts = list(dict.fromkeys(arrays.host))
    if server in hosts:
        return server
    # the host whose extras carry nfsd pool figures is the server
    for h, extra in zip(arrays.host, arrays.extra, strict=True):
        if ARRIVED in extra:
            return h
    return hosts[0] if len(hosts) == 1 else None


def digest_arrays(arrays: TelemetryArrays, server: str | None = None) -> TelemetryDigest:
    """One trial's stored telemetry (Store.load_telemetry) as a digest of the server's rows."""
    if not len(arrays.host):
        return TelemetryDigest()
    host = _pick_server(arrays, server)
    if host is None:
        return TelemetryDigest()
    rows = [i for i, h in enumerate(arrays.host) if h == host]
    extras = [arrays.extra[i] for i in rows]
    disk_util, disk_queue = _disks(extras)
    return TelemetryDigest(
        host=host,
        cpu_busy=_mean(float(arrays.cpu_busy[i]) for i in rows),
        iowait=_mean(e.get("cpu.iowait") for e in extras),
        disk_util=disk_util,
        disk_queue=disk_queue,
        arrived_per_s=_mean(e.get(ARRIVED) for e in extras),
        enqueued_per_s=_mean(e.get(ENQUEUED) for e in extras),
        nfsd_threads=_mean(e.get(THREADS) for e in extras),
        woken_per_s=_mean(e.get(WOKEN) for e in extras),
    )


def digest_mapping(data: Mapping[str, Any]) -> TelemetryDigest:
    """A digest kept in a trial summary ({"cpu_busy": …, "extra": {…}} or flat keys)."""
    nested = data.get("extra")
    extra: Mapping[str, Any] = nested if isinstance(nested, Mapping) else data

    def num(m: Mapping[str, Any], key: str) -> float | None:
        v = m.get(key)
        if isinstance(v, bool) or not isinstance(v, int | float) or not (math.isfinite(v) and v >= 0):
            return None  # a stored figure that is not a rate is not evidence
        return float(v)

    disk_util, disk_queue = _disks([{k: num(extra, k) for k in extra if k.startswith("disk.")}])
    return TelemetryDigest(
        host=data.get("host") if isinstance(data.get("host"), str) else None,
        cpu_busy=num(data, "cpu_busy"),
        iowait=num(extra, "cpu.iowait"),
        disk_util=disk_util,
        disk_queue=disk_queue,
        arrived_per_s=num(extra, ARRIVED),
        enqueued_per_s=num(extra, ENQUEUED),
        nfsd_threads=num(extra, THREADS),
        woken_per_s=num(extra, WOKEN),
    )


def combine(digests: Sequence[TelemetryDigest]) -> TelemetryDigest | None:
    """Mean of several trials' digests; None when none of them saw anything."""
    seen = [d for d in digests if d != TelemetryDigest()]
    if not seen:
        return None
    return TelemetryDigest(
        host=next((d.host for d in seen if d.host), None),
        cpu_busy=_mean(d.cpu_busy for d in seen),
        iowait=_mean(d.iowait for d in seen),
        disk_util=_mean(d.disk_util for d in seen),
        disk_queue=_mean(d.disk_queue for d in seen),
        arrived_per_s=_mean(d.arrived_per_s for d in seen),
        enqueued_per_s=_mean(d.enqueued_per_s for d in seen),
        nfsd_threads=_mean(d.nfsd_threads for d in seen),
        woken_per_s=_mean(d.woken_per_s for d in seen),
    )
