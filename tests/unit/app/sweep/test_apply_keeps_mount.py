"""A client's test mount stands from trial to trial while nothing it was made under changes (app.sweep.apply).

The applier runs over a journal that records what it applies and puts back and a client that answers
every command (no `ss`: the connection checks are skipped and said so); the order of the journal's calls
is what the hosts would see.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from app.hosts import CommandResult
from app.knobs.model import Value
from app.knobs.targets import ScratchMount
from app.sweep.apply import MOUNT_NEUTRAL, ConfigApplier
from app.sweep.host_side import Applying
from app.sweep.spec import SweepSpec
from experiments.plan import Plan
from tests.unit.app.knobs.test_coherence_knobs import RecordingJournal


class Client:
    name = "c1"

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def run(self, argv: list[str], **_kwargs: Any) -> CommandResult:
        self.ran.append(argv[0])
        if argv[0] == "getent":
            return CommandResult(0, "10.0.0.1 STREAM srv\n", "", tuple(argv))
        return CommandResult(127, "", "not here", tuple(argv))  # ss: none on this client


@pytest.fixture
def applier(monkeypatch: pytest.MonkeyPatch) -> tuple[ConfigApplier, RecordingJournal]:
    async def bdi(self: ScratchMount, conn: Any) -> str:
        return "0:29"

    monkeypatch.setattr(ScratchMount, "bdi", bdi)
    plan = Plan(knobs={"rsize": (65536, 1048576), "read_ahead_kb": (128, 4096), "nfsd_threads": (8, 32)}, strategy="grid")
    journal = RecordingJournal()
    spec = SweepSpec("srv", ("c1",), "/srv/nfs", plan)
    return ConfigApplier(journal, {"c1": Client()}, spec, "/mnt/nfs-tuner-t"), journal  # type: ignore[arg-type]


def trial(applier: ConfigApplier, journal: RecordingJournal, config: Mapping[str, Value]) -> list[tuple[str, str, str]]:
    """What one trial's client side asked of the journal."""
    before = len(journal.log)
    asyncio.run(applier._client("c1", config, Applying()))
    return journal.log[before:]


def test_the_mount_stands_while_only_neutral_knobs_change_and_readahead_changes_on_its_bdi(applier) -> None:  # type: ignore[no-untyped-def]
    a, journal = applier
    mount = ("apply", "test_mount", "rsize=65536")
    assert trial(a, journal, {"rsize": 65536, "read_ahead_kb": 128, "nfsd_threads": 8}) == [
        mount, ("apply", "read_ahead_kb", "128")]
    # the server's threads and readahead change: the mount stays, readahead is put back and set again on it
    assert trial(a, journal, {"rsize": 65536, "read_ahead_kb": 4096, "nfsd_threads": 32}) == [
        ("revert", "read_ahead_kb", "128"), ("apply", "read_ahead_kb", "4096")]
    assert trial(a, journal, {"rsize": 65536, "read_ahead_kb": 4096, "nfsd_threads": 8}) == []  # nothing of the client's
    # a trial without readahead runs at today's: the one set is put back, the mount stays
    assert trial(a, journal, {"rsize": 65536, "nfsd_threads": 8}) == [("revert", "read_ahead_kb", "4096")]
    # a mount option changes: readahead, then the mount, put back; a fresh mount and readahead on it
    assert trial(a, journal, {"rsize": 1048576, "read_ahead_kb": 128, "nfsd_threads": 8}) == [
        ("revert", "test_mount", "rsize=65536"), ("apply", "test_mount", "rsize=1048576"), ("apply", "read_ahead_kb", "128")]


@pytest.mark.parametrize("change", [{"mtu": 9000}, {"rpc_slots": 128}, {"pool_mode": "pernode"}, {"export_sync": "async"},
                                    {"nconnect": 4}])  # fmt: skip
def test_any_knob_not_known_neutral_makes_a_fresh_mount(applier, change: dict[str, Value]) -> None:  # type: ignore[no-untyped-def]
    a, journal = applier
    assert not set(change) & MOUNT_NEUTRAL
    first = {"rsize": 65536, "read_ahead_kb": 128}
    trial(a, journal, first)
    again = trial(a, journal, {**first, **change})  # new to the trial: put back and mounted afresh
    assert again[:2] == [("revert", "read_ahead_kb", "128"), ("revert", "test_mount", "rsize=65536")]
    assert [step[:2] for step in again[2:]].count(("apply", "test_mount")) == 1


def test_what_a_kept_mount_reports_is_what_the_fresh_one_took(applier) -> None:  # type: ignore[no-untyped-def]
    a, _journal = applier
    config = {"rsize": 65536, "read_ahead_kb": 128}
    fresh, kept = Applying(), Applying()
    asyncio.run(a._client("c1", config, fresh))
    asyncio.run(a._client("c1", config, kept))
    assert kept.effective == fresh.effective and kept.negotiated == fresh.negotiated
    assert kept.effective["read_ahead_kb"] == 128 and "rsize" in kept.effective
    assert kept.notes == []  # the connection was checked (here: said unchecked) when the mount was made, once


def test_released_clients_mount_afresh(applier) -> None:  # type: ignore[no-untyped-def]
    a, journal = applier
    config = {"rsize": 65536, "read_ahead_kb": 128}
    trial(a, journal, config)
    asyncio.run(a.release_clients())
    assert journal.log[-2:] == [("revert", "read_ahead_kb", "128"), ("revert", "test_mount", "rsize=65536")]
    assert trial(a, journal, config) == [("apply", "test_mount", "rsize=65536"), ("apply", "read_ahead_kb", "128")]


def test_after_a_broken_trial_the_next_one_mounts_afresh(applier) -> None:  # type: ignore[no-untyped-def]
    a, journal = applier
    config = {"rsize": 65536, "read_ahead_kb": 128}
    trial(a, journal, config)
    a.remount_next()  # the engine's word after a broken trial: what it left may be on the standing mount
    assert trial(a, journal, config) == [("revert", "read_ahead_kb", "128"), ("revert", "test_mount", "rsize=65536"),
                                         ("apply", "test_mount", "rsize=65536"), ("apply", "read_ahead_kb", "128")]


def test_the_engine_asks_for_fresh_mounts_after_a_broken_trial_and_only_then(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The real engine over simulated hosts: a trial that breaks while every host answers is followed by fresh
    mounts; an ok trial keeps them."""
    from app.events import EventBus
    from app.session import Role, TuningSession
    from app.simulated import SimulatedHosts
    from app.simulated.hosts import SimulatedApplier
    from app.store import Store
    from app.sweep.events import TrialFinished

    said: list[str] = []
    monkeypatch.setattr(SimulatedApplier, "remount_next", lambda self: said.append("remount"))
    hosts = SimulatedHosts(speed=400.0)
    hosts.fail_next.append("the agent's files were not where it left them")

    async def trusting(host: str, key: object) -> bool:
        return True

    async def go() -> None:
        with Store(tmp_path / "s.db") as store:
            session = TuningSession(store, hosts, EventBus(), deadman_timeout=1.0)
            await session.connect("nfs-server", Role.SERVER, trusting)
            await session.connect("client1", Role.CLIENT, trusting)
            session.bus.subscribe(lambda e: said.append(e.state), TrialFinished)
            await session.run(session.plan(session.choices(knobs={"read_ahead_kb": "128, 4096"}, workloads=("seq_read",),
                                                           strategy="grid", repetitions=2, max_repetitions=2)))

    asyncio.run(go())
    assert said[:3] == ["remount", "broken", "ok"] and said.count("remount") == 1, said
