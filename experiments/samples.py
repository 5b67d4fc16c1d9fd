"""The measurements that flow from hosts to the store and the plots.

One ``Sample`` is one interval (default 250 ms) of one workload on one client, as the
load agent reports it; ``HostTelemetry`` is one interval of a host's own counters.
Both are plain, slotted and frozen so that batches of them are cheap to move.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Sample:
    client: str  # host name the agent ran on, e.g. "lab-client1"
    t: float  # seconds since the trial's aligned start, end of the interval
    interval: float  # seconds this sample covers
    bytes_read: int = 0
    bytes_written: int = 0
    ops: int = 0
    lat_p50_ms: float = 0.0
    lat_p99_ms: float = 0.0
    lat_max_ms: float = 0.0
    errors: int = 0
    phase: str = ""  # the workload's phase, e.g. "create", "stat" (small files)
    count: int | None = None  # dir_scaling: entries in the directory at the interval's end

    @property
    def throughput_bps(self) -> float:
        """Bytes per second moved in this interval, reads and writes together."""
        return (self.bytes_read + self.bytes_written) / self.interval if self.interval > 0 else 0.0

    @property
    def ops_per_s(self) -> float:
        return self.ops / self.interval if self.interval > 0 else 0.0


@dataclass(frozen=True, slots=True)
class HostTelemetry:
    host: str
    t: float
    interval: float
    disk_read_bps: float = 0.0  # the export's block devices (diskstats)
    disk_write_bps: float = 0.0
    net_rx_bps: float = 0.0
    net_tx_bps: float = 0.0
    cpu_busy: float = 0.0  # 0..1 over all CPUs
    extra: dict[str, float] = field(default_factory=dict)  # e.g. nfsd pool_stats, mount RTT
