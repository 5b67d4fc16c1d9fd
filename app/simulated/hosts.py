"""The simulated host side: the demo's and the UI tests' hosts, injected where SshHosts goes.

Only what touches a host is simulated: discovery answers with made-up facts (first
contact asks to trust a key), the journal records every change in the store first as
the real one does but changes nothing, and the runner publishes samples from
``world.throughput`` in simulated time (``speed`` times faster than real). Everything
else — the session layer, the sweep engine, strategies, stability detection, the
recommendation, snippets and the store — is the product's own code.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import random
import time
from base64 import b64encode
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.events import EventBus, SamplesBatch, TelemetryBatch
from app.facts.model import HostFacts
from app.hosts import ConnectionRefused, UnknownHostKey
from app.knobs.client_sysctls import SYSCTL_FILES
from app.knobs.model import KnobError, Value
from app.knobs.recovery import Pending
from app.knobs.targets import MountOptions
from app.runner import ClientWork, RunError, RunResult, TelemetryTarget
from app.runner.baselines import DiskCeiling, TcpCeiling
from app.runner.run import Engine, Monitor
from app.simulated import world
from app.store import JournalState, Store
from app.store.records import JournalEntry
from app.sweep.apply import SERVER_GROUPS
from app.sweep.held import HeldChanges, Key
from app.sweep.host_side import Applying, Journal, Prepared
from app.sweep.spec import CLIENT_HOST_KNOBS, MOUNT_KNOBS, PHASED, SweepSpec
from experiments.agent_protocol import AgentSummary, IntervalAggregator
from experiments.latency import Latency
from experiments.samples import HostTelemetry, Sample
from experiments.workloads import Telemetry, WorkloadSpec

PHASED_S = 8.0  # simulated seconds a directory study's trial takes
SIM_PHASES = {"small_files": ("create", "stat", "read", "delete"), "tree": ("extract", "find", "remove"),
              "dir_scaling": ("create", "delete")}  # fmt: skip


@dataclass(frozen=True, slots=True)
class SimPhase:
    name: str
    start: float  # simulated seconds from the run's start
    seconds: float
    planned: int  # the operations it does without a limit
    cut: bool  # it ended at its share of the time limit


def phase_plan(kind: str, files: int, rate: float, limit: float | None) -> tuple[list[SimPhase], int]:
    """A phased workload's phases on a client doing ``rate`` operations per second, as the agent's
    timed_phase runs them: under a time limit each phase gets an even share of the time left and does at
    least one operation; the phases after the first work on the files it made. With the entries the
    phases left for the cleanup."""
    names = SIM_PHASES[kind]
    rate = max(rate, 1e-6)
    t, made, left = 0.0, float(files), 0.0
    out = []
    for i, name in enumerate(names):
        need = made / rate
        share = max(limit - t, 0.0) / (len(names) - i) if limit else math.inf
        took = max(min(need, share), 1.0 / rate)
        if i == 0:
            made = min(made, max(rate * took, 1.0))
        elif i == len(names) - 1:
            left = max(made - rate * took, 0.0)
        out.append(SimPhase(name, t, took, files, need > share))
        t += took
    return out, round(left)
SERVER_KNOBS = tuple(k for g in SERVER_GROUPS for k in g)
TARGETS = {"nfsd_threads": "/proc/fs/nfsd/threads", "nfsd_min_threads": "nfsdctl threads -m",
           "max_block_size": "/proc/fs/nfsd/max_block_size", "pool_mode": "/sys/module/sunrpc/parameters/pool_mode",
           "stripe_cache_size": "/sys/block/md0/md/stripe_cache_size",
           "export_sync": f"10.0.0.0/24:{world.EXPORT}", "export_wdelay": f"10.0.0.0/24:{world.EXPORT}",
           "mtu": "eth0"}  # fmt: skip


@dataclass
class _State:
    """What the simulated hosts run with now: per test mount, the configuration applied."""

    mounts: dict[str, dict[str, Value]] = field(default_factory=dict)  # mount point -> config
    server: dict[str, Value] = field(default_factory=dict)


class SimulatedJournal:
    """Journal first, like app.knobs.changes.ChangeJournal, but no host is touched."""

    def __init__(self, store: Store, session_id: int) -> None:
        self.store = store
        self.session_id = session_id
        self.token = hashlib.sha1(f"{session_id}-{time.time()}".encode()).hexdigest()[:12]
        self.held: list[int] = []

    def apply(self, host: str, knob: str, target: str, old: Value, new: Value) -> int:
        jid = self.store.journal_intend(self.session_id, host, knob, target, old, new, detail="simulated")
        self.store.journal_update(jid, JournalState.APPLIED, f"simulated; effective={new}")
        self.held.append(jid)
        return jid

    def revert(self, jid: int) -> None:
        if jid in self.held:
            self.held.remove(jid)
            self.store.journal_update(jid, JournalState.REVERTED)

    async def close(self) -> list[str]:
        for jid in reversed(list(self.held)):
            self.revert(jid)
        return []

    async def rejoin(self, host: str) -> str:
        """A simulated host's switch never fires: its changes held while it was away."""
        return ""


