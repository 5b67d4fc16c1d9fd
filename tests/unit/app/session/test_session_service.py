"""The application layer over simulated hosts: the product's engine, strategies, recommender,
snippets and store, with only the hosts simulated (app.simulated)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from app.cli import parse
from app.commands.sweep import choices_from_args
from app.events import EventBus
from app.session import PlanChoices, Role, SessionError, TuningSession
from app.simulated import SimulatedHosts
from app.store import SessionState, Store
from app.sweep.events import SweepStarted


class CountingHosts(SimulatedHosts):
    """Simulated hosts that count how often the ceilings are measured."""

    def __init__(self, **kw: float) -> None:
        super().__init__(**kw)
        self.tcp_measures = 0

    async def tcp_ceiling(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.tcp_measures += 1
        return await super().tcp_ceiling(*args, **kwargs)


async def _trusting(host: str, key: object) -> bool:
    return True


async def connected(store: Store, hosts: SimulatedHosts, clients: tuple[str, ...] = ("client1", "client2")) -> TuningSession:
    session = TuningSession(store, hosts, EventBus())
    await session.connect("nfs-server", Role.SERVER, _trusting)
    for c in clients:
        await session.connect(c, Role.CLIENT, _trusting)
    return session


def run_demo(db: Path, *, baseline: tuple[str, ...] = (), **choices: Any) -> int:
    """A complete sweep of ``choices`` over fast simulated hosts, stored in ``db``: its session id."""
    async def go() -> int:
        with Store(db) as store:
            session = await connected(store, SimulatedHosts(speed=400.0))
            if baseline:
                await session.baseline(list(baseline))
            finished = await session.run(session.plan(session.choices(**choices)))
            assert finished.state == "complete"
            return finished.session_id

    return asyncio.run(go())


@pytest.fixture
def store(tmp_path: Path) -> Store:
    with Store(tmp_path / "s.db") as s:
        yield s  # type: ignore[misc]


def test_a_new_run_opens_a_new_session_measures_once_and_reads_the_saved_recommendation(store: Store) -> None:
    async def go() -> tuple[TuningSession, list[SweepStarted]]:
        hosts = CountingHosts(speed=400.0)
        session = await connected(store, hosts)
        started: list[SweepStarted] = []
        session.bus.subscribe(started.append, SweepStarted)
        baseline = await session.baseline(["seq_read"])
        assert len(baseline.ceilings) == 4 and set(baseline.today) == {"seq_read"}
        spec = session.plan(session.choices(knobs={"read_ahead_kb": "128, 4096"}, workloads=("seq_read",)))
        assert spec.plan.baseline == {"read_ahead_kb": 128}  # today's value, from the facts
        finished = await session.run(spec)
        assert finished.state == "complete" and not finished.problems
        assert hosts.tcp_measures == 2  # the Baseline page's, once per client: not again in the run
        return session, started

    session, started = asyncio.run(go())
    assert started[0].resumed == 0  # a new run is never the engine's resume branch
    sid = session.session_id
    assert sid is not None and [s.id for s in store.list_sessions()] == [sid]
    assert len(store.plans(sid)) == 1
    roles = sorted((f.host, f.role) for f in store.host_facts(sid))
    assert roles.count(("client1", "ceiling")) == 1 and ("nfs-server", "server") in roles
    assert store.get_session(sid).state == SessionState.COMPLETE
    assert not store.unreverted_journal()
    stored = {r.objective: r.config for r in store.recommendations(sid)}
    data = session.results()
    assert {o.objective: o.config for o in data.objectives} == stored and all(o.stored for o in data.objectives)
    assert stored["seq_read"] == {"read_ahead_kb": 4096}
    assert data.snippet_group("seq_read") is not None


def test_cancel_puts_everything_back_and_a_resume_completes(store: Store) -> None:
    async def go() -> TuningSession:
        session = await connected(store, SimulatedHosts(speed=40.0), ("client1",))
        spec = session.plan(session.choices(knobs={"nfsd_threads": "8, 16, 64"}, workloads=("seq_read",),
                                            repetitions=1, strategy="grid"))  # fmt: skip
        run = asyncio.ensure_future(session.run(spec))
        while not store.trials(1) if store.list_sessions() else True:
            await asyncio.sleep(0.01)
        session.pause()
        session.go_on()
        session.skip_trial()
        await session.cancel_and_revert()
        finished = await run
        assert finished.state == "cancelled" and not session.running
        assert not store.unreverted_journal()
        assert (await session.resume(1)).state == "complete"
        return session

    session = asyncio.run(go())
    trials = store.trials(1)
    assert {t.config["nfsd_threads"] for t in trials} == {8, 16, 64}
    assert store.get_session(1).state == SessionState.COMPLETE
    assert trials[0].state.value == "broken"  # cut short by the skip and the cancel: never ranked
    assert session.results(1).objectives[0].stored


def test_keys_and_unreachable_hosts_are_said_in_words(store: Store) -> None:
    async def go() -> None:
        session = TuningSession(store, SimulatedHosts(speed=400.0))
        with pytest.raises(SessionError, match=r"not known yet.*--trust-new-keys"):
            await session.connect("nfs-server", Role.SERVER)

        async def no(host: str, key: object) -> bool:
            return False

        with pytest.raises(SessionError, match="not trusted"):
            await session.connect("client1", Role.CLIENT, no)
        with pytest.raises(SessionError, match="connection to port 22 was refused"):
            await session.connect("unreachable-box", Role.CLIENT, _trusting)
        await session.connect("nfs-server", Role.SERVER, _trusting)
        await session.connect("backup-box", Role.SERVER, _trusting)
        assert session.server == "backup-box" and "nfs-server" not in session.facts  # one server
        with pytest.raises(SessionError, match="at least one client"):
            session.plan(PlanChoices(knobs={"nfsd_threads": "8"}))
        assert session.offered_clients("backup-box") == ["client1", "client2", "client3", "client4"]

    asyncio.run(go())


def test_the_cli_and_the_wizard_build_the_same_plan_from_the_same_defaults(store: Store) -> None:
    async def go() -> None:
        session = await connected(store, SimulatedHosts(speed=400.0), ("client1",))
        args = parse(["sweep", "--server", "nfs-server", "--client", "client1", "--knob", "rsize=32K,1M"])
        from_cli = session.plan(choices_from_args(args))
        from_page = session.plan(session.choices(knobs={"rsize": "32K, 1M"}))
        assert from_cli == from_page
        plan = from_page.plan
        assert (plan.strategy, plan.min_runs, plan.max_runs) == ("guided", 2, 6)
        assert (plan.timing.setup_s, plan.timing.warmup_s, plan.timing.min_measure_s, plan.timing.max_measure_s) \
            == (8.0, 5.0, 15.0, 60.0)
        assert from_page.export == "/srv/nfs" and from_page.server_address == "nfs-server"

    asyncio.run(go())


def test_leftovers_of_a_simulated_run_are_offered_reverted_or_dismissed(store: Store) -> None:
    sid = store.create_session(["nfs-server"])
    real = store.journal_intend(sid, "nfs-server", "nfsd_threads", "/proc/fs/nfsd/threads", 8, 64)
    a = store.journal_intend(sid, "nfs-server", "nfsd_threads", "/proc/fs/nfsd/threads", 8, 64, detail="simulated")
    b = store.journal_intend(sid, "nfs-server", "mtu", "eth0", 1500, 9000, detail="simulated")

    async def go() -> None:
        session = TuningSession(store, SimulatedHosts(speed=400.0))
        assert sorted(p.entry.id for p in await session.leftovers()) == [a, b]  # a real run's entry is never touched
        await session.revert_leftover(a)
        session.dismiss_leftover(b)
        assert [p.entry.id for p in await session.leftovers()] == []

    asyncio.run(go())
    assert [e.id for e in store.unreverted_journal()] == [real]
