"""Checks before touching: each problem a run would meet half-way is one line saying what to do, and the
command line stops before its first change.

The real command (argparse, the application layer, the engine's planning) over the demo's simulated
hosts, which a test can fill, lock out of the export or firewall; nothing reaches the engine's first change.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

import app.commands.sweep as sweep_command
from app import cli
from app.events import EventBus
from app.facts.model import HostFacts
from app.runner.errors import RunError
from app.session import Role, TuningSession
from app.session.preflight import data_set_bytes, space_needed
from app.session.study import StudyChoice, StudyKind
from app.simulated import SimulatedHosts, world
from app.store import Store
from experiments.workloads import MIB

HOSTS = ["--server", "nfs-server", "--client", "client1", "--client", "client2"]


@pytest.fixture
def hosts(monkeypatch: pytest.MonkeyPatch) -> Iterator[SimulatedHosts]:
    simulated = SimulatedHosts(speed=400.0)
    simulated.trusted |= set(world.HOST_NAMES)
    monkeypatch.setattr(sweep_command, "host_side", lambda _args: simulated)
    yield simulated


def sweep(tmp_path: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    db = tmp_path / "s.db"
    code = cli.main(["--db", str(db), "sweep", *HOSTS, "--duration", "5", "--repetitions", "1",
                     "--max-repetitions", "1", *argv])
    out, err = capsys.readouterr()
    with Store(db, readonly=True) as store:  # nothing was started, so nothing was changed
        assert code != 1 or (not store.list_sessions() and not store.unreverted_journal())
    return code, err


def test_a_full_export_is_found_before_the_first_change(hosts: SimulatedHosts, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    hosts.export_free_bytes = 300 * MIB
    code, err = sweep(tmp_path, capsys, "--knob", "nfsd_threads=8,64", "--file-size", "256")
    assert code == 1
    assert "nothing was changed: before the first change, the hosts were checked and found:" in err
    assert ("nfs-server: the export /srv/nfs has 300 MiB free and this plan needs 576 MiB (2 client(s) × 256 MiB "
            "of data, and a margin): free space there, or choose a smaller data set per client") in err
    hosts.export_free_bytes = 600 * MIB
    code, err = sweep(tmp_path, capsys, "--knob", "nfsd_threads=8,64", "--file-size", "256", "--no-ceilings")
    assert code == 0, err


def test_write_access_the_ceiling_port_and_each_problem_on_its_own_line(
        hosts: SimulatedHosts, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    hosts.unwritable.add("client2")

    async def firewalled(server: str, client: str, address: str, **_kw: object) -> None:
        raise RunError(client, "connection refused while connecting to nfs-server:5201")

    monkeypatch.setattr(hosts, "tcp_ceiling", firewalled)
    code, err = sweep(tmp_path, capsys, "--knob", "nfsd_threads=8,64", "--file-size", "16")
    lines = [line.strip() for line in err.splitlines()[1:]]
    assert code == 1 and len(lines) == 3, err
    assert lines[0].startswith("client2: root may not write the export (its mount /mnt/nfs says so)")
    assert "root_squash" in lines[0]
    assert lines[1].startswith("client1: the TCP ceiling test does not get through to nfs-server (connection refused")
    assert "TCP port 5201" in lines[1] and "skip the ceilings" in lines[1]
    assert lines[2].startswith("client2: the TCP ceiling test")


def _facts_of(hosts: SimulatedHosts, host: str, **changes: object) -> None:
    real = hosts.discover

    async def discover(name: str) -> HostFacts:
        facts = await real(name)
        return dataclasses.replace(facts, **changes) if name == host else facts  # type: ignore[arg-type]

    hosts.discover = discover  # type: ignore[method-assign]


def test_what_each_knob_needs_on_each_host(hosts: SimulatedHosts, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    _facts_of(hosts, "client2", kernel="4.19.0-21-amd64")
    code, err = sweep(tmp_path, capsys, "--knob", "nconnect=1,8", "--knob", "rsize=64K,1M", "--file-size", "16",
                      "--no-ceilings")
    assert code == 1
    assert ("client2: nconnect needs Linux 5.3 or newer and this client runs 4.19.0-21-amd64: leave nconnect out "
            "of the plan") in err
    assert "client1: nconnect" not in err and "rsize" not in err


def test_a_login_that_may_not_change_a_knob_is_named_once_per_host_with_what_to_do(
        hosts: SimulatedHosts, tmp_path: Path) -> None:  # fmt: skip
    _facts_of(hosts, "nfs-server", privilege="read-only", sudoers_line="tuner ALL=(root) NOPASSWD: /usr/local/sbin/x")

    async def go() -> list[str]:
        with Store(tmp_path / "s.db") as store:
            session = TuningSession(store, hosts, EventBus())
            await session.connect("nfs-server", Role.SERVER)
            await session.connect("client1", Role.CLIENT)
            spec = session.plan(session.choices(knobs={"nfsd_threads": "8, 64", "stripe_cache_size": "256, 4096"},
                                                workloads=("seq_read",), measure_ceilings=False))
            return (await session.preflight(spec)).lines()

    (line,) = asyncio.run(go())
    assert line.startswith("nfs-server: nfsd_threads, stripe_cache_size cannot be changed there: read-only")
    assert "tuner ALL=(root) NOPASSWD" in line


def test_the_space_a_plan_needs_counts_every_client_and_a_ladders_most_streams(hosts: SimulatedHosts,
                                                                               tmp_path: Path) -> None:
    async def go() -> tuple[int, int, int]:
        session = TuningSession(Store(tmp_path / "s.db"), hosts, EventBus())
        await session.connect("nfs-server", Role.SERVER)
        for c in ("client1", "client2", "client3"):
            await session.connect(c, Role.CLIENT)
        sweep = session.plan(session.choices(knobs={"nfsd_threads": "8, 64"}, workloads=("seq_read", "rand_read"),
                                             file_size=100 * MIB))
        ladder = session.plan_study(session.choices(workloads=("seq_read",), file_size=100 * MIB),
                                    StudyChoice(StudyKind.LADDER, max_streams=8))
        session.store.close()
        return data_set_bytes(sweep), space_needed(sweep), data_set_bytes(ladder)

    per_client, need, ladder = asyncio.run(go())
    # rand_read: four jobs of the data set each; seq_read's is kept on the export beside it (app.runner.kept_data)
    assert per_client == 400 * MIB + 100 * MIB
    assert need == 3 * 500 * MIB + 150 * MIB  # every client at once, and a tenth more
    assert ladder == 8 * 100 * MIB  # the last step: 8 streams
