"""nfs-tuner-helper's argument checks: what a narrow sudoers rule lets through (issue 12, class 2).

check() is the helper's whole policy: the absolute argv it would run, or Refused. The
cases below are what an attacker holding the login would try through the rule; each
must be refused before anything runs. The rendered helper is also run as a program.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from app.knobs.sudo_helper import digest, render

# a Python start or more per case: make test runs it, make check does not
starts_programs = pytest.mark.slow

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


@starts_programs
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
    assert bad_dir.returncode == 2 and "/run/nfs-tuner/TOKEN" in bad_dir.stderr, bad_dir.stderr
    assert run("sync").returncode == 0
    d = f"/run/nfs-tuner/{os.urandom(6).hex()}"
    armed = run("deadman", "arm", d, "60")
    assert armed.returncode == 0 and armed.stdout.startswith("armed"), armed.stderr
    try:
        forged = run("deadman", "write", d, "fired.json", stdin='{"results": []}')
        assert forged.returncode == 2 and "deadman write SWITCH_DIR restore.json" in forged.stderr  # no forged report
        shell = [{"id": 1, "steps": [{"argv": ["sh", "-c", "touch /tmp/nfs-tuner-helper-pwned"]}]}]
        planted = run("deadman", "write", d, "restore.json", stdin=json.dumps(shell))
        assert planted.returncode == 2 and "not a command nfs-tuner runs" in planted.stderr
        good = [{"id": 1, "steps": [{"argv": ["sync"]}]}]
        assert run("deadman", "write", d, "restore.json", stdin=json.dumps(good)).returncode == 0
        # serve: each line checked as write checks it, the planted step refused, the run going on
        served = run("deadman", "serve", d, "restore.json", stdin=f"{json.dumps(shell)}\nbeat\n{json.dumps(good)}\n")
        answers = served.stdout.splitlines()
        assert served.returncode == 0 and len(answers) == 3 and answers[1:] == ["ok", "ok"], served
        assert answers[0].startswith("refused:") and "not a command nfs-tuner runs" in answers[0]
        assert json.loads(Path(d, "restore.json").read_text()) == good
    finally:
        run("deadman", "disarm", d)
        time.sleep(1.5)
        run("deadman", "forget", d)
    assert not Path("/tmp/nfs-tuner-helper-pwned").exists()


@pytest.mark.parametrize("argv", [
    ["ping", "-n", "-c", "2", "-i", "0.2", "-W", "2", "-M", "do", "-s", "8972", "-f"],
    ["ping", "-n", "-c", "99999", "-i", "0.2", "-W", "2", "-M", "do", "-s", "8972", "10.0.0.1"],
    ["ping", "-n", "-c", "2", "-i", "0.2", "-W", "2", "-M", "do", "-s", "70000", "10.0.0.1"],
    ["ping", "-n", "-c", "2", "-i", "0.2", "-W", "2", "-M", "do", "-s", "1472", "10.0.0.1;id"],
    ["ping", "-f", "-c", "2", "-i", "0.2", "-W", "2", "-M", "do", "-s", "1472", "10.0.0.1"],
    ["ping", "-n", "-c", "2", "-i", "0.2", "-W", "2", "-M", "dont", "-s", "1472", "10.0.0.1"],
    ["ping", "-n", "-c", "2", "-i", "0.01", "-W", "2", "-M", "do", "-s", "1472", "10.0.0.1"],  # a flood by its interval
    ["ping", "-n", "-c", "2", "-W", "2", "-M", "do", "-s", "1472", "10.0.0.1"],  # the interval is not left out either
])
def test_only_the_mtu_checks_ping_is_allowed(helper: dict[str, Any], argv: list[str]) -> None:
    with pytest.raises(helper["Refused"]):
        helper["check"](argv)


def test_the_mtu_checks_ping_runs_by_absolute_path(helper: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(helper, "_tool", lambda name: "/usr/bin/" + name)
    argv = ["ping", "-n", "-c", "2", "-i", "0.2", "-W", "2", "-M", "do", "-s", "8972", "10.213.7.10"]
    assert helper["check"](argv) == ["/usr/bin/ping", *argv[1:]]


@pytest.mark.parametrize(("server", "source"), [("fd00::10", "[fd00::10]:/srv/nfs"), ("10.0.0.1", "10.0.0.1:/srv/nfs"),
                                                ("filer.example", "filer.example:/srv/nfs")])
def test_a_test_mount_names_an_ipv6_server_in_brackets_as_mount_and_the_helper_read_it(
        helper: dict[str, Any], server: str, source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.knobs.targets import ScratchMount

    (mkdir, mount) = ScratchMount(server, "/srv/nfs", "/mnt/nfs-tuner-1-ab").set_steps("vers=4.2")
    monkeypatch.setitem(helper, "_known_servers", lambda: {server})
    assert mount.argv[-2] == source and helper["_mount_source"](source) == source
    assert helper["_server_of"](source) == server


# -- issue 28: the rendered helper as the narrow rule runs it (sudo sets SUDO_UID), as root ------------------------
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the helper refuses to run unless root")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    script = tmp_path_factory.mktemp("helper") / "nfs-tuner-helper"
    script.write_text(render())
    return script


def as_login(script: Path, uid: int, *args: str, stdin: str = "", strace: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The helper as `sudo` runs it for the login ``uid``: root, with SUDO_UID set and a clean environment."""
    env = {"PATH": "/usr/bin:/bin", "SUDO_UID": str(uid), "SUDO_USER": "tuner"}
    trace = ["strace", "-f", "-qq", "-e", "trace=%file,execve,%process", "-o", str(strace)] if strace else []
    return subprocess.run([*trace, HOST_PYTHON, "-IS", str(script), *args], input=stdin, capture_output=True,
                          text=True, timeout=30, env=env)


