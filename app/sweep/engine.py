"""The trial loop: configurations from the strategy → knobs → run → summary → store.

One trial: apply the configuration (journal first; a fresh test mount on every client)
→ drop caches on server and clients → warm-up → measure until steady or the cap →
summarise the summed throughput → store the trial as ok or broken (a host error, or
faster than the link can carry: a cache answered). A configuration is repeated until
the RepeatPolicy is satisfied. Every change is reverted at the end, on cancel and on
error. A resumed session replays its stored results into the strategy.

Entry: ``SweepEngine(store, hosts, bus, spec, measured=…).run()`` opens a new session
(with what was measured before it, so nothing is measured twice);
``SweepEngine.for_session(store, hosts, bus, id).run()`` resumes a stored one. ``hosts``
is the host side (``SshHosts`` over a pool; a bare ``HostPool`` means that).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from app.events import EventBus, Level, Message
from app.hosts import HostError, HostPool
from app.recommend import save
from app.recommend.ceilings import cache_answered
from app.recommend.context import recommend_session
from app.recommend.model import Ceilings
from app.knobs.deadman import MAX_TIMEOUT
from app.knobs.model import KnobError
from app.knobs.recovery import Pending
from app.runner import ClientWork, RunError, TelemetryTarget
from app.store import SessionState, Store, TrialState
from app.recommend.context import ceiling_mtus
from app.sweep.host_side import Applier, HostSide, Journal
from app.sweep.session_facts import (
    Measured,
    measure_ceilings,
    measure_tcp_ceilings,
    snapshot_hosts,
    stored_ceilings,
)
from app.sweep.ssh_hosts import SshHosts
from app.sweep.events import (
    Decision,
    HostLost,
    JournalChanged,
    Progress,
    SweepFinished,
    SweepStarted,
    TrialFinished,
    TrialStarted,
)
from app.sweep.figures import phase_figures, phased_problem
from app.sweep.spec import PHASED, PINNED, SweepSpec, workload_kind
from app.vocabulary import figure_text
from experiments.estimate import estimate_duration
from experiments.fairness import Fairness, run_fairness
from experiments.latency import Latency, clients_latency
from experiments.plan import Config
from experiments.samples import Sample
from experiments.stability import SteadyStateDetector, summarize
from experiments.statistics import RepeatPolicy, repeat_decision
from experiments.strategies import TrialResult, make_strategy
from experiments.topups import TOPUP_TRIES, short_of_runs, topup_budget, topup_order

log = logging.getLogger(__name__)

INTERRUPTED = "interrupted"  # reason prefix Store.recover_interrupted writes
MAX_BROKEN_IN_A_ROW = 2  # a configuration that breaks twice is not tried again
SKIPPED = "skipped by the admin"  # reason of a trial whose measuring was ended early
WAIT_POLL_S = 5.0  # how often a waiting sweep asks a lost host again
BLAMED = "recorded against it, as what may have broken the host"  # such a configuration is not tried again
REFUSED = "applying the configuration failed"  # a host refused it (a bad value, a shared transport): its own


class _HostGone(Exception):
    """A host stopped answering during a trial: the sweep cannot go on as it was."""

    def __init__(self, lost: HostLost) -> None:
        super().__init__(f"{lost.host} stopped answering {lost.doing}")
        self.lost = lost


@dataclass
class _Measure:
    """The monitor of one trial: warm-up first, then stop when steady or at the cap."""

    warmup_s: float
    min_s: float
    max_s: float
    detector: SteadyStateDetector
    skip: asyncio.Event | None = None

    def __call__(self, total: Sample) -> bool:
        if self.skip is not None and self.skip.is_set():
            return True
        if total.t <= self.warmup_s:
            return False
        measured = total.t - self.warmup_s
        steady = self.detector.push(total.t, total.throughput_bps)
        return measured >= self.max_s or (steady and measured >= self.min_s)


class SweepEngine:
    def __init__(
        self,
        store: Store,
        hosts: HostSide | HostPool,
        bus: EventBus,
        spec: SweepSpec,
        *,
        deadman_timeout: float = 60.0,
        cancel: asyncio.Event | None = None,
        measured: Measured | None = None,
    ) -> None:
        self.store = store
        self.hosts: HostSide = SshHosts(hosts) if isinstance(hosts, HostPool) else hosts
        self.bus = bus
        self.spec = spec
        self.deadman_timeout = deadman_timeout
        self.cancel = cancel or asyncio.Event()
        self.measured = measured or Measured()
        self.runner = self.hosts.runner(bus, spec.python)
        self.policy = RepeatPolicy(spec.plan.max_rel_stddev, spec.plan.min_runs, spec.plan.max_runs)
        self.session_id: int | None = None
        self.link_bps = spec.link_bps  # per client: given by the admin, else the measured TCP ceiling
        self.link_measured = False
        self.ceilings = Ceilings(clients=len(spec.clients))
        self._durations: list[float] = []
        # Hooks for a GUI: cleared = pause before the next trial; set = end this trial's measuring now.
        self.go_on = asyncio.Event()
        self.go_on.set()
        self.skip = asyncio.Event()
        self._done = 0
        self._total = 0
        self._topups = 0
        # How to go on when a host stops answering: the CLI stops (resumable); the wizard asks the admin.
        self.decide_host_lost: Callable[[HostLost], Awaitable[Decision]] | None = None

    # -- sessions -------------------------------------------------------------

    @classmethod
    def for_session(cls, store: Store, hosts: HostSide | HostPool, bus: EventBus, session_id: int,
                    **kw: Any) -> SweepEngine:  # fmt: skip
        """An engine that resumes a stored session with the sweep it was started with."""
        session = store.get_session(session_id)
        if not isinstance(session.plan, dict) or "sweep" not in session.plan:
            raise ValueError(f"session {session_id} was not made by a sweep: nothing to resume")
        engine = cls(store, hosts, bus, SweepSpec.from_json(session.plan), **kw)
        engine.session_id = session_id
        return engine

    def _open_session(self) -> tuple[int, int | None]:
        hosts = [self.spec.server, *self.spec.clients]
        if self.session_id is None:
            sid = self.store.create_session(hosts, plan=self.spec.to_json(), notes="ladder" if self.spec.ladder else "dirs" if self.spec.dirs else "sweep")
            plan_id: int | None = self.store.save_plan(sid, self.spec.to_json())
            self.measured.record(self.store, sid)
        else:
            sid = self.session_id
            self.store.recover_interrupted()
            self.store.set_session_state(sid, SessionState.RUNNING)
            plans = self.store.plans(sid)
            plan_id = plans[-1].id if plans else None
        self.session_id = sid
        return sid, plan_id

    def stored_results(self, kind: str) -> list[TrialResult]:
        """Finished trials of one workload as the strategy sees them; interrupted ones are redone."""
        assert self.session_id is not None
        out = []
        for t in self.store.trials(self.session_id):
            if not isinstance(t.workload, dict) or t.workload.get("kind") != kind:
                continue
            if t.state == TrialState.OK and isinstance(t.summary, dict) and "mean" in t.summary:
                out.append(TrialResult(Config(t.config), float(t.summary["mean"])))
            elif t.state == TrialState.BROKEN and not t.reason.startswith(INTERRUPTED):
                out.append(TrialResult(Config(t.config), None))
        return out

    # -- the loop -------------------------------------------------------------

    async def run(self) -> int:
        """Run (or resume) the sweep; returns the session id. Reverts everything on the way out."""
        sid, plan_id = self._open_session()
        writer = self.store.sample_writer()
        detach = writer.attach(self.bus)
        journal = self.hosts.journal(self.store, sid, deadman_timeout=self.deadman_timeout)
        state = SessionState.INTERRUPTED
        problems: list[str] = []
        paused_for = ""
        try:
            if self.store.unreverted_journal():
                await self._settle_leftovers(sid)
            await snapshot_hosts(self.store, self.hosts, sid, self.spec)
            await self._measure_ceilings(sid)
            paused_for = await self._sweep_until_lost(sid, plan_id, journal)
            if paused_for:
                state = SessionState.INTERRUPTED
            else:
                state = SessionState.CANCELLED if self.cancel.is_set() else SessionState.COMPLETE
        except (asyncio.CancelledError, KeyboardInterrupt):
            state = SessionState.CANCELLED
            raise
        finally:
            try:
                problems = await asyncio.shield(journal.close())
            except Exception as exc:  # the dead-man switches still hold the way back
                problems = [f"reverting failed: {exc}"]
            for p in problems:
                self.bus.publish(Message(Level.ERROR, "A host change could not be put back", p))
            self._journal_changed(sid)
            detach()
            writer.close()
            self.store.set_session_state(sid, state)
            if state is SessionState.COMPLETE and not (self.spec.ladder or self.spec.dirs):  # a study recommends no knob
                self._recommend(sid)
            self.bus.publish(SweepFinished(sid, state.value, self._done, tuple(problems), self._topups, paused_for))
        return sid

    async def _sweep_until_lost(self, sid: int, plan_id: int | None, journal: Journal) -> str:
        """The sweep, going on after a lost host as decided; returns the host it stopped for ("" if none)."""
        while True:
            try:
                await self._sweep(sid, plan_id, journal)
                return ""
            except _HostGone as gone:
                lost = gone.lost
                decision: Decision = "stop"
                if self.decide_host_lost is not None:
                    decision = await self.decide_host_lost(lost)
                if decision == "drop" and lost.droppable:
                    self.spec = replace(self.spec, clients=tuple(c for c in self.spec.clients if c != lost.host))
                    self.bus.publish(Message(Level.WARNING, f"Going on without {lost.host}",
                                             "Its changes are put back by its dead-man switch when it answers again; "
                                             "the figures from here on come from fewer clients."))  # fmt: skip
                    continue
                if decision == "wait" and await self._wait_for(lost.host):
                    continue
                if self.cancel.is_set():
                    return ""
                self.bus.publish(Message(
                    Level.ERROR, f"The sweep stopped: {lost.host} stopped answering {lost.doing}",
                    f"Nothing more was run. Its changes are put back by its dead-man switch within "
                    f"{self.deadman_timeout:.0f} s of the last heartbeat; the other hosts' are put back now. "
                    f"When {lost.host} answers again, go on with `nfs-tuner sweep --resume {sid}`: "
                    "the interrupted trial runs again.",
                ))  # fmt: skip
                return lost.host

    async def _wait_for(self, host: str) -> bool:
        """Wait until the host answers again (True), or the admin cancels (False)."""
        self.bus.publish(Message(Level.INFO, f"Waiting for {host} to answer again"))
        while not self.cancel.is_set():
            if await self.hosts.answering(host):
                return True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.cancel.wait(), WAIT_POLL_S)
        return False

    async def _gone_host(self) -> str | None:
        """The first host of the sweep that does not answer now, if any."""
        names = [self.spec.server, *self.spec.clients]
        answers = await asyncio.gather(*(self.hosts.answering(h) for h in names))
        return next((h for h, ok in zip(names, answers, strict=True) if not ok), None)

    async def _settle_leftovers(self, sid: int) -> None:
        """Before a resume: the killed run's changes must be back, or its switch fires mid-trial.

        A switch still armed restores its host within its timeout, so wait for it (a new
        change would be undone under a running trial); what is still changed after that,
        from this session, is put back here. Other sessions' leftovers stay the admin's call.
        """
        pending = await self.hosts.leftovers(self.store)
        # The killed run's switch may have had any timeout an admin can choose, not this run's; another
        # session's armed switch is waited for as long as one of this run's own would take.
        now = time.monotonic()
        deadlines = {sid: now + 2 * MAX_TIMEOUT + 30, None: now + 2 * self.deadman_timeout + 30}

        def waiting(found: list[Pending]) -> bool:
            return any(p.status.startswith("switch armed") and time.monotonic() < deadlines.get(p.entry.session_id,
                       deadlines[None]) for p in found)  # fmt: skip

        if waiting(pending):
            self.bus.publish(Message(Level.INFO, "Waiting for the hosts to put back the interrupted run's changes"))
        while waiting(pending):
            await asyncio.sleep(2.0)
            pending = await self.hosts.leftovers(self.store)
        for p in pending:
            if p.entry.session_id == sid and p.status == "still changed?":
                try:
                    await self.hosts.revert_leftover(self.store, p.entry)
                except (KnobError, HostError) as exc:
                    raise RunError(p.entry.host,
                                   f"the interrupted run's {p.entry.knob} could not be put back: {exc}") from exc

    async def _measure_ceilings(self, sid: int) -> None:
        if self.spec.measure_ceilings:
            self.ceilings = await measure_ceilings(self.store, self.hosts, self.bus, sid, self.spec)
        else:
            self.ceilings = stored_ceilings(self.store, sid, self.spec) or self.ceilings
        if self.link_bps is None and self.ceilings.network_per_client_bps:
            self.link_bps = self.ceilings.network_per_client_bps
            self.link_measured = True

    async def _ceiling_at_mtu(self, sid: int, mtu: int) -> None:
        """The network ceiling at a new MTU: on a CPU-bound path, frame size moves it."""
        if mtu in ceiling_mtus(self.store, sid):
            return
        self.bus.publish(Message(Level.INFO, f"Measuring the TCP ceiling at MTU {mtu}"))
        await measure_tcp_ceilings(self.store, self.hosts, self.bus, sid, self.spec, mtu=mtu)
        self.ceilings = stored_ceilings(self.store, sid, self.spec) or self.ceilings
        if (self.link_measured or self.link_bps is None) and self.ceilings.network_per_client_bps:
            self.link_bps = max(self.link_bps or 0.0, self.ceilings.network_per_client_bps)
            self.link_measured = True

    def _recommend(self, sid: int) -> None:
        """Rank the finished session and keep the recommendation beside its trials."""
        try:
            save(self.store, recommend_session(self.store, sid))
        except Exception as exc:  # the trials are stored; a recommendation can be made later
            log.exception("recommendation failed")
            self.bus.publish(Message(Level.ERROR, "The recommendation could not be made", str(exc)))

    async def _prepare(self, sid: int, journal: Journal) -> tuple[Applier, list[TelemetryTarget], str]:
        mount_point = f"{self.spec.mount_root}-{sid}-{journal.token[:6]}"
        prepared = await self.hosts.prepare(self.spec, journal, mount_point)
        if pinned := [k for k in PINNED if k in self.spec.plan.knobs]:
            self._warn_shared(prepared.shared_mounts, " and ".join(pinned))
        return prepared.applier, prepared.telemetry, mount_point

    def _warn_shared(self, shared: dict[str, list[str]], knobs: str) -> None:
        for client, points in shared.items():
            self.bus.publish(Message(
                Level.WARNING, f"{client} already mounts {self.spec.server} at {', '.join(points)}",
                f"The test mount shares that mount's NFS connection, made before this sweep, so {knobs} "
                f"trials cannot take effect on {client}: an MTU above the connection's and a slot-table cap are "
                f"marked broken, and so is an nconnect other than that mount's. Unmount it during the sweep to measure {knobs}.",
            ))  # fmt: skip

    def _journal_changed(self, sid: int) -> None:
        self.bus.publish(JournalChanged(sid, tuple(self.store.journal(sid))))

    async def _unpaused(self) -> None:
        """Wait while paused; a cancel ends the wait too."""
        if self.go_on.is_set() or self.cancel.is_set():
            return
        waits = [asyncio.ensure_future(self.go_on.wait()), asyncio.ensure_future(self.cancel.wait())]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()

    def _step_text(self) -> str:
        """A study's step for the trial events (the study engines name theirs); a sweep has none."""
        return ""

    def _progress(self) -> None:
        eta = None
        if self._durations:
            eta = max(self._total - self._done, 0) * float(np.mean(self._durations))
        self.bus.publish(Progress(self._done, max(self._total, self._done), eta))

    async def _sweep(self, sid: int, plan_id: int | None, journal: Journal) -> None:
        plan = self.spec.plan
        already = sum(len(self.stored_results(workload_kind(w))) for w in plan.workloads)
        self._total = max(estimate_duration(plan).trials, already)
        self._done = already
        self.bus.publish(SweepStarted(sid, self._total, already))
        self._progress()
        applier, telemetry, mount_point = await self._prepare(sid, journal)
        for name in plan.workloads:
            kind = workload_kind(name)
            strategy = make_strategy(plan)
            results = self.stored_results(kind)
            while not self.cancel.is_set():
                # finish configurations a previous run left short of their repetitions first
                todo = [c for c in dict.fromkeys(r.config for r in results) if self._needs_more(c, results)]
                if not todo:
                    todo = strategy.next_trials(results)
                    random.Random(plan.seed + len(results)).shuffle(todo)  # drift must not favour an order
                if not todo:
                    break
                for config in todo:
                    if self.cancel.is_set():
                        break
                    await self._repeat(sid, plan_id, applier, telemetry, mount_point, name, config, results)
            if not self.cancel.is_set():
                await self._top_up(sid, plan_id, applier, telemetry, mount_point, name, results)
            await applier.release_clients()

    async def _top_up(self, sid: int, plan_id: int | None, applier: Applier, telemetry: list[TelemetryTarget],
                      mount_point: str, name: str, results: list[TrialResult]) -> None:  # fmt: skip
        """Give configurations that lost runs to broken trials their runs back (the rule: experiments.topups).

        Not those a host refused or that broke a host: running them again gives the same answer.
        """
        budget, min_runs = topup_budget(results), self.policy.min_runs
        blamed = {Config(t.config) for t in self.store.trials(sid) if BLAMED in t.reason or t.reason.startswith(REFUSED)}
        done = 0
        for config in topup_order(results, self.spec.plan.start_config(), min_runs, blamed):
            tries = 0
            while short_of_runs(config, results, min_runs) and tries < TOPUP_TRIES and done < budget:
                if not await self._once(sid, plan_id, applier, telemetry, mount_point, name, config, results):
                    return
                tries, done = tries + 1, done + 1
        if done:
            self._topups += done
            self.bus.publish(Message(Level.INFO, f"Re-ran {done} trial(s) of {workload_kind(name)} for "
                                                 "configurations that had lost runs to broken trials"))  # fmt: skip

    def _needs_more(self, config: Config, results: Sequence[TrialResult]) -> bool:
        runs = [r for r in results if r.config == config]
        values = [r.value for r in runs if r.value is not None]
        broken_tail = 0
        for r in reversed(runs):
            if r.value is not None:
                break
            broken_tail += 1
        if broken_tail >= MAX_BROKEN_IN_A_ROW or not values:
            return False
        return repeat_decision(values, self.policy).more

    async def _repeat(self, sid: int, plan_id: int | None, applier: Applier, telemetry: list[TelemetryTarget],
                      mount_point: str, name: str, config: Config, results: list[TrialResult]) -> None:  # fmt: skip
        while await self._once(sid, plan_id, applier, telemetry, mount_point, name, config, results):
            if not self._needs_more(config, results):
                return

    async def _once(self, sid: int, plan_id: int | None, applier: Applier, telemetry: list[TelemetryTarget],
                    mount_point: str, name: str, config: Config, results: list[TrialResult]) -> bool:  # fmt: skip
        """One more trial of ``config`` once not paused, added to ``results``; False when cancelled instead."""
        await self._unpaused()
        if self.cancel.is_set():
            return False
        rep = sum(1 for r in results if r.config == config)
        value = await self._trial(sid, plan_id, applier, telemetry, mount_point, name, config, rep)
        results.append(TrialResult(config, value))
        return True

    async def _trial(self, sid: int, plan_id: int | None, applier: Applier, telemetry: list[TelemetryTarget],
                     mount_point: str, name: str, config: Config, rep: int) -> float | None:  # fmt: skip
        spec, timing = self.spec, self.spec.plan.timing
        workload = spec.workload(name)
        t_start = time.monotonic()
        trial_id = self.store.add_trial(sid, dict(config), workload.to_dict(), repetition=rep, plan_id=plan_id)
        self.skip.clear()
        step = self._step_text()
        self.bus.publish(TrialStarted(sid, trial_id, dict(config), workload.kind, rep, step))
        summary: dict[str, Any] = {"unit": "B/s"}  # phased workloads: "ops/s" (app.sweep.figures)
        state, reason, value = TrialState.BROKEN, "", None
        latency: Latency | None = None
        fair: Fairness | None = None
        lost: HostLost | None = None
        try:
            try:
                try:
                    applying = await applier.apply(config)  # type: ignore[arg-type]  # a valid plan's values are ints and strings
                    summary.update(effective=applying.effective, negotiated=applying.negotiated, notes=applying.notes)
                except (KnobError, HostError) as exc:
                    raise RunError("", f"{REFUSED}: {exc}") from exc
                finally:
                    self._journal_changed(sid)
                if "mtu" in config and spec.measure_ceilings:
                    await self._ceiling_at_mtu(sid, int(config["mtu"]))
                phased = workload.kind in PHASED
                measure = _Measure(timing.warmup_s, timing.min_measure_s, timing.max_measure_s,
                                   SteadyStateDetector(spec.criteria()), self.skip)  # fmt: skip
                result = await self.runner.run(
                    trial_id, workload, [ClientWork(c, mount_point) for c in spec.clients], telemetry=telemetry,
                    drop_caches_on=[spec.server, *spec.clients],
                    monitor=(lambda _total: self.skip.is_set()) if phased else measure,  # phases run to their end
                    max_s=spec.phased_cap_s if phased else timing.warmup_s + timing.max_measure_s + 5.0,
                    cancel=self.cancel, engine=spec.engine,  # type: ignore[arg-type]  # checked in SweepSpec
                    latency_from_s=0.0 if phased else timing.warmup_s,  # the window the figures measure
                )  # fmt: skip
                summary.update(phase_figures(result.summaries) if phased else self._figures(result.totals, measure))
                got = [result.summaries.get(c) for c in spec.clients]
                latency = clients_latency([s.lat_hist if s else None for s in got], [s.lat_max_ms for s in got if s])
                if latency is not None:
                    summary["latency"] = latency.to_json()
                fair = run_fairness(result.summaries, result.samples, phased=phased, warmup_s=timing.warmup_s)
                if fair is not None:  # one client, or nothing moved: no shares to state
                    summary["fairness"] = fair.to_json()
                summary.update(
                    ended=result.ended, engine=result.engine, start_skew_s=result.start_skew_s, stop_s=result.stop_s,
                    caches_dropped=list(result.caches_dropped), warnings=result.warnings,
                    clients={h: {"throughput_bps": s.throughput_bps, "cache_mode": s.cache_mode, "end": s.end,
                                 "cpu_s": s.cpu_s, "lat_p99_ms": s.lat_p99_ms} for h, s in result.summaries.items()},
                )  # fmt: skip
                state, reason, value = self._judge(result.error, summary, phased, result.ended)
                if self.skip.is_set() and not self.cancel.is_set():  # a cut-short trial must not rank
                    state, reason, value = TrialState.BROKEN, SKIPPED, None
            except RunError as exc:
                reason = str(exc)
            if state == TrialState.BROKEN and reason and reason != SKIPPED and not self.cancel.is_set():
                lost, reason = await self._blame(sid, name, config, reason)
        finally:
            if state == TrialState.OK or reason or not self.cancel.is_set():
                self.store.finish_trial(trial_id, state, summary=summary, reason=reason)
            else:
                self.store.finish_trial(trial_id, TrialState.BROKEN, summary=summary, reason="cancelled during this trial")
            self._durations.append(time.monotonic() - t_start)
            self._done += 1
            cv = summary.get("cv")
            self.bus.publish(TrialFinished(sid, trial_id, dict(config), workload.kind, state.value, value, reason,
                                           cv=float(cv) if isinstance(cv, int | float) else None,
                                           stable=summary.get("steady"), skipped=reason == SKIPPED,
                                           unit=str(summary.get("unit", "B/s")), latency=latency,
                                           fairness=fair, step=step))  # fmt: skip
            self._progress()
        if lost is not None:
            raise _HostGone(lost)
        return value

    async def _blame(self, sid: int, name: str, config: Config, reason: str) -> tuple[HostLost | None, str]:
        """After a broken trial: did a host go away (the trial runs again later), or did this
        configuration break it (a second loss under the same configuration: recorded against it)?"""
        host = await self._gone_host()
        if host is None:
            return None, reason  # every host answers: the trial broke on its own (recorded against it)
        kind = workload_kind(name)
        doing = f"during a {kind} trial with {', '.join(f'{k}={v}' for k, v in config.items())}"
        lost = HostLost(sid, host, doing, dict(config), droppable=host in self.spec.clients and len(self.spec.clients) > 1)
        before = [t for t in self.store.trials(sid) if dict(t.config) == dict(config)
                  and isinstance(t.workload, dict) and t.workload.get("kind") == kind
                  and f"{host} stopped answering" in t.reason]  # fmt: skip
        if before:
            return lost, f"{host} stopped answering again under this configuration: {BLAMED} ({reason})"
        return lost, f"{INTERRUPTED}: {host} stopped answering during this trial, which runs again later ({reason})"

    def _figures(self, totals: Sequence[Sample], measure: _Measure) -> dict[str, Any]:
        kept = [s for s in totals if s.t > measure.warmup_s]
        if not kept:
            return {"n": 0}
        t = np.array([s.t for s in kept])
        v = np.array([s.throughput_bps for s in kept])
        figures = summarize(t, v, criteria=measure.detector.criteria, from_steady=True).to_dict()
        figures["steady"] = measure.detector.steady
        figures["measured_s"] = float(t[-1] - measure.warmup_s)
        figures["ops_per_s"] = float(np.mean([s.ops_per_s for s in kept]))
        return figures

    def _judge(self, error: RunError | None, summary: dict[str, Any], phased: bool = False,
               ended: str = "") -> tuple[TrialState, str, float | None]:  # fmt: skip
        if error is not None:
            return TrialState.BROKEN, str(error), None
        if phased:
            if ended == "time cap":
                return TrialState.BROKEN, (f"its phases did not finish within {self.spec.phased_cap_s:.0f} s: "
                                           "give the workload fewer files"), None  # fmt: skip
            if problem := phased_problem(summary):
                return TrialState.BROKEN, problem, None
            return TrialState.OK, "", float(summary["mean"])
        mean = summary.get("mean")
        if not summary.get("n") or mean is None:
            return TrialState.BROKEN, "no samples after the warm-up: the trial was too short to measure", None
        link = self.link_bps * len(self.spec.clients) if self.link_bps else None
        if link and cache_answered(float(mean), link, measured=self.link_measured):
            what = "the measured TCP ceiling" if self.link_measured else "what the link carries"
            return TrialState.BROKEN, (
                f"{figure_text(float(mean))} is far beyond {what} ({figure_text(link)}): a cache answered, not the server"
            ), None
        return TrialState.OK, "", float(mean)
