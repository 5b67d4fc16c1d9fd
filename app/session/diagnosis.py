"""What limits the hosts today: the baseline's figures and the hosts' facts, read together.

Pure functions of HostFacts and the baseline (app.session.baseline), no host touched:
the share of the network's and the server disk's ceilings today's figures reach, the
round trip, nfsd's thread waits and CPU during today's runs, the export's flush cost (one
synced small write), the RAID under the export, the clients and how they mount. Each is
a ``Finding`` in one line; those past their threshold are ``limits``, the strongest first.
The proposed plan (app.session.proposal) reasons from the same ``Observed`` figures, so
the faces show one diagnosis and never judge a figure themselves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from app.facts.model import ExportEntry, HostFacts, MdArray, NfsMount
from app.session import topology
from app.session.baseline import Baseline
from app.vocabulary import figure_text, knob_value_text, latency_text, percent_text

# Thresholds past which a figure limits the hosts (each a judgement, stated where it is used).
NEAR_CEILING = 0.9  # today's figure at this share of a ceiling: that ceiling is what limits it
LONG_RTT_MS = 2.0  # past a LAN's: one stream's speed is its window over the round trip
THREAD_WAITS = 0.05  # requests that found no idle nfsd thread: more threads would serve them sooner
COSTLY_FLUSH_S = 0.002  # one synced write on the export: a sync export's commits and creates wait this long
BUSY_CPU = 0.85
STRIPED = ("raid4", "raid5", "raid6")  # md levels with a stripe cache
READS = ("seq_read", "rand_read", "mixed")
WRITES = ("seq_write", "rewrite", "rand_write", "mixed", "small_files", "tree", "dir_scaling")
NIC_PAYLOAD = 0.94  # of a NIC's line rate, what TCP carries (headers, gaps)


class Limit(StrEnum):
    THREAD_WAITS = "thread_waits"
    FLUSH_COST = "flush_cost"
    ROUND_TRIP = "round_trip"
    NETWORK = "network"
    DISK = "disk"
    SERVER_CPU = "server_cpu"
    CLIENT_CPU = "client_cpu"


LIMIT_TEXT = {
    Limit.THREAD_WAITS: "nfsd's threads", Limit.FLUSH_COST: "the export's flush cost",
    Limit.ROUND_TRIP: "the round trip", Limit.NETWORK: "the network", Limit.DISK: "the server's disk",
    Limit.SERVER_CPU: "the server's CPU", Limit.CLIENT_CPU: "the clients' CPU",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Observed:
    """The figures a diagnosis and a proposal reason with; None (or absent) where nothing measured them."""

    clients: int = 0
    network_bps: float | None = None  # all clients at once: their TCP ceilings, capped by the server's NIC
    disk_read_bps: float | None = None
    disk_write_bps: float | None = None
    net_share: dict[str, float] = field(default_factory=dict)  # workload -> today's figure / network_bps
    disk_share: dict[str, float] = field(default_factory=dict)  # workload -> today's figure / its disk ceiling
    stream_share: float | None = None  # the worst client's TCP ceiling over its NIC's speed
    rtt_ms: float | None = None  # the longest client's round trip to the server
    thread_wait: float | None = None  # the most of today's runs
    server_cpu: float | None = None
    client_cpu: float | None = None
    flush_s: float | None = None
    raid: MdArray | None = None  # the md array under the export
    export: ExportEntry | None = None
    mount: NfsMount | None = None  # the first client's own mount of the export
    # the clients' own mounts of the export, "client at /mnt/point": a test mount of the same server and version joins
    # such a mount's connection, made under today's nconnect and slot table (app.knobs.transport)
    shared_mounts: tuple[str, ...] = ()
    mtu: int | None = None  # the smallest MTU facing the other hosts
    server_nic_mbps: int | None = None
    client_nic_mbps: int | None = None  # the slowest client's
    server_cpus: int | None = None
    server_mem_kb: int | None = None
    client_mem_kb: int | None = None  # the smallest client's
    page_size: int = 4096
    today: dict[str, object] = field(default_factory=dict)  # knob -> today's value (topology.baseline_values)
    server_versions: tuple[str, ...] = ()  # NFS versions nfsd serves
    client_kernels: tuple[str, ...] = ()
    client_sysctls: tuple[frozenset[str], ...] = ()  # each client's sysctls discovery read
    nfsd_seen: bool = False  # nfsd's thread count was read
    block_size_seen: bool = False  # nfsd's max_block_size was read

    @property
    def measured(self) -> bool:
        return self.network_bps is not None or self.rtt_ms is not None or bool(self.net_share)

    @property
    def sync_export(self) -> bool:
        return self.export is not None and not self.export.is_async

    def share(self, workloads: Sequence[str], of: str = "network") -> tuple[str, float] | None:
        """The workload of ``workloads`` nearest its ceiling (``of``: "network" or "disk") and its share."""
        shares = self.net_share if of == "network" else self.disk_share
        found = [(w, shares[w]) for w in workloads if w in shares]
        return max(found, key=lambda x: x[1]) if found else None


@dataclass(frozen=True, slots=True)
class Finding:
    subject: str  # "network", "round trip", …
    text: str  # one line, what was seen
    limit: Limit | None = None  # what this finding shows limits the hosts today
    strength: float = 0.0  # how far past its threshold (1: at it)
    short: str = ""  # its figure in a few words, for a one-line summary ("" when it has none)


@dataclass(frozen=True, slots=True)
class Diagnosis:
    observed: Observed
    findings: tuple[Finding, ...]

    @property
    def limits(self) -> tuple[Limit, ...]:
        """What limits the hosts today, the strongest first."""
        found = sorted((f for f in self.findings if f.limit is not None), key=lambda f: -f.strength)
        return tuple(dict.fromkeys(f.limit for f in found if f.limit is not None))

    @property
    def headline(self) -> str:
        if not self.observed.measured:
            return "Not measured yet: the proposal rests on the hosts' facts alone."
        if not self.limits:
            return "Nothing is near its limit today: the NFS settings themselves are what to tune."
        return "What limits the hosts today: " + ", then ".join(LIMIT_TEXT[x] for x in self.limits) + "."

    @property
    def summary(self) -> str:
        """The measured figures in one line: 'seq_read at 57 % of the network · round trip 0.210 ms · …'."""
        return " · ".join(f.short for f in self.findings if f.short)

    def to_json(self) -> dict[str, object]:
        return {"limits": [x.value for x in self.limits], "headline": self.headline,
                "findings": [{"subject": f.subject, "text": f.text, "limit": f.limit.value if f.limit else None}
                             for f in self.findings]}  # fmt: skip


def _mbps(nic_mbps: int | None) -> float | None:
    return nic_mbps * 1e6 / 8 * NIC_PAYLOAD if nic_mbps else None


def _facing(facts: HostFacts) -> list[tuple[int | None, int | None]]:
    """(MTU, speed in Mb/s) of the NICs other hosts reach (an address that is not loopback or link-local)."""
    return [(n.mtu, n.speed_mbps) for n in facts.nics
            if any(not a.startswith(("127.", "::1", "fe80:")) for a in n.addresses)]  # fmt: skip


def _least(values: Sequence[int | None]) -> int | None:
    known = [v for v in values if v]
    return min(known) if known else None


def _raid(server: HostFacts) -> MdArray | None:
    names = {fs.md_array for fs in server.export_filesystems if fs.md_array}
    return next((md for md in server.md_arrays if md.name in names), None)


def observe(server: HostFacts | None, clients: Sequence[HostFacts], export: str,
            baseline: Baseline | None) -> Observed:  # fmt: skip
    """The figures of the connected hosts and their baseline (None: not measured)."""
    if server is None:
        return Observed()
    probes = baseline.probes if baseline is not None else None
    today = baseline.today if baseline is not None else {}
    server_nics = _facing(server)
    client_nics = [_facing(c) for c in clients]
    server_speed = max((s for _, s in server_nics if s), default=None)
    network = None
    if probes is not None and probes.tcp_bps:
        network = sum(probes.tcp_bps.values())
        if (cap := _mbps(server_speed)) is not None:
            network = min(network, cap)
    stream = []
    for c, nics in zip(clients, client_nics, strict=True):
        nic = _mbps(max((s for _, s in nics if s), default=None))
        if probes is not None and c.host in probes.tcp_bps and nic:
            stream.append(probes.tcp_bps[c.host] / nic)
    disk = {w: bps / ceiling for w, bps in today.items() if probes is not None
            and (ceiling := probes.disk_read_bps if w in READS and w not in WRITES else probes.disk_write_bps)}  # fmt: skip
    load = list(probes.load.values()) if probes is not None else []
    mounts = [m for c in clients for m in topology.own_mounts(c, export)]
    return Observed(
        clients=len(clients), network_bps=network,
        disk_read_bps=probes.disk_read_bps if probes else None, disk_write_bps=probes.disk_write_bps if probes else None,
        net_share={w: bps / network for w, bps in today.items() if network}, disk_share=disk,
        stream_share=min(stream) if stream else None,
        rtt_ms=max(probes.rtt_ms.values()) if probes is not None and probes.rtt_ms else None,
        thread_wait=max((x.thread_wait for x in load if x.thread_wait is not None), default=None),
        server_cpu=max((x.server_cpu for x in load if x.server_cpu is not None), default=None),
        client_cpu=max((x.client_cpu for x in load if x.client_cpu is not None), default=None),
        flush_s=probes.flush_s if probes else None,
        raid=_raid(server), export=next((e for e in server.exports if e.path == export), None),
        mount=mounts[0] if mounts else None,
        shared_mounts=tuple(f"{c.host} at {m.mount_point}" for c in clients for m in topology.own_mounts(c, export)),
        mtu=_least([m for m, _ in server_nics] + [m for nics in client_nics for m, _ in nics]),
        server_nic_mbps=server_speed, client_nic_mbps=_least([s for nics in client_nics for _, s in nics]),
        server_cpus=server.cpu_count, server_mem_kb=server.mem_total_kb,
        client_mem_kb=_least([c.mem_total_kb for c in clients]), page_size=server.page_size or 4096,
        today=dict(topology.baseline_values(topology.current_values(server, clients, export))),
        server_versions=tuple(v for v, on in server.nfsd.versions.items() if on),
        client_kernels=tuple(c.kernel for c in clients),
        client_sysctls=tuple(frozenset(c.sysctls) for c in clients),
        nfsd_seen=server.nfsd.threads is not None, block_size_seen=server.nfsd.max_block_size is not None,
    )  # fmt: skip


def _nic_text(mbps: int | None) -> str:
    if not mbps:
        return "speed unknown"
    return f"{mbps // 1000} GbE" if mbps >= 1000 and mbps % 1000 == 0 else f"{mbps} Mb/s"


def _network(o: Observed) -> list[Finding]:
    if o.network_bps is None:
        return [Finding("network", "network ceiling not measured")]
    where = f"{o.clients} client{'s' if o.clients != 1 else ''} at once carry {figure_text(o.network_bps)}"
    top = o.share(list(o.net_share))
    if top is None:
        return [Finding("network", f"{where}; today's figures not measured")]
    w, share = top
    text = f"{w} reaches {percent_text(share)} of it ({where})"
    return [Finding("network", text, Limit.NETWORK if share >= NEAR_CEILING else None, share / NEAR_CEILING,
                    f"{w} at {percent_text(share)} of the network")]


def _disk(o: Observed) -> list[Finding]:
    top = o.share(list(o.disk_share), "disk")
    if top is None:
        return [Finding("server disk", "its ceiling or today's figures not measured")]
    w, share = top
    text = f"{w} reaches {percent_text(share)} of its own speed on the server"
    return [Finding("server disk", text, Limit.DISK if share >= NEAR_CEILING else None, share / NEAR_CEILING,
                    f"{w} at {percent_text(share)} of the disk")]


def _round_trip(o: Observed) -> list[Finding]:
    if o.rtt_ms is None:
        return [Finding("round trip", "not measured (ping did not answer)")]
    long = o.rtt_ms >= LONG_RTT_MS
    text = latency_text(o.rtt_ms) + (": one stream's speed is its window over it" if long else ", a LAN's")
    return [Finding("round trip", text, Limit.ROUND_TRIP if long else None, o.rtt_ms / LONG_RTT_MS,
                    f"round trip {latency_text(o.rtt_ms)}")]


def _threads(o: Observed) -> list[Finding]:
    if o.thread_wait is None:
        return [Finding("nfsd threads", "their waits not measured")]
    threads = o.today.get("nfsd_threads")
    text = (f"requests waited for a thread {percent_text(o.thread_wait)} of the time"
            + (f" ({threads} threads)" if threads is not None else ""))  # fmt: skip
    many = o.thread_wait >= THREAD_WAITS
    return [Finding("nfsd threads", text, Limit.THREAD_WAITS if many else None, o.thread_wait / THREAD_WAITS,
                    f"thread waits {percent_text(o.thread_wait)}")]


def _cpu(o: Observed) -> list[Finding]:
    if o.server_cpu is None and o.client_cpu is None:
        return [Finding("CPU", "not measured")]
    out = [Finding("CPU", f"the server {percent_text(o.server_cpu)} busy, the busiest client {percent_text(o.client_cpu)}",
                   short=f"server CPU {percent_text(o.server_cpu)}")]
    for limit, busy in ((Limit.SERVER_CPU, o.server_cpu), (Limit.CLIENT_CPU, o.client_cpu)):
        if busy is not None and busy >= BUSY_CPU:
            out.append(Finding("CPU", f"{LIMIT_TEXT[limit]} is {percent_text(busy)} busy", limit, busy / BUSY_CPU))
    return out


def _flush(o: Observed) -> list[Finding]:
    if o.flush_s is None:
        return [Finding("flush cost", "not measured")]
    ms = latency_text(o.flush_s * 1e3)
    mode = "" if o.export is None else " (an async export skips it)" if not o.sync_export else \
        ": every commit and small-file create of this sync export waits for it"  # fmt: skip
    costly = o.flush_s >= COSTLY_FLUSH_S
    text = f"one synced small write costs {ms} on the export{mode if costly else ''}"
    return [Finding("flush cost", text, Limit.FLUSH_COST if costly and o.sync_export else None, o.flush_s / COSTLY_FLUSH_S,
                    f"a synced write {ms}")]


def _storage(o: Observed) -> list[Finding]:
    md = o.raid
    if md is None:
        return [Finding("storage", "no md array under the export")]
    level = md.level.upper().replace("RAID", "RAID-") if md.level.startswith("raid") else md.level or "md"
    disks = md.raid_disks or len(md.members)
    chunk = f", {md.chunk_kb} KiB chunks" if md.chunk_kb else ""
    return [Finding("storage", f"the export is on {md.name}, {level} over {disks} disks{chunk}")]


def _mounts(o: Observed) -> list[Finding]:
    m = o.mount
    if m is None:
        return [Finding("clients", f"{o.clients}; none mounts the export now")]
    parts = [f"NFS {m.version}" if m.version else "",
             *(f"{k} {knob_value_text(k, o.today[k])}" for k in ("rsize", "wsize", "nconnect", "read_ahead_kb")
               if k in o.today)]  # fmt: skip
    link = f"MTU {o.mtu}; server {_nic_text(o.server_nic_mbps)}, clients {_nic_text(o.client_nic_mbps)}"
    return [Finding("clients", f"{o.clients}, mounting with " + ", ".join(p for p in parts if p)),
            Finding("link", link)]


def diagnose(observed: Observed) -> Diagnosis:
    findings = [f for rule in (_network, _disk, _round_trip, _threads, _cpu, _flush, _storage, _mounts)
                for f in rule(observed)]  # fmt: skip
    return Diagnosis(observed, tuple(findings))


def observed_of(facts: Mapping[str, HostFacts], server: str | None, clients: Sequence[str], export: str,
                baseline: Baseline | None) -> Observed:  # fmt: skip
    """``observe`` over the session's facts by host name."""
    return observe(facts.get(server) if server else None, [facts[c] for c in clients if c in facts], export, baseline)
