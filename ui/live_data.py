"""The current trial's measurements as ring buffers, fed batch by batch.

Qt-free (numpy only): the bridge calls ``ingest`` from its frame timer and the
plots read ``view()``s. Clients share one RingTable (a row each), so a batch of 64
clients' samples costs a few numpy calls rather than 192 ring-buffer writes (1.3 ms).
``version`` rises with every change, so a plot can skip a frame when nothing arrived.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from app.events import SamplesBatch, TelemetryBatch
from experiments.samples import HostTelemetry, Sample
from ui.ring_buffer import BucketSum, RingBuffer, RingTable

CLIENT_METRICS = ("throughput", "ops", "lat_p99")  # bytes/s, ops/s, ms
HOST_METRICS = ("disk_read", "disk_write", "net_rx", "net_tx", "cpu")
DEFAULT_CAPACITY = 4096  # 17 minutes at 4 Hz: a trial longer than that scrolls
SAMPLE_INTERVAL = 0.25


@dataclass(frozen=True, slots=True)
class TableSeries:
    """One metric of one client: views onto the shared RingTable (column 0 is time)."""

    table: RingTable
    row: int
    column: int

    def __len__(self) -> int:
        return self.table.length(self.row)

    def view(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return self.table.view(self.row, 0), self.table.view(self.row, self.column)

    def written(self) -> int:
        """Samples stored since the trial started (dropped ones too): a plot draws only what is newer."""
        return self.table.written(self.row)


@dataclass(slots=True)
class ClientSeries:
    row: int
    series: dict[str, TableSeries]


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
        # Every client's series in one table: a batch lands with a few numpy calls, not one per client.
        self.table = RingTable(capacity, 1 + len(CLIENT_METRICS))
        self.clients: dict[str, ClientSeries] = {}
        self._last_key = np.zeros(0, dtype=np.int64)  # per row: the newest sample bucket it reported
        self.t_last = 0.0  # the newest sample time of the trial
        self.hosts: dict[str, HostSeries] = {}
        self.total = BucketSum(capacity, interval)
        self.version = 0  # rises on every change
        self.hosts_version = 0  # rises when host telemetry changes (1 Hz: the server plot redraws less)
        self.resets = 0

    def reset(self, trial_id: int | None) -> None:
        """A new trial starts with empty plots (buffers are kept, not reallocated)."""
        self.trial_id = trial_id
        self.table.clear()
        self._last_key.fill(-1)
        self.t_last = 0.0
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

    def _row(self, name: str) -> int:
        client = self.clients.get(name)
        if client is None:
            row = self.table.add_row()
            if row >= len(self._last_key):
                self._last_key = np.concatenate((self._last_key, np.full(len(self._last_key) + 4, -1, dtype=np.int64)))
            client = self.clients[name] = ClientSeries(row, {
                m: TableSeries(self.table, row, 1 + i) for i, m in enumerate(CLIENT_METRICS)})
        return client.row

    def _samples(self, samples: Sequence[Sample]) -> None:
        if not samples:
            return
        # One pass to a (samples × columns) array; the table then files every client's rows at once.
        rows = np.fromiter((self._row(s.client) for s in samples), np.intp, len(samples))
        values = np.array([(s.t, s.throughput_bps, s.ops_per_s, s.lat_p99_ms) for s in samples], dtype=np.float64)
        t = values[:, 0]
        self.total.add(t, values[:, 1])
        np.maximum.at(self._last_key, rows, self.total.key_of(t))
        self.table.extend(rows, values)
        self.t_last = max(self.t_last, float(t.max()))

    def column_max(self, metric: str) -> float:
        """The largest value of a client metric now stored (0.0 when none)."""
        return self.table.column_max(1 + CLIENT_METRICS.index(metric))

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
        keys = self._last_key[: self.table.rows]
        active = keys[keys >= 0]
        return int(active.min()) if len(active) else -1

    def total_series(self) -> tuple[np.ndarray, np.ndarray]:
        return self.total.series(self.complete_key())
