"""The plan a diagnosis proposes: each knob ticked or not, its values, and why, in one line.

One rule per knob reads the diagnosis's figures (app.session.diagnosis.Observed) and the
plan's workloads. A knob whose target the hosts lack is not offered; a risky knob (async
exports, nfsd restarts, MTU, the client's attribute caching) is never ticked without its
opt-in, though its reason may say it would be worth trying. Values lie around today's and
within what the hardware allows. The ticked knobs come in priority order: a time budget
drops the last first (experiments.budget). The admin can change everything; the reasons
stay beside the knobs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from app.knobs.catalog import SPECS
from app.knobs.model import Value
from app.session.budget import DEFAULT_BUDGET_S
from app.session.diagnosis import (
    BUSY_CPU,
    COSTLY_FLUSH_S,
    LONG_RTT_MS,
    NEAR_CEILING,
    STRIPED,
    THREAD_WAITS,
    Diagnosis,
    Observed,
)
from app.session.plan import PlanChoices
from app.vocabulary import knob_value_text, knob_values_text, latency_text, percent_text

SEQ_READS = ("seq_read",)
LARGE_WRITES = ("seq_write", "rewrite")
SMALL_WRITES = ("rand_write", "mixed", "small_files", "tree", "dir_scaling")
METADATA = ("small_files", "tree", "dir_scaling")
READS = ("seq_read", "rand_read", "mixed")
MIB = 1 << 20
STREAM_SHORT = 0.7  # one TCP stream below this share of its NIC: more connections may fill it
STRIPE_RAM_SHARE = 1 / 32  # the most of the server's RAM a stripe cache value may take
NCONNECT_MIN_KERNEL = (5, 3)


@dataclass(frozen=True, slots=True)
class KnobAdvice:
    knob: str
    offered: bool  # the hosts have its target
    ticked: bool
    values: tuple[Value, ...]  # to try, today's among them
    reason: str  # one line, from the diagnosis
    priority: float = 0.0  # ticked knobs run in this order, highest first; a budget drops the lowest

    @property
    def values_text(self) -> str:
        return knob_values_text(self.knob, self.values)

    def to_json(self) -> dict[str, object]:
        return {"knob": self.knob, "offered": self.offered, "ticked": self.ticked, "values": list(self.values),
                "reason": self.reason, "priority": self.priority}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Proposal:
    diagnosis: Diagnosis
    workloads: tuple[str, ...]
    knobs: tuple[KnobAdvice, ...]  # every knob of the catalog: the ticked ones by priority, then the rest
    budget_s: float | None = DEFAULT_BUDGET_S

    def advice(self, knob: str) -> KnobAdvice:
        return next(a for a in self.knobs if a.knob == knob)

    @property
    def ticked(self) -> tuple[KnobAdvice, ...]:
        return tuple(a for a in self.knobs if a.ticked)

    def choices(self, base: PlanChoices) -> PlanChoices:
        """``base`` with the proposal's knobs (in priority order), workloads and budget."""
        return replace(base, knobs={a.knob: a.values_text for a in self.ticked}, workloads=self.workloads,
                       budget_s=self.budget_s)  # fmt: skip

    def to_json(self) -> dict[str, object]:
        return {"diagnosis": self.diagnosis.to_json(), "workloads": list(self.workloads), "budget_s": self.budget_s,
                "knobs": [a.to_json() for a in self.knobs]}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Context:
    """What every rule reads: the figures, the plan's workloads, the opt-ins."""

    o: Observed
    workloads: tuple[str, ...]
    allow_async: bool
    allow_restart: bool

    def has(self, kinds: Sequence[str]) -> bool:
        return any(w in kinds for w in self.workloads)

    @property
    def long_rtt(self) -> bool:
        return self.o.rtt_ms is not None and self.o.rtt_ms >= LONG_RTT_MS

    @property
    def rtt(self) -> str:
        return f"round trip {latency_text(self.o.rtt_ms)}"

    def today(self, knob: str) -> Value | None:
        value = self.o.today.get(knob)
        return value if isinstance(value, int | str) else None


