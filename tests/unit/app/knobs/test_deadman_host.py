"""The host side of the dead-man switch against a hostile local user (issue 12, class 1).

The switch program runs here exactly as on a host (python3 -c SOURCE VERB DIR …), as
root, with its state under a temporary parent instead of /run/nfs-tuner. What a local
user could prepare is prepared for real: directories of the wrong owner or mode,
symlinks, planted and forged files. Each case asserts a refusal and that nothing ran.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import pytest

# root, and a Python start or more per case: make test runs it, make check does not
pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="the switch runs as root and checks owners: run as root"),
              pytest.mark.slow]

SOURCE = resources.files("app.knobs").joinpath("deadman_host.py").read_text(encoding="utf-8")
NOBODY = 65534


def switch(*args: str, input: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", SOURCE, *args], input=input, capture_output=True, text=True, timeout=30)


@pytest.fixture
def base(tmp_path: Path) -> Path:
    os.chmod(tmp_path, 0o755)
    return tmp_path / "nfs-tuner"


def _wait(path: Path, timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            return True
        time.sleep(0.1)
    return False


def test_a_switch_arms_in_a_fresh_private_dir_fires_and_reports(base: Path, tmp_path: Path) -> None:
    d = base / "abc123"
    marker = tmp_path / "restored"
    armed = switch("arm", str(d), "1")
    assert armed.returncode == 0 and armed.stdout.startswith("armed "), armed.stderr
    assert (os.stat(base).st_mode & 0o777) == 0o700 and (os.stat(d).st_mode & 0o777) == 0o700
    restore = [{"id": 7, "label": "x", "steps": [{"argv": ["touch", str(marker)]}]}]
    assert switch("write", str(d), "restore.json", input=json.dumps(restore)).returncode == 0
    assert _wait(d / "fired.json")  # no heartbeat: it fires
    report = json.loads(switch("read", str(d), "fired.json").stdout)
    assert report["results"][0]["id"] == 7 and report["results"][0]["ok"] and marker.exists()
    assert switch("forget", str(d)).returncode == 0 and not d.exists()


def test_disarm_removes_everything_and_runs_nothing(base: Path, tmp_path: Path) -> None:
    d = base / "abc124"
    marker = tmp_path / "ran"
    assert switch("arm", str(d), "30").returncode == 0
    switch("write", str(d), "restore.json", input=json.dumps([{"id": 1, "steps": [{"argv": ["touch", str(marker)]}]}]))
    assert switch("pending", str(d)).returncode == 0
    assert switch("disarm", str(d)).returncode == 0
    deadline = time.monotonic() + 10
    while d.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not d.exists() and not marker.exists()


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757, 0o1777, 0o722])
def test_a_parent_others_can_write_is_refused(base: Path, mode: int) -> None:
    base.mkdir()
    os.chmod(base, mode)
    r = switch("arm", str(base / "abc125"), "30")
    assert r.returncode == 2 and "can be written by others" in r.stderr
    assert list(base.iterdir()) == []


@pytest.mark.parametrize("verb", ["arm", "write", "read", "beat", "disarm", "pending", "forget"])
def test_a_parent_owned_by_a_local_user_is_refused_for_every_verb(base: Path, verb: str) -> None:
    base.mkdir(mode=0o700)
    os.chown(base, NOBODY, NOBODY)
    args = {"arm": ["30"], "write": ["restore.json"], "read": ["fired.json"]}.get(verb, [])
    r = switch(verb, str(base / "abc126"), *args, input="[]")
    assert r.returncode == 2 and f"belongs to uid {NOBODY}" in r.stderr


def test_a_planted_run_directory_is_refused(base: Path) -> None:
    base.mkdir(mode=0o700)
    (base / "abc127").mkdir(mode=0o700)
    r = switch("arm", str(base / "abc127"), "30")
    assert r.returncode == 2 and "exists already" in r.stderr


@pytest.mark.parametrize("where", ["parent", "run"])
def test_symlinks_are_never_followed(base: Path, tmp_path: Path, where: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    if where == "parent":
        base.symlink_to(elsewhere)
        d = base / "abc128"
        r = switch("arm", str(d), "30")
    else:
        base.mkdir(mode=0o700)
        d = base / "abc128"
        d.symlink_to(elsewhere)
        r = switch("write", str(d), "restore.json", input="[]")
    assert r.returncode == 2 and "refused" in r.stderr
    assert list(elsewhere.iterdir()) == []


def test_a_forged_report_of_another_owner_is_not_read(base: Path) -> None:
    d = base / "abc129"
    assert switch("arm", str(d), "30").returncode == 0
    try:
        forged = d / "fired.json"
        forged.write_text(json.dumps({"results": [{"id": 1, "ok": True}]}))
        os.chown(forged, NOBODY, NOBODY)  # as if a local user had put it there
        r = switch("read", str(d), "fired.json")
        assert r.returncode == 2 and "not a private file of root" in r.stderr and r.stdout == ""
    finally:
        switch("disarm", str(d))


@pytest.mark.parametrize("name", ["../x", "restore.json/../../x", "evil", "", ".", "fired.json.tmp"])
def test_only_the_switchs_own_files_can_be_written(base: Path, name: str) -> None:
    d = base / "abc130"
    assert switch("arm", str(d), "30").returncode == 0
    try:
        r = switch("write", str(d), name, input="x")
        assert r.returncode == 2 and "not a file of the switch" in r.stderr
        assert not (base / "x").exists()
    finally:
        switch("disarm", str(d))


@pytest.mark.parametrize("path", ["relative/abc", "/", "/abc/..", "/abc/."])
def test_paths_that_are_not_a_run_directory_are_refused(path: str) -> None:
    r = switch("beat", path)
    assert r.returncode == 2 and "not an absolute directory path" in r.stderr


# -- issue 28: only the switch's own files, finite timeouts, a fixed environment ----------------------------------
@pytest.mark.parametrize("name", ["/etc/shadow", "../../../etc/shadow", "/proc/1/environ", "restore.json", "pid",
                                  "owner", "heartbeat", "fired.json/..", "", "./fired.json"])  # fmt: skip
def test_read_returns_only_the_report(base: Path, name: str) -> None:
    d = base / "abc131000000"
    assert switch("arm", str(d), "30").returncode == 0
    try:
        r = switch("read", str(d), name)
        assert r.returncode == 2 and r.stdout == "" and "refused" in r.stderr, (r.stdout[:200], r.stderr)
    finally:
        switch("disarm", str(d))


@pytest.mark.parametrize("kind", ["fifo", "device", "directory", "symlink", "huge"])
def test_a_report_that_is_not_a_small_regular_file_is_not_opened(base: Path, tmp_path: Path, kind: str) -> None:
    d = base / "abc132000000"
    assert switch("arm", str(d), "30").returncode == 0
    try:
        report = d / "fired.json"
        if kind == "fifo":
            os.mkfifo(report, 0o600)  # opened for reading, it would hang the switch as root
        elif kind == "device":
            os.mknod(report, 0o600 | 0o020000, os.makedev(1, 3))  # /dev/null's numbers: opening a device may act
        elif kind == "directory":
            report.mkdir(mode=0o700)
        elif kind == "symlink":
            report.symlink_to("/etc/shadow")
        else:
            report.write_bytes(b"x" * (4 * 1024 * 1024 + 1))
            os.chmod(report, 0o600)
        r = subprocess.run([sys.executable, "-c", SOURCE, "read", str(d), "fired.json"], capture_output=True,
                           text=True, timeout=10)
        assert r.returncode != 0 and r.stdout == "" and ("refused" in r.stderr or "failed" in r.stderr), r.stderr
        assert "root:" not in r.stdout
    finally:
        switch("disarm", str(d))
        time.sleep(1.2)
        subprocess.run(["rm", "-rf", str(d)], check=False)


@pytest.mark.parametrize("timeout", ["nan", "inf", "-inf", "NaN", "1e9", "601", "0", "-1", "٣٠", "３０", "30 ", "", "1e1"])
def test_arm_takes_only_a_finite_timeout_in_range(base: Path, timeout: str) -> None:
    d = base / "abc133000000"
    r = switch("arm", str(d), timeout)
    assert r.returncode == 2 and "timeout" in r.stderr and not d.exists(), (r.stdout, r.stderr)


def test_replayed_steps_run_with_a_fixed_environment(base: Path, tmp_path: Path) -> None:
    d = base / "abc134000000"
    marker = tmp_path / "env"
    env = {**os.environ, "LD_PRELOAD": "/tmp/evil.so", "PATH": "/tmp/evil:/usr/bin:/bin", "PYTHONPATH": "/tmp/evil"}
    armed = subprocess.run([sys.executable, "-c", SOURCE, "arm", str(d), "1"], capture_output=True, text=True,
                           timeout=30, env=env)
    assert armed.returncode == 0, armed.stderr
    restore = [{"id": 1, "steps": [{"argv": ["/bin/sh", "-c", f"env > {marker}"]}]}]
    assert switch("write", str(d), "restore.json", input=json.dumps(restore)).returncode == 0
    assert _wait(d / "fired.json")
    seen = dict(line.split("=", 1) for line in marker.read_text().splitlines() if "=" in line)
    assert "LD_PRELOAD" not in seen and "PYTHONPATH" not in seen and seen["PATH"] == "/usr/sbin:/usr/bin:/sbin:/bin"
    switch("forget", str(d))


@pytest.mark.parametrize("entries", ['{"results": [1]}', "[1]", '[{"steps": null}]', '[{"steps": [1]}]',
                                     '[{"steps": [{"argv": "sync"}]}]', "null"])  # fmt: skip
def test_restore_steps_of_the_wrong_shape_are_refused_when_written(base: Path, entries: str) -> None:
    d = base / "abc135000000"
    assert switch("arm", str(d), "30").returncode == 0
    try:
        r = switch("write", str(d), "restore.json", input=entries)
        assert r.returncode == 2 and "refused" in r.stderr and not (d / "restore.json").exists()
    finally:
        switch("disarm", str(d))


def test_a_restore_list_written_refreshes_the_heartbeat(base: Path) -> None:
    """The controller skips a beat for a host it has just written to (app.knobs.changes): the write must count."""
    d = base / "abc123"
    assert switch("arm", str(d), "600").returncode == 0
    try:
        os.utime(d / "heartbeat", (1, 1), follow_symlinks=False)
        assert switch("write", str(d), "restore.json", input="[]").returncode == 0
        assert time.time() - os.stat(d / "heartbeat", follow_symlinks=False).st_mtime < 30
    finally:
        switch("disarm", str(d))


# -- serve: one switch process for a run's restore lists ------------------------------------------------------------
def test_serve_writes_each_line_with_writes_checks_answers_each_and_ends_at_eof(base: Path) -> None:
    d = base / "abc136000000"
    assert switch("arm", str(d), "600").returncode == 0
    try:
        os.utime(d / "heartbeat", (1, 1), follow_symlinks=False)
        first = [{"id": 1, "label": "a", "steps": [{"argv": ["true"]}]}]
        last = [{"id": 2, "label": "b", "steps": []}]
        lines = [json.dumps(first), '[{"steps": [1]}]', "beat", "not json", json.dumps(last)]
        r = switch("serve", str(d), "restore.json", input="".join(line + "\n" for line in lines))
        answers = r.stdout.splitlines()
        assert r.returncode == 0 and len(answers) == 5, (r.stdout, r.stderr)
        assert answers[0] == answers[2] == answers[4] == "ok"
        assert answers[1].startswith("refused: a restore step") and answers[3].startswith("failed: ")
        assert json.loads((d / "restore.json").read_text()) == last  # the refused ones wrote nothing
        assert time.time() - os.stat(d / "heartbeat", follow_symlinks=False).st_mtime < 30
    finally:
        switch("disarm", str(d))


def test_serve_refuses_a_line_longer_than_a_restore_list_and_reads_no_further(base: Path) -> None:
    d = base / "abc137000000"
    assert switch("arm", str(d), "600").returncode == 0
    try:
        huge = "[" + " " * (4 * 1024 * 1024 + 10) + "]"
        r = switch("serve", str(d), "restore.json", input=huge + "\n[]\n")
        assert r.returncode == 2 and r.stdout.splitlines() == [
            "refused: a line is at most 4194304 bytes; no more lines are read"]
        assert not (d / "restore.json").exists()
    finally:
        switch("disarm", str(d))


@pytest.mark.parametrize("name", ["fired.json", "heartbeat", "../x", "pid"])
def test_serve_takes_only_the_restore_list(base: Path, name: str) -> None:
    d = base / "abc138000000"
    assert switch("arm", str(d), "30").returncode == 0
    try:
        r = switch("serve", str(d), name, input="[]\n")
        assert r.returncode == 2 and "not a file of the switch" in r.stderr and r.stdout == ""
    finally:
        switch("disarm", str(d))


def test_serve_in_a_directory_a_local_user_prepared_writes_nothing(base: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    base.mkdir(mode=0o700)
    (base / "abc139000000").symlink_to(elsewhere)
    r = switch("serve", str(base / "abc139000000"), "restore.json", input="[]\nbeat\n")
    assert r.returncode == 0 and all(line.startswith("refused: ") for line in r.stdout.splitlines())
    assert len(r.stdout.splitlines()) == 2 and list(elsewhere.iterdir()) == []
