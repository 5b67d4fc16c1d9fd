"""A host that stops answering pauses the sweep instead of burning its trials; lost runs are topped up.

The real engine, strategies, recommender and store over simulated hosts (app.simulated),
where a test can take a host away and bring it back.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.events import EventBus, Message
from app.session import Role, TuningSession
from app.simulated import SimulatedHosts
from app.store import SessionState, Store, TrialState
from app.sweep import engine
from app.sweep.events import Decision, HostLost, SweepFinished, TrialFinished, TrialStarted
from app.sweep.spec import SweepSpec


async def _trusting(host: str, key: object) -> bool:
    return True


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    """A waiting sweep asks a lost host again every 5 s; the simulated ones come back within a second."""
    monkeypatch.setattr(engine, "WAIT_POLL_S", 0.2)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "s.db") as s:
        yield s


async def connected(store: Store, hosts: SimulatedHosts, clients: tuple[str, ...]) -> TuningSession:
    session = TuningSession(store, hosts, EventBus(), deadman_timeout=1.0)
    await session.connect("nfs-server", Role.SERVER, _trusting)
    for c in clients:
        await session.connect(c, Role.CLIENT, _trusting)
    return session


def lose_after(session: TuningSession, hosts: SimulatedHosts, host: str, trials: int) -> list[TrialFinished]:
    seen: list[TrialFinished] = []

    def on(event: TrialFinished) -> None:
        seen.append(event)
        if len(seen) == trials:
            hosts.gone.add(host)

    session.bus.subscribe(on, TrialFinished)
    return seen


def plan(session: TuningSession, runs: int = 2, host_wait_s: float = 0.0) -> SweepSpec:
    return session.plan(session.choices(knobs={"nfsd_threads": "8, 64", "read_ahead_kb": "128, 4096"},
                                        workloads=("seq_read",), strategy="grid", repetitions=runs,
                                        max_repetitions=runs, host_wait_s=host_wait_s))


def test_the_cli_way_stops_names_the_host_and_a_resume_finishes_the_session(store: Store) -> None:
    hosts = SimulatedHosts(speed=400.0)

    async def first() -> tuple[SweepFinished, list[Message], list[TrialFinished]]:
        session = await connected(store, hosts, ("client1",))
        messages: list[Message] = []
        session.bus.subscribe(messages.append, Message)
        seen = lose_after(session, hosts, "client1", 3)
        return await session.run(plan(session)), messages, seen

    finished, messages, seen = asyncio.run(first())
    sid = finished.session_id
    assert finished.state == "interrupted" and finished.paused_for == "client1"
    assert len(seen) == 4  # three ok, the one that found the host gone: nothing burnt after it
    lost = store.trials(sid)[-1]
    assert lost.state == TrialState.BROKEN and lost.reason.startswith("interrupted: client1 stopped answering")
    said = [m for m in messages if "client1 stopped answering" in m.text]
    assert said and f"session {sid} can go on where it stopped" in said[0].detail
    assert store.get_session(sid).state == SessionState.INTERRUPTED

    hosts.gone.clear()

    async def again() -> SweepFinished:
        session = TuningSession(store, hosts, EventBus(), deadman_timeout=1.0)
        return await session.resume(sid)

    resumed = asyncio.run(again())
    assert resumed.state == "complete" and not resumed.paused_for
    ok = [t for t in store.trials(sid) if t.state == TrialState.OK and t.step == "search"]
    assert len(ok) == 8  # every configuration of the 2×2 grid, twice: the lost trial ran again
    assert store.recommendations(sid)


@pytest.mark.parametrize("decision", ["drop", "wait"])
def test_the_wizard_way_asks_and_goes_on(store: Store, decision: Decision) -> None:
    hosts = SimulatedHosts(speed=400.0)
    asked: list[HostLost] = []

    async def decide(lost: HostLost) -> Decision:
        asked.append(lost)
        if decision == "wait":
            asyncio.get_running_loop().call_later(0.2, hosts.gone.clear)  # it comes back while we wait
        return decision

    async def go() -> SweepFinished:
        session = await connected(store, hosts, ("client1", "client2"))
        session.decide_host_lost = decide
        lose_after(session, hosts, "client2", 2)
        return await session.run(plan(session))

    finished = asyncio.run(go())
    assert [a.host for a in asked] == ["client2"] and asked[0].droppable
    assert finished.state == "complete" and not finished.paused_for
    ok = [t for t in store.trials(finished.session_id) if t.state == TrialState.OK and t.step == "search"]
    assert len({tuple(sorted(t.config.items())) for t in ok}) == 4


def test_a_configuration_that_loses_the_host_twice_is_recorded_against_it(store: Store) -> None:
    hosts = SimulatedHosts(speed=400.0)
    killer = {"nfsd_threads": 64, "read_ahead_kb": 4096}

    async def run(resume: int | None) -> SweepFinished:
        session = await connected(store, hosts, ("client1",))

        def on(event: TrialStarted) -> None:  # this configuration takes the host down, every time
            if dict(event.config) == killer:
                hosts.gone.add("client1")

        session.bus.subscribe(on, TrialStarted)
        return await (session.run(plan(session, runs=1)) if resume is None else session.resume(resume))

    first = asyncio.run(run(None))
    sid = first.session_id
    assert first.paused_for == "client1"
    hosts.gone.clear()
    second = asyncio.run(run(sid))
    assert second.paused_for == "client1"
    reasons = [t.reason for t in store.trials(sid) if "stopped answering" in t.reason]
    assert reasons[0].startswith("interrupted: client1") and "again under this configuration" in reasons[1]
    hosts.gone.clear()
    third = asyncio.run(run(sid))
    assert third.state == "complete"  # the configuration is not tried a third time
    assert sum(1 for t in store.trials(sid) if dict(t.config) == killer) == 2


def test_configurations_that_lost_runs_get_them_back(store: Store) -> None:
    """A trial that breaks while every host answers is the configuration's; it gets its runs topped up."""
    hosts = SimulatedHosts(speed=400.0)

    async def go() -> SweepFinished:
        session = await connected(store, hosts, ("client1",))
        hosts.fail_next = ["the test mount hung for a moment"]  # the first trial breaks; the hosts answer
        return await session.run(plan(session, runs=1))

    finished = asyncio.run(go())
    assert finished.state == "complete" and finished.topups == 1
    trials = store.trials(finished.session_id)
    assert trials[0].state == TrialState.BROKEN and "hung" in trials[0].reason
    first_config = dict(trials[0].config)
    assert any(t.state == TrialState.OK and dict(t.config) == first_config for t in trials[1:])


