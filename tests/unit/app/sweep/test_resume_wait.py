"""Before a resume, the engine waits for the killed run's dead-man switches, whatever timeout they were armed
with (up to the most an admin may choose), and for another session's no longer than one of its own would take."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import app.sweep.engine as engine_module
from app.events import EventBus
from app.knobs.deadman import MAX_TIMEOUT
from app.knobs.recovery import Pending
from app.simulated import SimulatedHosts
from app.store import JournalState, Store
from app.store.records import JournalEntry
from app.sweep import SweepEngine, SweepSpec
from experiments.plan import Plan


def _entry(entry_id: int, session_id: int) -> JournalEntry:
    return JournalEntry(entry_id, session_id, "srv", "nfsd_threads", "/proc/fs/nfsd/threads", 8, 32, 0.0, 0.0,
                        JournalState.APPLIED, "")  # fmt: skip


def _waited(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, armed_until: dict[int, float]) -> float:
    """Seconds the engine of session 1 waited, on a fake clock, with each session's switch armed until its time."""
    clock = [0.0]

    async def sleep(seconds: float) -> None:
        clock[0] += seconds

    monkeypatch.setattr(engine_module.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(engine_module.asyncio, "sleep", sleep)
    hosts = SimulatedHosts()

    async def leftovers(_store: Store) -> list[Pending]:
        return [Pending(_entry(sid, sid), "switch armed" if clock[0] < until else "reverted by host")
                for sid, until in armed_until.items()]  # fmt: skip

    monkeypatch.setattr(hosts, "leftovers", leftovers)
    spec = SweepSpec("srv", ("c1",), "/srv/nfs", Plan(knobs={"nfsd_threads": (8, 32)}, workloads=("seq_read",)))
    with Store(tmp_path / "s.db") as store:
        engine = SweepEngine(store, hosts, EventBus(), spec, deadman_timeout=60)
        asyncio.run(engine._settle_leftovers(1))
    return clock[0]


def test_the_killed_runs_long_switch_is_waited_out(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # armed with --deadman-timeout 300: longer than this run's own 60 s would allow for
    assert 600 <= _waited(monkeypatch, tmp_path, {1: 600.0}) < 610


def test_another_sessions_switch_is_waited_for_no_longer_than_one_of_this_runs(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:  # fmt: skip
    assert 150 <= _waited(monkeypatch, tmp_path, {2: 1e9}) < 160  # 2 × 60 s + 30 s


def test_a_switch_that_never_fires_is_not_waited_for_forever(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert 2 * MAX_TIMEOUT + 30 <= _waited(monkeypatch, tmp_path, {1: 1e9, 2: 1e9}) < 2 * MAX_TIMEOUT + 40
