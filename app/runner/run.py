"""Run one workload on N clients at once, with telemetry beside it, and stream the samples.

Start alignment: every agent (workload and telemetry) is started with ``wait_go``; it
prepares (lays out its files), says ``ready`` and waits. Once all are ready the caches
are dropped where asked, and one ``go`` line is written to all agents concurrently, so
their clocks start within the spread of one SSH write (milliseconds on a LAN) whatever
the hosts' clocks say. Samples carry ``t`` since each agent's own start.

Samples and telemetry are published on the EventBus in batches (one per interval) as
SamplesBatch / TelemetryBatch; a SampleWriter attached to the bus stores them, so
whatever arrived before a failure is kept. Stopping is closing the agents' stdin.

Engines: the load is the embedded agent, or fio where the client has it (FioHandle,
same face). "auto" takes fio only when the spec translates exactly and every client
has fio, so all clients of one run measure with the same tool.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from app.events import EventBus, SamplesBatch, TelemetryBatch
from app.hosts import HostPool
from app.runner.agent_handle import AgentHandle
from app.runner.caches import drop_caches
from app.runner.errors import RunError
from app.runner.fio_handle import FioHandle, find_fio
from app.store import SampleWriter
from experiments.agent_protocol import AgentEvent, AgentSummary, IntervalAggregator
from experiments.fio import fio_exact, to_fio_job
from experiments.samples import HostTelemetry, Sample
from experiments.workloads import Telemetry, WorkloadSpec

Monitor = Callable[[Sample], bool]  # sees every summed interval; True: stop now
Engine = Literal["agent", "fio", "auto"]
ENGINES: tuple[str, ...] = get_args(Engine)
Worker = AgentHandle | FioHandle


@dataclass(frozen=True, slots=True)
class ClientWork:
    """Where one client runs the workload: a directory on its test mount."""

    host: str
    directory: str
    keep: str = ""  # the directory its laid-out data stays in for the next trial (app.runner.kept_data); "" none


@dataclass(frozen=True, slots=True)
class TelemetryTarget:
    host: str
    spec: Telemetry


@dataclass
class RunResult:
    samples: list[Sample] = field(default_factory=list)  # per client, as they came
    totals: list[Sample] = field(default_factory=list)  # summed over clients per interval
    telemetry: list[HostTelemetry] = field(default_factory=list)
    summaries: dict[str, AgentSummary] = field(default_factory=dict)
    error: RunError | None = None
    ended: str = ""  # done | monitor | time cap | cancelled | error
    start_skew_s: float | None = None  # spread of the agents' start times (hosts' clocks)
    stop_s: float | None = None  # from the stop request until every agent had left
    caches_dropped: tuple[str, ...] = ()
    warnings: list[str] = field(default_factory=list)
    workdirs: dict[str, str] = field(default_factory=dict)  # client -> the agent's own directory
    engine: str = "agent"  # what produced the load: "agent" or "fio"

    @property
    def ok(self) -> bool:
        return self.error is None


class WorkloadRunner:
    def __init__(
        self,
        pool: HostPool,
        bus: EventBus,
        *,
        python: Mapping[str, str] | None = None,
        prepare_timeout: float = 600.0,
        silence_timeout: float = 30.0,
    ) -> None:
        self.pool = pool
        self.bus = bus
        self.python = dict(python or {})  # host -> interpreter path (from facts)
        self.prepare_timeout = prepare_timeout
        self.silence_timeout = silence_timeout  # no line at all for this long: the host is gone

    async def run(
        self,
        trial_id: int,
        workload: WorkloadSpec,
        clients: Sequence[ClientWork],
        *,
        telemetry: Sequence[TelemetryTarget] = (),
        drop_caches_on: Sequence[str] = (),
        monitor: Monitor | None = None,
        max_s: float | None = None,
        stall_timeout: float | None = None,
        writer: SampleWriter | None = None,
        cancel: asyncio.Event | None = None,
        engine: Engine = "agent",
        latency_from_s: float = 0.0,
    ) -> RunResult:
        """Run ``workload`` on every client at once; never raises for a host's failure.

        The result's ``error`` says why it ended early; ``samples`` hold what came
        before. ``max_s`` caps the measured time; ``monitor`` may end it sooner.
        ``engine``: "agent", "fio" (ValueError if the spec has no fio job) or "auto". ``stall_timeout``:
        no I/O for this long fails the run on either engine (None: the agent's default,
        fio_handle.STALL_TIMEOUT_S). ``latency_from_s``: the warm-up, whose latencies stay out
        of each client's summary histogram (the measured window's, experiments.latency).
        """
        if not clients:
            raise ValueError("a run needs at least one client")
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
        if engine == "fio":
            to_fio_job(workload, "/")  # raises for a spec fio cannot run
        detach = writer.attach(self.bus) if writer is not None else None
        run = _Run(self, trial_id, workload, clients, telemetry, monitor)
        try:
            run.fio_paths = await run.choose_engine(engine)
            await run.execute(drop_caches_on, max_s, stall_timeout, cancel, latency_from_s)
        finally:
            run.publish()
            if detach is not None:
                detach()
        return run.result


class _Run:
    def __init__(
        self,
        runner: WorkloadRunner,
        trial_id: int,
        workload: WorkloadSpec,
        clients: Sequence[ClientWork],
        telemetry: Sequence[TelemetryTarget],
        monitor: Monitor | None,
    ) -> None:
        self.runner = runner
        self.trial_id = trial_id
        self.workload = workload
        self.clients = list(clients)
        self.telemetry = list(telemetry)
        self.monitor = monitor
        self.result = RunResult()
        self.aggregator = IntervalAggregator([c.host for c in clients], workload.interval_s)
        self.pending_samples: list[Sample] = []
        self.pending_telemetry: list[HostTelemetry] = []
        self.wake = asyncio.Event()
        self.monitor_says_stop = False
        self.agents: list[Worker] = []
        self.workers: list[Worker] = []
        self.fio_paths: dict[str, str] | None = None  # client -> fio's path when fio is the engine

    async def choose_engine(self, engine: Engine) -> dict[str, str] | None:
        """fio's path on every client when fio runs the load, None for the agent."""
        if engine == "agent" or (engine == "auto" and not fio_exact(self.workload)):
            return None
        hosts = list(dict.fromkeys(c.host for c in self.clients))
        found = await asyncio.gather(*(find_fio(self.runner.pool[h]) for h in hosts))
        paths = {h: p for h, p in zip(hosts, found, strict=True) if p}
        if len(paths) == len(hosts):
            self.result.engine = "fio"
            if not fio_exact(self.workload):
                self.result.warnings.append(f"fio runs an approximation of {self.workload.kind}; see the job file's note")
            return paths
        if engine == "fio":
            missing = [h for h in hosts if h not in paths]
            self.result.error = RunError(", ".join(missing), "fio is not installed here (apt install fio), or not on PATH")
            self.result.ended = "error"
        return None

    def on_event(self, agent: object, event: AgentEvent) -> None:
        if isinstance(event, Sample):
            self.result.samples.append(event)
            self.pending_samples.append(event)
            for total in self.aggregator.add(event):
                self._total(total)
        elif isinstance(event, HostTelemetry):
            self.result.telemetry.append(event)
            self.pending_telemetry.append(event)
        else:
            self.wake.set()  # errors, summaries, ready: the loop looks at once

    def _total(self, total: Sample) -> None:
        self.result.totals.append(total)
        if self.monitor is not None and not self.monitor_says_stop and self.monitor(total):
            self.monitor_says_stop = True
            self.wake.set()

    def publish(self) -> None:
        if self.pending_samples:
            batch, self.pending_samples = self.pending_samples, []
            self.runner.bus.publish(SamplesBatch(self.trial_id, tuple(batch)))
        if self.pending_telemetry:
            tel, self.pending_telemetry = self.pending_telemetry, []
            self.runner.bus.publish(TelemetryBatch(self.trial_id, tuple(tel)))

    def _first_error(self) -> RunError | None:
        # a workload's own error is the cause; a telemetry agent's is reported after it
        for agent in [*self.workers, *self.agents]:
            if agent.error is not None:
                return agent.error
        return None

    async def execute(
        self, drop_on: Sequence[str], max_s: float | None, stall: float | None, cancel: asyncio.Event | None,
        latency_from_s: float = 0.0,
    ) -> None:
        pool, python = self.runner.pool, self.runner.python
        control: dict[str, object] = {"wait_go": True}
        if latency_from_s > 0:
            control["latency_from"] = latency_from_s
        if stall is not None:
            control["stall_timeout"] = stall
        if self.result.error is not None:
            return  # the chosen engine cannot run here
        for c in self.clients:
            if self.fio_paths is not None:
                self.workers.append(FioHandle(pool[c.host], self.workload, c.directory, self.on_event,
                                              fio=self.fio_paths[c.host], stall_s=stall, latency_from_s=latency_from_s))
                continue
            kept = {"keep_data": c.keep} if c.keep else {}  # the agent keeps only what it lays out
            cfg = self.workload.to_agent_config(c.directory, **control, **kept)
            self.workers.append(AgentHandle(pool[c.host], cfg, self.on_event, python=python.get(c.host, "python3")))
        observers = [
            AgentHandle(pool[t.host], t.spec.to_agent_config(wait_go=True), self.on_event,
                        python=python.get(t.host, "python3"), role="telemetry")
            for t in self.telemetry
        ]  # fmt: skip
        self.agents = [*self.workers, *observers]
        try:
            await asyncio.gather(*(a.start() for a in self.agents))
            if await self._all_ready(cancel):
                await self._drop_caches(drop_on)
            if self._first_error() is None and not self._cancelled(cancel):
                await asyncio.gather(*(a.go() for a in self.agents))
                await self._measure(max_s, cancel)
        except asyncio.CancelledError:
            self.result.ended = "cancelled"
            raise
        finally:
            await self._stop_all()
            self._finish()

    def _cancelled(self, cancel: asyncio.Event | None) -> bool:
        if cancel is not None and cancel.is_set():
            self.result.ended = "cancelled"
            return True
        return False

    async def _all_ready(self, cancel: asyncio.Event | None) -> bool:
        deadline = time.monotonic() + self.runner.prepare_timeout
        while not all(a.ready.is_set() for a in self.agents):
            if self._first_error() is not None or self._cancelled(cancel):
                return False
            now = time.monotonic()
            # a preparing agent sends progress every interval (fio's layout is silent): silence means the host is gone
            if silent := [a.host for a in self.agents if isinstance(a, AgentHandle) and not a.ready.is_set()
                          and now - a.last_line > self.runner.silence_timeout]:  # fmt: skip
                self.workers[0]._fail(RunError(", ".join(dict.fromkeys(silent)), self._silence_words(), lost=True))
                return False
            if now > deadline:
                slow = [a.host for a in self.agents if not a.ready.is_set()]
                self.workers[0]._fail(RunError(
                    ", ".join(slow), f"the load agent did not finish preparing within {self.runner.prepare_timeout:.0f} s",
                ))  # fmt: skip
                return False
            self.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), 0.25)
            self.publish()
        return self._first_error() is None

    async def _drop_caches(self, hosts: Sequence[str]) -> None:
        names = list(dict.fromkeys(hosts))
        results = await asyncio.gather(*(drop_caches(self.runner.pool[h]) for h in names), return_exceptions=True)
        for _host, outcome in zip(names, results, strict=True):
            if isinstance(outcome, RunError):
                self.workers[0]._fail(outcome)
            elif isinstance(outcome, BaseException):
                raise outcome
        self.result.caches_dropped = tuple(names)
        for w in self.workers:
            if isinstance(w, FioHandle) and w.host in names:
                w.caches_dropped = True  # the agent knows this itself; fio's summary is told

    async def _measure(self, max_s: float | None, cancel: asyncio.Event | None) -> None:
        started = time.monotonic()
        while True:
            self.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), self.workload.interval_s)
            self.publish()
            now = time.monotonic()
            if self._first_error() is not None:
                self.result.ended = "error"
                return
            # an agent's summary ends its workload; its cleanup is waited for apart (AgentHandle.wait), not
            # under max_s: a cap on the measuring must not leave a slow disk's files behind
            if all(w.ended.is_set() or (isinstance(w, AgentHandle) and w.summary is not None) for w in self.workers):
                self.result.ended = "done"
                return
            if self.monitor_says_stop:
                self.result.ended = "monitor"
                return
            if max_s is not None and now - started >= max_s:
                self.result.ended = "time cap"
                return
            if self._cancelled(cancel):
                return
            silent = [a.host for a in self.agents if now - a.last_line > self.runner.silence_timeout]
            if silent:
                self.workers[0]._fail(RunError(", ".join(dict.fromkeys(silent)), self._silence_words(), lost=True))
                self.result.ended = "error"
                return

    def _silence_words(self) -> str:
        return f"no word from the load agent for {self.runner.silence_timeout:.0f} s: the host or the network stopped answering"

    async def _stop_all(self) -> None:
        t = time.monotonic()
        for a in self.agents:
            a.stop()
        await asyncio.gather(*(a.wait() for a in self.agents))
        self.result.stop_s = time.monotonic() - t

    def _finish(self) -> None:
        for total in self.aggregator.flush():
            self.result.totals.append(total)
        r = self.result
        r.error = self._first_error() or r.error
        if r.error is not None:
            r.ended = "error"
        r.summaries = {a.host: a.summary for a in self.workers if a.summary is not None}
        starts = [a.started_epoch for a in self.workers if a.started_epoch is not None]
        r.start_skew_s = max(starts) - min(starts) if len(starts) == len(self.workers) and starts else None
        r.workdirs.update({a.host: a.workdir for a in self.workers if a.workdir})
        for a in self.agents:
            r.warnings += [f"{a.host}: {w}" for w in a.warnings]
            r.warnings += [f"{a.host}: cleanup: {p}" for p in a.cleanup_problems]
