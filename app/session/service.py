"""The application layer: a tuning session as both faces drive it.

The CLI's commands and the wizard's pages call a ``TuningSession`` and nothing below it:
connect (trust on first use, facts), baseline (ceilings and today's figures, measured
once), plan (``app.session.plan``), run or resume (the sweep engine, which opens the
session, journals every change and puts it back), results (the one read model) and the
leftovers of an earlier run. What happens meanwhile arrives on ``bus``. The hosts are a
HostSide: over SSH, or simulated for the demo.
"""

from __future__ import annotations

import asyncio
import tempfile
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from app.discovery import require_client, require_server
from app.events import EventBus, Level, Message
from app.facts.model import HostFacts
from app.hosts import HostError, UnknownHostKey
from app.knobs import recovery
from app.knobs.model import KnobError
from app.knobs.recovery import Pending
from app.paths import log_dir
from app.report.session_data import SessionData, load_session_data
from app.runner import RunError
from app.session import topology
from app.session.admin_commands import command_line, resume_command
from app.session.baseline import Baseline, BaselineStep, baseline_steps, measure_baseline
from app.session.budget import DEFAULT_BUDGET_S
from app.session.choices import KnobChoice, knob_choices
from app.session.diagnosis import Diagnosis, diagnose, observed_of
from app.session.plan import PlanChoices, Where, build_spec, plan_fit
from app.session.preflight import Preflight, preflight
from app.session.preview import RunPreview, run_preview
from app.session.proposal import Proposal, propose
from app.session.study import StudyChoice, build_study, spec_estimate, study_problems
from app.store import Store
from app.store.records import JournalEntry
from app.sweep.engine import SweepEngine
from app.sweep.events import Decision, HostLost
from app.sweep.events import SweepFinished
from app.sweep.host_side import HostSide
from app.sweep.session_facts import Measured
from app.sweep.spec import SweepSpec
from experiments.budget import Fit
from experiments.estimate import DurationEstimate

log = logging.getLogger(__name__)


class Role(StrEnum):
    SERVER = "server"
    CLIENT = "client"


class SessionError(Exception):
    """A host's trouble in words the admin can act on; the log file has the details."""


ConfirmKey = Callable[[str, UnknownHostKey], Awaitable[bool]]  # (host as named, its key) -> trusted?
HOST_TROUBLE = (HostError, RunError, KnobError)


