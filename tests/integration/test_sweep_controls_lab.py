"""The wizard's brakes on a real sweep: skip a trial, pause between trials, cancel and revert."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.events import SamplesBatch
from app.hosts import HostPool, SshSettings
from app.session import PlanChoices, Role, TuningSession
from app.store import JournalState, SessionState, Store, TrialState
from app.sweep import SweepFinished, TrialFinished, TrialStarted
from app.sweep.engine import SKIPPED
from app.sweep.ssh_hosts import SshHosts
from experiments.workloads import MIB
from tests.conftest import LabHandle

pytestmark = pytest.mark.lab
# a long cap (warm-up 5 s, at least 15 s measured), so only the skip can end the first trial early
LONG = PlanChoices(duration_s=30.0, file_size=16 * MIB)


def test_skip_pause_and_cancel(lab: LabHandle, tmp_path: Path) -> None:
    db = tmp_path / "s.db"

    async def scenario() -> tuple[SweepFinished, list[object]]:
        settings = SshSettings(config_file=lab.ssh_config, app_known_hosts=tmp_path / "kh")
        core = TuningSession(Store(db), SshHosts(HostPool(settings)))
        core.plan_defaults = LONG
        events: list[object] = []
        core.bus.subscribe(events.append, TrialStarted)
        core.bus.subscribe(events.append, TrialFinished)
        core.bus.subscribe(events.append, SamplesBatch)
        await core.connect("lab-server", Role.SERVER)  # the lab's keys are known: nothing to ask
        await core.connect("lab-client1", Role.CLIENT)
        spec = core.plan(core.choices(knobs={"rsize": "32K, 1M"}, strategy="grid", repetitions=1))
        run = asyncio.ensure_future(core.run(spec))
        while sum(isinstance(e, SamplesBatch) for e in events) < 36:  # past the 5 s warm-up, measuring 4 s
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
    assert outcome.state == SessionState.CANCELLED.value
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
