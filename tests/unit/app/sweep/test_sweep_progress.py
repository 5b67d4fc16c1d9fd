"""The progress a guided sweep shows: planned from the plan's estimate (half its knobs expected to move), then, once
the screening has ended, from what it found. The real engine, steps and store over simulated hosts (on which
nfsd_threads moves nothing for one client's sequential read, and read_ahead_kb does)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.events import EventBus
from app.session.plan import PlanChoices, Where, build_spec
from app.simulated import SimulatedHosts
from app.store import Store
from app.sweep import Progress, SweepEngine
from app.sweep.plan_steps import estimated_trials
from experiments.steps import SCREEN

TODAY = {"read_ahead_kb": 128, "nfsd_threads": 8}


@pytest.mark.parametrize("knobs", [{"nfsd_threads": "8, 16, 32, 64"},
                                   {"nfsd_threads": "8, 64", "read_ahead_kb": "128, 1024, 4096"}])  # fmt: skip
def test_the_total_follows_what_the_screening_found(tmp_path: Path, knobs: dict[str, str]) -> None:
    spec = build_spec(PlanChoices(knobs=knobs, workloads=("seq_read",)), Where("nfs-server", ("client1",), "/srv/nfs"),
                      {k: TODAY[k] for k in knobs})  # fmt: skip
    bus = EventBus()
    totals: list[int] = []
    bus.subscribe(lambda e: totals.append(e.total), Progress)
    with Store(tmp_path / "s.db") as store:
        engine = SweepEngine(store, SimulatedHosts(speed=1000.0), bus, spec, deadman_timeout=1.0)
        asyncio.run(engine.run())
        trials = store.trials(engine.session_id or 0)
    ran, screened = len(trials), len([t for t in trials if t.step == SCREEN])
    planned = estimated_trials(spec)
    assert totals[0] == planned  # before any trial: the plan's estimate
    after = totals[screened + 1]  # said once the screening's last trial has ended
    assert abs(after - ran) <= 2 and abs(after - ran) < abs(planned - ran)  # what the session then really ran
    assert totals[-1] == ran