@starts_programs
@needs_root
def test_a_switch_answers_only_the_login_that_armed_it(rendered: Path) -> None:
    d = f"/run/nfs-tuner/{os.urandom(6).hex()}"
    assert as_login(rendered, 4201, "deadman", "arm", d, "60").returncode == 0
    try:
        for verb in (["read", d, "fired.json"], ["beat", d], ["disarm", d], ["forget", d], ["pending", d],
                     ["write", d, "restore.json"]):  # fmt: skip
            r = as_login(rendered, 4202, "deadman", *verb, stdin="[]")
            assert r.returncode == 2 and "armed by another login" in r.stderr, (verb, r.stderr)
        served = as_login(rendered, 4202, "deadman", "serve", d, "restore.json", stdin="[]\nbeat\n")  # line by line
        assert [line.startswith("refused: ") and "armed by another login" in line
                for line in served.stdout.splitlines()] == [True, True], served
        assert not Path(d, "restore.json").exists()
        assert as_login(rendered, 4201, "deadman", "pending", d).returncode == 0
        assert Path(d).is_dir()  # another login's disarm and forget did nothing
    finally:
        as_login(rendered, 4201, "deadman", "disarm", d)
    deadline = time.monotonic() + 10
    while Path(d).exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not Path(d).exists()


@starts_programs
@needs_root
def test_a_login_may_arm_only_a_few_watchers(rendered: Path) -> None:
    dirs = [f"/run/nfs-tuner/{os.urandom(6).hex()}" for _ in range(5)]
    try:
        got = [as_login(rendered, 4203, "deadman", "arm", d, "600") for d in dirs]
        assert [g.returncode for g in got] == [0, 0, 0, 0, 2], [g.stderr for g in got]
        assert "4 dead-man switches armed" in got[-1].stderr and not Path(dirs[-1]).exists()
        assert as_login(rendered, 4204, "deadman", "arm", dirs[-1], "600").returncode == 0  # another login's own
    finally:
        for d in dirs:
            for uid in (4203, 4204):
                _disarm(rendered, uid, d)


SECRETS = ("/etc/shadow", "/etc/ssh/", "/root/.ssh", "/proc/1/", "/etc/sudoers", "/dev/zero", "/etc/evil")
HOST_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable  # what the shebang names


