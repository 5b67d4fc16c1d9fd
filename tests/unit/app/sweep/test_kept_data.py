"""A read's data set stays on the export from trial to trial and goes at the end of the run (app.runner.kept_data).

The applier over a recording journal and clients that answer `rm`; the engine over simulated hosts. The agent's
side (it reads what is kept, lays out what is not) is tests/unit/experiments/test_agent_kept_data.py; the whole,
on real hosts, tests/integration/test_sweep_workloads_lab.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from app.events import EventBus, Message
from app.hosts import CommandResult, ConnectionLost
from app.runner.kept_data import kept_name, kept_names
from app.session import Role, TuningSession
from app.simulated import SimulatedHosts
from app.simulated.hosts import SimulatedApplier, SimulatedRunner
from app.store import Store
from app.sweep.apply import ConfigApplier
from app.sweep.host_side import Applying
from app.sweep.spec import SweepSpec
from experiments.plan import Plan
from tests.unit.app.knobs.test_coherence_knobs import RecordingJournal

TOKEN = RecordingJournal.token


class Client:
    def __init__(self, name: str, rm: int | Exception = 0) -> None:
        self.name, self.rm, self.ran = name, rm, []  # type: ignore[var-annotated]

    async def run(self, argv: list[str], **_kwargs: Any) -> CommandResult:
        self.ran.append(list(argv))
        if argv[0] == "rm":
            if isinstance(self.rm, Exception):
                raise self.rm
            return CommandResult(self.rm, "", "" if self.rm == 0 else "Permission denied", tuple(argv))
        if argv[0] == "getent":
            return CommandResult(0, "10.0.0.1 STREAM srv\n", "", tuple(argv))
        return CommandResult(127, "", "not here", tuple(argv))


def applier_with(clients: dict[str, Client]) -> ConfigApplier:
    spec = SweepSpec("srv", tuple(clients), "/srv/nfs", Plan(knobs={"rsize": (65536, 1048576)}, strategy="grid"))
    return ConfigApplier(RecordingJournal(), clients, spec, "/mnt/nfs-tuner-7")  # type: ignore[arg-type]


def test_each_client_has_its_own_directory_named_by_the_runs_journal() -> None:
    assert kept_names(["ffee01", TOKEN], 2) == [f".nfs-tuner-kept-{TOKEN}-0", f".nfs-tuner-kept-{TOKEN}-1",
                                                ".nfs-tuner-kept-ffee01-0", ".nfs-tuner-kept-ffee01-1"]
    with pytest.raises(ValueError, match="letters and digits"):
        kept_name("0a;rm -rf /", 0)


NAMES = kept_names([TOKEN], 2)
PATHS = [f"/mnt/nfs-tuner-7/{n}" for n in NAMES]


def test_the_kept_data_goes_through_a_client_whose_mount_stands_and_the_next_if_it_cannot() -> None:
    gone, up = Client("c1", rm=ConnectionLost("c1", "reset")), Client("c2")
    a = applier_with({"c1": gone, "c2": up})
    for c in ("c1", "c2"):
        asyncio.run(a._client(c, {"rsize": 65536}, Applying()))
    assert asyncio.run(a.forget_data(NAMES)) is None
    assert [argv for argv in gone.ran if argv[0] == "rm"] == [["rm", "-rf", "--", *PATHS]]
    assert [argv for argv in up.ran if argv[0] == "rm"] == [["rm", "-rf", "--", *PATHS]]  # c1 could not: c2 did
    again = Client("c1")
    b = applier_with({"c1": again, "c2": Client("c2")})
    for c in ("c1", "c2"):
        asyncio.run(b._client(c, {"rsize": 65536}, Applying()))
    assert asyncio.run(b.forget_data(NAMES, avoid="c1")) is None
    assert not [argv for argv in again.ran if argv[0] == "rm"]  # the host the run stopped for is not asked


def test_why_it_could_not_is_said() -> None:
    a = applier_with({"c1": Client("c1", rm=1)})
    assert asyncio.run(a.forget_data(NAMES)) == "no client's test mount stands"  # nothing mounted: no rm tried
    asyncio.run(a._client("c1", {"rsize": 65536}, Applying()))
    assert "Permission denied" in (asyncio.run(a.forget_data(NAMES)) or "")


def test_the_engine_keeps_read_data_only_and_removes_it_once_before_the_clients_are_released(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    kept: list[tuple[str, str]] = []
    said: list[str] = []
    forgotten: list[str] = []
    real_run = SimulatedRunner.run

    async def run(self: SimulatedRunner, trial_id: int, workload: Any, clients: Any, **kw: Any) -> Any:
        kept.extend((workload.kind, c.keep) for c in clients)
        return await real_run(self, trial_id, workload, clients, **kw)

    async def forget(self: SimulatedApplier, names: Any, avoid: str = "") -> str | None:
        said.append("forget")
        forgotten.extend(names)
        return "Permission denied"

    async def release(self: SimulatedApplier) -> None:
        said.append("release")

    monkeypatch.setattr(SimulatedRunner, "run", run)
    monkeypatch.setattr(SimulatedApplier, "forget_data", forget)
    monkeypatch.setattr(SimulatedApplier, "release_clients", release)

    async def trusting(host: str, key: object) -> bool:
        return True

    async def go() -> list[Message]:
        with Store(tmp_path / "s.db") as store:
            session = TuningSession(store, SimulatedHosts(speed=400.0), EventBus(), deadman_timeout=1.0)
            messages: list[Message] = []
            session.bus.subscribe(messages.append, Message)
            await session.connect("nfs-server", Role.SERVER, trusting)
            await session.connect("client1", Role.CLIENT, trusting)
            await session.run(session.plan(session.choices(knobs={"read_ahead_kb": "128, 4096"},
                                                           workloads=("seq_read", "seq_write"), strategy="grid",
                                                           repetitions=1, max_repetitions=1)))  # fmt: skip
            return messages

    messages = asyncio.run(go())
    names = {k[1] for k in kept if k[0] == "seq_read"}
    assert len(names) == 1 and {k for k in kept if k[0] == "seq_write"} == {("seq_write", "")}
    token = names.pop().removeprefix(".nfs-tuner-kept-").removesuffix("-0")
    assert forgotten == [f".nfs-tuner-kept-{token}-0"]  # the one client's, named by the run's journal
    assert said[:2] == ["forget", "release"] and said.count("forget") == 1  # said once, not again at the close
    left = [m for m in messages if m.text == "A read data set was left on the export"]
    assert len(left) == 1 and "(Permission denied)" in left[0].detail
    assert left[0].detail.endswith(f"remove them on nfs-server with `sudo rm -rf -- /srv/nfs/.nfs-tuner-kept-{token}-*`")
