"""An in-process stand-in for the core, for UI tests, demos and screenshots.

It speaks ``ui.core_api.CoreApi`` and publishes on a real ``EventBus`` exactly what
the real core will publish (samples at 4 Hz, server telemetry at 1 Hz, run events),
with a made-up but plausible throughput model. ``speed`` compresses time.
Qt-free on purpose: it is the contract, not the UI.
"""

from __future__ import annotations

import asyncio
import math
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path

from app.events import EventBus, Level, Message, SamplesBatch, TelemetryBatch
from app.store.states import JournalState
from experiments.samples import HostTelemetry, Sample
from ui.core_api import (
    BaselineResult,
    Ceiling,
    ConfirmKey,
    HostError,
    HostFacts,
    HostKey,
    HostRole,
    JournalChanged,
    JournalEntry,
    KnobEffect,
    KnobSpec,
    Leftover,
    NicFacts,
    Plan,
    Progress,
    RankedConfig,
    Recommendation,
    Results,
    RunOutcome,
    SafetyClass,
    Snippet,
    Strategy,
    SweepFinished,
    SweepStarted,
    TrialFinished,
    TrialStarted,
    WorkloadSpec,
    parse_size,
)

MB = 1_000_000.0
INTERVAL = 0.25  # the load agent's sample interval
TRIAL_OVERHEAD_S = 15.0  # apply, remount, drop caches
TRIAL_BUDGET_S = 45.0  # a trial stops when stable, at the latest after this

KNOBS: tuple[KnobSpec, ...] = (
    KnobSpec("nfsd.threads", "nfsd threads", "server", "8", ("8", "16", "32", "64"), SafetyClass.SAFE,
             1, 1024, help="Server threads answering NFS requests (/proc/fs/nfsd/threads)."),
    KnobSpec("mount.rsize", "rsize", "client", "1M", ("256K", "512K", "1M"), SafetyClass.REMOUNT,
             4096, 1 << 20, unit="bytes", help="Largest READ; the server may cap it."),
    KnobSpec("mount.wsize", "wsize", "client", "1M", ("256K", "512K", "1M"), SafetyClass.REMOUNT,
             4096, 1 << 20, unit="bytes", help="Largest WRITE; the server may cap it."),
    KnobSpec("mount.nconnect", "nconnect", "client", "1", ("1", "2", "4", "8"), SafetyClass.REMOUNT,
             1, 16, help="TCP connections per mount."),
    KnobSpec("bdi.read_ahead_kb", "client readahead", "client", "128", ("128", "1024", "4096", "16384"),
             SafetyClass.SAFE, 0, 65536, unit="KiB", help="read_ahead_kb of the mount's bdi."),
    KnobSpec("md.stripe_cache_size", "md stripe cache", "server", "256", ("256", "1024", "4096", "8192"),
             SafetyClass.SAFE, 17, 32768, unit="pages", help="md RAID 5/6 stripe cache entries."),
    KnobSpec("net.mtu", "MTU", "server+clients", "1500", ("1500", "9000"), SafetyClass.DISRUPTIVE,
             576, 9216, unit="bytes", help="Every switch on the path must agree; checked with a DF ping first."),
    KnobSpec("mount.nfsvers", "NFS version", "client", "4.2", ("4.2",), SafetyClass.REMOUNT,
             choices=("3", "4.0", "4.1", "4.2")),
    KnobSpec("export.sync", "export sync/async", "server", "sync", ("sync", "async"), SafetyClass.DATA_RISK,
             choices=("sync", "async"), needs_opt_in=True,
             help="async acknowledges writes before they reach the disk."),
)

WORKLOADS: tuple[WorkloadSpec, ...] = (
    WorkloadSpec("seq-write", "sequential write", "1 MiB writes, one 4 GiB file per client"),
    WorkloadSpec("seq-read", "sequential read", "1 MiB reads, cold cache"),
    WorkloadSpec("rand-4k", "random 4 KiB read/write", "70/30 mix, queue depth 16"),
    WorkloadSpec("small-files", "small files", "create, write, fsync, stat 32 KiB files"),
)


