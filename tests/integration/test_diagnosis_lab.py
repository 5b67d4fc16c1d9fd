"""The diagnosis finds each lab profile's limit from a short baseline on real hosts: the round trip on
wan, the flush cost on hdd, the thread waits on contention; and the plan it proposes follows it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.hosts import HostPool, SshSettings
from app.session import PlanChoices, Role, TuningSession
from app.session.diagnosis import Diagnosis, Limit
from app.session.proposal import Proposal
from app.store import Store
from app.sweep.ssh_hosts import SshHosts
from experiments.workloads import MIB
from tests.conftest import LabHandle
from tests.lab.lab import Lab

pytestmark = [pytest.mark.lab, pytest.mark.calibrated]  # the lab's figures, measured on UML 6.1
SHORT = PlanChoices(duration_s=8.0, file_size=64 * MIB)  # today's figures: a 2 s warm-up, 8 s measured


def _diagnose(lab: LabHandle, tmp_path: Path, workloads: tuple[str, ...]) -> tuple[Diagnosis, Proposal]:
    async def scenario() -> tuple[Diagnosis, Proposal]:
        settings = SshSettings(config_file=lab.ssh_config, app_known_hosts=tmp_path / "kh")
        core = TuningSession(Store(tmp_path / "s.db"), SshHosts(HostPool(settings)), ceiling_s=2.0)
        core.plan_defaults = SHORT
        try:
            await core.connect("lab-server", Role.SERVER)  # the lab's keys are known: nothing to ask
            for client in ("lab-client1", "lab-client2"):
                await core.connect(client, Role.CLIENT)
            await core.baseline(workloads)
            return core.diagnosis(), core.proposal(workloads)
        finally:
            await core.close()

    return asyncio.run(asyncio.wait_for(scenario(), 600))


def _says(d: Diagnosis) -> str:
    return "\n".join([d.headline, *(f"{f.subject}: {f.text}" for f in d.findings)])


@pytest.mark.timeout(900)
def test_wan_is_limited_by_the_round_trip(on_profile: Lab, lab: LabHandle, tmp_path: Path) -> None:
    on_profile.set_profile("wan", 20)
    d, proposal = _diagnose(lab, tmp_path, ("seq_read",))
    assert Limit.ROUND_TRIP in d.limits, _says(d)
    assert d.observed.rtt_ms is not None and 15 <= d.observed.rtt_ms <= 40, _says(d)
    readahead = proposal.advice("read_ahead_kb")
    assert readahead.ticked and readahead.reason.startswith("round trip"), readahead


@pytest.mark.timeout(900)
def test_hdd_is_limited_by_the_flush_cost(on_profile: Lab, lab: LabHandle, tmp_path: Path) -> None:
    on_profile.set_profile("hdd")
    d, proposal = _diagnose(lab, tmp_path, ("small_files",))
    assert Limit.FLUSH_COST in d.limits, _says(d)
    assert d.observed.flush_s is not None and d.observed.flush_s >= 0.005, _says(d)  # 10-60 ms a synced write there
    sync = proposal.advice("export_sync")
    assert not sync.ticked and "async would gain most" in sync.reason, sync  # said, never ticked without the opt-in


@pytest.mark.timeout(900)
def test_contention_is_limited_by_the_thread_waits(on_profile: Lab, lab: LabHandle, tmp_path: Path) -> None:
    on_profile.set_profile("contention")
    d, proposal = _diagnose(lab, tmp_path, ("rand_read",))  # four streams per client on the server's 8 threads
    assert Limit.THREAD_WAITS in d.limits, _says(d)
    threads = proposal.advice("nfsd_threads")
    assert threads.ticked and threads.reason.startswith("threads waited"), threads
    assert on_profile.ssh("lab-server", "cat /proc/fs/nfsd/threads").stdout.strip() == "8"  # measured, not changed
