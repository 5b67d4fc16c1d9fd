"""The current trial's measurements as ring buffers, fed batch by batch.

Qt-free (numpy only): the bridge calls ``ingest`` from its frame timer and the
plots read ``view()``s. ``version`` rises with every change, so a plot can skip a
frame when nothing arrived.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from app.events import SamplesBatch, TelemetryBatch
from experiments.samples import HostTelemetry, Sample
from ui.ring_buffer import BucketSum, RingBuffer

CLIENT_METRICS = ("throughput", "ops", "lat_p99")  # bytes/s, ops/s, ms
HOST_METRICS = ("disk_read", "disk_write", "net_rx", "net_tx", "cpu")
DEFAULT_CAPACITY = 4096  # 17 minutes at 4 Hz: a trial longer than that scrolls
SAMPLE_INTERVAL = 0.25


@dataclass(slots=True)
class ClientSeries:
    capacity: int
    series: dict[str, RingBuffer] = field(init=False)
    last_key: int = -1

    def __post_init__(self) -> None:
        self.series = {m: RingBuffer(self.capacity) for m in CLIENT_METRICS}


@dataclass(slots=True)
class HostSeries:
    capacity: int
    series: dict[str, RingBuffer] = field(init=False)

    def __post_init__(self) -> None:
        self.series = {m: RingBuffer(self.capacity) for m in HOST_METRICS}


class LiveData:
    def __init__(self, capacity: int = DEFAULT_CAPACITY, interval: float = SAMPLE_INTERVAL) -> None:
        self.capacity = capacity
        self.trial_id: int | None = None
        self.clients: dict[str, ClientSeries] = {}
        self.hosts: dict[str, HostSeries] = {}
        self.total = BucketSum(capacity, interval)
        self.version = 0  # rises on every change
        self.hosts_version = 0  # rises when host telemetry changes (1 Hz: the server plot redraws less)
        self.resets = 0

    def reset(self, trial_id: int | None) -> None:
        """A new trial starts with empty plots (buffers are kept, not reallocated)."""
        self.trial_id = trial_id
        for c in self.clients.values():
            for rb in c.series.values():
                rb.clear()
            c.last_key = -1
        for h in self.hosts.values():
            for rb in h.series.values():
                rb.clear()
        self.total.clear()
        self.version += 1
        self.hosts_version += 1
        self.resets += 1

    def ingest(self, batch: SamplesBatch | TelemetryBatch) -> None:
        if batch.trial_id != self.trial_id:
            self.reset(batch.trial_id)
        if isinstance(batch, SamplesBatch):
            self._samples(batch.samples)
        else:
            self._telemetry(batch.telemetry)
            self.hosts_version += 1
        self.version += 1

    def _samples(self, samples: Sequence[Sample]) -> None:
        if not samples:
            return
        # One pass to columns, then numpy per client: a batch has few distinct clients.
        names = [s.client for s in samples]
        t = np.fromiter((s.t for s in samples), float, len(samples))
        thr = np.fromiter((s.throughput_bps for s in samples), float, len(samples))
        ops = np.fromiter((s.ops_per_s for s in samples), float, len(samples))
        lat = np.fromiter((s.lat_p99_ms for s in samples), float, len(samples))
        self.total.add(t, thr)
        keys = self.total.key_of(t)
        unique = dict.fromkeys(names)
        names_arr = np.asarray(names) if len(unique) > 1 else None
        for name in unique:
            mask = slice(None) if names_arr is None else names_arr == name
            client = self.clients.get(name)
            if client is None:
                client = self.clients[name] = ClientSeries(self.capacity)
            client.series["throughput"].extend(t[mask], thr[mask])
            client.series["ops"].extend(t[mask], ops[mask])
            client.series["lat_p99"].extend(t[mask], lat[mask])
            client.last_key = max(client.last_key, int(keys[mask].max()))

    def _telemetry(self, telemetry: Sequence[HostTelemetry]) -> None:
        for tel in telemetry:
            host = self.hosts.get(tel.host)
            if host is None:
                host = self.hosts[tel.host] = HostSeries(self.capacity)
            for metric, value in (("disk_read", tel.disk_read_bps), ("disk_write", tel.disk_write_bps),
                                  ("net_rx", tel.net_rx_bps), ("net_tx", tel.net_tx_bps), ("cpu", tel.cpu_busy)):
                host.series[metric].append(tel.t, value)

    def complete_key(self) -> int:
        """The newest sample bucket every client has reported (the sum is whole up to it)."""
        active = [c.last_key for c in self.clients.values() if c.last_key >= 0]
        return min(active) if active else -1

    def total_series(self) -> tuple[np.ndarray, np.ndarray]:
        return self.total.series(self.complete_key())
