"""nfs-tuner-helper's argument checks: what a narrow sudoers rule lets through (issue 12, class 2).

check() is the helper's whole policy: the absolute argv it would run, or Refused. The
cases below are what an attacker holding the login would try through the rule; each
must be refused before anything runs. The rendered helper is also run as a program.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from app.knobs.sudo_helper import digest, render

SOURCE = resources.files("app.knobs").joinpath("sudo_helper_host.py").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def helper() -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": "helper_under_test"}
    exec(compile(SOURCE, "sudo_helper_host.py", "exec"), ns)
    return ns


REFUSED: list[tuple[list[str], str]] = [
    (["sh", "-c", "id"], ""), (["bash"], ""), (["python3", "-c", "import os"], ""), (["env", "sh"], ""),
    (["sudo", "sh"], ""), ([], ""), (["tee"], "1"), (["tee", "/etc/sudoers.d/x"], "1"),
    (["tee", "/etc/sudoers"], "1"), (["tee", "/proc/fs/nfsd/threads", "/etc/passwd"], "8"),
    (["tee", "-a", "/etc/passwd"], "8"), (["tee", "/proc/fs/nfsd/../../../etc/passwd"], "8"),
    (["tee", "/proc/fs/nfsd/threads"], "8; rm -rf /"), (["tee", "/proc/fs/nfsd/threads"], "x"),
    (["tee", "/proc/fs/nfsd/threads"], "1\n2\n"), (["tee", "/proc/fs/nfsd/threads"], ""),
    (["tee", "/proc/sys/vm/drop_caches"], "7"), (["tee", "/proc/sys/kernel/core_pattern"], "|/tmp/x"),
    (["tee", "/proc/sys/kernel/modprobe"], "1"), (["tee", "/sys/class/bdi/../../../etc/x/read_ahead_kb"], "1"),
    (["tee", "/sys/block/md0/md/../../../../etc/passwd"], "1"), (["tee", "/root/.ssh/authorized_keys"], "1"),
    (["cat", "--", "/etc/shadow"], ""), (["cat", "/etc/shadow"], ""), (["cat", "--", "/root/.ssh/id_rsa"], ""),
    (["cat", "--", "/proc/fs/nfsd/../../../etc/shadow"], ""), (["cat", "--", "/proc/1/environ"], ""),
    (["exportfs", "-o", "rw,no_root_squash", "*:/"], ""), (["exportfs", "-o", "rw", "*:/etc"], ""),
    (["exportfs", "-ra"], ""), (["exportfs", "-u", "*:/srv"], ""), (["exportfs", "-o", "rw", "-i", "*:/"], ""),
    (["exportfs", "-o", "rw", "/"], ""), (["exportfs", "-o", "rw", "-x:/srv"], ""),
    (["mount", "--bind", "/", "/mnt/nfs-tuner-1-ab"], ""), (["mount", "-o", "remount,rw", "/"], ""),
    (["mount", "-t", "nfs", "-o", "bind", "srv:/x", "/mnt/nfs-tuner-1-ab"], ""),
    (["mount", "-t", "nfs", "-o", "rw", "srv:/x", "/"], ""), (["mount", "-t", "nfs", "-o", "rw", "srv:/x", "/etc"], ""),
    (["mount", "-t", "nfs", "-o", "rw", "srv:/x", "/mnt/nfs-tuner-1-ab/../../etc"], ""),
    (["mount", "-t", "nfs", "-o", "rw,suid", "srv:/x", "/mnt/nfs-tuner-1-ab"], ""),
    (["mount", "-t", "nfs", "-o", "rw,exec,dev", "srv:/x", "/mnt/nfs-tuner-1-ab"], ""),
    (["mount", "-t", "tmpfs", "-o", "rw", "none", "/mnt/nfs-tuner-1-ab"], ""),
    (["mount", "-t", "nfs", "-o", "rw", "-oremount:/x", "/mnt/nfs-tuner-1-ab"], ""),
    (["mount", "-t", "nfs", "-o", "rw", "srv:/x/../../etc", "/mnt/nfs-tuner-1-ab"], ""),
    (["mount", "-t", "nfs", "-o", "rw,context=x", "srv:/x", "/mnt/nfs-tuner-1-ab"], ""),
    (["mount", "-t", "nfs", "-o", "rw,rsize=1;id", "srv:/x", "/mnt/nfs-tuner-1-ab"], ""),
    (["umount", "/"], ""), (["umount", "/srv/nfs"], ""), (["umount", "-f", "/mnt/nfs-tuner-1"], ""),
    (["umount", "-l", "/proc"], ""), (["mkdir", "-p", "-m", "0777", "/mnt/nfs-tuner-1-ab"], ""),
    (["mkdir", "-p", "-m", "0755", "/etc/cron.d/x"], ""), (["mkdir", "/mnt/nfs-tuner-1"], ""),
    (["rmdir", "/etc"], ""), (["rmdir", "/mnt"], ""), (["ip", "link", "set", "dev", "lo", "up"], ""),
    (["ip", "link", "set", "dev", "lo", "mtu", "9000", "up"], ""), (["ip", "link", "set", "dev", "-x", "mtu", "9000"], ""),
    (["ip", "link", "set", "dev", "nonexistent0", "mtu", "9000"], ""), (["ip", "link", "set", "dev", "lo", "mtu", "10"], ""),
    (["ip", "link", "set", "dev", "lo", "mtu", "1e4"], ""), (["ip", "addr", "add", "1.2.3.4/8", "dev", "lo"], ""),
    (["ip", "netns", "exec", "x", "sh"], ""), (["sync", "-f", "/"], ""), (["rpc.nfsd", "0"], ""), (["sysctl", "-w", "x=1"], ""),
    (["tee", "/proc/fs/nfsd/threads\x00"], "8"), (["cat", "--", "/var/lib/nfs/etab/../../../etc/shadow"], ""),
]


@pytest.mark.parametrize(("argv", "stdin"), REFUSED, ids=lambda v: repr(v)[:50])
def test_what_the_rule_must_not_grant_is_refused(helper: dict[str, Any], argv: list[str], stdin: str) -> None:
    with pytest.raises(helper["Refused"]):
        helper["check"](argv, stdin)


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/sys/class/net/lo"), reason="needs root and lo")
@pytest.mark.parametrize(("argv", "stdin", "tool"), [
    (["sync"], "", "sync"), (["tee", "/proc/fs/nfsd/threads"], "16\n", "tee"),
    (["tee", "/sys/block/md0/md/stripe_cache_size"], "4096\n", "tee"),
    (["tee", "/sys/class/bdi/0:53/read_ahead_kb"], "16384\n", "tee"), (["tee", "/proc/sys/vm/drop_caches"], "3\n", "tee"),
    (["cat", "--", "/proc/fs/nfsd/pool_stats"], "", "cat"), (["exportfs", "-v"], "", "exportfs"),
    (["mkdir", "-p", "-m", "0755", "/mnt/nfs-tuner-3-abcdef"], "", "mkdir"),
    (["umount", "-l", "/mnt/nfs-tuner-3-abcdef"], "", "umount"), (["ip", "link", "set", "dev", "lo", "mtu", "9000"], "", "ip"),
])
def test_what_nfs_tuner_runs_is_run_by_absolute_path(helper: dict[str, Any], argv: list[str], stdin: str, tool: str) -> None:
    if tool == "exportfs" and not any(os.path.exists(f"{d}/exportfs") for d in ("/usr/sbin", "/sbin")):
        pytest.skip("exportfs is not installed here")
    out = helper["check"](argv, stdin)
    assert out[0].startswith("/") and out[0].endswith("/" + tool) and out[1:] == argv[1:]


def test_a_test_mount_is_always_nosuid_and_nodev(helper: dict[str, Any]) -> None:
    assert helper["_mount_options"]("vers=4.2,rsize=1048576") == "vers=4.2,rsize=1048576,nosuid,nodev"


def test_exports_may_only_toggle_what_nfs_tuner_tunes(helper: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(helper, "_exported", lambda: {("10.0.0.0/24", "/srv/nfs"): {"rw", "sync", "no_subtree_check"}})
    monkeypatch.setitem(helper, "_tool", lambda name: "/usr/sbin/" + name)
    assert helper["check"](["exportfs", "-o", "rw,async,no_subtree_check", "10.0.0.0/24:/srv/nfs"])[1:] == [
        "-o", "rw,async,no_subtree_check", "10.0.0.0/24:/srv/nfs"]
    for bad in ("rw,no_root_squash", "rw,insecure", "rw,crossmnt", "rw,fsid=0"):
        with pytest.raises(helper["Refused"]):
            helper["check"](["exportfs", "-o", bad, "10.0.0.0/24:/srv/nfs"])
    with pytest.raises(helper["Refused"], match="only changes existing exports"):
        helper["check"](["exportfs", "-o", "rw,sync", "*:/srv/nfs"])


@pytest.mark.skipif(os.geteuid() != 0, reason="the helper refuses to run unless root")
def test_the_rendered_helper_runs_as_a_program_and_reports_its_digest(tmp_path: Path) -> None:
    script = tmp_path / "nfs-tuner-helper"
    script.write_text(render())
    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-I", str(script), *args], input=stdin, capture_output=True, text=True,
                              timeout=30)
    assert run("version").stdout.strip() == digest()
    refused = run("sh", "-c", "touch /tmp/nfs-tuner-helper-pwned")
    assert refused.returncode == 2 and refused.stderr.startswith("refused:")
    assert not Path("/tmp/nfs-tuner-helper-pwned").exists()
    bad_dir = run("deadman", "arm", "/tmp/x", "30")
    assert bad_dir.returncode == 2 and "/run/nfs-tuner/TOKEN" in bad_dir.stderr
    assert run("sync").returncode == 0
    d = f"/run/nfs-tuner/{os.urandom(6).hex()}"
    armed = run("deadman", "arm", d, "60")
    assert armed.returncode == 0 and armed.stdout.startswith("armed"), armed.stderr
    try:
        forged = run("deadman", "write", d, "fired.json", stdin='{"results": []}')
        assert forged.returncode == 2 and "only restore.json" in forged.stderr  # the login cannot forge a report
        shell = [{"id": 1, "steps": [{"argv": ["sh", "-c", "touch /tmp/nfs-tuner-helper-pwned"]}]}]
        planted = run("deadman", "write", d, "restore.json", stdin=json.dumps(shell))
        assert planted.returncode == 2 and "not a command nfs-tuner runs" in planted.stderr
        good = [{"id": 1, "steps": [{"argv": ["sync"]}]}]
        assert run("deadman", "write", d, "restore.json", stdin=json.dumps(good)).returncode == 0
    finally:
        run("deadman", "disarm", d)
        time.sleep(1.5)
        run("deadman", "forget", d)
    assert not Path("/tmp/nfs-tuner-helper-pwned").exists()


@pytest.mark.parametrize("argv", [
    ["ping", "-n", "-c", "2", "-W", "2", "-M", "do", "-s", "8972", "-f"],
    ["ping", "-n", "-c", "99999", "-W", "2", "-M", "do", "-s", "8972", "10.0.0.1"],
    ["ping", "-n", "-c", "2", "-W", "2", "-M", "do", "-s", "70000", "10.0.0.1"],
    ["ping", "-n", "-c", "2", "-W", "2", "-M", "do", "-s", "1472", "10.0.0.1;id"],
    ["ping", "-f", "-c", "2", "-W", "2", "-M", "do", "-s", "1472", "10.0.0.1"],
    ["ping", "-n", "-c", "2", "-W", "2", "-M", "dont", "-s", "1472", "10.0.0.1"],
])
def test_only_the_mtu_checks_ping_is_allowed(helper: dict[str, Any], argv: list[str]) -> None:
    with pytest.raises(helper["Refused"]):
        helper["check"](argv)


def test_the_mtu_checks_ping_runs_by_absolute_path(helper: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(helper, "_tool", lambda name: "/usr/bin/" + name)
    argv = ["ping", "-n", "-c", "2", "-W", "2", "-M", "do", "-s", "8972", "10.213.7.10"]
    assert helper["check"](argv) == ["/usr/bin/ping", *argv[1:]]


@pytest.mark.parametrize(("server", "source"), [("fd00::10", "[fd00::10]:/srv/nfs"), ("10.0.0.1", "10.0.0.1:/srv/nfs"),
                                                ("filer.example", "filer.example:/srv/nfs")])
def test_a_test_mount_names_an_ipv6_server_in_brackets_as_mount_and_the_helper_read_it(
        helper: dict[str, Any], server: str, source: str) -> None:
    from app.knobs.targets import ScratchMount

    (mkdir, mount) = ScratchMount(server, "/srv/nfs", "/mnt/nfs-tuner-1-ab").set_steps("vers=4.2")
    assert mount.argv[-2] == source and helper["SOURCE"].fullmatch(source)