def test_a_configuration_the_hosts_refuse_is_not_topped_up(store: Store) -> None:
    """Seen in the lab: an MTU trial refused on a shared connection was run again by the top-ups, to the
    same refusal. Refused at apply is the configuration's answer, not a lost run."""
    hosts = SimulatedHosts(speed=400.0)
    hosts.refuse = {("nfsd_threads", "64")}

    async def go() -> SweepFinished:
        session = await connected(store, hosts, ("client1",))
        return await session.run(plan(session, runs=1))

    finished = asyncio.run(go())
    assert finished.state == "complete" and finished.topups == 0
    refused = [t for t in store.trials(finished.session_id) if t.config.get("nfsd_threads") == 64]
    assert len(refused) == 2 and all(t.reason.startswith("applying the configuration failed") for t in refused)


def test_a_host_back_within_the_wait_is_named_and_its_trial_runs_again_without_asking(store: Store) -> None:
    """A cable pulled for a moment (issue 31): gone is not broken. The words name the host, the trial and how long
    it was away; nothing is held against the configuration; nobody is asked."""
    hosts = SimulatedHosts(speed=400.0)
    asked: list[HostLost] = []

    async def decide(lost: HostLost) -> Decision:
        asked.append(lost)
        return "stop"

    async def go() -> tuple[SweepFinished, list[Message]]:
        session = await connected(store, hosts, ("client1", "client2"))
        session.decide_host_lost = decide
        messages: list[Message] = []
        session.bus.subscribe(messages.append, Message)

        def on(event: TrialFinished) -> None:
            if event.trial_id == 2:
                hosts.gone.add("client2")
                asyncio.get_running_loop().call_later(0.3, hosts.gone.clear)  # back while the sweep waits for it

        session.bus.subscribe(on, TrialFinished)
        return await session.run(plan(session, host_wait_s=30.0)), messages

    finished, messages = asyncio.run(go())
    assert finished.state == "complete" and not asked  # back within the wait: no question, no stop
    (back,) = [m for m in messages if "back after" in m.text]
    assert re.fullmatch(r"client2 stopped answering during trial \d+ \(.+\); back after \d+ s; trial \d+ runs again",
                        back.text), back.text  # fmt: skip
    lost = [t for t in store.trials(finished.session_id) if "stopped answering" in t.reason]
    assert lost and all(t.reason.startswith("interrupted: client2") and "back after" in t.reason for t in lost)
    assert not any("recorded against it" in t.reason for t in store.trials(finished.session_id))
    ok = [t for t in store.trials(finished.session_id) if t.state == TrialState.OK and t.step == "search"]
    assert len({tuple(sorted(t.config.items())) for t in ok}) == 4 and not store.unreverted_journal()