class TuningSession:
    def __init__(self, store: Store, hosts: HostSide, bus: EventBus | None = None, *, log_path: Path | None = None,
                 ceiling_s: float = 5.0, deadman_timeout: float = 60.0) -> None:  # fmt: skip
        self.store = store
        self.hosts = hosts
        self.bus = bus or EventBus()
        self.log_path = log_path or log_dir() / "nfs-tuner.log"
        self.ceiling_s = ceiling_s
        self.deadman_timeout = deadman_timeout
        # What a face leaves unsaid takes these: the product's defaults (a test may shorten the trials).
        self.plan_defaults = PlanChoices()
        self.facts: dict[str, HostFacts] = {}
        self.roles: dict[str, Role] = {}
        self.session_id: int | None = None
        self._ceilings: list[tuple[str, dict[str, Any]]] = []  # measured on the Baseline page, for the session
        self.measured: Baseline | None = None  # the last baseline, for the diagnosis
        self._measured_on: tuple[str | None, tuple[str, ...]] = (None, ())  # (server, clients) it measured
        self._engine: SweepEngine | None = None
        self._task: asyncio.Task[int] | None = None
        # When a host stops answering mid-run: None stops the run (resumable, the CLI's way); the wizard asks.
        self.decide_host_lost: Callable[[HostLost], Awaitable[Decision]] | None = None
        # The folder of a database kept for this session only (the demo's), removed when it is closed or at exit.
        self.throwaway: tempfile.TemporaryDirectory[str] | None = None

    @property
    def simulated(self) -> bool:
        return bool(getattr(self.hosts, "simulated", False))

    @property
    def speed(self) -> float:
        """How many times faster than real ones its hosts run: the demo's simulated hosts' pace, else 1."""
        speed = getattr(self.hosts, "speed", 1.0) if self.simulated else 1.0
        return float(speed) if isinstance(speed, int | float) and speed > 0 else 1.0

    @property
    def ssh_config(self) -> Path | None:
        """The SSH config the hosts are reached through (None: ~/.ssh/config, or hosts with none: the demo's)."""
        config = getattr(self.hosts, "ssh_config", None)
        return config if isinstance(config, Path) else None

    def command(self, *words: str) -> str:
        """A host command for the admin to run, whole: with this session's SSH config."""
        return command_line(*words, ssh_config=self.ssh_config)

    def resume_command(self, session_id: int) -> str:
        """The command that goes on with ``session_id`` later, whole: this database, this SSH config."""
        return resume_command(session_id, db=self.store.path, ssh_config=self.ssh_config)

    def _trouble(self, host: str, exc: BaseException) -> SessionError:
        log.warning("%s: %s", host, exc, exc_info=exc)
        return SessionError(str(exc))

    # --- hosts ---------------------------------------------------------------------------
    def host_names(self) -> list[str]:
        return self.hosts.host_names()

    async def connect(self, host: str, role: Role, confirm_key: ConfirmKey | None = None) -> HostFacts:
        """Connect and gather facts, asking ``confirm_key`` about a key seen for the first time."""
        for _attempt in range(2):
            try:
                facts = await self.hosts.discover(host)
                (require_server if role is Role.SERVER else require_client)(facts)
            except UnknownHostKey as unknown:
                if confirm_key is None:
                    raise SessionError(f"{unknown} Trust it with `{self.command('discover', '--trust-new-keys', host)}`.") \
                        from None
                if not await confirm_key(host, unknown):
                    raise SessionError(f"The key of {host} was not trusted, so nothing was done there.") from None
                try:
                    await self.hosts.trust(host, unknown)
                except (HostError, OSError) as exc:
                    raise self._trouble(host, exc) from exc
                continue
            except HostError as exc:
                raise self._trouble(host, exc) from exc
            if role is Role.SERVER:
                for old in [h for h, r in self.roles.items() if r is Role.SERVER and h != host]:
                    self.forget(old)
            self.facts[host], self.roles[host] = facts, role
            return facts
        raise SessionError(f"{host}: the key was trusted but the host still refused it; see {self.log_path}")

    def forget(self, host: str) -> None:
        self.facts.pop(host, None)
        self.roles.pop(host, None)

    @property
    def server(self) -> str | None:
        return next((h for h, r in self.roles.items() if r is Role.SERVER), None)

    @property
    def clients(self) -> list[str]:
        return [h for h, r in self.roles.items() if r is Role.CLIENT]

    def offered_clients(self, server: str) -> list[str]:
        """Clients the server sees mounting it now, by SSH alias where one matches."""
        facts = self.facts.get(server)
        return topology.offered_clients(facts, self.host_names()) if facts is not None else []

    def _server_facts(self) -> HostFacts | None:
        return self.facts.get(self.server) if self.server is not None else None

    def _client_facts(self) -> list[HostFacts]:
        return [self.facts[c] for c in self.clients]

    def export(self) -> str:
        server = self._server_facts()
        return topology.export_of(server, self._client_facts()) if server is not None else ""

    def where(self, export: str | None = None, server_address: str | None = None) -> Where:
        server = self._server_facts()
        if server is None or not self.clients:
            raise SessionError("connect a server and at least one client first")
        export = export or self.export()
        address = server_address if server_address is not None else \
            topology.server_address(server, self._client_facts(), export)
        return Where(server.host, tuple(self.clients), export, address)

    # --- the plan ------------------------------------------------------------------------
    def current_values(self) -> dict[str, str]:
        server = self._server_facts()
        return topology.current_values(server, self._client_facts(), self.export()) if server is not None else {}

    def knobs(self) -> list[KnobChoice]:
        return knob_choices(self.current_values())

    def choices(self, **chosen: Any) -> PlanChoices:
        """What a face chose (PlanChoices' fields), the rest from ``plan_defaults``."""
        return replace(self.plan_defaults, **chosen)

    def plan(self, choices: PlanChoices, *, export: str | None = None, server_address: str | None = None) -> SweepSpec:
        """The sweep ``choices`` describe on the connected hosts (PlanError if they make none)."""
        return build_spec(choices, self.where(export, server_address), topology.baseline_values(self.current_values()))

    def plan_study(self, choices: PlanChoices, study: StudyChoice, *, export: str | None = None,
                   server_address: str | None = None) -> SweepSpec:  # fmt: skip
        """The sweep, load ladder or directory study ``choices`` and ``study`` describe on the connected hosts
        (app.session.study; PlanError if they make none)."""
        return build_study(choices, self.where(export, server_address), study,
                           topology.baseline_values(self.current_values()))  # fmt: skip

    def today_values(self) -> dict[str, int | str]:
        """Each knob's value on the hosts today, where discovery read one."""
        return topology.baseline_values(self.current_values())

    def problems(self, choices: PlanChoices, study: StudyChoice = StudyChoice()) -> dict[str, str]:
        """Everything wrong with ``choices`` on the connected hosts, by field (app.session.study)."""
        return study_problems(choices, study, baseline=self.today_values())

    def fit(self, choices: PlanChoices) -> Fit:
        """The sweep valid ``choices`` describe, fitted to their time budget (app.session.plan)."""
        return plan_fit(choices, self.today_values())

    def diagnosis(self) -> Diagnosis:
        """What limits the connected hosts today, from their facts and the last baseline (if measured)."""
        export = self.export() if self._server_facts() is not None else ""
        ours = self.measured if self._measured_on == (self.server, tuple(self.clients)) else None  # else other hosts'
        return diagnose(observed_of(self.facts, self.server, self.clients, export, ours))

    def proposal(self, workloads: Sequence[str], *, allow_async: bool = False, allow_restart: bool = False,
                 budget_s: float | None = DEFAULT_BUDGET_S) -> Proposal:  # fmt: skip
        """The plan the diagnosis proposes for ``workloads`` (app.session.proposal)."""
        return propose(self.diagnosis(), workloads, allow_async=allow_async, allow_restart=allow_restart,
                       budget_s=budget_s)  # fmt: skip

    def estimate(self, plan: PlanChoices | SweepSpec, study: StudyChoice = StudyChoice()) -> DurationEstimate:
        """Trials and time a plan takes (valid choices of ``study``, before any host is connected too)."""
        if isinstance(plan, PlanChoices):
            plan = build_study(plan, Where("server", ("client",), ""), study,
                               topology.baseline_values(self.current_values()))  # fmt: skip
        return spec_estimate(plan)

    def preview(self, spec: SweepSpec) -> RunPreview:
        """What running ``spec`` changes on which host, its test mounts and its time: to ask before ``run``."""
        return run_preview(spec, self.facts, speed=self.speed)

    # --- the baseline --------------------------------------------------------------------
    def baseline_steps(self, workloads: Sequence[str]) -> tuple[BaselineStep, ...]:
        """What ``baseline`` will run, on which hosts, for about how long: to ask before it loads them."""
        return baseline_steps(self.where(), workloads, self.plan_defaults, self.ceiling_s)

    async def baseline(self, workloads: Sequence[str]) -> Baseline:
        """The ceilings (TCP per client, the server's disk) and today's figure per workload."""
        where = self.where()
        try:
            result, self._ceilings = await measure_baseline(self.hosts, self.bus, where, self.facts, workloads,
                                                            self.plan_defaults, self.ceiling_s)  # fmt: skip
        except HOST_TROUBLE as exc:
            raise self._trouble(where.server, exc) from exc
        self.measured, self._measured_on = result, (where.server, where.clients)
        return result

    # --- the run -------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """True from ``run`` until every change of the run is put back."""
        return self._task is not None

    def _measured(self, spec: SweepSpec) -> Measured:
        hosts = {spec.server, *spec.clients}
        facts = {h: (self.roles[h].value, self.facts[h].to_dict()) for h in hosts if h in self.facts}
        return Measured(facts, [(h, f) for h, f in self._ceilings if h in hosts])

    async def preflight(self, spec: SweepSpec) -> Preflight:
        """What stands in the way of running ``spec``, found before anything is changed (app.session.preflight).
        A client whose TCP ceiling the baseline measured has shown the way through its firewalls already."""
        known = {h for h, f in self._ceilings if "tcp_bps" in f}
        try:
            found = await preflight(self.hosts, spec, self.facts, ceilings_known=set(spec.clients) <= known)
        except HOST_TROUBLE as exc:
            raise self._trouble(spec.server, exc) from exc
        if found.notes:
            self.bus.publish(Message(Level.INFO, "Not checked before the run", "; ".join(found.notes)))
        return found

    async def run(self, spec: SweepSpec) -> SweepFinished:
        """A new session: sweep ``spec``, every change put back at the end; returns how it ended."""
        return await self._drive(SweepEngine(self.store, self.hosts, self.bus, spec,
                                             deadman_timeout=self.deadman_timeout, measured=self._measured(spec)))

    async def resume(self, session_id: int) -> SweepFinished:
        """Go on with an interrupted or cancelled session where it stopped."""
        return await self._drive(SweepEngine.for_session(self.store, self.hosts, self.bus, session_id,
                                                         deadman_timeout=self.deadman_timeout))  # fmt: skip

    async def _drive(self, engine: SweepEngine) -> SweepFinished:
        finished: list[SweepFinished] = []
        unsubscribe = self.bus.subscribe(finished.append, SweepFinished)
        self._engine = engine
        engine.decide_host_lost = self.decide_host_lost
        task = self._task = asyncio.ensure_future(engine.run())
        task.add_done_callback(lambda _t: self._ended(engine, task))
        try:
            await asyncio.shield(task)  # a cancelled caller must not cut the run's revert short
        except HOST_TROUBLE as exc:  # reverted already; the host's trouble in its own words
            raise self._trouble(engine.spec.server, exc) from exc
        finally:
            unsubscribe()
        return finished[-1]

    def _ended(self, engine: SweepEngine, task: asyncio.Task[int]) -> None:
        """The engine's task is over (every change is back): not running any more."""
        self.session_id = engine.session_id
        if self._task is task:
            self._task = None

    def pause(self) -> None:
        """The current trial runs to its end; the next waits for ``go_on`` (a face shows that it is paused:
        a one-off message would outlive the pause)."""
        if self._engine is not None:
            self._engine.go_on.clear()

    def go_on(self) -> None:
        if self._engine is not None:
            self._engine.go_on.set()

    def skip_trial(self) -> None:
        if self._engine is not None:
            self._engine.skip.set()

    async def cancel_and_revert(self) -> None:
        """Stop the run; the engine puts every change back before it ends."""
        task, engine = self._task, self._engine
        if task is None or engine is None:
            return
        engine.cancel.set()
        engine.go_on.set()
        await asyncio.wait({task})

    async def revert_all(self) -> None:
        """Put back every change of this session; idempotent, safe from a crash path."""
        await self.cancel_and_revert()
        for entry in self.store.unreverted_journal():
            if entry.session_id is not None and entry.session_id == self.session_id:
                try:
                    await self.hosts.revert_leftover(self.store, entry)
                except (KnobError, HostError) as exc:
                    self.bus.publish(Message(Level.ERROR, f"Could not put back {entry.knob} on {entry.host}", str(exc)))

    # --- results -------------------------------------------------------------------------
    def results(self, session_id: int | None = None) -> SessionData:
        """The session as every face shows it: the stored recommendation, its snippets, the ranking."""
        sid = session_id if session_id is not None else self.session_id
        if sid is None:
            raise SessionError("no run yet: there are no results to show")
        return load_session_data(self.store, sid)

    def start_over(self) -> None:
        """A fresh session on the same database: the finished one stays stored; the hosts, their
        facts and ceilings and the last run are forgotten, so the next one connects and measures anew."""
        if self.running:
            raise SessionError("a run is in progress: stop it before starting a new session")
        self.facts.clear()
        self.roles.clear()
        self._ceilings = []
        self.measured = None
        self.session_id = None
        self._engine = None

    # --- an earlier run's leftovers ------------------------------------------------------
    async def leftovers(self) -> list[Pending]:
        """Changes of earlier runs that may still be on the hosts (looked up there; slow)."""
        if not self.store.unreverted_journal():
            return []
        try:
            pending = await self.hosts.leftovers(self.store)
        except HostError as exc:
            raise self._trouble("leftovers", exc) from exc
        return [p for p in pending if p.status != "reverted by host"]

    def _entry(self, entry_id: int) -> JournalEntry | None:
        return next((e for e in self.store.unreverted_journal() if e.id == entry_id), None)

    async def revert_leftover(self, entry_id: int) -> None:
        entry = self._entry(entry_id)
        if entry is not None:
            try:
                await self.hosts.revert_leftover(self.store, entry)
            except (KnobError, HostError) as exc:
                raise self._trouble(entry.host, exc) from exc

    def dismiss_leftover(self, entry_id: int) -> None:
        entry = self._entry(entry_id)
        if entry is not None:
            recovery.dismiss(self.store, entry)

    async def close(self) -> None:
        await self.cancel_and_revert()
        await self.hosts.close()
        self.store.close()
        if self.throwaway is not None:
            self.throwaway.cleanup()