def _around(today: Value | None, ladder: Sequence[int], low: int, high: int) -> tuple[Value, ...]:
    """``ladder``'s values within [low, high], with today's whatever its form."""
    values: list[Value] = list(dict.fromkeys(v for v in ladder if low <= v <= high))
    if today is not None and today not in values:
        values.append(today)
    ints = sorted(v for v in values if isinstance(v, int))
    return (*ints, *(v for v in values if not isinstance(v, int)))


def _choices(knob: str, today: Value | None, allowed: Sequence[Value] | None = None) -> tuple[Value, ...]:
    """``allowed`` (the catalog's suggestion), with today's when it is one of the knob's own values; today's
    in the host's own form (a dirty ratio, the kernel's attribute-cache range) the plan adds as it is."""
    values = list(allowed if allowed is not None else SPECS[knob].default_sweep)
    native = today is not None and SPECS[knob].validity.is_native(today)
    if today is not None and not native and str(today) not in map(str, values):
        values.insert(0, today)
    return tuple(values)


def _advice(knob: str, ticked: bool, values: tuple[Value, ...], reason: str, priority: float = 0.0) -> KnobAdvice:
    return KnobAdvice(knob, True, ticked, values, reason, priority if ticked else 0.0)


def _lacking(knob: str, why: str) -> KnobAdvice:
    return KnobAdvice(knob, False, False, (), f"{why}: {knob} not offered")


def _share_words(c: Context, kinds: Sequence[str]) -> tuple[str, float] | None:
    top = c.o.share([w for w in c.workloads if w in kinds])
    return (f"{top[0]} at {percent_text(top[1])} of the network", top[1]) if top else None


def _read_ahead(c: Context) -> KnobAdvice:
    today = c.today("read_ahead_kb")
    ladder = [128, 1024, 4096, 16384]
    if c.long_rtt and c.o.network_bps:  # twice what one round trip carries at the network's speed
        need_kb = 2 * c.o.network_bps / max(c.o.clients, 1) * (c.o.rtt_ms or 0) / 1e3 / 1024
        ladder.append(min(65536, 1 << max(0, int(need_kb) - 1).bit_length()))
    values = _around(today, ladder, 0, 65536)
    if not c.has(SEQ_READS):
        return _advice("read_ahead_kb", False, values, "no sequential reads in the plan: readahead unlikely to matter, not ticked")
    # a long round trip first: the network's ceiling was measured over it too, by a test whose window may
    # be no larger than what a client's readahead keeps in flight, so a stream near it may still gain
    if c.long_rtt:
        return _advice("read_ahead_kb", True, values, f"{c.rtt}: readahead and rsize decide one stream's speed", 90)
    share = _share_words(c, SEQ_READS)
    if share is not None and share[1] >= NEAR_CEILING:
        return _advice("read_ahead_kb", False, values, f"{share[0]} already: only jumbo frames can add, and only if "
                                                      "every hop carries them; not ticked")  # fmt: skip
    why = f"{share[0]}" if share else "sequential reads in the plan"
    return _advice("read_ahead_kb", True, values, f"{why}: readahead decides how far ahead a client asks", 60)


def _block_size(knob: str, kinds: Sequence[str], verb: str) -> Callable[[Context], KnobAdvice]:
    def rule(c: Context) -> KnobAdvice:
        today = c.today(knob)
        cap = c.today("max_block_size")
        cap = cap if isinstance(cap, int) else MIB
        values = _around(today, [256 * 1024, MIB], 4096, cap)
        if not c.has(kinds):
            return _advice(knob, False, values, f"no {verb}s in the plan: {knob} unlikely to matter, not ticked")
        if isinstance(today, int) and today >= cap:
            capped = "" if cap >= MIB else "; max_block_size (restart opt-in) would lift the cap"
            return _advice(knob, False, values, f"{knob} already {knob_value_text(knob, today)}, the most the server "
                                                f"offers: not ticked{capped}")  # fmt: skip
        if c.long_rtt:
            return _advice(knob, True, values, f"{c.rtt}: larger {verb}s mean fewer round trips per MiB", 85 if verb == "read" else 80)
        now = f"{knob} {knob_value_text(knob, today)} today" if today is not None else f"{knob} not known today"
        return _advice(knob, True, values, f"{now}: larger {verb}s mean fewer requests", 45 if verb == "read" else 40)

    return rule


