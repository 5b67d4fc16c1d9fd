"""The lab itself: real hosts, real knfsd and NFS clients, reachable only via loopback."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import LabHandle
from tests.lab.kernels import DEFAULT as DEFAULT_KERNEL
from tests.lab.kernels import Kernel
from tests.lab.lab import GUESTS, Lab, LabError

pytestmark = pytest.mark.lab


@pytest.mark.every_kernel
def test_export_is_mounted_on_both_clients(lab: LabHandle) -> None:
    for client in ("lab-client1", "lab-client2"):
        out = lab.run(client, "findmnt -n -o SOURCE,FSTYPE /mnt/lab").stdout.split()
        assert out == ["lab-server:/srv/nfs", "nfs4"]


@pytest.mark.every_kernel
def test_file_written_on_client_is_read_on_server(lab: LabHandle) -> None:
    token = f"written-by-client1-{time.time_ns()}"
    lab.run("lab-client1", f"echo {token} > /mnt/lab/roundtrip.txt && sync")
    try:
        assert lab.run("lab-server", "cat /srv/nfs/roundtrip.txt").stdout.strip() == token
    finally:
        lab.run("lab-client1", "rm -f /mnt/lab/roundtrip.txt")


def _swap(lab: LabHandle, host: str, path: str, new: str) -> tuple[str, str]:
    """Write ``new`` to a kernel file, read it back, restore; returns (old, seen)."""
    old = lab.run(host, f"cat {path}").stdout.strip()
    try:
        lab.run(host, f"echo {new} > {path}")
        seen = lab.run(host, f"cat {path}").stdout.strip()
    finally:
        lab.run(host, f"echo {old} > {path}")
    assert lab.run(host, f"cat {path}").stdout.strip() == old
    return old, seen


@pytest.mark.every_kernel
def test_nfsd_threads_are_readable_and_writable(lab: LabHandle) -> None:
    old, seen = _swap(lab, "lab-server", "/proc/fs/nfsd/threads", "16")
    assert old == "8" and seen == "16"


@pytest.mark.every_kernel
def test_stripe_cache_size_is_readable_and_writable(lab: LabHandle) -> None:
    old, seen = _swap(lab, "lab-server", "/sys/block/md0/md/stripe_cache_size", "1024")
    assert old == "256" and seen == "1024"
    assert "raid5" in lab.run("lab-server", "cat /proc/mdstat").stdout


@pytest.mark.every_kernel
def test_mount_readahead_is_readable_and_writable(lab: LabHandle) -> None:
    bdi = lab.run("lab-client1", "mountpoint -d /mnt/lab").stdout.strip()
    path = f"/sys/class/bdi/{bdi}/read_ahead_kb"
    old, seen = _swap(lab, "lab-client1", path, "4096")
    assert int(old) > 0 and seen == "4096"


def test_jumbo_mtu_passes_and_the_switch_can_black_hole_it(lab: LabHandle) -> None:
    ends = ("lab-server", "lab-client1")
    for host in ends:
        assert lab.run(host, "cat /sys/class/net/lan0/mtu").stdout.strip() == "1500"
    try:
        for host in ends:
            lab.run(host, "ip link set lan0 mtu 9000")
        # 8972 bytes of ICMP payload + 28 of headers = a full 9000-byte frame, don't fragment.
        ping = "ping -c 2 -W 2 -M do -s 8972 lab-server"
        assert lab.run("lab-client1", ping, check=False).returncode == 0
        lab.lab.set_mtu(1500)
        assert lab.run("lab-client1", ping, check=False).returncode != 0
        # ... while ordinary frames (and so SSH) still pass.
        assert lab.run("lab-client1", "ping -c 1 -W 2 -M do -s 1472 lab-server", check=False).returncode == 0
    finally:
        lab.lab.set_mtu(9000)
        for host in ends:
            lab.run(host, "ip link set lan0 mtu 1500")


def test_hosts_mtu_remakes_the_standing_mounts_connection_at_it(lab: LabHandle) -> None:
    nfs_conn = "ss -tin dst 10.213.7.10 dport = :2049"
    try:
        lab.lab.set_hosts_mtu(9000)
        for guest in GUESTS:
            assert lab.run(guest.name, "cat /sys/class/net/lan0/mtu").stdout.strip() == "9000"
        lab.run("lab-client1", "stat /mnt/lab/. >/dev/null")
        assert "advmss:8948" in lab.run("lab-client1", nfs_conn).stdout  # jumbo frames on the NFS connection
    finally:
        lab.lab.set_hosts_mtu(1500)
    assert "advmss:1448" in lab.run("lab-client1", nfs_conn).stdout  # as at boot


@pytest.mark.every_kernel
def test_link_is_shaped_and_offloads_are_off(lab: LabHandle) -> None:
    qdisc = subprocess.run(["ip", "netns", "exec", lab.lab.netns, "tc", "qdisc", "show", "dev", "tap1"],
                           capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert "tbf" in qdisc and "rate 1Gbit" in qdisc
    assert lab.lab._offload_problems("tap1", subprocess.run(
        ["ip", "netns", "exec", lab.lab.netns, "ethtool", "-k", "tap1"], capture_output=True, text=True).stdout) == []


def test_lab_is_reachable_only_through_loopback(lab: LabHandle) -> None:
    status = lab.lab.status()
    assert status["up"] is True
    listeners = subprocess.run(["ss", "-ltnp"], capture_output=True, text=True, check=True).stdout
    ports = [h["port"] for h in status["hosts"].values()]  # type: ignore[union-attr]
    for port in ports:
        lines = [ln for ln in listeners.splitlines() if f":{port} " in ln]
        assert lines and all("127.0.0.1:" in ln for ln in lines), lines
    # No guest has a way out: only the lab subnet is routed.
    for guest in GUESTS:
        routes = lab.run(guest.name, "ip route").stdout
        assert "default" not in routes, routes


def test_lab_guests_offer_root_sudo_and_plain_logins(lab: LabHandle) -> None:
    base = ["ssh", "-F", str(lab.ssh_config), "-o", "BatchMode=yes"]
    tuner = subprocess.run([*base, "-l", "tuner", "lab-client1", "sudo -n id -u"], capture_output=True, text=True, timeout=60)
    assert tuner.stdout.strip() == "0", tuner.stderr
    nosudo = subprocess.run([*base, "-l", "nosudo", "lab-client1", "sudo -n true"], capture_output=True, text=True, timeout=60)
    assert nosudo.returncode != 0 and "password" in nosudo.stderr


@pytest.mark.timeout(400)
def test_a_second_lab_comes_up_and_down_leaving_nothing(lab: LabHandle, tmp_path: Path) -> None:
    """`lab up → ssh → lab down` in its own directory and namespace, over what an earlier lab there
    left (its logs); the host helpers go with it."""
    other = Lab(tmp_path / "lab2", kernels=lab.lab.kernels)  # the same kernel, from the same cache
    other.logs.mkdir(parents=True)
    (other.logs / "lab-client1.log").write_text("an earlier lab's console\n")
    other.up(profile="fast", say=lambda _m: None, kernel=lab.lab.kernel_name() or DEFAULT_KERNEL)
    try:
        assert other.ssh("lab-client1", "true").returncode == 0
        assert other.ssh("lab-client1", "findmnt -n -o FSTYPE /mnt/lab").stdout.strip() == "nfs4"
    finally:
        other.down(say=lambda _m: None)
    assert other._lab_processes() == []
    assert not [p for p in Path("/proc").glob("[0-9]*/cmdline") if _mentions(p, str(other.dir))], "a host helper outlived its lab"
    assert not Path(f"/run/netns/{other.netns}").exists()
    assert not (tmp_path / "lab2" / "state.json").exists()
    assert not (tmp_path / "lab2" / "disks").exists()
    # The first lab was not disturbed.
    assert lab.run("lab-client1", "true").returncode == 0


def test_a_failing_guest_step_is_named_with_its_reason(tmp_path: Path) -> None:
    lab = Lab(tmp_path / "lab3")
    lab.logs.mkdir(parents=True)
    for guest in GUESTS:
        (lab.logs / f"{guest.name}.log").write_text("LAB-STEP mounts\nLAB-READY " + guest.name + "\n")
    (lab.logs / "lab-server.log").write_text("LAB-STEP raid\nLAB-FAIL raid: mdadm --create -> no space\n")
    from tests.lab.lab import LabState

    state = LabState(netns=lab.netns, profile="fast", pids={g.name: os.getpid() for g in GUESTS})
    with pytest.raises(LabError, match=r"lab-server: raid: mdadm --create -> no space"):
        lab._wait_ready(state)


def test_preflight_names_what_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda _name: None)
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    with pytest.raises(LabError) as err:
        Lab(tmp_path / "lab4")._preflight(Kernel("7.2", tmp_path / "linux.uml", tmp_path / "modules", None))
    assert "needs root" in str(err.value) and "make system-deps" in str(err.value)
    assert f"UML 7.2's modules are missing under {tmp_path / 'modules'}" in str(err.value)


def _mentions(cmdline: Path, text: str) -> bool:
    try:
        return text.encode() in cmdline.read_bytes()
    except OSError:
        return False


def test_a_run_asking_for_another_kernel_than_the_running_labs_gets_a_sibling_lab(monkeypatch: pytest.MonkeyPatch) -> None:
    """NFS_TUNER_LAB_KERNEL=7.2 beside an admin's 6.1 lab: the tests neither use nor disturb it (tests/conftest.py)."""
    from tests.conftest import _lab_for

    main = Lab()
    monkeypatch.setattr(Lab, "is_up", lambda self: self.dir == main.dir)
    monkeypatch.setattr(Lab, "kernel_name", lambda self: "6.1")
    assert _lab_for(None).dir == main.dir and _lab_for("6.1").dir == main.dir
    sibling = _lab_for("7.2")
    assert sibling.dir == main.dir.with_name(f"{main.dir.name}-7.2") and sibling.kernels == main.kernels
    assert sibling.netns != main.netns
