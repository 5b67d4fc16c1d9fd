"""Fact parsers on captured outputs: every field an admin relies on, read right."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from app.discovery import require_client, require_server
from app.facts import build_host_facts
from app.facts.parse_nfs import parse_exportfs, parse_tcp, parse_versions
from app.facts.parse_storage import mount_for_path, parse_mdstat, parse_mountinfo
from app.facts.script import GATHER_SCRIPT, split_sections
from app.hosts import NoPython3, NotAnNfsServer

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "facts"


def load(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_server_facts() -> None:
    f = build_host_facts("nfs1", load("synth_server.txt"))
    assert f.hostname == "nfs1"
    assert f.os.id == "debian" and f.os.version_id == "12"
    assert f.kernel == "6.1.0-18-amd64"
    assert f.cpu_count == 16 and f.mem_total_kb == 65843212
    assert f.nfs_utils_version == "2.6.2"
    nic = next(n for n in f.nics if n.name == "enp1s0")
    assert (nic.mtu, nic.speed_mbps, nic.state) == (9000, 10000, "up")
    assert nic.addresses == ("10.0.0.10/24", "fd00::10/64")
    assert next(n for n in f.nics if n.name == "lo").speed_mbps is None

    md0 = next(a for a in f.md_arrays if a.name == "md0")
    assert md0.level == "raid5"
    assert md0.members == ("sdd", "sdb", "sda")
    assert md0.failed == ("sdc",) and md0.spares == ("sde",)
    assert md0.chunk_kb == 512 and md0.stripe_cache_size == 4096 and md0.raid_disks == 4
    md1 = next(a for a in f.md_arrays if a.name == "md1")
    assert md1.level == "raid1" and md1.stripe_cache_size is None

    assert [(e.path, e.client) for e in f.exports] == [
        ("/srv/nfs", "10.0.0.0/24"),
        ("/srv/nfs", "client9.example"),
        ("/srv/with space", "*"),
    ]
    assert "rw" in f.exports[0].options and not f.exports[0].is_async
    assert f.exports[1].is_async
    fs = {e.export_path: e for e in f.export_filesystems}
    assert fs["/srv/nfs"].fstype == "ext4" and fs["/srv/nfs"].md_array == "md0"
    assert fs["/srv/with space"].mount_point == "/srv/with space"

    assert f.nfsd.running and f.nfsd.threads == 32
    assert f.nfsd.versions == {"2": False, "3": True, "4": True, "4.1": True, "4.2": True}
    assert f.nfsd.pools[0].values["threads-timedout"] == 12
    assert f.nfsd.max_block_size == 1048576

    # Established :2049 peers only (not the listener, not ssh, not TIME_WAIT), v4 and v6.
    assert [p.remote_address for p in f.nfs_peers] == ["10.0.0.21", "10.0.0.22", "fd00::30"]
    cand = {c.address: c for c in f.client_candidates}
    assert list(cand) == ["10.0.0.21", "10.0.0.22", "fd00::30"]
    assert cand["10.0.0.21"].nfs4_name == "Linux NFSv4.2 client1"
    assert cand["10.0.0.21"].minor_version == 2
    assert f.roles == ("server",)
    assert f.python3.version == "3.11.2" and f.python3.usable_for_agent
    assert f.tools["fio"] == "" and f.tools["rpc.nfsd"] == "/usr/sbin/rpc.nfsd"
    assert f.problems == ()
    require_server(f)


def test_client_facts() -> None:
    f = build_host_facts("client1", load("synth_client.txt"))
    assert f.os.id == "rocky" and f.nfs_utils_version == "2.5.4"
    assert f.roles == ("client",)
    assert f.nfs_peers == () and f.client_candidates == ()
    m = {x.mount_point: x for x in f.nfs_mounts}
    data = m["/mnt/data"]
    assert (data.server, data.export, data.version) == ("10.0.0.10", "/srv/nfs", "4.2")
    assert (data.rsize, data.wsize, data.nconnect, data.proto) == (1048576, 1048576, 4, "tcp")
    assert data.read_ahead_kb == 15360 and data.dev == "0:53" and data.age_seconds == 3600
    assert data.options["hard"] == ""
    old = m["/mnt/old share"]
    assert (old.version, old.rsize, old.read_ahead_kb, old.fstype) == ("3", 65536, 960, "nfs")
    v6 = m["/mnt/v6"]
    assert v6.server == "fd00::10" and v6.read_ahead_kb is None
    assert any("/mnt/v6" in p and "read_ahead_kb" in p for p in f.problems)
    assert f.python3.version == "3.9.18"
    require_client(f)
    with pytest.raises(NotAnNfsServer, match="nfsd kernel service is not loaded"):
        require_server(f)


@pytest.mark.parametrize("name", ["lab_server.txt", "lab_client1.txt", "lab_client2.txt"])
def test_lab_captures(name: str) -> None:
    """Real outputs of the lab (UML, Debian 12, kernel 6.1) captured over ssh."""
    f = build_host_facts("lab", load(name))
    assert f.problems == ()
    assert f.os.id == "debian" and f.kernel == "6.1.176" and f.nfs_utils_version == "2.6.2"
    nics = {n.name: n for n in f.nics}
    assert nics["vec0"].mtu == 9000 and nics["lan0"].mtu == 1500  # lan0 rides on vec0
    assert nics["lan0"].addresses[0].startswith("10.213.7.") and nics["lan0"].speed_mbps is None
    assert f.cpu_count == 1
    assert f.python3.usable_for_agent
    if name == "lab_server.txt":
        assert f.roles == ("server",)
        (md0,) = f.md_arrays
        assert (md0.level, sorted(md0.members), md0.chunk_kb, md0.stripe_cache_size) == (
            "raid5", ["ubda", "ubdb", "ubdc"], 512, 256)
        assert [(e.path, e.client) for e in f.exports] == [("/srv/nfs", "10.213.7.0/24")]
        assert f.export_filesystems[0].md_array == "md0"
        assert f.export_filesystems[0].fstype == "ext4"
        assert f.nfsd.threads == 8 and f.nfsd.versions["4.2"]
        assert {c.address for c in f.client_candidates} == {"10.213.7.11", "10.213.7.12"}
        assert {c.nfs4_name for c in f.client_candidates} == {
            "Linux NFSv4.2 lab-client1", "Linux NFSv4.2 lab-client2"}
    else:
        assert f.roles == ("client",)
        (m,) = f.nfs_mounts
        assert (m.mount_point, m.server, m.export, m.version) == ("/mnt/lab", "lab-server", "/srv/nfs", "4.2")
        assert (m.rsize, m.wsize, m.read_ahead_kb, m.proto) == (1048576, 1048576, 128, "tcp")


def test_devbox_capture_has_no_nfs_role() -> None:
    f = build_host_facts("devbox", load("devbox_no_nfs.txt"))
    assert f.kernel and f.cpu_count and f.mem_total_kb
    assert any(n.name == "lo" and n.mtu == 65536 for n in f.nics)
    assert f.roles == () and not f.nfsd.running
    with pytest.raises(NotAnNfsServer):
        require_server(f)


def test_missing_python_is_reported() -> None:
    text = load("synth_client.txt").replace("/usr/bin/python3\n3.9.18\n", "")
    f = build_host_facts("c", text)
    assert not f.python3.present
    assert "python3 not found" in f.problems
    with pytest.raises(NoPython3, match="Install it"):
        require_client(f)
    old = build_host_facts("c", load("synth_client.txt").replace("3.9.18", "3.5.2"))
    with pytest.raises(NoPython3):
        require_client(old)


def test_stopped_server_and_no_exports() -> None:
    text = load("synth_server.txt")
    stopped = build_host_facts("s", text.replace("@@\n32\n", "@@\n0\n"))
    with pytest.raises(NotAnNfsServer, match="0 threads"):
        require_server(stopped)


def test_truncated_output_is_a_problem_not_a_crash() -> None:
    text = load("synth_server.txt")
    f = build_host_facts("s", text[: len(text) // 2])
    assert "the discovery script's output was cut short" in f.problems
    assert f.cpu_count == 16


def test_exportfs_wrapped_and_odd_lines() -> None:
    text = "/a/very/long/path/name/here\n\t\thost1(rw,sync)\n\tstray(ro)\n/b\n"
    got = parse_exportfs(text)
    assert [(e.path, e.client, e.options) for e in got.value] == [
        ("/a/very/long/path/name/here", "host1", ("rw", "sync"))
    ]
    assert len(got.problems) == 2  # the stray line and the client-less /b


def test_mdstat_read_only_and_inactive() -> None:
    text = (
        "md127 : active (auto-read-only) raid1 sdb1[1] sda1[0]\n"
        "      1046528 blocks super 1.2 [2/2] [UU]\n"
        "md5 : inactive sdc[0](S)\n      10 blocks\n"
    )
    arrays = {a.name: a for a in parse_mdstat(text).value}
    assert arrays["md127"].level == "raid1" and arrays["md127"].members == ("sdb1", "sda1")
    assert arrays["md5"].state == "inactive" and arrays["md5"].spares == ("sdc",)


def test_versions_and_tcp_oddities() -> None:
    assert parse_versions("+3 -4 ?x").value == {"3": True, "4": False}
    assert parse_versions("+3 -4 ?x").problems
    assert parse_tcp("  0: ZZ:0801 00:00 01").problems


def test_mount_for_path_prefers_longest() -> None:
    mounts = parse_mountinfo(
        "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
        "2 1 9:0 / /srv rw - xfs /dev/md0 rw\n"
        "3 1 9:1 / /srvx rw - xfs /dev/md1 rw\n"
    ).value
    assert mount_for_path(mounts, "/srv/nfs").source == "/dev/md0"  # type: ignore[union-attr]
    assert mount_for_path(mounts, "/srvx").source == "/dev/md1"  # type: ignore[union-attr]
    assert mount_for_path(mounts, "/home").source == "/dev/sda1"  # type: ignore[union-attr]


def test_script_is_fixed_text_with_every_section_parsed() -> None:
    names = {line.split("sec ", 1)[1].split(";")[0].split()[0]
             for line in GATHER_SCRIPT.splitlines() if line.startswith("sec ")}
    sections = split_sections(load("devbox_no_nfs.txt"))  # a capture of this very script
    assert names == set(sections)
    assert sections["privilege"].splitlines()[-1].startswith("sudo:")
    for shell in ("sh", "dash", "bash"):  # POSIX sh: whatever /bin/sh the host has
        if shutil.which(shell):
            checked = subprocess.run([shell, "-n"], input=GATHER_SCRIPT, text=True, capture_output=True)
            assert checked.returncode == 0, (shell, checked.stderr)
