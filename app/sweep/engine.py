"""The trial loop: a plan's steps ask for trials → knobs → run → summary → store.

A plan is a list of steps (experiments.steps): a guided sweep's screening, refinement,
put-back checks and confirmation; a chosen strategy's search and the same two checks;
a load ladder's or a directory study's one step. The engine asks the current step for
its next trials, given every run so far, and runs them (shuffled against drift, but
the confirmation's pairs in their order) until the step asks for nothing; then the
next step. One trial: apply the configuration (journal first; a fresh test mount on
every client) → drop caches on server and clients → warm-up → measure until steady or
the cap → summarise → store the trial as ok or broken (a host error, or faster than the
link can carry: a cache answered) with the step that asked for it. Every change is
reverted at the end, on cancel and on error. A resumed session feeds its stored trials
to the steps, which carry on where they stopped. The plan's time budget is held while it
runs (app.sweep.deadline).

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
from app.knobs.deadman import MAX_TIMEOUT, token_of
from app.runner.kept_data import KEPT_PREFIX, kept_name, kept_names
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
from app.recommend.runs import BLAMED, INTERRUPTED, REFUSED, p99_of, runs_of, score_of
from app.sweep.figures import phase_figures, phased_problem
from app.sweep.lost import lost_host
from app.sweep.deadline import Deadline
from app.sweep.plan_steps import estimated_trials, spec_steps, trials_after, workloads as spec_workloads
from app.sweep.spec import PHASED, PINNED, SweepSpec, workload_kind
from app.vocabulary import figure_text, span_text
from experiments.board import Ask, Run
from experiments.budget import refit
from experiments.steps import SCREEN, SEARCH_STEPS, Step
from experiments.fairness import Fairness, run_fairness
from experiments.latency import Latency, clients_latency
from experiments.plan import Config
from experiments.samples import Sample
from experiments.stability import SteadyStateDetector, summarize
from experiments.workloads import WORKLOAD_TYPES

log = logging.getLogger(__name__)

SKIPPED = "skipped by the admin"  # reason of a trial whose measuring was ended early
WAIT_POLL_S = 5.0  # how often a waiting sweep asks a lost host again
REFIT_AFTER = 2  # trials of each workload timed before the plan is fitted again to the budget at their pace


@dataclass
class RunContext:
    """What every trial of one run needs: its session and plan row, the journal, the hosts as prepared."""

    sid: int
    plan_id: int | None
    journal: Journal
    applier: Applier
    telemetry: list[TelemetryTarget]
    mount_point: str


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
        self.session_id: int | None = None
        self.link_bps = spec.link_bps  # per client: given by the admin, else the measured TCP ceiling
        self.link_measured = False
        self.ceilings = Ceilings(clients=len(spec.clients))
        self._durations: list[float] = []
        self._paces: dict[str, list[float]] = {}  # workload -> its trials' durations (this run's)
        # Hooks for a GUI: cleared = pause before the next trial; set = end this trial's measuring now.
        self.go_on = asyncio.Event()
        self.go_on.set()
        self.skip = asyncio.Event()
        self._done = 0
        self._total = 0
        self._topups = 0
        self._applier: Applier | None = None  # the pass under way's, put back before a pass after a lost host
        self._laid_out = False  # a trial may have kept its read data set on the export since it was last removed
        self._first_clients = spec.clients  # the kept data's names number the clients as the session began
        self._token = ""  # this run's journal's: the kept data's names carry it
        self._stopped_for = ""  # the host the run stopped for when it went away
        self.deadline = Deadline(None if spec.ladder or spec.dirs else spec.plan.time_budget_s)  # a study has none
        self._search_cut = False  # the search ended for the budget
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
            sid = self.store.create_session(hosts, plan=self.spec.to_json(), notes=self.spec.kind)
            plan_id: int | None = self.store.save_plan(sid, self.spec.to_json())
            self.measured.record(self.store, sid)
        else:
            sid = self.session_id
            self.store.recover_interrupted()
            self.deadline.spent_before_s = sum(t.ended - t.started for t in self.store.trials(sid)
                                               if t.started is not None and t.ended is not None)  # fmt: skip
            self.store.set_session_state(sid, SessionState.RUNNING)
            self._laid_out = any(isinstance(t.workload, dict) and getattr(WORKLOAD_TYPES.get(str(t.workload.get("kind"))),
                                                                          "data_files", "")
                                 for t in self.store.trials(sid))  # an earlier run's kept data: removed by this one
            plans = self.store.plans(sid)
            plan_id = plans[-1].id if plans else None
        self.session_id = sid
        return sid, plan_id

    def stored_runs(self) -> list[Run]:
        """Finished trials as the plan's steps see them (app.recommend.runs)."""
        assert self.session_id is not None
        return runs_of(self.store.trials(self.session_id), self.spec.goal, self.spec.kind)

    # -- the loop -------------------------------------------------------------

    async def run(self) -> int:
        """Run (or resume) the sweep; returns the session id. Reverts everything on the way out."""
        self.deadline.start()
        sid, plan_id = self._open_session()
        writer = self.store.sample_writer()
        detach = writer.attach(self.bus)
        journal = self.hosts.journal(self.store, sid, deadman_timeout=self.deadman_timeout)
        self._token = journal.token
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
                problems = await asyncio.shield(self._close(journal))
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
                if (back := await self._back_within(lost.host, self.spec.host_wait_s)) is not None:
                    note = await journal.rejoin(lost.host)
                    await self._release_before_again()
                    self._said_back(lost, back, note)
                    continue
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
                    f"When {lost.host} answers again, session {sid} can go on where it stopped, and the "
                    "interrupted trial runs again.",
                ))  # fmt: skip
                self._stopped_for = lost.host
                return lost.host

    async def _close(self, journal: Journal) -> list[str]:
        """The kept read data sets go while the test mounts stand, then the journal puts everything back: one
        shielded step, so a second interrupt cannot come between them."""
        with contextlib.suppress(Exception):  # never in the way of putting the hosts back
            await self._forget_kept()
        return await journal.close()

    async def _release_before_again(self) -> None:
        """What the interrupted pass holds goes back before the next pass makes its own changes; what cannot
        is said in its journal entry, and stays for the close (and the hosts' switches)."""
        if self._applier is not None:
            await self._forget_kept()  # the host is back: through the mounts still standing
            try:
                await self._applier.release_all()
            except (KnobError, HostError) as exc:
                log.warning("putting back before going on: %s", exc)
            self._applier = None

    async def _back_within(self, host: str, seconds: float) -> float | None:
        """Seconds until the host answers again, waited for up to ``seconds`` (None: not back; or cancelled)."""
        start = time.monotonic()
        if seconds > 0:
            self.bus.publish(Message(Level.INFO, f"Waiting up to {seconds:.0f} s for {host} to answer again"))
        while not self.cancel.is_set():
            if await self.hosts.answering(host):
                return time.monotonic() - start
            if time.monotonic() - start >= seconds:
                return None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.cancel.wait(), min(WAIT_POLL_S, max(seconds - (time.monotonic() - start), 0.1)))
        return None

    def _said_back(self, lost: HostLost, back_s: float, note: str) -> None:
        """A host came back within the wait: the words, on the bus and in its interrupted trial's record."""
        words = (f"{lost.host} stopped answering during trial {lost.trial_id} ({lost.cause}); back after {back_s:.0f} s; "
                 f"trial {lost.trial_id} runs again")  # fmt: skip
        self.bus.publish(Message(Level.WARNING, words, f"{lost.host}: {note}." if note else ""))
        trial = next((t for t in self.store.trials(lost.session_id) if t.id == lost.trial_id), None)
        if trial is not None and trial.reason.startswith(INTERRUPTED):
            self.store.finish_trial(trial.id, trial.state, summary=trial.summary, reason=f"{trial.reason}; back after {back_s:.0f} s")

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

    def _progress(self) -> None:
        eta = None
        if self._durations:
            eta = max(self._total - self._done, 0) * float(np.mean(self._durations))
        self.bus.publish(Progress(self._done, max(self._total, self._done), eta))

    async def _sweep(self, sid: int, plan_id: int | None, journal: Journal) -> None:
        runs = self.stored_runs()
        self._done = len(runs)
        self._total = max(estimated_trials(self.spec), self._done)
        self.bus.publish(SweepStarted(sid, self._total, self._done))
        self._progress()
        applier, telemetry, mount_point = await self._prepare(sid, journal)
        self._applier = applier
        ctx = RunContext(sid, plan_id, journal, applier, telemetry, mount_point)
        steps, index = spec_steps(self.spec), 0
        while index < len(steps) and not self.cancel.is_set():
            if await self._run_step(ctx, steps[index], runs):
                steps = spec_steps(self.spec)  # fitted again: the same step over fewer knobs, on the runs so far
            else:
                if steps[index].name == SCREEN:  # what the screening found decides the rest: the progress says so
                    self._total = self._done + trials_after(self.spec, runs)
                    self._progress()
                index += 1
        if not self.cancel.is_set():  # the steps ended before the estimate's most: every trial there was is done
            self._total = self._done
            self._progress()
        await self._forget_kept()
        await applier.release_clients()

    def _keep(self, data_files: str, client: str) -> str:
        """Where ``client`` keeps the data it lays out for the next trial (app.runner.kept_data); "" nothing. Numbered
        as the session's clients began, so a client dropped on the way leaves the others their own directories."""
        if not data_files or client not in self._first_clients:
            return ""
        self._laid_out = True
        return kept_name(self._token, self._first_clients.index(client))

    async def _forget_kept(self) -> None:
        """Remove the read data sets kept on the export, this run's and the session's earlier runs', while the test
        mounts stand; what cannot be is said, with the command that removes it. Not when the run stopped for the
        server (the removal would wait on it): resuming the session removes them."""
        if not self._laid_out or self._applier is None or self._stopped_for == self.spec.server:
            return
        assert self.session_id is not None
        tokens = {self._token} | {t for e in self.store.journal(self.session_id) if (t := token_of(e.detail)) is not None}
        try:
            why = await self._applier.forget_data(kept_names(tokens, len(self._first_clients)), avoid=self._stopped_for)
        except (KnobError, HostError, ValueError) as exc:  # a name or mount point the checks refused: said, not raised
            why = str(exc)
        if why:
            globs = " ".join(f"{self.spec.export.rstrip('/')}/{KEPT_PREFIX}{t}-*" for t in sorted(tokens))
            self.bus.publish(Message(Level.WARNING, "A read data set was left on the export",
                                     f"The read data sets this session kept on the export were not removed ({why}): "
                                     f"remove them on {self.spec.server} with `sudo rm -rf -- {globs}`"))  # fmt: skip
        self._laid_out = False

    async def _run_step(self, ctx: RunContext, step: Step, runs: list[Run]) -> bool:
        """Run ``step`` until it asks for nothing (a search: or its time is up); True when the plan was fitted again
        to the budget on the way (the steps must be built again)."""
        searching = step.name in SEARCH_STEPS
        while not self.cancel.is_set() and not (searching and self._search_cut):
            asks = step.next(runs)
            if not asks:
                break
            if not step.ordered:
                random.Random(self.spec.plan.seed + len(runs)).shuffle(asks)  # drift must not favour an order
            for ask in asks:
                await self._unpaused()
                if self.cancel.is_set() or (searching and self._out_of_time(runs)):
                    break
                mine = [r for r in runs if r.config == ask.config and r.workload == ask.workload]
                if mine and mine[-1].value is None:
                    self._topups += 1  # the run its last trial lost, given back
                runs.append(await self._trial(ctx, ask, len(mine)))
                self._total = max(self._total, self._done + 1)
                if searching and self._refitted(ctx):
                    return True
        return False

    def _refitted(self, ctx: RunContext) -> bool:
        """Whether the plan was fitted again to the budget at the pace its trials really run (experiments.budget.
        refit): the lowest-priority knobs held at today's values when the trials run slower than planned. Said,
        and stored as the session's plan (a resume goes on with it)."""
        plan, budget = self.spec.plan, self.deadline.budget_s
        timed = [d for d in self._paces.values() if len(d) >= REFIT_AFTER]
        if budget is None or len(timed) < len(spec_workloads(self.spec)):
            return False
        trial_s = self._pace_s()
        between_s = self.deadline.used_s() - sum(self._durations)  # this run's time outside trials (facts, ceilings)
        leaner, dropped = refit(plan, budget - max(between_s, 0.0), trial_s)
        if not dropped:
            return False
        self.spec = replace(self.spec, plan=leaner)
        ctx.plan_id = self.store.save_plan(ctx.sid, self.spec.to_json())
        self._total = max(estimated_trials(self.spec), self._done + 1)
        self.bus.publish(Message(
            Level.WARNING, f"Left out to keep to the time budget ({span_text(budget)}): {', '.join(reversed(dropped))}",
            f"the trials take {trial_s:.0f} s each on these hosts, not the {plan.timing.expected_trial_s():.0f} s "
            "planned; the knobs left out keep today's values. A larger budget (--budget) keeps them."))  # fmt: skip
        self._progress()
        return True

    def _pace_s(self) -> float:
        """What a trial costs here, so far: each workload's own mean (a read lays its files out first: on wan 46 s a
        trial against a write's 31 s) weighed alike, as the plan runs them alike; the plan's own figure before any."""
        if not self._paces:
            return self.spec.plan.timing.expected_trial_s()
        return float(np.mean([np.mean(d) for d in self._paces.values()]))

    def _out_of_time(self, runs: Sequence[Run]) -> bool:
        """Whether the search must end for the budget (app.sweep.deadline); said once, when it does."""
        if self._search_cut or self.deadline.budget_s is None:
            return self._search_cut
        plan, workloads = self.spec.plan, spec_workloads(self.spec)
        trial_s = self._pace_s()
        if not self.deadline.search_over(plan, workloads, runs, trial_s, self.spec.goal.p99_max_ms):
            return False
        self._search_cut = True
        left = max(self.deadline.left_s(), 0.0)
        self.bus.publish(Message(
            Level.WARNING, f"The search ended early, for the time budget ({span_text(self.deadline.budget_s)})",
            f"{span_text(left)} left, kept for the put-back checks and the confirmation at the pace of the trials so "
            f"far ({trial_s:.0f} s a trial); the recommendation is chosen from the {len(runs)} trials measured. "
            "A larger budget (--budget) searches further."))  # fmt: skip
        return True

    async def _trial(self, ctx: RunContext, ask: Ask, rep: int) -> Run:
        """One trial of ``ask``, as the steps see it: its figure (None when broken), whether it is held against
        its configuration (refused by a host, or it broke one), its p99."""
        spec, timing = self.spec, self.spec.plan.timing
        sid, config = ctx.sid, ask.config
        workload = spec.workload(ask.workload, dict(ask.variant))
        t_start = self.deadline.clock()
        trial_id = self.store.add_trial(sid, dict(config), workload.to_dict(), repetition=rep, plan_id=ctx.plan_id,
                                        step=ask.step)  # fmt: skip
        self.skip.clear()
        step = ask.label
        self.bus.publish(TrialStarted(sid, trial_id, dict(config), workload.kind, rep, step))
        summary: dict[str, Any] = {"unit": "B/s"}  # phased workloads: "ops/s" (app.sweep.figures)
        state, reason, value = TrialState.BROKEN, "", None
        latency: Latency | None = None
        fair: Fairness | None = None
        lost: HostLost | None = None
        failure: BaseException | None = None
        try:
            try:
                try:
                    applying = await ctx.applier.apply(config)  # type: ignore[arg-type]  # a valid plan's values are ints and strings
                    summary.update(effective=applying.effective, negotiated=applying.negotiated, notes=applying.notes)
                except (KnobError, HostError) as exc:
                    if (gone := lost_host(exc)) is not None:  # the host went away: not the configuration's answer
                        raise RunError(gone[0], f"stopped answering while the configuration was applied ({gone[1]})",
                                       lost=True) from exc  # fmt: skip
                    raise RunError("", f"{REFUSED}: {exc}") from exc
                finally:
                    self._journal_changed(sid)
                if "mtu" in config and spec.measure_ceilings:
                    await self._ceiling_at_mtu(sid, int(config["mtu"]))
                phased = workload.kind in PHASED
                measure = _Measure(timing.warmup_s, timing.min_measure_s, timing.max_measure_s,
                                   SteadyStateDetector(spec.criteria()), self.skip)  # fmt: skip
                result = await self.runner.run(
                    trial_id, workload, [ClientWork(c, ctx.mount_point, self._keep(workload.data_files, c))
                                         for c in spec.clients], telemetry=ctx.telemetry,
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
                                 "cpu_s": s.cpu_s, "lat_p99_ms": s.lat_p99_ms, "prepare_s": s.prepare_s,
                                 "data_kept": s.kept} for h, s in result.summaries.items()},
                )  # fmt: skip
                state, reason, value = self._judge(result.error, summary, phased, result.ended)
                failure = result.error
                if self.skip.is_set() and not self.cancel.is_set():  # a cut-short trial must not rank
                    state, reason, value = TrialState.BROKEN, SKIPPED, None
            except RunError as exc:
                reason, failure = str(exc), exc
            if state == TrialState.BROKEN and reason and reason != SKIPPED and not self.cancel.is_set():
                lost, reason = await self._blame(sid, trial_id, ask.workload, config, reason, failure)
        finally:
            if state != TrialState.OK:
                ctx.applier.remount_next()
            if state == TrialState.OK or reason or not self.cancel.is_set():
                self.store.finish_trial(trial_id, state, summary=summary, reason=reason)
            else:
                self.store.finish_trial(trial_id, TrialState.BROKEN, summary=summary, reason="cancelled during this trial")
            self._durations.append(self.deadline.clock() - t_start)
            self._paces.setdefault(ask.workload, []).append(self._durations[-1])
            self._done += 1
            cv = summary.get("cv")
            self.bus.publish(TrialFinished(sid, trial_id, dict(config), workload.kind, state.value, value, reason,
                                           cv=float(cv) if isinstance(cv, int | float) else None,
                                           stable=summary.get("steady"), skipped=reason == SKIPPED,
                                           unit=str(summary.get("unit", "B/s")), latency=latency,
                                           fairness=fair, step=step, limited=tuple(summary.get("time_limited", ())),
                                           time_limit_s=summary.get("time_limit_s")))  # fmt: skip
            self._progress()
        if lost is not None:
            raise _HostGone(lost)
        blamed = BLAMED in reason or reason.startswith(REFUSED)
        ok = state == TrialState.OK
        return Run(ask.step, config, ask.workload, score_of(summary, spec.goal) if ok else None, ask.variant, blamed,
                   p99_of(summary) if ok else None)  # fmt: skip

    async def _blame(self, sid: int, trial_id: int, name: str, config: Config, reason: str,
                     failure: BaseException | None) -> tuple[HostLost | None, str]:  # fmt: skip
        """After a broken trial: did a host go away (the trial runs again later), or did this
        configuration break it (a second loss under the same configuration: recorded against it)?

        A host went away when the failure says so (a dropped connection, a command past its bound, an
        agent fallen silent: app.sweep.lost), even if it answers again by now, or when one does not answer."""
        gone = lost_host(failure)
        host, cause = gone if gone is not None else (await self._gone_host(), "it does not answer")
        if host is None:
            return None, reason  # every host answers: the trial broke on its own (recorded against it)
        kind = workload_kind(name)
        doing = f"during a {kind} trial with {', '.join(f'{k}={v}' for k, v in config.items())}"
        lost = HostLost(sid, host, doing, dict(config), droppable=host in self.spec.clients and len(self.spec.clients) > 1,
                        trial_id=trial_id, cause=cause)  # fmt: skip
        before = [t for t in self.store.trials(sid) if dict(t.config) == dict(config)
                  and isinstance(t.workload, dict) and t.workload.get("kind") == kind
                  and f"{host} stopped answering" in t.reason and t.id != trial_id]  # fmt: skip
        if before:
            return lost, f"{host} stopped answering again under this configuration: {BLAMED} ({cause})"
        return lost, f"{INTERRUPTED}: {host} stopped answering during this trial ({cause}), which runs again later"

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
            if ended == "time cap":  # a sweep's phases end at their share of phased_limit_s: a hang, not slowness
                cap = f"its phases did not finish within {self.spec.phased_cap_s:.0f} s"
                return TrialState.BROKEN, (f"{cap}: ask for fewer entries" if self.spec.dirs else
                                           f"{cap}, though each ends at its share of {self.spec.phased_limit_s:.0f} s: "
                                           "an operation hung on the server or its disk"), None  # fmt: skip
            if problem := phased_problem(summary):
                return TrialState.BROKEN, problem, None
            return TrialState.OK, "", float(summary["mean"])
        mean = summary.get("mean")
        if not summary.get("n") or mean is None:
            return TrialState.BROKEN, "no samples after the warm-up: the trial was too short to measure", None
        if float(mean) <= 0:  # not a figure to rank: the I/O waited the whole window (write-back, the server, its disk)
            return TrialState.BROKEN, (f"nothing moved in its {summary.get('measured_s', 0):.0f} s of measuring: the I/O "
                                       "stalled (the clients' write-back, the server or its disk); a longer --duration "
                                       "may see it move"), None  # fmt: skip
        link = self.link_bps * len(self.spec.clients) if self.link_bps else None
        if link and cache_answered(float(mean), link, measured=self.link_measured):
            what = "the measured TCP ceiling" if self.link_measured else "what the link carries"
            return TrialState.BROKEN, (
                f"{figure_text(float(mean))} is far beyond {what} ({figure_text(link)}): a cache answered, not the server"
            ), None
        return TrialState.OK, "", float(mean)
