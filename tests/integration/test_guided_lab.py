"""A guided plan on real hosts changes only the knobs that matter there, and confirms the change (issue 29).

On the wan profile (a 20 ms round trip) with a client whose own mount reads at rsize 64 KiB,
one stream's speed is decided by rsize and readahead (docs/lab.md's table: ×4.7 and ×5.3);
the export's write delay cannot move a read. The guided plan gets rsize and the write delay
(two knobs keep the test within minutes), with the product's defaults for everything else:
its screening, refinement, put-back checks and confirmation run through the real engine over
SSH, and its recommendation changes only rsize, leaves the write delay at today's value with
a line saying why, and states a confirmed gain.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.events import EventBus
from app.hosts import HostPool, SshSettings
from app.report.session_data import load_session_data
from app.session import Role, TuningSession
from app.store import SessionState, Store
from app.sweep.ssh_hosts import SshHosts
from tests.conftest import LabHandle
from tests.lab.lab import Lab

pytestmark = [pytest.mark.lab, pytest.mark.calibrated]  # wan's ×2.7 for rsize is 6.1's (on 7.2: +26 %)
CLIENT = "lab-client1"
MATTER, CANNOT = {"rsize"}, {"export_wdelay"}


@pytest.fixture
def wan_with_a_slow_mount(lab: LabHandle) -> Iterator[Lab]:
    """The wan profile, and the client's own mount of the export at rsize 64 KiB (today's setting); put back."""
    before = lab.lab.current_profile()
    lab.lab.set_profile("wan", 20)
    lab.run(CLIENT, "umount /mnt/lab && mount -t nfs -o vers=4.2,rsize=65536 lab-server:/srv/nfs /mnt/lab", timeout=120)
    try:
        yield lab.lab
    finally:
        lab.run(CLIENT, "umount /mnt/lab; mount -t nfs -o vers=4.2 lab-server:/srv/nfs /mnt/lab", timeout=120, check=False)
        lab.lab.set_profile(before.name, before.rtt_ms if before.name == "wan" else None)


@pytest.mark.timeout(1200)  # 550–615 s beside a loaded machine's other work
def test_a_guided_plan_changes_only_the_knobs_that_matter_and_confirms_it(
        lab: LabHandle, wan_with_a_slow_mount: Lab, tmp_path: Path) -> None:  # fmt: skip
    settings = SshSettings(config_file=lab.ssh_config, app_known_hosts=tmp_path / "kh")

    async def go() -> int:
        async with HostPool(settings) as pool:
            with Store(tmp_path / "s.db") as store:
                session = TuningSession(store, SshHosts(pool, lab.ssh_config), EventBus(), deadman_timeout=60)
                await session.connect("lab-server", Role.SERVER)
                await session.connect(CLIENT, Role.CLIENT)
                assert session.current_values()["rsize"] == "65536"  # today's, from the client's own mount
                choices = session.choices(knobs={"rsize": "64K, 1M", "export_wdelay": "wdelay, no_wdelay"},
                                          workloads=("seq_read",), duration_s=3.0, file_size=64 << 20)  # fmt: skip
                finished = await session.run(session.plan(choices))
                assert finished.state == SessionState.COMPLETE.value and not finished.problems, finished
                return finished.session_id

    sid = asyncio.run(go())
    with Store(tmp_path / "s.db", readonly=True) as store:
        data = load_session_data(store, sid)
        steps = {t.step for t in store.trials(sid)}
    plan = data.plan
    assert plan is not None and "screen" in steps, steps
    said = "\n".join(plan.evidence)
    assert all(f"{knob} " in said for knob in CANNOT), said  # a line each: screened, and what was decided
    changed = set(plan.changes)
    # the put-back checks once judged the candidate's fresh runs against its twins' screening runs, and the drift
    # of a loaded machine between them kept the inert write delay (issue 29): never again
    assert not changed & CANNOT and changed <= MATTER, f"{plan.status}, changes {plan.changes}:\n{said}"
    if not changed and plan.status in ("nothing earned", "not confirmed", "unconfirmed"):
        # Beside four other labs and the suite at a load of 10, the lab's runs once spread so far that rsize's
        # ×2.7 read "+17 % (−41 % … +132 %), within the noise" (1 of 4 runs this session): keeping today's is
        # then the honest answer, and the words must say why. Reported as not shown, with the evidence.
        assert any(words in said for words in ("within the noise", "did not hold", "confirmed against them")), said
        pytest.xfail(f"the lab's noise under load hid rsize's gain: {plan.status}:\n{said}")
    assert plan.status == "confirmed" and changed == MATTER, f"{plan.status}, changes {plan.changes}:\n{said}"
    assert "confirm" in steps and plan.config["export_wdelay"] == "wdelay", steps
    gain = plan.confirmed_gain
    # beyond the noise by a margin: rsize alone is worth ×2.7 here, and a machine running two labs and the
    # rest of the suite beside this one measured +70 % (+36 % … +112 %) in three pairs
    assert gain is not None and gain[1] is not None and gain[1] > 0.0, gain
