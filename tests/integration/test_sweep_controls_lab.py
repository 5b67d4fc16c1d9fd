"""The wizard's brakes on a real sweep: skip a trial, pause between trials, cancel and revert."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.events import SamplesBatch
from app.store import JournalState, SessionState, Store, TrialState
from app.sweep import TrialFinished, TrialStarted
from app.sweep.engine import SKIPPED
from experiments.plan import Timing
from experiments.workloads import MIB
from tests.conftest import LabHandle
from ui.core_api import HostKey, HostRole, Plan, RunOutcome, Strategy
from ui.real_core import RealCore

pytestmark = pytest.mark.lab
# a long cap, so only the skip can end the first trial early
TIMING = Timing(setup_s=10.0, warmup_s=0.5, min_measure_s=20.0, max_measure_s=30.0)


def test_skip_pause_and_cancel(lab: LabHandle, tmp_path: Path) -> None:
    db = tmp_path / "s.db"

    async def never(_key: HostKey) -> bool:
        raise AssertionError("the lab's keys are known: nothing to ask")

    async def scenario() -> tuple[RunOutcome, list[object]]:
        core = RealCore(db, ssh_config=lab.ssh_config, app_known_hosts=tmp_path / "kh", file_size=16 * MIB,
                        timing=TIMING)  # fmt: skip
        events: list[object] = []
        core.bus.subscribe(events.append, TrialStarted)
        core.bus.subscribe(events.append, TrialFinished)
        core.bus.subscribe(events.append, SamplesBatch)
        await core.connect("lab-server", HostRole.SERVER, never)
        await core.connect("lab-client1", HostRole.CLIENT, never)
        run = asyncio.ensure_future(core.run(Plan({"rsize": ("32K", "1M")}, ("seq_read",), Strategy.GRID, 1)))
        while sum(isinstance(e, SamplesBatch) for e in events) < 12:  # measuring for about 3 s
            await asyncio.sleep(0.2)
        core.pause()
        core.skip_trial()
        while not any(isinstance(e, TrialFinished) for e in events):
            await asyncio.sleep(0.2)
        await asyncio.sleep(3.0)  # paused: the second trial must not start
        assert sum(isinstance(e, TrialStarted) for e in events) == 1
        await core.cancel_and_revert()
        outcome = await run
        await core.close()
        return outcome, events

    outcome, events = asyncio.run(asyncio.wait_for(scenario(), 240))
    assert outcome is RunOutcome.CANCELLED
    finished = [e for e in events if isinstance(e, TrialFinished)]
    assert len(finished) == 1 and finished[0].skipped and finished[0].reason == SKIPPED
    with Store(db, readonly=True) as store:
        (session,) = store.list_sessions()
        assert session.state == SessionState.CANCELLED
        (trial,) = store.trials(session.id)
        assert trial.state == TrialState.BROKEN and trial.reason == SKIPPED
        assert trial.summary["measured_s"] < 15  # ended by the skip, long before the cap
        journal = store.journal(session.id)
        assert journal and all(e.state in (JournalState.REVERTED, JournalState.REVERTED_BY_HOST) for e in journal)
