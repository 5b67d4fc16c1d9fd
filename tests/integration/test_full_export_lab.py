"""A full export on real hosts: the pre-flight check sees it before anything is changed, and an export
that fills after the check ends its trial with "the export is full (N MiB free)" and leaves no file.

Needs the lab (marked ``lab``): the export is filled with one fallocate'd file on lab-server, removed after.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.events import EventBus
from app.hosts import HostPool, SshSettings
from app.session import Role, TuningSession
from app.store import JournalState, Store, TrialState
from app.sweep import SweepEngine, SweepSpec
from app.sweep.ssh_hosts import SshHosts
from experiments.plan import Plan, Timing
from experiments.workloads import MIB
from tests.conftest import LabHandle

pytestmark = pytest.mark.lab
EXPORT = "/srv/nfs"
FILLER = f"{EXPORT}/.nfs-tuner-test-filler"  # the test's own; never a name the agent uses
LEFT_FREE = 8 * MIB
TIMING = Timing(setup_s=10.0, warmup_s=0.5, min_measure_s=2.0, max_measure_s=2.0)


def _fill(lab: LabHandle) -> None:
    """Every block of the export's file system taken but LEFT_FREE, those ext4 keeps for root too (nfsd writes
    as root for a no_root_squash export): a reserve is made, the rest filled in ever smaller pieces until none
    fits, and the reserve freed."""
    lab.run("lab-server", f"fallocate -l {LEFT_FREE} {FILLER}.reserve && n=0 && "
                          f"for size in 1G 256M 64M 16M 4M 1M 256K 64K 16K 4K; do "
                          f"while fallocate -l $size {FILLER}.$n 2>/dev/null; do n=$((n+1)); done; done; "
                          f"rm -f {FILLER}.reserve && sync", timeout=300)  # fmt: skip


def _spec() -> SweepSpec:
    plan = Plan(knobs={"nfsd_threads": (8,)}, workloads=("seq_write",), strategy="grid", min_runs=1, max_runs=1,
                timing=TIMING)  # fmt: skip
    return SweepSpec("lab-server", ("lab-client1",), EXPORT, plan, file_size=64 * MIB, measure_ceilings=False)


@pytest.fixture
def filled(lab: LabHandle) -> Iterator[None]:
    """The filler goes after the test, whatever happened."""
    yield
    lab.run("lab-server", f"rm -rf {FILLER}.* {EXPORT}/.nfs-tuner-agent-*", check=False)  # nor a failure's leftovers for the next test


def test_the_preflight_sees_a_full_export_and_changes_nothing(lab: LabHandle, tmp_path: Path, filled: None) -> None:
    settings = SshSettings(config_file=lab.ssh_config, app_known_hosts=tmp_path / "kh")
    _fill(lab)

    async def go() -> list[str]:
        async with HostPool(settings) as pool:
            with Store(tmp_path / "s.db") as store:
                session = TuningSession(store, SshHosts(pool, lab.ssh_config), EventBus())
                await session.connect("lab-server", Role.SERVER)  # the lab's keys are known: nothing to ask
                await session.connect("lab-client1", Role.CLIENT)
                spec = session.plan(session.choices(knobs={"nfsd_threads": "8, 16"}, workloads=("seq_write",),
                                                    file_size=64 * MIB), export=EXPORT)
                found = await session.preflight(spec)
                assert not store.list_sessions() and not store.unreverted_journal()
                return found.lines()

    lines = asyncio.run(go())
    assert any(line.startswith(f"lab-server: the export {EXPORT} has ") and " MiB free and this plan needs " in line
               for line in lines), lines


def test_an_export_that_fills_after_the_check_ends_the_trial_saying_how_full_and_leaves_no_file(
        lab: LabHandle, tmp_path: Path, filled: None) -> None:  # fmt: skip
    settings = SshSettings(config_file=lab.ssh_config, app_known_hosts=tmp_path / "kh")
    _fill(lab)

    async def go() -> int:
        with Store(tmp_path / "s.db") as store:
            async with HostPool(settings) as pool:
                return await SweepEngine(store, pool, EventBus(), _spec(), deadman_timeout=30).run()

    sid = asyncio.run(go())
    with Store(tmp_path / "s.db", readonly=True) as store:
        trials = store.trials(sid)
        broken = [t for t in trials if t.state == TrialState.BROKEN]
        assert broken, [(t.state, t.reason) for t in trials]
        assert "the export is full (" in broken[0].reason and " MiB free)" in broken[0].reason, broken[0].reason
        assert all(e.state == JournalState.REVERTED for e in store.journal(sid))
    left = lab.run("lab-server", f"ls -A {EXPORT}").stdout.split()
    assert not [n for n in left if n.startswith(".nfs-tuner-agent-")], left  # the trial's files are gone
