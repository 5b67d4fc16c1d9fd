"""An MTU trial must ride a connection made at that MTU.

The lab's clients mount the export at /mnt/lab from boot, at MTU 1500. A test mount of
the same server joins that mount's TCP connection, so a trial at MTU 9000 would still
move 1500-byte frames: the sweep warns before it starts and marks the trial broken,
saying what to do. With the standing mount taken away, the test mount opens its own
connection at 9000, the trial runs, and the network ceiling is measured at that MTU.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from app.events import EventBus, Message
from app.hosts import HostPool, SshSettings
from app.store import Store, TrialState
from app.sweep import SweepEngine, SweepSpec
from app.recommend.context import ceiling_mtus
from experiments.plan import Plan, Timing
from experiments.workloads import MIB
from tests.conftest import LabHandle

pytestmark = pytest.mark.lab
CLIENT = os.environ.get("NFS_TUNER_LAB_CLIENT", "lab-client1")
SERVER_IP = "10.213.7.10"
TIMING = Timing(setup_s=10.0, warmup_s=0.5, min_measure_s=2.0, max_measure_s=2.0)


def _sweep(lab: LabHandle, db: Path, *, ceilings: bool, knobs: dict[str, tuple[int | str, ...]] | None = None,
           ) -> tuple[int, list[Message]]:  # fmt: skip
    plan = Plan(knobs=knobs or {"mtu": (9000,)}, workloads=("seq_read",), strategy="grid", min_runs=1, max_runs=1,
                timing=TIMING)
    spec = SweepSpec("lab-server", (CLIENT,), "/srv/nfs", plan, file_size=16 * MIB, measure_ceilings=ceilings)
    settings = SshSettings(config_file=lab.ssh_config, app_known_hosts=db.with_suffix(".kh"))
    bus, said = EventBus(), []
    bus.subscribe(said.append, Message)

    async def scenario() -> int:
        with Store(db) as store:
            async with HostPool(settings) as pool:
                return await SweepEngine(store, pool, bus, spec, deadman_timeout=30).run()

    return asyncio.run(scenario()), said


def _mtus(lab: LabHandle) -> tuple[str, str]:
    read = "cat /sys/class/net/lan0/mtu"
    return lab.run("lab-server", read).stdout.strip(), lab.run(CLIENT, read).stdout.strip()


def test_an_mtu_trial_on_a_shared_connection_is_refused_and_runs_on_its_own(lab: LabHandle, tmp_path: Path) -> None:
    lab.lab.set_hosts_mtu(1500)  # as at boot: the standing mount's connection made at 1500
    lab.run(CLIENT, "stat /mnt/lab/. >/dev/null")
    ss = lab.run(CLIENT, f"ss -tin dst {SERVER_IP} dport = :2049").stdout
    assert "advmss:1448" in ss, ss

    sid, said = _sweep(lab, tmp_path / "shared.db", ceilings=False)
    assert any(m.text == f"{CLIENT} already mounts lab-server at /mnt/lab" for m in said), said
    with Store(tmp_path / "shared.db", readonly=True) as store:
        (trial,) = store.trials(sid)
    assert trial.state == TrialState.BROKEN
    assert "carries 1500-byte frames, not MTU 9000" in trial.reason and "Unmount" in trial.reason, trial.reason
    assert _mtus(lab) == ("1500", "1500")  # put back

    options = next(ln.split()[3] for ln in lab.run(CLIENT, "cat /proc/mounts").stdout.splitlines()
                   if ln.split()[1] == "/mnt/lab")  # fmt: skip
    lab.run(CLIENT, "umount /mnt/lab")
    try:
        sid, said = _sweep(lab, tmp_path / "own.db", ceilings=True)
        with Store(tmp_path / "own.db", readonly=True) as store:
            (trial,) = store.trials(sid)
            mtus = ceiling_mtus(store, sid)
        assert trial.state == TrialState.OK, trial.reason
        assert isinstance(trial.summary, dict)
        negotiated = trial.summary["negotiated"][CLIENT]
        assert (negotiated["transport"], negotiated["transport_mtu"]) == ("new", "9000"), negotiated
        assert mtus == {9000}
        assert not any("already mounts" in m.text for m in said), said
    finally:
        lab.run(CLIENT, f"mountpoint -q /mnt/lab || mount -t nfs -o {options} lab-server:/srv/nfs /mnt/lab")
    assert _mtus(lab) == ("1500", "1500")


@pytest.mark.every_kernel
def test_an_nconnect_trial_pinned_by_a_standing_mount_says_so(lab: LabHandle, tmp_path: Path) -> None:
    """Every mount of one server shares the first mount's connections: /mnt/lab (NFSv4.2, nconnect 1) pins a
    test mount's nconnect, so a trial asking for 4 is refused with the mount that pinned it, not measured at 1."""
    sid, said = _sweep(lab, tmp_path / "pinned.db", ceilings=False, knobs={"nconnect": (4,), "nfsvers": ("4.2",)})
    assert any(m.text == f"{CLIENT} already mounts lab-server at /mnt/lab" for m in said), said
    with Store(tmp_path / "pinned.db", readonly=True) as store:
        (trial,) = store.trials(sid)
    assert trial.state == TrialState.BROKEN
    assert f"{CLIENT}'s test mount runs nconnect=1, not 4: lab-server's mount at /mnt/lab" in trial.reason, trial.reason
    assert "nconnect" not in lab.run(CLIENT, "grep ' /mnt/lab ' /proc/mounts").stdout


def test_a_slot_table_trial_on_a_shared_connection_is_measured_at_todays_value_only(lab: LabHandle,
                                                                                    tmp_path: Path) -> None:  # fmt: skip
    """/mnt/lab's connection was made under the client's slot table of today: a trial at that value measures what
    it says (every such trial of a guided session was refused before, 2026-11-28), one at another value is refused."""
    today = int(lab.run(CLIENT, "cat /proc/sys/sunrpc/tcp_max_slot_table_entries").stdout.strip())
    other = 16 if today != 16 else 128
    sid, said = _sweep(lab, tmp_path / "slots.db", ceilings=False, knobs={"rpc_slots": (today, other)})
    assert any(m.text == f"{CLIENT} already mounts lab-server at /mnt/lab" for m in said), said
    with Store(tmp_path / "slots.db", readonly=True) as store:
        trials = {str(t.config["rpc_slots"]): t for t in store.trials(sid)}
    assert trials[str(today)].state == TrialState.OK, trials[str(today)].reason
    assert trials[str(other)].state == TrialState.BROKEN
    assert "rpc_slots applies to new connections only" in trials[str(other)].reason
    assert int(lab.run(CLIENT, "cat /proc/sys/sunrpc/tcp_max_slot_table_entries").stdout.strip()) == today
