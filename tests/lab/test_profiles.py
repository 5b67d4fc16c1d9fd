"""Each lab profile shows the effect it was built for (short runs; benchmarks/lab_profiles.py
measures them long), and the lab restarts a guest that stopped answering."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from tests.conftest import LabHandle
from tests.lab import effects
from tests.lab.lab import Lab, _profile, tap_of
from tests.lab.profiles import guest_delay_script, server_disk_script

pytestmark = [pytest.mark.lab, pytest.mark.calibrated]  # the lab's figures, measured on UML 6.1


def test_wan_adds_the_round_trip_and_makes_readahead_and_rsize_matter(on_profile: Lab) -> None:
    on_profile.set_profile("wan", 20)
    assert 18 <= effects.rtt_ms(on_profile) <= 60  # 20 ms of netem, and what a loaded machine adds
    client = effects.CLIENTS[0]
    small = effects.cold_seq_read(on_profile, client, rsize=65536, read_ahead_kb=128, mib=96)
    big = effects.cold_seq_read(on_profile, client, rsize=1048576, read_ahead_kb=16384, mib=96)
    assert big / small >= 2.0, (small, big)  # ×3 and more on a quiet machine; less beside two other labs
    # The delay is on ingress: a sender's own queue stays empty (TCP small queues see no backlog).
    assert "netem" in on_profile.ssh("lab-server", "tc qdisc show dev ifb0").stdout
    assert "netem" not in on_profile.ssh("lab-server", "tc qdisc show dev vec0").stdout
    on_profile.set_profile("gigabit")
    assert effects.rtt_ms(on_profile) < 15  # no netem; a loaded machine adds some
    assert "netem" not in on_profile.ssh("lab-server", "tc qdisc show").stdout


def test_hdd_makes_sync_exports_and_a_small_stripe_cache_cost(on_profile: Lab) -> None:
    on_profile.set_profile("hdd")
    client = effects.CLIENTS[0]
    with effects.export_mode(on_profile, "sync"):
        sync = effects.creates_per_s(on_profile, client, files=30)
    with effects.export_mode(on_profile, "async"):
        fast = effects.creates_per_s(on_profile, client, files=30)
    assert fast / sync >= 5, (sync, fast)
    assert "(sync," in on_profile.ssh("lab-server", "exportfs -v").stdout  # put back
    small = effects.md_seq_write(on_profile, stripe_cache_size=256, mib=64)
    big = effects.md_seq_write(on_profile, stripe_cache_size=4096, mib=64)
    assert big / small >= 1.25, (small, big)  # ×2.3 on a quiet machine; ×1.4 with three labs beside it
    tables = on_profile.ssh("lab-server", "dmsetup table").stdout
    assert tables.count("delay") == 3 and " 0 1 " in tables


def test_contention_makes_nfsd_threads_matter_and_pool_stats_show_the_queue(on_profile: Lab) -> None:
    on_profile.set_profile("contention")
    few = effects.rand_read(on_profile, threads=1, streams=4, seconds=5, mib=64)
    many = effects.rand_read(on_profile, threads=32, streams=4, seconds=5, mib=64)
    assert many.iops / few.iops >= 3, (few, many)
    assert few.queued_share > 0.5 > 0.1 > many.queued_share, (few, many)
    assert on_profile.ssh("lab-server", "cat /proc/fs/nfsd/threads").stdout.strip() == "8"  # put back


def test_profile_scripts_are_plain_and_each_profile_resolves() -> None:
    for name in ("gigabit", "fast", "wan", "hdd", "contention"):
        p = _profile(name, None)
        assert guest_delay_script(p).startswith("set -e")
        assert server_disk_script(p).count("dmsetup load") == 3
    assert "netem delay 5.000ms" in guest_delay_script(_profile("wan", 10))


@pytest.mark.timeout(300)
def test_a_wedged_client_is_named_with_its_console_and_restarted(lab: LabHandle) -> None:
    the_lab = lab.lab
    state = the_lab._load_state()
    assert state is not None
    pid = state.pids["lab-client2"]
    os.killpg(pid, signal.SIGSTOP)  # a guest that stops answering, as a wedged one does
    try:
        sick = the_lab.unhealthy(timeout=5)
        assert list(sick) == ["lab-client2"]
        said_sick = sick["lab-client2"]
        console = the_lab.logs / "lab-client2.log"
        assert "does not answer SSH" in said_sick and f"console ({console}) ends:" in said_sick
        last_line = console.read_text(errors="replace").rstrip().splitlines()[-1]
        assert said_sick.rstrip().endswith(last_line.strip())  # the tail is the console's own
    finally:
        said: list[str] = []
        assert the_lab.heal(say=said.append) == ["lab-client2"]
    assert any("lab-client2 stopped answering" in m for m in said)
    assert the_lab.unhealthy() == {}
    assert the_lab.ssh("lab-client2", "findmnt -n -o FSTYPE /mnt/lab").stdout.strip() == "nfs4"
    assert (the_lab.logs / "lab-client2.log.1").exists()  # the wedged guest's console is kept


def test_a_guest_that_stops_receiving_reopens_its_link_and_carries_on(lab: LabHandle) -> None:
    """The receive watchdog (rx_watchdog.py). The stall it exists for (a missed receive edge
    with the tap's queue full) cannot be made on demand; taking the guest's cable off the
    switch makes the same silence, so the watchdog's kick and the guest's life after it
    (SSH, its standing NFS mount) are what is checked."""
    the_lab = lab.lab
    tap = tap_of("lab-client1")
    before = len(the_lab.kicks().get("lab-client1", []))
    the_lab._ns("ip", "link", "set", tap, "nomaster")
    try:
        deadline = time.monotonic() + 30
        while len(the_lab.kicks().get("lab-client1", [])) == before and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        the_lab._ns("ip", "link", "set", tap, "master", "br0")
    kicks = the_lab.kicks().get("lab-client1", [])
    assert len(kicks) > before, "the watchdog did not reopen vec0 within 30 s of silence"
    assert "vec0: no answer from the switch" in kicks[-1]
    assert the_lab.ssh("lab-client1", "ls /mnt/lab >/dev/null && echo ok", timeout=60).stdout.strip() == "ok"
    assert the_lab.unhealthy() == {}


def test_a_guest_whose_tap_refused_a_frame_reopens_its_link_and_carries_on(lab: LabHandle) -> None:
    """A frame the host's tap refuses (here: the tap is down for a moment, so the guest's write
    fails) latches UML 6.1's vector driver in error: it transmits nothing more, ever, until vec0
    is closed (vp->in_error; the soak's transmit stall). The watchdog's reopen clears it; its
    kick line says so."""
    the_lab = lab.lab
    tap = tap_of("lab-client2")
    before = len(the_lab.kicks().get("lab-client2", []))
    refused = the_lab.tap_counters("lab-client2")["rx_dropped"]
    the_lab._ns("ip", "link", "set", tap, "down")
    try:
        time.sleep(1.5)  # an echo request or two meets the tap down: well short of the watchdog's 5 s
    finally:
        the_lab._ns("ip", "link", "set", tap, "up")
    deadline = time.monotonic() + 40
    while len(the_lab.kicks().get("lab-client2", [])) == before and time.monotonic() < deadline:
        time.sleep(0.5)
    kicks = the_lab.kicks().get("lab-client2", [])
    assert len(kicks) > before, "no kick: the guest carried on by itself after its tap came back"
    assert "tx_dropped" in kicks[-1], kicks[-1]  # the refused frame: dropped once, and nothing sent after it
    # The host saw the refusal too: what a wedge report's tap counters tell apart from other stalls.
    assert the_lab.tap_counters("lab-client2")["rx_dropped"] > refused
    if " -> " in kicks[-1]:  # a guest booted with today's watchdog says how the reopen went
        assert "down rc 0, up rc 0, link up" in kicks[-1], kicks[-1]
    assert the_lab.ssh("lab-client2", "ls /mnt/lab >/dev/null && echo ok", timeout=60).stdout.strip() == "ok"
    assert the_lab.unhealthy() == {}


# The expiry lost: UML's clock timer disarmed from outside while the guest is at work, as a
# lost SIGALRM leaves it (gdb calls timer_settime in the UML process; id 0 is its only timer).
STOP_CLOCK = ("set $p = (void*)mmap(0, 4096, 3, 0x22, -1, 0)", "print (int)timer_settime((void*)0, 0, $p, (void*)0)",
              "print (int)munmap($p, 4096)", "detach")  # fmt: skip


def test_a_guest_whose_clock_stopped_is_given_a_tick_and_carries_on(lab: LabHandle) -> None:
    """The fourth wedge kind (clock_watchdog.py): a guest whose clock timer never fires again.
    Idle afterwards, it spins at 100 % CPU without sleeping and answers nothing past SSH's key
    exchange; the host's clock watchdog sees the spin and sends one SIGALRM."""
    the_lab = lab.lab
    state = the_lab._load_state()
    assert state is not None and "clock" in state.pids, "the lab was started without its clock watchdog"
    pid = state.pids["lab-client2"]
    before = len(the_lab.nudges().get("lab-client2", []))
    work = the_lab.ssh_start("lab-client2", "dd if=/dev/zero bs=1M count=3000 2>/dev/null | md5sum")
    time.sleep(1.5)  # at work: its clock's next tick is due
    gdb = subprocess.run(["gdb", "-q", "-batch", "-p", str(pid), *(a for c in STOP_CLOCK for a in ("-ex", c))],
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert "$2 = 0" in gdb.stdout, gdb.stdout + gdb.stderr  # timer_settime disarmed it
    out = work.communicate(timeout=60)[0]  # the work ends: interrupts from the network still run
    assert work.returncode == 0, out
    # A wedged guest spins until nudged; the watchdog nudges once it spent 0.4 s of CPU and 2 s without a sleep, which
    # beside four other labs and the suite on two cores takes longer than a guest alone: wait for it
    deadline = time.monotonic() + 120
    while len(lines := the_lab.nudges().get("lab-client2", [])) < before + 2 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert len(lines) >= before + 2, f"no nudge and outcome within 120 s: {lines[before:]}"
    nudge, outcome = lines[before:before + 2]
    assert "no sleep for" in nudge and "sent SIGALRM" in nudge, nudge
    assert "slept again: its clock had stopped" in outcome, outcome
    assert the_lab.ssh("lab-client2", "sleep 1 && ls /mnt/lab >/dev/null && echo ok", timeout=30).stdout.strip() == "ok"
    assert the_lab.unhealthy() == {}
