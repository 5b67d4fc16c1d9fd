"""What the study tests (`study ladder`, `study dirs`) share: the demo's hosts behind the real command,
and a study's --json read back."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.commands import sweep as sweep_command
from app.events import EventBus
from app.session import Role, TuningSession
from app.simulated import SimulatedHosts, world
from app.store import Store
from app.sweep.spec import SweepSpec


def simulated_study_hosts(monkeypatch: pytest.MonkeyPatch) -> SimulatedHosts:
    simulated = SimulatedHosts(speed=400.0)
    simulated.trusted |= set(world.HOST_NAMES)  # keys trusted before, as `discover --trust-new-keys` does
    monkeypatch.setattr(sweep_command, "host_side", lambda _args: simulated)  # the demo's hosts behind the real command
    return simulated


def study_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The study's --json output; it must have ended well."""
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


async def cancel_then_resume(store: Store, plan: Callable[[TuningSession], SweepSpec]) -> SweepSpec:
    """Run the study ``plan`` makes on the demo's server and client1, cancel it once its first trial
    is stored (every change put back), then resume it to the end; the spec it ran."""
    hosts = SimulatedHosts(speed=40.0)
    hosts.trusted |= set(world.HOST_NAMES)
    session = TuningSession(store, hosts, EventBus())
    await session.connect("nfs-server", Role.SERVER)
    await session.connect("client1", Role.CLIENT)
    spec = plan(session)
    run = asyncio.ensure_future(session.run(spec))
    while not (store.list_sessions() and store.trials(1)):
        await asyncio.sleep(0.01)
    await session.cancel_and_revert()
    assert (await run).state == "cancelled" and not store.unreverted_journal()
    assert (await session.resume(1)).state == "complete"
    return spec


@dataclass(frozen=True)
class StudyViews:
    """What a stored study looks like offline: `sessions show` (text, --json), `sessions list`, its report."""

    shown: str
    shown_json: dict[str, Any]
    listed: str
    html: str


def study_views(db: Path, sid: int, report: Path, capsys: pytest.CaptureFixture[str]) -> StudyViews:
    outs: list[str] = []
    for argv in (["sessions", "show", str(sid)], ["sessions", "show", str(sid), "--json"], ["sessions", "list"],
                 ["report", str(sid), "--to", str(report)]):  # fmt: skip
        assert main(["--db", str(db), *argv]) == 0
        outs.append(capsys.readouterr().out)
    return StudyViews(outs[0], json.loads(outs[1]), outs[2], report.read_text(encoding="utf-8"))