def _config_factor(config: dict[str, str], workload: str) -> float:
    """A smooth made-up response surface, so rankings and charts look plausible."""
    f = 1.0
    threads = int(config.get("nfsd.threads", "8"))
    f *= 0.55 + 0.45 * min(1.0, math.log2(max(threads, 1)) / 6)
    for size_knob in ("mount.rsize", "mount.wsize"):
        f *= 0.8 + 0.2 * min(1.0, parse_size(config.get(size_knob, "1M")) / (1 << 20))
    f *= 1.0 + 0.08 * math.log2(int(config.get("mount.nconnect", "1")))
    if workload == "seq-read":
        f *= 0.7 + 0.3 * min(1.0, int(config.get("bdi.read_ahead_kb", "128")) / 4096)
    if workload == "seq-write":
        f *= 0.85 + 0.15 * min(1.0, int(config.get("md.stripe_cache_size", "256")) / 4096)
        f *= 1.6 if config.get("export.sync") == "async" else 1.0
    f *= 1.05 if config.get("net.mtu") == "9000" else 1.0
    return f


FAKE_TARGETS = {"nfsd.threads": "/proc/fs/nfsd/threads", "md.stripe_cache_size": "/sys/block/md0/md/stripe_cache_size",
                "net.mtu": "eth0", "export.sync": "10.0.0.0/24:/srv/nfs"}


@dataclass(frozen=True, slots=True)
class _Done:
    """A finished fake trial, as the fake's own results are computed from."""

    trial_id: int
    config: dict[str, str]
    workload: str
    mean_bps: float
    cv: float
    stable: bool
    skipped: bool = False


BASE_BPS = {"seq-write": 62 * MB, "seq-read": 95 * MB, "rand-4k": 18 * MB, "small-files": 9 * MB}