def _kernel_at_least(kernel: str, wanted: tuple[int, int]) -> bool:
    try:
        major, minor = (int(p) for p in kernel.split("-")[0].split(".")[:2])
    except ValueError:
        return True  # unknown: the mount itself will say
    return (major, minor) >= wanted


def _pinned(rule: Callable[[Context], KnobAdvice]) -> Callable[[Context], KnobAdvice]:
    """``rule``, its knob not ticked while a client mounts the export itself: the test mount joins that mount's
    connection, made under today's value, and a trial at another value is refused (app.knobs.transport)."""

    def checked(c: Context) -> KnobAdvice:
        a = rule(c)
        if not a.ticked or not c.o.shared_mounts:
            return a
        more = f" (and {len(c.o.shared_mounts) - 1} more)" if len(c.o.shared_mounts) > 1 else ""
        return _advice(a.knob, False, a.values, f"{c.o.shared_mounts[0]}{more} mounts the export already and a test "
                                                f"mount shares that connection, so {a.knob} cannot change for it: "
                                                f"unmount it for the sweep to try {a.knob}; not ticked")  # fmt: skip

    return checked


def _nconnect(c: Context) -> KnobAdvice:
    if not all(_kernel_at_least(k, NCONNECT_MIN_KERNEL) for k in c.o.client_kernels if k):
        return _lacking("nconnect", "a client's kernel is older than 5.3")
    values = _around(c.today("nconnect"), [1, 4, 8], 1, 16)
    if c.long_rtt:
        return _advice("nconnect", True, values, f"{c.rtt}: more connections keep more requests in flight", 70)
    if c.o.stream_share is None:
        return _advice("nconnect", False, values, "one TCP stream's share of a client's link not measured: not ticked")
    if c.o.stream_share < STREAM_SHORT:
        return _advice("nconnect", True, values, f"one TCP stream reaches only {percent_text(c.o.stream_share)} of a "
                                                 "client's link: more connections may fill it", 55)  # fmt: skip
    return _advice("nconnect", False, values, f"one TCP stream already reaches {percent_text(c.o.stream_share)} of "
                                              "a client's link: nconnect unlikely to matter, not ticked")  # fmt: skip


def _threads(c: Context) -> KnobAdvice:
    if not c.o.nfsd_seen:
        return _lacking("nfsd_threads", "nfsd's thread count not found")
    today = c.today("nfsd_threads")
    base = today if isinstance(today, int) else 8
    most = min(1024, 64 * (c.o.server_cpus or 16))
    values = _around(today, [base * 2, base * 4, base * 8], 1, most)
    wait = c.o.thread_wait
    if wait is None:
        return _advice("nfsd_threads", True, values, "thread waits not measured: nfsd_threads kept in the plan, last", 20)
    if wait < THREAD_WAITS:
        return _advice("nfsd_threads", False, values, f"threads waited {percent_text(wait)} of the time: "
                                                      "nfsd_threads unlikely to matter, not ticked")  # fmt: skip
    if c.o.server_cpu is not None and c.o.server_cpu >= BUSY_CPU:
        return _advice("nfsd_threads", True, values, f"threads waited {percent_text(wait)} of the time, but the server's "
                                                     f"CPU is {percent_text(c.o.server_cpu)} busy: more may only queue", 50)  # fmt: skip
    return _advice("nfsd_threads", True, values, f"threads waited {percent_text(wait)} of the time: more nfsd threads", 95)


