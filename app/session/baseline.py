"""What the hardware can do and what today's configuration gets, before any knob is changed.

The ceilings measured here are handed to the run (``Measured``), so the session keeps them
and nothing is measured twice; today's figures run on the clients' own mounts. The steps
are known before anything runs (``baseline_steps``), so a face can say what will load which
host and for how long before the admin agrees, and each step is announced on the bus.

Beside the ceilings the steps take what the diagnosis (app.session.diagnosis) reads: each
client's round trip to the server after its network step, the export's flush cost after
the disk step, and while today's figures run, the server's and clients' telemetry (nfsd's
thread waits, CPU). Seconds each; a probe that cannot say leaves its figure out.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.events import EventBus, Level, Message
from app.facts.model import HostFacts
from app.recommend.telemetry import ARRIVED, ENQUEUED, WOKEN, TelemetryDigest
from app.runner import ClientWork, RunResult, TelemetryTarget
from app.session import topology
from app.session.plan import PlanChoices, Where
from app.sweep.host_side import HostSide
from app.sweep.spec import SweepSpec
from app.vocabulary import workload_label
from experiments.plan import Plan
from experiments.workloads import MIB, Telemetry


@dataclass(frozen=True, slots=True)
class Ceiling:
    what: str  # "network client1 → nfs-server (iperf3)", "nfs-server disk, sequential read"
    bps: float


@dataclass(frozen=True, slots=True)
class LoadSeen:
    """What the hosts did while one of today's figures ran (their telemetry, after the warm-up)."""

    thread_wait: float | None = None  # share of nfsd requests that found no idle thread
    server_cpu: float | None = None  # 0..1
    client_cpu: float | None = None  # 0..1, the busiest client's


@dataclass(frozen=True, slots=True)
class Probes:
    """The baseline's figures as numbers, for the diagnosis; a figure not measured is left out."""

    tcp_bps: dict[str, float] = field(default_factory=dict)  # client -> TCP ceiling to the server
    rtt_ms: dict[str, float] = field(default_factory=dict)  # client -> round trip to the server
    disk_read_bps: float | None = None
    disk_write_bps: float | None = None
    flush_s: float | None = None  # one synced small write on the export's file system
    load: dict[str, LoadSeen] = field(default_factory=dict)  # workload -> the hosts during today's run


@dataclass(frozen=True, slots=True)
class Baseline:
    ceilings: tuple[Ceiling, ...]
    today: dict[str, float]  # workload kind -> throughput with today's configuration
    probes: Probes = field(default_factory=Probes)


# What a step costs besides its measuring time: starting tools and agents, dropping caches.
STEP_OVERHEAD_S = 5.0
PROBE_S = 2.0  # a step's probe: the round trip's pings, the flush cost's synced writes
TELEMETRY_INTERVAL_S = 1.0  # today's runs are watched once a second: thread waits and CPU are means
# The disk step writes then reads its file; planned at a single disk's pace, since its speed is what it finds out.
DISK_PLAN_BPS = 100e6


@dataclass(frozen=True, slots=True)
class BaselineStep:
    """One measurement of the baseline: on which hosts, what load, about how long."""

    hosts: tuple[str, ...]  # the hosts it loads
    what: str  # what it measures
    load: str  # what it does on the hosts
    expected_s: float


@dataclass(frozen=True, slots=True)
class BaselineStepStarted:
    """Published on the bus as each step starts."""

    index: int  # 0-based
    total: int
    step: BaselineStep


def _disk_file_size(defaults: PlanChoices) -> int:
    return min(defaults.file_size, 256 * MIB)


def baseline_steps(where: Where, workloads: Sequence[str], defaults: PlanChoices,
                   ceiling_s: float) -> tuple[BaselineStep, ...]:  # fmt: skip
    """The steps ``measure_baseline`` takes, in its order, with the time each is expected to take."""
    steps = [BaselineStep((c, where.server), f"network {c} → {where.server}",
                          f"TCP traffic at full speed between {c} and {where.server} (iperf3 where both have it, else "
                          "the load agent), then a few pings for the round trip",
                          ceiling_s + PROBE_S + STEP_OVERHEAD_S) for c in where.clients]  # fmt: skip
    size = _disk_file_size(defaults)
    steps.append(BaselineStep((where.server,), f"{where.server} disk, sequential write and read",
                              f"writes, then reads back a {size // MIB} MiB test file in {where.export or 'the export'}, "
                              "then times a few small writes each synced to disk (the flush cost; all removed "
                              "afterwards)", 2 * size / DISK_PLAN_BPS + PROBE_S + STEP_OVERHEAD_S))  # fmt: skip
    t = defaults.timing()
    for w in workloads:
        steps.append(BaselineStep((where.server, *where.clients), f"today's configuration, {workload_label(w)}",
                                  f"drops the page caches on every host, then runs {workload_label(w)} on the "
                                  "clients' own mounts of the export, watching nfsd's threads and every host's CPU "
                                  "(test files removed afterwards)", t.warmup_s + t.min_measure_s + STEP_OVERHEAD_S))  # fmt: skip
    return tuple(steps)


