"""The result as a share of the measured ceilings, and the layer that limits it.

A layer limits when the result reaches LIMIT_SHARE of its ceiling (a TCP stream and a
local disk read never carry NFS's own overhead, so 100 % is not reachable), or, for
the disk, when the server's telemetry shows the device busy nearly all the time. When
neither ceiling is near, what is left is the NFS path itself: threads, RPC round
trips, CPU.
"""

from __future__ import annotations

from app.recommend.model import CeilingShare, Ceilings, Layer
from app.recommend.telemetry import TelemetryDigest
from experiments.knee import Layers, thread_count, threads_wait_on_disk

LIMIT_SHARE = 0.85
BUSY_DISK = 0.9
# A trial this much faster than the link was served from a cache, not over NFS. A link
# speed the admin gave is exact; a measured TCP ceiling is a noisy floor of what the
# link carries (one iperf3 run on a busy host reads low), so only far beyond it is
# the cache certain.
BEYOND_GIVEN_LINK = 1.05
BEYOND_MEASURED_LINK = 3.0


def cache_answered(throughput_bps: float, link_bps: float | None, *, measured: bool) -> bool:
    """Whether a result is beyond what the network can carry (so a cache answered)."""
    if not link_bps:
        return False
    return throughput_bps > link_bps * (BEYOND_MEASURED_LINK if measured else BEYOND_GIVEN_LINK)


def disk_ceiling(objective: str, ceilings: Ceilings) -> float | None:
    read, write = ceilings.disk_read_bps, ceilings.disk_write_bps
    if objective == "seq_read":
        return read
    if objective == "seq_write":
        return write
    known = [v for v in (read, write) if v]
    return min(known) if known else None


def _share(value: float, ceiling: float | None) -> float | None:
    return value / ceiling if ceiling else None


def _threads_bound(server: TelemetryDigest) -> bool:
    """A busy disk that holds about as many requests as nfsd has threads is waited on by every
    thread, not full (experiments.knee's rule): the NFS path limits, not the disk."""
    return bool(threads_wait_on_disk(Layers(disk_queue=server.disk_queue, nfsd_threads=thread_count(server.nfsd_threads))))


def ceiling_share(
    objective: str, throughput_bps: float, ceilings: Ceilings, server: TelemetryDigest | None = None
) -> CeilingShare:
    net = _share(throughput_bps, ceilings.network_bps)
    disk = _share(throughput_bps, disk_ceiling(objective, ceilings))
    near = [(s, layer) for s, layer in ((net, Layer.NETWORK), (disk, Layer.SERVER_DISK))
            if s is not None and s >= LIMIT_SHARE]
    if near:
        return CeilingShare(net, disk, max(near, key=lambda x: x[0])[1])
    if server is not None and server.disk_util is not None and server.disk_util >= BUSY_DISK and not _threads_bound(server):
        return CeilingShare(net, disk, Layer.SERVER_DISK)
    if net is None and disk is None:
        return CeilingShare(None, None, Layer.UNKNOWN)
    return CeilingShare(net, disk, Layer.NFS_CPU)