class SimulatedApplier:
    def __init__(self, journal: SimulatedJournal, spec: SweepSpec, state: _State, mount_point: str,
                 refuse: set[tuple[str, str]] | None = None) -> None:  # fmt: skip
        self.journal = journal
        self.spec = spec
        self.state = state
        self.mount_point = mount_point
        self.held: HeldChanges[int] = HeldChanges(self._revert)  # (host, knob) -> its journal id, if changed
        self._clients: list[int] = []
        self.refuse = refuse if refuse is not None else set()

    async def apply(self, config: Mapping[str, Value]) -> Applying:
        if refused := [f"{k}={v}" for k, v in config.items() if (k, str(v)) in self.refuse]:
            raise KnobError(f"the host refused {', '.join(refused)}")
        out = Applying()
        for group in SERVER_GROUPS:  # held while unchanged, as the real hosts' are
            await self.held.put_group([((self.spec.server, k), config[k]) for k in group if k in config], self._make)
        for knob in SERVER_KNOBS:
            if knob in config:
                self.state.server[knob] = out.effective[knob] = config[knob]
        self._release_mounts()
        for client in self.spec.clients:  # the clients' kernel settings, the same way
            for knob in CLIENT_HOST_KNOBS:
                if knob in config:
                    await self.held.put_group([((client, knob), config[knob])], self._make)
                    out.effective[knob] = config[knob]
        options = MountOptions.from_values({k: config[k] for k in MOUNT_KNOBS if k in config}).option_string()
        for client in self.spec.clients:
            self._clients.append(self.journal.apply(client, "test_mount", self.mount_point, "", options))
            if "read_ahead_kb" in config:
                self._clients.append(self.journal.apply(client, "read_ahead_kb", "/sys/class/bdi/0:99/read_ahead_kb",
                                                        world.TODAY["read_ahead_kb"], config["read_ahead_kb"]))
            out.negotiated[client] = {("vers" if k == "nfsvers" else k): str(config.get(k, world.TODAY[k]))
                                      for k in MOUNT_KNOBS}  # fmt: skip
            cap = int(config.get("max_block_size", world.TODAY["max_block_size"]))  # nfsd's cap, as a kernel's
            for size in ("rsize", "wsize"):
                out.negotiated[client][size] = str(min(int(out.negotiated[client][size]), cap))
        for knob in (*MOUNT_KNOBS, "read_ahead_kb"):
            if knob in config:
                out.effective[knob] = int(out.negotiated[self.spec.clients[0]][knob]) if knob in ("rsize", "wsize") else config[knob]
        self.state.mounts[self.mount_point] = {**self.state.server, **config}
        await asyncio.sleep(0)
        return out

    async def _make(self, key: Key, value: Value) -> list[int]:
        host, knob = key
        if str(value) == str(world.TODAY[knob]):
            return []  # today's value: nothing to journal
        return [self.journal.apply(host, knob, TARGETS.get(knob) or SYSCTL_FILES[knob], world.TODAY[knob], value)]

    async def _revert(self, jid: int) -> None:
        self.journal.revert(jid)

    def _release_mounts(self) -> None:
        for jid in reversed(self._clients):
            self.journal.revert(jid)
        self._clients.clear()
        self.state.mounts.pop(self.mount_point, None)

    async def forget_data(self, names: Sequence[str], *, avoid: str = "") -> str | None:
        return None  # simulated trials lay nothing out

    def remount_next(self) -> None:
        pass  # every simulated trial mounts afresh

    async def release_clients(self) -> None:
        self._release_mounts()
        await self.held.drop_all(lambda key: key[1] in CLIENT_HOST_KNOBS)

    async def release_all(self) -> None:
        await self.release_clients()
        await self.held.drop_all()


