"""Least privilege that works (issue 12, class 2), on the lab's real hosts.

The tuner login's sudoers entry is replaced by the one line nfs-tuner asks for
(``tuner ALL=(root) NOPASSWD: /usr/local/sbin/nfs-tuner-helper``) and the rendered
helper is installed on every guest. Then: a sweep over every knob runs as tuner and
puts everything back; and what an attacker holding the login would try through that
rule (a root shell, a write to /etc/sudoers.d, a mount over /, an export of /) is
refused, with nothing done.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.hosts.privilege import HELPER_PATH, sudoers_line
from app.knobs.sudo_helper import digest, render
from app.store import JournalState, Store, TrialState
from benchmarks.lab_hosts import without_standing_mounts
from tests.conftest import LabHandle

pytestmark = pytest.mark.lab
REPO = Path(__file__).resolve().parents[2]
GUESTS = ("lab-server", "lab-client1", "lab-client2")
SUDOERS = "/etc/sudoers.d/lab"  # the lab's tuner rule (on the guests' tmpfs)


@pytest.fixture
def narrow(lab: LabHandle, tmp_path: Path) -> Iterator[Path]:
    """The helper installed and tuner's sudo narrowed to it on every guest; put back after."""
    helper = render()
    before = {g: lab.run(g, f"cat {SUDOERS}").stdout for g in GUESTS}
    for g in GUESTS:
        # /usr is the host's, read-only: a tmpfs over /usr/local/sbin holds the helper.
        lab.run(g, "mountpoint -q /usr/local/sbin || mount -t tmpfs -o mode=755 tmpfs /usr/local/sbin")
        _write(lab, g, HELPER_PATH, helper, "0755")
        lab.run(g, f"echo {shlex.quote(sudoers_line('tuner'))} > {SUDOERS} && chmod 0440 {SUDOERS} && visudo -c -q")
    as_tuner = tmp_path / "ssh_config"
    as_tuner.write_text(lab.ssh_config.read_text().replace("User root", "User tuner"))
    try:
        yield as_tuner
    finally:
        for g in GUESTS:
            _write(lab, g, SUDOERS, before[g], "0440")
            lab.run(g, "umount /usr/local/sbin", check=False)


def _write(lab: LabHandle, host: str, path: str, text: str, mode: str) -> None:
    subprocess.run(["ssh", "-F", str(lab.ssh_config), "-o", "BatchMode=yes", host,
                    f"cat > {path} && chmod {mode} {path}"], input=text, text=True, check=True, timeout=60)