def _min_threads(c: Context) -> KnobAdvice:
    today = c.today("nfsd_min_threads")
    if today is None:
        return _lacking("nfsd_min_threads", "nfsd's threads do not scale themselves here (they do from Linux 7.0, "
                                              "started by nfsdctl)")
    values = _choices("nfsd_min_threads", today)
    wait = c.o.thread_wait
    if wait is not None and wait >= THREAD_WAITS:
        return _advice("nfsd_min_threads", True, values, f"threads waited {percent_text(wait)} of the time on a "
                                                         "self-scaling nfsd: a higher floor keeps them started", 40)  # fmt: skip
    return _advice("nfsd_min_threads", False, values, "nfsd starts threads as requests wait and the floor only spares "
                                                      "a burst their start: not ticked")  # fmt: skip


def _pool_mode(c: Context) -> KnobAdvice:
    today = c.today("pool_mode")
    if today is None:
        return _lacking("pool_mode", "one CPU and one NUMA node make one nfsd pool whatever the mode")
    values = _choices("pool_mode", today)
    why = "per-CPU or per-node pools matter on a busy many-core server"
    if c.allow_restart and c.o.thread_wait is not None and c.o.thread_wait >= THREAD_WAITS:
        return _advice("pool_mode", True, values, f"{why}, and threads waited {percent_text(c.o.thread_wait)} of the "
                                                  "time (you opted in to nfsd restarts)", 15)  # fmt: skip
    return _advice("pool_mode", False, values, f"{why}; each change restarts nfsd: not ticked")


def _stripe_cache(c: Context) -> KnobAdvice:
    md = c.o.raid
    if md is None:
        return _lacking("stripe_cache_size", "no md array under the export")
    if md.level not in STRIPED or md.stripe_cache_size is None:
        return _lacking("stripe_cache_size", f"{md.name} is {md.level or 'not striped'}: no stripe cache")
    disks = md.raid_disks or len(md.members) or 1
    most = 32768
    if c.o.server_mem_kb:  # page size × disks × value, at most a share of the RAM
        most = max(17, min(most, int(c.o.server_mem_kb * 1024 * STRIPE_RAM_SHARE / (c.o.page_size * disks))))
    values = _around(c.today("stripe_cache_size"), [1024, 4096, 8192], 17, most)
    level = md.level.upper().replace("RAID", "RAID-")
    if not c.has((*LARGE_WRITES, *SMALL_WRITES)):
        return _advice("stripe_cache_size", False, values, f"no writes in the plan: {level}'s stripe cache serves "
                                                           "writes only, not ticked")  # fmt: skip
    share = _share_words(c, LARGE_WRITES)
    if share is not None and share[1] >= NEAR_CEILING:
        return _advice("stripe_cache_size", False, values, f"{share[0]} already: the array is not what limits them, "
                                                           "not ticked")  # fmt: skip
    large = c.has(LARGE_WRITES)
    return _advice("stripe_cache_size", True, values, f"{level} and {'large ' if large else 'small '}writes in the plan: "
                                                      "stripe_cache_size", 75 if large else 45)  # fmt: skip


def _flush_words(c: Context) -> str:
    return f"one commit costs {latency_text((c.o.flush_s or 0) * 1e3)} on the export"


def _export_sync(c: Context) -> KnobAdvice:
    if c.o.export is None:
        return _lacking("export_sync", "the export's options not found")
    values: tuple[Value, ...] = ("sync", "async")
    if not c.o.sync_export:
        return _advice("export_sync", False, values, "the export is async already: nothing to gain, not ticked")
    if not c.has((*LARGE_WRITES, *SMALL_WRITES)):
        return _advice("export_sync", False, values, "no writes in the plan: sync or async does not matter, not ticked")
    if c.o.flush_s is None:
        if c.allow_async:
            return _advice("export_sync", True, values, "flush cost not measured; you opted in to async", 40)
        return _advice("export_sync", False, values, "flush cost not measured: async needs its opt-in, not ticked")
    if c.o.flush_s < COSTLY_FLUSH_S:
        return _advice("export_sync", False, values, f"{_flush_words(c)}: async would gain little, not ticked")
    if c.allow_async:
        return _advice("export_sync", True, values, f"{_flush_words(c)}: async acknowledges before the disk "
                                                    "(you opted in; it may lose writes on a crash)", 80)  # fmt: skip
    return _advice("export_sync", False, values, f"{_flush_words(c)}: async would gain most on writes but may lose "
                                                 "data on a crash; not ticked without its opt-in")  # fmt: skip