class SimulatedRunner:
    """Samples every interval from the world's throughput, with a ramp and noise that settles."""

    def __init__(self, hosts: SimulatedHosts, bus: EventBus) -> None:
        self.hosts = hosts
        self.bus = bus

    async def run(self, trial_id: int, workload: WorkloadSpec, clients: Sequence[ClientWork], *,
                  telemetry: Sequence[TelemetryTarget] = (), drop_caches_on: Sequence[str] = (),
                  monitor: Monitor | None = None, max_s: float | None = None, cancel: asyncio.Event | None = None,
                  engine: Engine = "agent", latency_from_s: float = 0.0) -> RunResult:  # fmt: skip
        if not clients:
            raise ValueError("a run needs at least one client")
        if gone := [h for h in [c.host for c in clients] + [t.host for t in telemetry] if h in self.hosts.gone]:
            await asyncio.sleep(0.5 / self.hosts.speed)
            return RunResult(error=RunError(gone[0], "no word from the load agent for 30 s: the host or the network "
                                                     "stopped answering"), ended="error")  # fmt: skip
        if self.hosts.fail_next:
            return RunResult(error=RunError(clients[0].host, self.hosts.fail_next.pop(0)), ended="error")
        rng = random.Random(f"{self.hosts.seed}-{trial_id}-{workload.kind}")
        result = RunResult(caches_dropped=tuple(drop_caches_on), start_skew_s=0.001, engine="agent")
        interval = workload.interval_s
        aggregator = IntervalAggregator([c.host for c in clients], interval)
        cap = max_s if max_s is not None else workload.duration_s or 60.0
        write = workload.kind in world.WRITES
        phased = workload.kind in PHASED  # runs its phases to the end, judged by operations
        server = next((t.host for t in telemetry if not world.is_client(t.host)), None)
        configs = {c.host: self.hosts.config_at(c.directory) for c in clients}
        op_bytes = world.OP_BYTES.get(workload.kind, 4096)
        rate = getattr(workload, "rate_iops", None)  # the goal's load: the agent holds each client to it
        jobs = int(getattr(workload, "jobs", 1))  # streams per client: a load ladder's rung
        streams = jobs * len(clients)
        served = {h: world.streams_bps(cfg, workload.kind, jobs, streams) for h, cfg in configs.items()}
        free = {h: bps * self.hosts.slow_path.get(h, 1.0) for h, bps in served.items()}
        # operations queue longer than the default model's when more streams share less throughput
        crowd = {h: jobs / world.IN_FLIGHT.get(workload.kind, 1) * world.throughput(cfg, workload.kind)
                 / max(served[h], 1.0) for h, cfg in configs.items()}  # fmt: skip
        level_of = {h: min(bps, rate * op_bytes) if rate else bps for h, bps in free.items()}
        busy = {h: level_of[h] / free[h] for h in free}  # a client held below what it could do queues less
        lat_rng = random.Random(f"{self.hosts.seed}-{trial_id}-{workload.kind}-latency")  # the throughput's draws stay
        jitter = {c.host: (1.0 + lat_rng.gauss(0, 0.04)) * crowd[c.host] for c in clients}  # a run's own latency luck
        curve = getattr(workload, "points", 0) > 0  # a directory study: entries so far on each sample
        plans: dict[str, tuple[list[SimPhase], int]] = {}
        if phased and not curve:  # each client's phases at its rate, under the plan's time limit
            files = int(getattr(workload, "count", 0) or getattr(workload, "files", 1))
            plans = {c.host: phase_plan(workload.kind, files, level_of[c.host] / op_bytes,
                                        getattr(workload, "time_limit_s", None)) for c in clients}  # fmt: skip
        phased_s = max((p[-1].start + p[-1].seconds for p, _ in plans.values()), default=PHASED_S)
        t, stop = 0.0, False
        while not stop:
            await asyncio.sleep(interval / self.hosts.speed)
            t = round(t + interval, 6)
            batch = []
            entries = int(getattr(workload, "count", 0) * min(t / PHASED_S, 1.0)) if curve else None
            for c in clients:
                level = level_of[c.host]
                phase = "create" if curve else ""
                if c.host in plans:  # the phase this interval ends in; nothing moves after the last one
                    steps = plans[c.host][0]
                    level *= t - interval < steps[-1].start + steps[-1].seconds
                    phase = next((p.name for p in steps if t - interval < p.start + p.seconds), "")
                noise = 0.12 * math.exp(-t / 6.0) + self.hosts.noise
                ramp = world.create_share(getattr(workload, "layout", "flat"), getattr(workload, "fanout", 1),
                                          entries) if entries is not None else 1 - math.exp(-t / 1.5)  # fmt: skip
                moved = max(0, int(level * ramp * (1 + rng.gauss(0, noise)) * interval))
                p50 = world.latency_median_ms(configs[c.host], workload.kind, busy[c.host]) * jitter[c.host] \
                    * (1 + lat_rng.gauss(0, 0.05))  # fmt: skip
                batch.append(Sample(c.host, t, interval, bytes_read=0 if write else moved,
                                    bytes_written=moved if write else 0, ops=max(1, moved // op_bytes),
                                    lat_p50_ms=p50, lat_p99_ms=p50 * math.exp(2.33 * world.latency_spread(configs[c.host])),
                                    phase=phase, count=entries))  # fmt: skip
            result.samples += batch
            for total in [x for s in batch for x in aggregator.add(s)]:
                result.totals.append(total)
                stop = stop or (monitor is not None and monitor(total))
            self.bus.publish(SamplesBatch(trial_id, tuple(batch)))
            if server is not None and round(t / interval) % round(1.0 / interval) == 0:
                total_bps = sum(s.throughput_bps for s in batch)
                tel = HostTelemetry(server, t, 1.0, disk_read_bps=0 if write else total_bps * 0.9,
                                    disk_write_bps=total_bps * 1.02 if write else 0, net_rx_bps=total_bps * 1.03,
                                    net_tx_bps=total_bps * 0.02, cpu_busy=0.3,
                                    extra=self._server_extras(configs, workload.kind, streams, batch, interval))  # fmt: skip
                tels = (tel, *(HostTelemetry(s.client, t, 1.0, net_rx_bps=s.throughput_bps, cpu_busy=0.1)
                               for s in batch if any(w.host == s.client for w in telemetry)))  # fmt: skip
                result.telemetry += tels
                self.bus.publish(TelemetryBatch(trial_id, tels))
            if cancel is not None and cancel.is_set():
                result.ended = "cancelled"
                break
            stop = stop or t >= cap or (phased and t >= phased_s)
        result.ended = result.ended or ("done" if phased and t >= phased_s else "monitor" if t < cap else "time cap")
        result.stop_s = 0.01
        for c in clients:
            mine = [s for s in result.samples if s.client == c.host]
            moved_r, moved_w = sum(s.bytes_read for s in mine), sum(s.bytes_written for s in mine)
            ops = sum(s.ops for s in mine)
            phases: dict[str, dict[str, float]] = {}
            plan, left = plans.get(c.host, ([], 0))
            for p in plan:  # the operations its samples moved in the phase, over the phase's time
                done = sum(s.ops for s in mine if s.phase == p.name)
                phases[p.name] = {"ops": done, "seconds": p.seconds, "ops_per_s": done / p.seconds, "planned": p.planned}
            if phased and curve:
                phases = {"create": {"ops": ops, "seconds": t}}
            hist = world.latency_hist(configs[c.host], workload.kind, sum(s.ops for s in mine if s.t > latency_from_s),
                                      lat_rng, jitter[c.host] * world.queueing(busy[c.host]))  # fmt: skip
            own = Latency.of(hist)
            result.summaries[c.host] = AgentSummary(
                c.host, workload.kind, "stopped", t, moved_r, moved_w, ops, 0, own.p50_ms if own else 0.0,
                own.p99_ms if own else 0.0, own.max_ms if own else 0.0,
                "dropped" if c.host in drop_caches_on else "warm", c.host in drop_caches_on, False, 0.1, 0.2 * t,
                phases=phases, lat_hist=hist, time_limit_s=getattr(workload, "time_limit_s", None) if plan else None,
                cut=tuple(p.name for p in plan if p.cut), left=left,
            )  # fmt: skip
        return result


    @staticmethod
    def _server_extras(configs: Mapping[str, Mapping[str, Value]], kind: str, streams: int, batch: Sequence[Sample],
                       interval: float) -> dict[str, float]:  # fmt: skip
        """nfsd's pool_stats rates as the telemetry agent reports them: arrived, and woken for those
        that found an idle thread (the rest waited for one); the export device's utilisation and queue."""
        config = next(iter(configs.values()), world.TODAY)
        arrived = sum(s.ops for s in batch) / interval
        util, queue = world.disk_figures(config, kind, arrived)
        disk = f"disk.{world.EXPORT_DEVICE}"
        return {"nfsd.packets_arrived_per_s": arrived, "nfsd.sockets_enqueued_per_s": arrived,
                "nfsd.threads_woken_per_s": arrived * (1.0 - world.waiting_share(config, streams)),
                "nfsd.threads": float(config.get("nfsd_threads", world.TODAY["nfsd_threads"])),
                f"{disk}.util": round(util, 4), f"{disk}.queue": round(queue, 3)}  # fmt: skip


class SimulatedHosts:
    """A HostSide whose hosts are simulated (see the module docstring)."""

    simulated = True

    def __init__(self, *, speed: float = 1.0, seed: int = 7, noise: float = 0.01) -> None:
        self.speed = speed  # simulated seconds per real second
        self.seed = seed
        self.noise = noise  # the steady run-to-run noise (relative stddev of a sample)
        self.trusted: set[str] = set()
        self.state = _State()
        self.gone: set[str] = set()  # hosts that stopped answering (tests take one away and bring it back)
        self.fail_next: list[str] = []  # reasons the next trials break with while every host answers
        self.refuse: set[tuple[str, str]] = set()  # (knob, value) the hosts refuse to apply, as a real one may
        self.slow_path: dict[str, float] = {}  # client -> share of its speed its path gives (tests of fairness)
        self.export_free_bytes = world.EXPORT_FREE_BYTES  # what the export has free (tests fill it)
        self.unwritable: set[str] = set()  # hosts whose login may not write the export (tests: root_squash)

    def config_at(self, directory: str) -> Mapping[str, Value]:
        """The configuration a client's I/O in ``directory`` runs with (today's outside a test mount)."""
        return next((c for m, c in self.state.mounts.items() if directory.startswith(m)), world.TODAY)

    def host_names(self) -> list[str]:
        return list(world.HOST_NAMES)

    async def discover(self, host: str) -> HostFacts:
        await asyncio.sleep(0.4 / self.speed)
        if host.startswith(("bad", "unreachable")):
            raise ConnectionRefused(host, 22)
        if host not in self.trusted:
            digest = b64encode(hashlib.sha256(host.encode()).digest()).decode().rstrip("=")
            raise UnknownHostKey(host, 22, "ssh-ed25519", f"SHA256:{digest}", f"{host} ssh-ed25519 AAAA…")
        return world.facts(host, world.HOST_NAMES.index(host) if host in world.HOST_NAMES else 20)

    async def trust(self, host: str, key: UnknownHostKey) -> None:
        self.trusted.add(host)

    def runner(self, bus: EventBus, python: Mapping[str, str]) -> SimulatedRunner:
        return SimulatedRunner(self, bus)

    async def answering(self, host: str) -> bool:
        await asyncio.sleep(0.05 / self.speed)
        return host not in self.gone

    async def tcp_ceiling(self, server: str, client: str, address: str, *, duration_s: float = 5.0,
                          python: str = "python3") -> TcpCeiling:  # fmt: skip
        await asyncio.sleep(duration_s / self.speed)
        return TcpCeiling(client, world.LINK_BPS, "iperf3")

    async def disk_ceiling(self, server: str, export: str, *, file_size: int, python: str = "python3") -> DiskCeiling:
        await asyncio.sleep(2.0 / self.speed)
        return DiskCeiling(server, world.DISK_WRITE_BPS, world.DISK_READ_BPS, "dropped")

    async def export_free(self, server: str, export: str) -> int:
        await asyncio.sleep(0.05 / self.speed)
        return self.export_free_bytes

    async def may_write(self, host: str, path: str) -> bool:
        await asyncio.sleep(0.05 / self.speed)
        return host not in self.unwritable

    async def round_trip(self, client: str, address: str) -> float | None:
        await asyncio.sleep(1.0 / self.speed)
        return world.RTT_MS

    async def flush_cost(self, server: str, export: str, *, python: str = "python3") -> float | None:
        await asyncio.sleep(0.5 / self.speed)
        return world.FLUSH_S

    def journal(self, store: Store, session_id: int, *, deadman_timeout: float) -> SimulatedJournal:
        return SimulatedJournal(store, session_id)

    async def prepare(self, spec: SweepSpec, journal: Journal, mount_point: str) -> Prepared:
        assert isinstance(journal, SimulatedJournal), "SimulatedHosts prepares with its own journal"
        applier = SimulatedApplier(journal, spec, self.state, mount_point, self.refuse)
        telemetry = [TelemetryTarget(h, Telemetry()) for h in (spec.server, *spec.clients)]
        return Prepared(applier, telemetry)

    async def leftovers(self, store: Store) -> list[Pending]:
        """Only what a simulated journal wrote: a real run's leftovers are never "reverted" here."""
        return [Pending(e, "still changed?") for e in store.unreverted_journal() if e.detail.startswith("simulated")]

    async def revert_leftover(self, store: Store, entry: JournalEntry) -> None:
        store.journal_update(entry.id, JournalState.REVERTED, "reverted after a crash (simulated)")

    async def close(self) -> None:
        self.state = _State()