class FakeCore:
    demo = True  # the status bar says so

    def __init__(self, speed: float = 1.0, seed: int = 7, log_path: Path | None = None) -> None:
        self.bus = EventBus()
        self.log_path = log_path or Path("~/.local/state/nfs-tuner/log/nfs-tuner.log").expanduser()
        self.speed = speed
        self.trial_samples = (16, int(TRIAL_BUDGET_S / INTERVAL))  # min, max samples per trial
        self.revert_calls = 0
        self._rng = random.Random(seed)
        self._trusted: set[str] = set()
        self._connected: dict[str, HostRole] = {}
        self._journal: list[JournalEntry] = []
        self._running = False
        self._paused = asyncio.Event()
        self._paused.set()  # set = not paused
        self._skip = False
        self._cancel = False
        self._trial_id = 0
        self._done: list[_Done] = []
        self._baseline: dict[str, float] = {}

    # --- hosts ---
    @property
    def running(self) -> bool:
        return self._running

    def ssh_config_hosts(self) -> Sequence[str]:
        return ("nfs-server", "client1", "client2", "client3", "client4", "backup-box")

    async def connect(self, host: str, role: HostRole, confirm_key: ConfirmKey) -> HostFacts:
        await self._sleep(0.4)
        if host.startswith(("bad", "unreachable")):
            raise HostError(f"Could not reach {host}: connection refused on port 22. "
                            f"Is sshd running there? Details: {self.log_path}")
        if host not in self._trusted:
            digest = "".join(self._rng.choice("ABCDEFGHabcdefgh0123456789+/") for _ in range(43))
            key = HostKey(host, f"10.0.0.{10 + len(self._trusted)}", "ssh-ed25519", f"SHA256:{digest}")
            if not await confirm_key(key):
                raise HostError(f"The key of {host} was not trusted, so nothing was done there.")
            self._trusted.add(host)
        self._connected[host] = role
        return self._facts(host, role)

    def _facts(self, host: str, role: HostRole) -> HostFacts:
        nic = NicFacts("eth0", 1500, 10_000 if role is HostRole.SERVER else 1_000, "10.0.0.2/24")
        if role is HostRole.SERVER:
            return HostFacts(host, role, "6.8.0-45-generic", "Ubuntu 24.04", 16, 64 << 30, (nic,),
                             ("md0 raid6, 8 disks, chunk 512K, stripe_cache_size 256",),
                             ("/srv/nfs 10.0.0.0/24(rw,sync,no_subtree_check)",), (), "root")
        return HostFacts(host, role, "6.1.0-25-amd64", "Debian 12", 8, 16 << 30, (nic,), (), (),
                         ("nfs-server:/srv/nfs on /mnt/nfs type nfs4 (vers=4.2,rsize=1048576,"
                          "wsize=1048576,nconnect=1)",), "sudo without password")

    async def nfs_clients_of(self, server: str) -> Sequence[str]:
        await self._sleep(0.2)
        return ("client1", "client2", "client3", "client4")

    # --- plan ---
    def knobs(self) -> Sequence[KnobSpec]:
        return KNOBS

    def workloads(self) -> Sequence[WorkloadSpec]:
        return WORKLOADS

    def _trials(self, plan: Plan) -> list[dict[str, str]]:
        knobs = {k.name: k for k in KNOBS}
        current = {k.name: k.current for k in KNOBS}
        swept = {n: v for n, v in plan.knob_values.items() if v}
        if plan.strategy is Strategy.GRID:
            names = list(swept)
            return [current | dict(zip(names, combo)) for combo in product(*(swept[n] for n in names))]
        configs = [dict(current)]
        for name, values in swept.items():
            configs += [current | {name: v} for v in values if v != knobs[name].current]
        return configs

    def estimate_duration(self, plan: Plan) -> tuple[int, float]:
        n = len(self._trials(plan)) * len(plan.workloads) * plan.repetitions
        return n, n * (TRIAL_OVERHEAD_S + TRIAL_BUDGET_S * 0.6)

    # --- measuring ---
    async def _sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds / self.speed)

    async def _trial(self, trial_id: int, clients: Sequence[str], level_bps: float) -> list[float]:
        """Publish samples until the summed throughput is stable; returns the sums."""
        sums: list[float] = []
        lo, hi = self.trial_samples
        for i in range(hi):
            await self._paused.wait()
            if self._skip or self._cancel:
                break
            await self._sleep(INTERVAL)
            t = (i + 1) * INTERVAL
            ramp = 1.0 - math.exp(-t / 2.0)
            noise = 0.15 * math.exp(-t / 6.0) + 0.02
            batch = []
            for c in clients:
                bps = level_bps * ramp * (1 + self._rng.gauss(0, noise))
                nbytes = max(0, int(bps * INTERVAL))
                batch.append(Sample(c, t, INTERVAL, bytes_written=nbytes, ops=nbytes // (1 << 20) + 1,
                                    lat_p50_ms=4 + self._rng.random(), lat_p99_ms=12 + 6 * self._rng.random()))
            sums.append(sum(s.throughput_bps for s in batch))
            self.bus.publish(SamplesBatch(trial_id, batch))
            if (i + 1) % 4 == 0:  # the server's own counters, 1 Hz like iostat 1
                total = sums[-1]
                self.bus.publish(TelemetryBatch(trial_id, [HostTelemetry(
                    "nfs-server", t, 1.0, disk_read_bps=0.05 * total, disk_write_bps=total * 1.02,
                    net_rx_bps=total * 1.03, net_tx_bps=0.02 * total, cpu_busy=0.3)]))
            if len(sums) >= lo and _cv(sums[-12:]) < 0.03:
                break
        return sums

    async def run_baseline(self, workloads: Sequence[str]) -> BaselineResult:
        clients = [h for h, r in self._connected.items() if r is HostRole.CLIENT] or ["client1"]
        self._trial_id += 1
        await self._trial(self._trial_id, clients, 110 * MB)  # network ceiling probe
        current = {}
        for w in workloads:
            self._trial_id += 1
            sums = await self._trial(self._trial_id, clients, BASE_BPS.get(w, 50 * MB) / len(clients)
                                     * _config_factor({k.name: k.current for k in KNOBS}, w))
            current[w] = statistics.fmean(sums[-12:]) if sums else 0.0
        self._baseline = current
        ceilings = tuple(Ceiling(f"network nfs-server → {c}", 117 * MB) for c in clients)
        ceilings += (Ceiling("server disk, sequential read", 610 * MB),
                     Ceiling("server disk, sequential write", 420 * MB))
        return BaselineResult(ceilings, current)

    async def run(self, plan: Plan) -> RunOutcome:
        clients = [h for h, r in self._connected.items() if r is HostRole.CLIENT] or ["client1"]
        configs = self._trials(plan)
        work = [(c, w, r) for c in configs for w in plan.workloads for r in range(1, plan.repetitions + 1)]
        _, total_s = self.estimate_duration(plan)
        self._running, self._cancel, self._done = True, False, []
        self.bus.publish(SweepStarted(0, len(work), 0))
        knobs = {k.name: k for k in KNOBS}
        outcome = RunOutcome.COMPLETED
        try:
            for index, (config, workload, rep) in enumerate(work, start=1):
                if self._cancel:
                    outcome = RunOutcome.CANCELLED
                    break
                self._trial_id += 1
                changed = {n: v for n, v in config.items() if v != knobs[n].current}
                self._apply(config)
                self.bus.publish(TrialStarted(0, self._trial_id, changed, workload, rep - 1))
                self._skip = False
                level = BASE_BPS.get(workload, 50 * MB) * _config_factor(config, workload) / len(clients)
                sums = await self._trial(self._trial_id, clients, level)
                tail = sums[-12:] or [0.0]
                done = _Done(self._trial_id, dict(config), workload, statistics.fmean(tail), _cv(tail),
                             _cv(tail) < 0.03, skipped=self._skip)
                self._done.append(done)
                self.bus.publish(TrialFinished(
                    0, done.trial_id, changed, workload, "broken" if done.skipped else "ok",
                    None if done.skipped else done.mean_bps, "skipped by the admin" if done.skipped else "",
                    cv=done.cv, stable=done.stable, skipped=done.skipped))
                elapsed = index / len(work) * total_s
                self.bus.publish(Progress(index, len(work), total_s - elapsed))
            if self._cancel:
                outcome = RunOutcome.CANCELLED
        finally:
            await self.revert_all()
            self._running = False
            state = "complete" if outcome is RunOutcome.COMPLETED else "cancelled"
            self.bus.publish(SweepFinished(0, state, len(self._done)))
        return outcome

    def _apply(self, config: dict[str, str]) -> None:
        """Journal first, then 'change' the host, like the real core: one entry per knob held."""
        knobs = {k.name: k for k in KNOBS}
        for name, value in config.items():
            knob = knobs[name]
            held = next((e for e in reversed(self._journal) if e.knob == name and e.state is JournalState.APPLIED), None)
            if held is not None and held.new_value != value:
                self._set_state(held, JournalState.REVERTED)
                held = None
            if held is None and value != knob.current:
                host = "nfs-server" if knob.scope == "server" else "client1"
                now = time.time()
                target = FAKE_TARGETS.get(name, "test mount")
                self._journal.append(JournalEntry(len(self._journal) + 1, 0, host, name, target, knob.current,
                                                  value, now, now, JournalState.APPLIED, ""))
        self.bus.publish(JournalChanged(0, tuple(self._journal)))

    def _set_state(self, entry: JournalEntry, state: JournalState) -> None:
        i = self._journal.index(entry)
        self._journal[i] = JournalEntry(entry.id, entry.session_id, entry.host, entry.knob, entry.target,
                                        entry.old_value, entry.new_value, entry.created_at, time.time(), state, "")

    def pause(self) -> None:
        self._paused.clear()

    def resume(self) -> None:
        self._paused.set()

    def skip_trial(self) -> None:
        self._skip = True

    async def cancel_and_revert(self) -> None:
        self._cancel = True
        self._paused.set()
        while self._running:
            await asyncio.sleep(0.01)

    async def revert_all(self) -> None:
        self.revert_calls += 1
        for e in [e for e in self._journal if e.state is JournalState.APPLIED]:
            self._set_state(e, JournalState.REVERTED)
        self.bus.publish(JournalChanged(0, tuple(self._journal)))

    async def leftovers(self) -> Sequence[Leftover]:
        return ()  # the demo never crashed

    async def revert_leftover(self, entry_id: int) -> None:
        return None

    def dismiss_leftover(self, entry_id: int) -> None:
        return None

    def report_error(self, text: str) -> None:
        """What the real core does when a host misbehaves (used by demos and tests)."""
        self.bus.publish(Message(Level.ERROR, text, f"see {self.log_path}"))

    # --- results ---
    def results(self) -> Results:
        done = self._done or self._demo_trials()
        knobs = {k.name: k for k in KNOBS}
        ranked: dict[str, tuple[RankedConfig, ...]] = {}
        for workload in dict.fromkeys(t.workload for t in done):
            groups: dict[tuple[tuple[str, str], ...], list[float]] = {}
            for t in done:
                if t.workload == workload and not t.skipped:
                    groups.setdefault(tuple(sorted(t.config.items())), []).append(t.mean_bps)
            rows = []
            for key, means in groups.items():
                m = statistics.fmean(means)
                half = _t95(len(means)) * statistics.stdev(means) / math.sqrt(len(means)) if len(means) > 1 else 0.0
                cfg = {knobs[n].label: v for n, v in key if v != knobs[n].current} or {"(today's config)": ""}
                rows.append(RankedConfig(cfg, m, m - half, m + half, statistics.pstdev(means) / m if m else 0, len(means)))
            ranked[next(w.label for w in WORKLOADS if w.name == workload)] = tuple(
                sorted(rows, key=lambda r: -r.mean_bps))
        first = next(iter(ranked.values()))
        best, base = first[0], next((r for r in first if "(today's config)" in r.config), first[-1])
        gain = (best.mean_bps / base.mean_bps - 1) * 100 if base.mean_bps else 0.0
        evidence = (
            f"{best.mean_bps / MB:.0f} MB/s (95 % CI {best.ci_low_bps / MB:.0f}–{best.ci_high_bps / MB:.0f}) "
            f"against {base.mean_bps / MB:.0f} MB/s today, over {best.runs} runs each",
            "the confidence intervals of the winner and today's configuration do not overlap"
            if best.ci_low_bps > base.ci_high_bps else "the intervals overlap: the gain is within the noise",
            f"coefficient of variation {best.cv * 100:.1f} % (stable below 3 %)",
        )
        effects = []
        for name in dict.fromkeys(n for t in done for n, v in t.config.items() if v != knobs[n].current):
            vals: dict[str, list[_Done]] = {}
            for t in done:
                others_default = all(v == knobs[n].current for n, v in t.config.items() if n != name)
                if others_default:
                    vals.setdefault(t.config[name], []).append(t)
            order = sorted(vals, key=lambda v: parse_size(v) if v[:1].isdigit() else 0)
            effects.append(KnobEffect(knobs[name].label, tuple(order),
                                      tuple(statistics.fmean(x.mean_bps for x in vals[v]) for v in order),
                                      tuple(statistics.fmean(x.cv for x in vals[v]) for v in order)))
        rec = best.config
        notes = ["The recommendation keeps exports sync: async could lose acknowledged writes on a server crash."]
        if rec.get("export sync/async") == "async":
            notes = ["async exports: a server crash can lose writes the clients were told are safe. "
                     "Use only for scratch data you can recreate."]
        if "MTU" in rec:
            notes.append("MTU 9000 must be set on every switch port between server and clients first.")
        return Results(ranked, Recommendation(rec, gain, evidence), tuple(effects), _snippets(rec), tuple(notes))

    def _demo_trials(self) -> list[_Done]:
        """Results for screenshots without running: the default plan, 3 repetitions."""
        plan = Plan({k.name: k.suggested for k in KNOBS[:5]}, ("seq-write", "seq-read"))
        out = []
        for config in self._trials(plan):
            for w in plan.workloads:
                for _ in range(3):
                    m = BASE_BPS[w] * _config_factor(config, w) * (1 + self._rng.gauss(0, 0.015))
                    out.append(_Done(0, config, w, m, abs(self._rng.gauss(0.015, 0.005)), True))
        return out