def _wdelay(c: Context) -> KnobAdvice:
    if c.o.export is None:
        return _lacking("export_wdelay", "the export's options not found")
    values = _choices("export_wdelay", c.today("export_wdelay"), ("wdelay", "no_wdelay"))
    if not c.o.sync_export:
        return _advice("export_wdelay", False, values, "wdelay matters only on sync exports: not ticked")
    if not c.has(SMALL_WRITES):
        return _advice("export_wdelay", False, values, "no small writes in the plan: wdelay unlikely to matter, not ticked")
    if c.o.flush_s is not None and c.o.flush_s >= COSTLY_FLUSH_S:
        return _advice("export_wdelay", True, values, f"{_flush_words(c)} and small writes in the plan: no_wdelay "
                                                      "commits each at once", 40)  # fmt: skip
    return _advice("export_wdelay", False, values, "commits are cheap on this export: wdelay unlikely to matter, not ticked")


def _mtu(c: Context) -> KnobAdvice:
    today = c.today("mtu")
    values = _around(today, [1500, 9000], 1280, 9000)
    if isinstance(today, int) and today >= 9000:
        return _advice("mtu", False, values, "MTU 9000 already: not ticked")
    share = _share_words(c, c.workloads)
    risk = "a wrong MTU can cut the connection: tick it yourself if every switch carries jumbo frames"
    if share is not None and share[1] >= NEAR_CEILING:
        return _advice("mtu", False, values, f"already at {percent_text(share[1])} of the network: only jumbo frames "
                                             f"can add, and only if every hop carries them; {risk}")  # fmt: skip
    return _advice("mtu", False, values, f"jumbo frames save per-packet work; {risk}")


def _coherence(knob: str) -> Callable[[Context], KnobAdvice]:
    def rule(c: Context) -> KnobAdvice:
        values = _choices(knob, c.today(knob))
        stale = "clients may see stale files: tick it only if each file has one writer"
        if c.has(METADATA):
            where = f"small files over a {latency_text(c.o.rtt_ms)} round trip" if c.long_rtt else "many small files"
            return _advice(knob, False, values, f"{where}: {knob} would spare round trips at opens and stats, but {stale}")
        return _advice(knob, False, values, f"no small-file work in the plan: not ticked ({stale})")

    return rule


def _max_block_size(c: Context) -> KnobAdvice:
    if not c.o.block_size_seen:
        return _lacking("max_block_size", "nfsd's max_block_size not found")
    today = c.today("max_block_size")
    values = _around(today, [256 * 1024, MIB], 4096, MIB)
    if isinstance(today, int) and today >= MIB:
        return _advice("max_block_size", False, values, "already 1 MiB: rsize and wsize are not capped, not ticked")
    cap = f"the server caps rsize and wsize at {knob_value_text('max_block_size', today)}"
    if c.allow_restart:
        return _advice("max_block_size", True, values, f"{cap}: max_block_size (you opted in to nfsd restarts)", 50)
    return _advice("max_block_size", False, values, f"{cap}: max_block_size would lift it, with the restart opt-in")


