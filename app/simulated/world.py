"""The simulated hosts' world: what each host is, its knobs' values today, and how fast NFS goes.

A made-up but plausible response surface: readahead for reads, a larger stripe cache and
async for writes, larger rsize/wsize, jumbo frames, each help up to a point; more nfsd
threads only once the offered load queues for them (a load ladder shows it), more
connections not on this LAN, where a gigabit link per client caps it all.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import replace

from app.facts.model import (
    ClientCandidate,
    ExportEntry,
    ExportFilesystem,
    HostFacts,
    MdArray,
    NfsdState,
    NfsMount,
    Nic,
    OsInfo,
    Python3,
)
from app.knobs.model import Value
from experiments.latency import Histogram, bucket_of_us

MB = 1_000_000.0
EXPORT = "/srv/nfs"
LINK_BPS = 117 * MB  # per client: a gigabit link's TCP payload
DISK_READ_BPS, DISK_WRITE_BPS = 610 * MB, 420 * MB
EXPORT_FREE_BYTES = 800 << 30  # the demo's export: room for any plan it offers
RTT_MS = 0.21  # a client's round trip to the server: one switch on a LAN
FLUSH_S = 0.0085  # one synced small write on the RAID-6: the members' write caches off, as a filer's are
HOST_NAMES = ("nfs-server", "client1", "client2", "client3", "client4", "backup-box")

TODAY: dict[str, Value] = {
    "nfsd_threads": 8, "nfsd_min_threads": 0, "max_block_size": 1 << 20, "pool_mode": "global", "stripe_cache_size": 256, "export_sync": "sync", "mtu": 1500,
    "rsize": 1 << 20, "wsize": 1 << 20, "nfsvers": "4.2", "nconnect": 1, "read_ahead_kb": 128,
    "export_wdelay": "wdelay", "nocto": "cto", "actimeo": "3–60",  # actimeo: the kernel's own range, not one value
    "dirty_bytes": "20%", "dirty_background": "10%",  # the ratios in force: Linux's defaults
    "rpc_slots": 65536,
}  # fmt: skip
CLIENT_SYSCTLS = {"vm.dirty_bytes": 0, "vm.dirty_ratio": 20, "vm.dirty_background_bytes": 0,
                  "vm.dirty_background_ratio": 10, "sunrpc.tcp_max_slot_table_entries": 65536}  # as TODAY says
BASE_BPS = {"seq_write": 62 * MB, "seq_read": 95 * MB, "rewrite": 55 * MB, "rand_read": 18 * MB,
            "rand_write": 14 * MB, "mixed": 16 * MB, "small_files": 9 * MB, "tree": 7 * MB,
            "dir_scaling": 5 * MB}  # fmt: skip
WRITES = {"seq_write", "rewrite", "rand_write", "small_files", "tree", "dir_scaling"}
METADATA = {"small_files", "tree", "dir_scaling"}  # many opens and GETATTRs: the client's caching shows


def is_client(host: str) -> bool:
    """Hosts named like a client are clients; every other simulated host is an NFS server."""
    return "client" in host


def facts(host: str, index: int) -> HostFacts:
    """What discovery finds on a simulated host, consistent with TODAY."""
    address = f"10.0.0.{10 + index}"
    nic = Nic("eth0", int(TODAY["mtu"]), 1_000 if is_client(host) else 10_000, "up", addresses=(f"{address}/24",))
    base = HostFacts(host, hostname=host, kernel="6.8.0-45-generic", arch="x86_64", nics=(nic,), page_size=4096,
                     python3=Python3("/usr/bin/python3", "3.12.3"), user="root", privilege="root",
                     tools={"iperf3": "/usr/bin/iperf3", "ss": "/usr/bin/ss"})  # fmt: skip
    if is_client(host):
        mount = NfsMount("/mnt/nfs", f"nfs-server:{EXPORT}", "nfs-server", EXPORT, "nfs4", "0:52",
                         version=str(TODAY["nfsvers"]), rsize=int(TODAY["rsize"]), wsize=int(TODAY["wsize"]),
                         proto="tcp", nconnect=int(TODAY["nconnect"]), read_ahead_kb=int(TODAY["read_ahead_kb"]))  # fmt: skip
        return replace(base, os=OsInfo("debian", "Debian GNU/Linux", "12", "Debian GNU/Linux 12 (bookworm)"),
                       cpu_count=8, mem_total_kb=16 << 20, nfs_mounts=(mount,), sysctls=dict(CLIENT_SYSCTLS))  # fmt: skip
    md = MdArray("md0", "raid6", "active", tuple(f"sd{c}" for c in "bcdefghi"), raid_disks=8, chunk_kb=512,
                 stripe_cache_size=int(TODAY["stripe_cache_size"]))  # fmt: skip
    options = ("rw", str(TODAY["export_sync"]), "no_subtree_check")
    return replace(
        base, os=OsInfo("ubuntu", "Ubuntu", "24.04", "Ubuntu 24.04.1 LTS"), cpu_count=16, mem_total_kb=64 << 20,
        md_arrays=(md,), exports=(ExportEntry(EXPORT, "10.0.0.0/24", options),),
        export_filesystems=(ExportFilesystem(EXPORT, EXPORT, "ext4", "/dev/md0", "rw", md_array="md0"),),
        nfsd=NfsdState(running=True, threads=int(TODAY["nfsd_threads"]), versions={"3": True, "4.2": True},
                       max_block_size=int(TODAY["max_block_size"])),
        client_candidates=tuple(ClientCandidate(f"10.0.0.{11 + i}", f"Linux NFSv4.2 {c}") for i, c in
                                enumerate(n for n in HOST_NAMES if is_client(n))),
    )


def _num(config: Mapping[str, Value], knob: str) -> float:
    return float(config.get(knob, TODAY[knob]))


def throughput(config: Mapping[str, Value], workload: str) -> float:
    """Bytes per second one client moves with ``config`` (today's values for the knobs it omits)."""
    return min(_uncapped(config, workload), LINK_BPS * 0.95)


def _uncapped(config: Mapping[str, Value], workload: str) -> float:
    """``throughput`` before the link caps it: what the client's default streams would move."""
    # nfsd threads matter only under load (server_load: requests queue for a thread past its capacity), and
    # nconnect only where one connection is the limit: on this LAN the link is, so neither moves a default run.
    f = 1.0
    for size in ("rsize", "wsize"):  # the server's max_block_size caps what the client asks for
        f *= 0.8 + 0.2 * min(1.0, min(_num(config, size), _num(config, "max_block_size")) / (1 << 20))
    if workload.startswith(("seq", "rew")) and workload not in WRITES:
        f *= 0.7 + 0.3 * min(1.0, _num(config, "read_ahead_kb") / 4096)
    if workload in WRITES:
        f *= 0.85 + 0.15 * min(1.0, _num(config, "stripe_cache_size") / 4096)
        f *= 1.6 if str(config.get("export_sync", TODAY["export_sync"])) == "async" else 1.0
        f *= _wdelay(config, workload)
        f *= _dirty(config)
    if workload in METADATA:
        f *= _caching(config)
    f *= 1.05 if _num(config, "mtu") >= 9000 else 1.0
    return BASE_BPS.get(workload, 50 * MB) * f


def _dirty(config: Mapping[str, Value]) -> float:
    """A small dirty-page limit makes writers flush in small batches (slower); past 256 MiB nothing more is won."""
    limit = config.get("dirty_bytes")
    return 0.85 + 0.15 * min(1.0, math.log2(max(limit, 1) / (16 << 20) + 1) / 4) if isinstance(limit, int) else 1.0


def _wdelay(config: Mapping[str, Value], workload: str) -> float:
    """no_wdelay: small independent writes on a sync export commit without waiting (a little faster)."""
    synced = str(config.get("export_sync", TODAY["export_sync"])) == "sync"
    small = workload in METADATA or workload == "rand_write"
    return 1.04 if synced and small and str(config.get("export_wdelay", "wdelay")) == "no_wdelay" else 1.0


def _caching(config: Mapping[str, Value]) -> float:
    """nocto and a longer actimeo spare round trips to the server at opens and stats (a few per cent)."""
    f = 1.06 if str(config.get("nocto", "cto")) == "nocto" else 1.0
    seconds = config.get("actimeo")
    return f * (1.0 + 0.05 * min(1.0, float(seconds) / 60)) if isinstance(seconds, int) else f


STREAMS_PER_THREAD = 4  # streams the server keeps up with per nfsd thread before requests queue for one
KNEE_SHARPNESS = 6.0  # how abruptly the server's curve bends at its capacity


def server_load(config: Mapping[str, Value], streams: int) -> float:
    """Offered streams over all clients as a share of what the nfsd threads keep up with (1: at capacity)."""
    return max(streams, 0) / (STREAMS_PER_THREAD * max(_num(config, "nfsd_threads"), 1.0))


def streams_bps(config: Mapping[str, Value], workload: str, jobs: int, streams: int) -> float:
    """Bytes per second one client moves with ``jobs`` streams while ``streams`` are offered over all
    clients: each stream adds its share until the nfsd threads saturate (a smooth knee), and the link
    caps the client. At the workload's default jobs and a light load this is ``throughput``."""
    per_stream = _uncapped(config, workload) / IN_FLIGHT.get(workload, 1)
    x = server_load(config, streams)
    bent: float = (1.0 + x**KNEE_SHARPNESS) ** (-1.0 / KNEE_SHARPNESS)
    return min(per_stream * jobs * bent, LINK_BPS * 0.95)


EXPORT_DEVICE = "md0"  # the export's block device, as the server's telemetry names it
DISK_WAIT = 0.95  # share of an nfsd thread's time on an operation spent waiting on the export's disk


def thread_seconds(config: Mapping[str, Value], workload: str) -> float:
    """Seconds one nfsd thread spends on one operation: a thread keeps up with STREAMS_PER_THREAD
    streams at their unhindered rate."""
    stream_ops = _uncapped(config, workload) / IN_FLIGHT.get(workload, 1) / OP_BYTES.get(workload, 4096)
    return 1.0 / (STREAMS_PER_THREAD * stream_ops)


def disk_figures(config: Mapping[str, Value], workload: str, ops_per_s: float) -> tuple[float, float]:
    """The export device's (utilisation, average requests in flight) while the server handles ``ops_per_s``,
    as diskstats' io_ticks and weighted time give them. Each busy thread (Little's law, at most every
    thread) holds one request at the disk DISK_WAIT of its time; the device, serving them all at once,
    is idle only while no thread is on it. Few threads: every one waits on the disk, the queue near
    the thread count; many: the disk is as "busy" with a queue far below it."""
    threads = max(_num(config, "nfsd_threads"), 1.0)
    queue = min(max(ops_per_s, 0.0) * thread_seconds(config, workload), threads) * DISK_WAIT
    return 1.0 - (1.0 - queue / threads) ** threads, queue


FLAT_KNEE_ENTRIES = 150_000  # entries where one simulated directory's create rate has halved


def create_share(layout: str, fanout: int, entries: int) -> float:
    """A directory's create rate at ``entries`` as a share of an empty one's: a flat directory's
    lookups slow as it grows; hashed, each of ``fanout`` subdirectories holds its share."""
    per_dir = entries / (max(fanout, 1) if layout == "hashed" else 1)
    return 1.0 / (1.0 + (per_dir / FLAT_KNEE_ENTRIES) ** 2)


def waiting_share(config: Mapping[str, Value], streams: int) -> float:
    """pool_stats' share of requests that found no idle nfsd thread at this load."""
    x = server_load(config, streams)
    return x * x / (1.0 + x * x)


OP_BYTES = {"seq_write": 1 << 20, "seq_read": 1 << 20, "rewrite": 1 << 20}  # the rest: 4 KiB operations
IN_FLIGHT = {"rand_read": 4, "rand_write": 4, "mixed": 4}  # jobs per client; the rest: one
MAX_SIM_OPS = 20_000  # operations drawn per client and trial: the demo stays quick


def latency_spread(config: Mapping[str, Value]) -> float:
    """The log-normal sigma of one operation's latency: few nfsd threads make requests queue, a long tail."""
    return 0.35 + 0.45 * (1.0 - min(1.0, math.log2(max(_num(config, "nfsd_threads"), 1.0)) / 6))


def queueing(busy: float) -> float:
    """How much longer an operation takes at this share of what the client could do (1: flat out)."""
    return 0.5 + 0.5 * min(max(busy, 0.0), 1.0)


def latency_median_ms(config: Mapping[str, Value], workload: str, busy: float = 1.0) -> float:
    """The time one operation takes at this configuration's throughput, with the client's jobs in flight,
    shorter when the client is held below what it could do (``busy``)."""
    return 1e3 * OP_BYTES.get(workload, 4096) * IN_FLIGHT.get(workload, 1) / throughput(config, workload) * queueing(busy)


def latency_hist(config: Mapping[str, Value], workload: str, ops: int, rng: random.Random,
                 jitter: float = 1.0) -> Histogram:
    """``ops`` operations of one client (at most ``MAX_SIM_OPS`` drawn) as experiments.latency's
    histogram: log-normal around ``latency_median_ms`` times ``jitter`` (a run's own luck)."""
    mu, sigma = math.log(latency_median_ms(config, workload) * jitter * 1e3), latency_spread(config)
    out: Histogram = {}
    for _ in range(min(max(ops, 0), MAX_SIM_OPS)):
        key = bucket_of_us(rng.lognormvariate(mu, sigma))
        out[key] = out.get(key, 0) + 1
    return out