@needs_root
@pytest.mark.skipif(not shutil.which("strace"), reason="strace is not installed (tests/system-packages.txt)")
@pytest.mark.parametrize("attack", [
    ["deadman", "read", "{d}", "/etc/shadow"], ["deadman", "read", "{d}", "../../../etc/shadow"],
    ["deadman", "read", "{d}", "../../../proc/1/environ"], ["deadman", "read", "{d}", "/etc/ssh/ssh_host_ed25519_key"],
    ["deadman", "read", "/run/nfs-tuner/../../etc", "shadow"], ["deadman", "read", "{d}/../../../etc", "shadow"],
    ["deadman", "read", "{d}", "/dev/zero"], ["deadman", "write", "{d}", "/etc/sudoers"],
    ["deadman", "arm", "{d}", "nan"], ["deadman", "arm", "{d}", "inf"], ["deadman", "arm", "/etc/sudoers.d", "60"],
    ["cat", "--", "/etc/shadow"], ["cat", "--", "/proc/fs/nfsd/../../1/environ"], ["tee", "/etc/sudoers"],
    ["rpc.nfsd", "٣"], ["rpc.nfsd", "²"], ["mount", "-t", "nfs", "-o", "proto=rdma", "evil:/x", "/mnt/nfs-tuner-1"],
])  # fmt: skip
@starts_programs
def test_a_refused_command_opens_and_runs_nothing_it_names(rendered: Path, tmp_path: Path, attack: list[str]) -> None:
    """strace records every file the helper opens or looks at and every program it starts: a refused
    command must touch none of what it names (only python's own start-up files), and start nothing."""
    d = f"/run/nfs-tuner/{os.urandom(6).hex()}"
    trace = tmp_path / "trace"
    argv = [a.replace("{d}", d) for a in attack]
    if attack[:2] == ["deadman", "read"] or attack[:2] == ["deadman", "write"]:
        assert as_login(rendered, 4205, "deadman", "arm", d, "60").returncode == 0
    try:
        r = as_login(rendered, 4205, *argv, stdin="8\n", strace=trace)
        assert r.returncode == 2 and r.stderr.startswith("refused: ") and r.stdout == "", (r.stdout[:300], r.stderr)
        lines = trace.read_text().splitlines()
        execs = [ln for ln in lines if "execve(" in ln and f'execve("{HOST_PYTHON}"' not in ln]
        assert execs == [], execs
        touched = [ln for ln in lines if any(f'"{s}' in ln for s in SECRETS) and "execve(" not in ln]
        assert touched == [], touched
    finally:
        _disarm(rendered, 4205, d)


def _disarm(script: Path, uid: int, d: str) -> None:
    """Disarm and wait for the watcher to clean up (it looks once a second)."""
    if as_login(script, uid, "deadman", "disarm", d).returncode == 0:
        deadline = time.monotonic() + 5
        while Path(d).exists() and time.monotonic() < deadline:
            time.sleep(0.1)


@pytest.mark.parametrize("options", ["defaults", "vers=4.2,rsize=1048576", "nocto,nosuid", ""])
def test_every_test_mount_is_nosuid_and_nodev_whatever_the_privilege(options: str) -> None:
    """The mount command itself carries them (root and full sudo run it as it is, not through the helper)."""
    from app.knobs.targets import ScratchMount

    (_, mount) = ScratchMount("nfs1", "/srv/nfs", "/mnt/nfs-tuner-1-ab").set_steps(options)
    opts = mount.argv[4].split(",")
    assert opts.count("nosuid") == 1 and opts.count("nodev") == 1 and mount.argv[:4] == ("mount", "-t", "nfs", "-o")


@starts_programs
@needs_root
@pytest.mark.skipif(not os.path.exists("/root/.pyenv/versions/3.6.15/bin/python3"), reason="no Python 3.6 here")
def test_the_helper_and_its_switch_run_on_python_3_6(rendered: Path) -> None:
    """The oldest python3 a host may have: the helper's table, its checks and the switch it builds in."""
    py36 = "/root/.pyenv/versions/3.6.15/bin/python3"
    run = lambda *a: subprocess.run([py36, "-IS", str(rendered), *a], capture_output=True, text=True, timeout=30)  # noqa: E731
    assert run("version").stdout.strip() == digest()
    refused = run("deadman", "read", "/run/nfs-tuner/0123456789ab", "/etc/shadow")
    assert refused.returncode == 2 and "deadman read SWITCH_DIR fired.json" in refused.stderr
    d = f"/run/nfs-tuner/{os.urandom(6).hex()}"
    assert run("deadman", "arm", d, "30").returncode == 0
    assert run("deadman", "pending", d).returncode == 0
    served = subprocess.run([py36, "-IS", str(rendered), "deadman", "serve", d, "restore.json"], input="[]\nbeat\n",
                            capture_output=True, text=True, timeout=30)
    assert served.returncode == 0 and served.stdout.splitlines() == ["ok", "ok"], served
    _disarm(rendered, 0, d)