def as_tuner(lab: LabHandle, host: str, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ssh", "-F", str(lab.ssh_config), "-o", "BatchMode=yes", "-l", "tuner", host, command],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.timeout(900)
def test_a_sweep_of_every_knob_runs_under_the_helper_alone_and_puts_everything_back(
        lab: LabHandle, narrow: Path, tmp_path: Path) -> None:
    assert as_tuner(lab, "lab-server", "sudo -n true").returncode != 0  # no full sudo any more
    assert as_tuner(lab, "lab-server", f"sudo -n {HELPER_PATH} version").stdout.strip() == digest()
    before = {g: lab.run(g, "cat /proc/fs/nfsd/threads /sys/block/md0/md/stripe_cache_size 2>/dev/null; "
                            "cat /sys/class/net/lan0/mtu; exportfs -v 2>/dev/null | tr -d ' \\n'").stdout for g in GUESTS}
    db = tmp_path / "narrow.db"
    argv = [sys.executable, "-m", "app", "--db", str(db), "sweep", "--ssh-config", str(narrow),
            "--server", "lab-server", "--client", "lab-client1", "--export", "/srv/nfs", "--strategy", "ofat",
            "--knob", "nfsd_threads=16", "--knob", "export_sync=async", "--async-opt-in",
            "--knob", "stripe_cache_size=1024", "--knob", "rsize=64k", "--knob", "read_ahead_kb=4096",
            "--knob", "mtu=9000", "--workload", "seq_write", "--repetitions", "1", "--duration", "2",
            "--file-size", "8", "--no-ceilings", "--json"]  # fmt: skip
    # One value per knob, away from the lab's own: a sweep adds each host knob's current value,
    # so one factor at a time makes a trial per host knob plus the start and the best combination;
    # each change and its putting back goes through the helper (a grid would make 16 trials).
    # One mount knob stands for all: each is a word of the one mount command the helper checks
    # (its option list is unit-tested); more would add a trial each and nothing new to the path.
    # An MTU trial needs the client's NFS connection to itself: the standing mount goes for the run.
    with without_standing_mounts(lab.ssh_config, "lab-client1", "lab-server"):
        proc = subprocess.run(argv, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                              text=True, timeout=840)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with Store(db, readonly=True) as store:
        (session,) = store.list_sessions()
        trials = store.trials(session.id)
        states = [t.state for t in trials]
        assert states and all(s is TrialState.OK for s in states), [(t.config, t.reason) for t in trials
                                                                     if t.state is not TrialState.OK]
        tried = {k for t in trials for k in t.config}
        assert tried >= {"nfsd_threads", "export_sync", "stripe_cache_size", "rsize", "mtu", "read_ahead_kb"}, tried
        changed = {j.knob for j in store.journal(session.id)}
        assert changed >= {"nfsd_threads", "export_sync", "stripe_cache_size", "read_ahead_kb", "mtu"}, changed
        journal = store.journal(session.id)
        assert journal and all(j.state is JournalState.REVERTED for j in journal), [(j.knob, j.state) for j in journal]
        facts = store.host_facts(session.id)
    assert any(f.facts.get("privilege") == "sudo through nfs-tuner-helper" for f in facts)
    after = {g: lab.run(g, "cat /proc/fs/nfsd/threads /sys/block/md0/md/stripe_cache_size 2>/dev/null; "
                           "cat /sys/class/net/lan0/mtu; exportfs -v 2>/dev/null | tr -d ' \\n'").stdout for g in GUESTS}
    assert after == before


ATTACKS = {
    "a root shell": "sudo -n sh -c 'touch /root/pwned'",
    "sudo's own tee": "echo 'tuner ALL=(ALL) NOPASSWD: ALL' | sudo -n tee /etc/sudoers.d/pwned",
    "tee to sudoers.d": f"echo 8 | sudo -n {HELPER_PATH} tee /etc/sudoers.d/pwned",
    "a shell through the helper": f"sudo -n {HELPER_PATH} sh -c 'touch /root/pwned'",
    "python through the helper": f"sudo -n {HELPER_PATH} python3 -c 'open(\"/root/pwned\", \"w\")'",
    "a bind mount over /etc": f"sudo -n {HELPER_PATH} mount --bind /tmp /etc",
    "an NFS mount over /": f"sudo -n {HELPER_PATH} mount -t nfs -o rw lab-server:/srv/nfs /",
    "a mount option that brings setuid": f"sudo -n {HELPER_PATH} mount -t nfs -o rw,suid lab-server:/srv/nfs /mnt/nfs-tuner-x",
    "exporting / to the world": f"sudo -n {HELPER_PATH} exportfs -o rw,no_root_squash '*:/'",
    "no_root_squash on the export": f"sudo -n {HELPER_PATH} exportfs -o rw,no_root_squash,insecure 10.213.7.0/24:/srv/nfs",
    "a forged switch report": f"echo '{{}}' | sudo -n {HELPER_PATH} deadman write /run/nfs-tuner/0bad fired.json",
    "a switch restoring a shell": f"sudo -n {HELPER_PATH} deadman arm /tmp/x 5",
    "unmounting the root": f"sudo -n {HELPER_PATH} umount -l /",
    "core_pattern": f"echo 1 | sudo -n {HELPER_PATH} tee /proc/sys/kernel/core_pattern",
    "stopping nfsd by rpc.nfsd": f"sudo -n {HELPER_PATH} rpc.nfsd 0",
    "rpc.nfsd with options of its own": f"sudo -n {HELPER_PATH} rpc.nfsd -H 10.213.7.10 8",
}


def test_what_the_narrow_rule_must_not_grant_is_refused_on_the_hosts(lab: LabHandle, narrow: Path) -> None:
    outcomes = {what: as_tuner(lab, "lab-server", command) for what, command in ATTACKS.items()}
    assert all(r.returncode != 0 for r in outcomes.values()), {w: r.stdout + r.stderr for w, r in outcomes.items() if not r.returncode}
    assert all("refused:" in r.stderr for w, r in outcomes.items() if HELPER_PATH in ATTACKS[w]), {
        w: r.stderr for w, r in outcomes.items() if HELPER_PATH in ATTACKS[w] and "refused:" not in r.stderr}
    left = lab.run("lab-server", "ls /root/pwned /etc/sudoers.d/pwned 2>/dev/null; findmnt -n -o FSTYPE /; "
                                 "findmnt -n -o FSTYPE /etc; exportfs -v | grep -c no_root_squash", check=False).stdout.split()
    assert "/root/pwned" not in left and "/etc/sudoers.d/pwned" not in left and left[0] == "tmpfs", left
    assert lab.run("lab-server", "exportfs -v").stdout.count("/srv/nfs") == 1  # nothing new exported
    # What a max_block_size restart needs of it is granted: rpc.nfsd with a thread count (to the
    # count nfsd runs with, so nothing restarts here) and the grace period's state.
    threads = lab.run("lab-server", "cat /proc/fs/nfsd/threads").stdout.strip()
    assert as_tuner(lab, "lab-server", f"sudo -n {HELPER_PATH} rpc.nfsd {threads}").returncode == 0
    grace = as_tuner(lab, "lab-server", f"sudo -n {HELPER_PATH} cat -- /proc/fs/nfsd/v4_end_grace")
    assert grace.stdout.strip() in ("Y", "N"), grace.stderr
    assert lab.run("lab-server", "cat /proc/fs/nfsd/threads").stdout.strip() == threads