def _cv(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 1.0
    m = statistics.fmean(values)
    return statistics.pstdev(values) / m if m else 1.0


def _t95(n: int) -> float:
    """Student's t for a 95 % two-sided interval with n-1 degrees of freedom."""
    return {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 7: 2.45, 8: 2.36, 9: 2.31, 10: 2.26}.get(n, 1.96)


def _snippets(config: dict[str, str]) -> tuple[Snippet, ...]:
    opts = ",".join(f"{k}={config.get(k, d)}" for k, d in (("rsize", "1M"), ("wsize", "1M"), ("nconnect", "1")))
    threads = config.get("nfsd threads", "8")
    ra = config.get("client readahead", "128")
    return (
        Snippet("fstab", "fstab.nfs-tuner", f"nfs-server:/srv/nfs  /mnt/nfs  nfs4  vers=4.2,{opts},_netdev  0 0\n"),
        Snippet("exports", "exports.nfs-tuner", "/srv/nfs 10.0.0.0/24(rw,sync,no_subtree_check)\n"),
        Snippet("nfs.conf", "nfs.conf.d-nfs-tuner.conf", f"[nfsd]\nthreads={threads}\n"),
        Snippet("udev", "99-nfs-readahead.rules",
                f'SUBSYSTEM=="bdi", ACTION=="add", PROGRAM="/bin/awk -v bdi=$kernel \'BEGIN{{ret=1}} '
                f'{{if ($4 == bdi) {{ret=0}}}} END{{exit ret}}\' /proc/fs/nfsfs/volumes", '
                f'ATTR{{read_ahead_kb}}="{ra}"\n'),
        Snippet("sysctl.d", "90-nfs-tuner.conf", "sunrpc.tcp_slot_table_entries = 128\n"),
        Snippet("network", "10-nfs.network", f"[Link]\nMTUBytes={config.get('MTU', '1500')}\n"),
        Snippet("tuned", "tuned.conf", "[main]\ninclude=throughput-performance\n\n[sysctl]\n"
                "sunrpc.tcp_slot_table_entries=128\n"),
        Snippet("Ansible", "nfs-tuner.yml", f"- hosts: nfs_servers\n  become: true\n  tasks:\n"
                f"    - community.general.ini_file:\n        path: /etc/nfs.conf\n        section: nfsd\n"
                f"        option: threads\n        value: '{threads}'\n"),
        Snippet("fio job", "nfs-tuner.fio", "[global]\nioengine=libaio\ndirect=1\nbs=1M\nsize=4G\n"
                "directory=/mnt/nfs\n\n[seq-write]\nrw=write\n"),
    )