def _nfsvers(c: Context) -> KnobAdvice:
    offered = [v for v in ("3", "4.1", "4.2") if not c.o.server_versions or v in c.o.server_versions]
    today = c.today("nfsvers")
    values = _choices("nfsvers", today, [v for v in offered if v in ("3", "4.2")] or offered)
    now = f"NFS {today} in use" if today is not None else "the version in use not known"
    if c.long_rtt:
        return _advice("nfsvers", True, values, f"{c.rtt}: NFSv4.1+ can be far faster than v3 at high latency", 35)
    if c.has(METADATA):
        return _advice("nfsvers", True, values, f"{now} and small files in the plan: the version changes the round "
                                                "trips per create", 30)  # fmt: skip
    return _advice("nfsvers", False, values, f"{now}: the version rarely moves streaming I/O on a LAN, not ticked")


def _sysctl(knob: str, sysctl: str, rule: Callable[[Context, tuple[Value, ...]], KnobAdvice]) -> Callable[[Context], KnobAdvice]:
    def checked(c: Context) -> KnobAdvice:
        if any(sysctl not in names for names in c.o.client_sysctls):
            return _lacking(knob, f"{sysctl} not found on a client")
        return rule(c, _choices(knob, c.today(knob)))

    return checked


def _rpc_slots(c: Context, values: tuple[Value, ...]) -> KnobAdvice:
    if c.long_rtt:
        return _advice("rpc_slots", True, values, f"{c.rtt}: slots bound the requests one connection keeps in flight", 30)
    return _advice("rpc_slots", False, values, "the kernel's default grows as needed: unlikely to matter on a LAN, "
                                               "not ticked")  # fmt: skip


def _dirty(knob: str) -> Callable[[Context, tuple[Value, ...]], KnobAdvice]:
    def rule(c: Context, values: tuple[Value, ...]) -> KnobAdvice:
        if not c.has((*LARGE_WRITES, *SMALL_WRITES)):
            return _advice(knob, False, values, "no writes in the plan: not ticked")
        return _advice(knob, False, values, "host-wide on each client; how much a client buffers shapes bursts "
                                            "more than a steady stream: not ticked")  # fmt: skip

    return rule


RULES: dict[str, Callable[[Context], KnobAdvice]] = {
    "nfsd_threads": _threads,
    "nfsd_min_threads": _min_threads,
    "pool_mode": _pool_mode,
    "max_block_size": _max_block_size,
    "export_sync": _export_sync,
    "export_wdelay": _wdelay,
    "stripe_cache_size": _stripe_cache,
    "rsize": _block_size("rsize", READS, "read"),
    "wsize": _block_size("wsize", (*LARGE_WRITES, *SMALL_WRITES), "write"),
    "nfsvers": _nfsvers,
    "nconnect": _pinned(_nconnect),
    "nocto": _coherence("nocto"),
    "actimeo": _coherence("actimeo"),
    "dirty_bytes": _sysctl("dirty_bytes", "vm.dirty_bytes", _dirty("dirty_bytes")),
    "dirty_background": _sysctl("dirty_background", "vm.dirty_background_bytes", _dirty("dirty_background")),
    "rpc_slots": _pinned(_sysctl("rpc_slots", "sunrpc.tcp_max_slot_table_entries", _rpc_slots)),
    "read_ahead_kb": _read_ahead,
    "mtu": _mtu,
}
assert set(RULES) == set(SPECS)


def propose(diagnosis: Diagnosis, workloads: Sequence[str], *, allow_async: bool = False,
            allow_restart: bool = False, budget_s: float | None = DEFAULT_BUDGET_S) -> Proposal:  # fmt: skip
    """The plan ``diagnosis`` proposes for ``workloads``."""
    c = Context(diagnosis.observed, tuple(workloads), allow_async, allow_restart)
    if not diagnosis.observed.today and diagnosis.observed.clients == 0:  # no hosts: every knob offered, as typed
        advice = [KnobAdvice(k, True, False, SPECS[k].default_sweep, "no hosts connected: nothing to reason from")
                  for k in SPECS]  # fmt: skip
    else:
        advice = [RULES[k](c) for k in SPECS]
    ordered = sorted(advice, key=lambda a: (not a.ticked, -a.priority))  # stable: the catalog's order among equals
    return Proposal(diagnosis, tuple(workloads), tuple(ordered), budget_s)