async def measure_baseline(hosts: HostSide, bus: EventBus, where: Where, facts: Mapping[str, HostFacts],
                           workloads: Sequence[str], defaults: PlanChoices,
                           ceiling_s: float) -> tuple[Baseline, list[tuple[str, dict[str, Any]]]]:  # fmt: skip
    """(what to show, the ceilings as the session stores them)."""
    steps = baseline_steps(where, workloads, defaults, ceiling_s)
    started = 0

    def announce() -> None:  # the steps run in baseline_steps' order
        nonlocal started
        bus.publish(BaselineStepStarted(started, len(steps), steps[started]))
        started += 1

    ceilings: list[Ceiling] = []
    measured: list[tuple[str, dict[str, Any]]] = []
    tcp_bps: dict[str, float] = {}
    rtt_ms: dict[str, float] = {}
    address = where.server_address or where.server
    for c in where.clients:
        announce()
        tcp = await hosts.tcp_ceiling(where.server, c, address, duration_s=ceiling_s)
        ceilings.append(Ceiling(f"network {c} → {where.server} ({tcp.tool})", tcp.bps))
        measured.append((c, {"tcp_bps": tcp.bps, "tool": tcp.tool}))
        tcp_bps[c] = tcp.bps
        if (rtt := await hosts.round_trip(c, address)) is not None:
            rtt_ms[c] = rtt
    announce()
    disk = await hosts.disk_ceiling(where.server, where.export, file_size=_disk_file_size(defaults))
    ceilings += [Ceiling(f"{where.server} disk, sequential read", disk.read_bps),
                 Ceiling(f"{where.server} disk, sequential write", disk.write_bps)]  # fmt: skip
    measured.append((where.server, {"disk_read_bps": disk.read_bps, "disk_write_bps": disk.write_bps,
                                    "cache_mode": disk.cache_mode}))  # fmt: skip
    flush_s = await hosts.flush_cost(where.server, where.export)
    today: dict[str, float] = {}
    load: dict[str, LoadSeen] = {}
    for i, w in enumerate(workloads):
        announce()
        if (ran := await _measure_today(hosts, bus, where, facts, w, defaults, trial_id=-1 - i)) is not None:
            today[w], load[w] = ran
    probes = Probes(tcp_bps, rtt_ms, disk.read_bps, disk.write_bps, flush_s, load)
    return Baseline(tuple(ceilings), today, probes), measured


async def _measure_today(hosts: HostSide, bus: EventBus, where: Where, facts: Mapping[str, HostFacts], workload: str,
                         defaults: PlanChoices, trial_id: int) -> tuple[float, LoadSeen] | None:  # fmt: skip
    """Today's configuration: the workload on the clients' own mounts of the export, and what the hosts did.

    ``trial_id`` is negative: baseline samples are shown live, never stored as a trial's.
    """
    work = [ClientWork(c, mounts[0].mount_point) for c in where.clients
            if (mounts := topology.own_mounts(facts[c], where.export))]  # fmt: skip
    if not work:
        bus.publish(Message(Level.WARNING, "Today's configuration was not measured",
                            "no client mounts the export now; the sweep measures on its own mounts"))
        return None
    t = defaults.timing()
    spec = SweepSpec(where.server, where.clients, where.export, Plan({}, (workload,), timing=t),
                     file_size=defaults.file_size)  # fmt: skip
    watch = Telemetry(interval_s=TELEMETRY_INTERVAL_S)  # CPU, and nfsd's pools on the server: no device named
    result = await hosts.runner(bus, {}).run(
        trial_id, spec.workload(workload), work, drop_caches_on=[where.server, *where.clients],
        telemetry=[TelemetryTarget(h, watch) for h in (where.server, *(w.host for w in work))],
        monitor=lambda s: s.t >= t.warmup_s + t.min_measure_s, max_s=t.warmup_s + t.max_measure_s + 5.0,
    )  # fmt: skip
    kept = [s.throughput_bps for s in result.totals if s.t > t.warmup_s]
    if result.error is not None or not kept:
        bus.publish(Message(Level.WARNING, f"Today's {workload} could not be measured",
                            str(result.error or "no samples after the warm-up")))
        return None
    return statistics.fmean(kept), load_seen(result, where.server, t.warmup_s)


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def load_seen(result: RunResult, server: str, warmup_s: float) -> LoadSeen:
    """The hosts' telemetry of one run after its warm-up, boiled down: thread waits (the share the
    recommendation's evidence uses, app.recommend.telemetry) and CPU."""
    rows = [r for r in result.telemetry if r.t > warmup_s] or list(result.telemetry)
    mine = [r for r in rows if r.host == server]

    def extra(key: str) -> float | None:
        return _mean([float(v) for r in mine if isinstance(v := r.extra.get(key), int | float)])

    waits = TelemetryDigest(arrived_per_s=extra(ARRIVED), enqueued_per_s=extra(ENQUEUED),
                            woken_per_s=extra(WOKEN)).waiting_share  # fmt: skip
    clients: dict[str, list[float]] = {}
    for r in rows:
        if r.host != server:
            clients.setdefault(r.host, []).append(r.cpu_busy)
    busiest = max((m for v in clients.values() if (m := _mean(v)) is not None), default=None)
    return LoadSeen(waits, _mean([r.cpu_busy for r in mine]), busiest)
