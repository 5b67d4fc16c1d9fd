"""Least privilege that works (issue 12, class 2; issue 28), on the lab's real hosts.

The tuner login's sudoers entry is replaced by the one line nfs-tuner asks for
(``tuner ALL=(root) NOPASSWD: /usr/local/sbin/nfs-tuner-helper``) and the rendered
helper is installed on every guest (rendered for the lab's server: the sweep takes the
clients' standing mounts away). Then: a sweep over every knob runs as tuner and puts
everything back; and what an attacker holding the login would try through that rule is
refused, with nothing read, changed or left running: a root shell, a write to
/etc/sudoers.d, a mount over /, an export of /, and (issue 28) every way to read a
root-only file through the dead-man switch, another login's switch, FIFOs and device
nodes, timeouts that never end, watchers without number, Unicode digits, every risky
mount option and a server that is not the lab's.
"""

from __future__ import annotations

import json
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


@pytest.fixture(scope="module")
def narrow(lab: LabHandle, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The helper installed and tuner's sudo narrowed to it on every guest; put back after."""
    helper = render(servers=["lab-server"])
    before = {g: lab.run(g, f"cat {SUDOERS}").stdout for g in GUESTS}
    for g in GUESTS:
        # /usr is the host's, read-only: a tmpfs over /usr/local/sbin holds the helper.
        lab.run(g, "mountpoint -q /usr/local/sbin || mount -t tmpfs -o mode=755 tmpfs /usr/local/sbin")
        _write(lab, g, HELPER_PATH, helper, "0755")
        lab.run(g, f"echo {shlex.quote(sudoers_line('tuner'))} > {SUDOERS} && chmod 0440 {SUDOERS} && visudo -c -q")
    as_tuner = tmp_path_factory.mktemp("narrow") / "ssh_config"
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


@pytest.mark.timeout(1600)  # about 450 s alone; twice that beside two other labs
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
            "--knob", "stripe_cache_size=1024", "--knob", "read_ahead_kb=4096",
            "--knob", "mtu=9000", "--workload", "seq_write", "--repetitions", "1", "--max-repetitions", "1", "--duration", "2",
            "--file-size", "8", "--no-ceilings", "--json"]  # fmt: skip
    # One value per knob, away from the lab's own: a sweep adds each host knob's current value,
    # so one factor at a time makes a trial per host knob plus the start and the best combination;
    # each change and its putting back goes through the helper (a grid would make 16 trials).
    # The test mount every trial makes is the helper's mount row: no mount option needs a knob of its own
    # (the options are words of that one command, unit-tested); each would add trials and nothing new.
    # An MTU trial needs the client's NFS connection to itself: the standing mount goes for the run.
    with without_standing_mounts(lab.ssh_config, "lab-client1", "lab-server"):
        proc = subprocess.run(argv, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                              text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with Store(db, readonly=True) as store:
        (session,) = store.list_sessions()
        trials = store.trials(session.id)
        states = [t.state for t in trials]
        assert states and all(s is TrialState.OK for s in states), [(t.config, t.reason) for t in trials
                                                                     if t.state is not TrialState.OK]
        tried = {k for t in trials for k in t.config}
        assert tried >= {"nfsd_threads", "export_sync", "stripe_cache_size", "mtu", "read_ahead_kb"}, tried
        changed = {j.knob for j in store.journal(session.id)}
        assert changed >= {"nfsd_threads", "export_sync", "stripe_cache_size", "read_ahead_kb", "mtu", "test_mount"}, changed
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


NFSDCTL_ATTACKS = ("nfsdctl listener +tcp::2050", "nfsdctl listener -tcp:0.0.0.0:2049", "nfsdctl threads 0",
                   "nfsdctl pool-mode percpu", "nfsdctl autostart", "nfsdctl version -4.2", "nfsdctl threads 8 8",
                   "nfsdctl -d threads 8", "nfsdctl threads -m 2", "nfsdctl threads -m -1 8", "nfsdctl threads ٣",
                   "nfsdctl threads -k /etc/shadow 8", "nfsdctl status", "nfsdctl nlm")  # fmt: skip


@pytest.mark.every_kernel
def test_the_helper_grants_nfsdctl_its_thread_count_and_floor_and_nothing_else(lab: LabHandle, narrow: Path) -> None:
    """nfsd's netlink interface through the helper: the thread count (and a self-scaling nfsd's floor, set with
    it) where the server's nfsdctl answers; listeners, versions, pool mode, a stop, a key file never."""
    # One login for all of them (each would cost a second of SSH): every attack's exit status and words.
    script = "".join(f"echo '@@ {i}'; sudo -n {HELPER_PATH} {a} 2>&1; echo \"rc=$?\"\n" for i, a in enumerate(NFSDCTL_ATTACKS))
    said = as_tuner(lab, "lab-server", script).stdout.split("@@ ")[1:]
    refused = {NFSDCTL_ATTACKS[int(part.split()[0])]: part for part in said}
    assert len(refused) == len(NFSDCTL_ATTACKS)
    assert all("refused:" in out and out.rstrip().endswith("rc=2") for out in refused.values()), {
        a: out for a, out in refused.items() if "refused:" not in out}
    answer = lab.run("lab-server", "nfsdctl threads", check=False).stdout
    threads = lab.run("lab-server", "cat /proc/fs/nfsd/threads").stdout.strip()
    granted = as_tuner(lab, "lab-server", f"sudo -n {HELPER_PATH} nfsdctl threads {threads}")
    if "pool-threads:" not in answer:  # no nfsdctl (bookworm's nfs-utils 2.6): refused, said
        assert granted.returncode == 2 and "nfsdctl was not found" in granted.stderr, granted.stderr
        return
    assert granted.returncode == 0, granted.stderr
    floor = next((ln.split()[1] for ln in answer.splitlines() if ln.startswith("min-threads:")), None)
    if floor is not None:
        same = as_tuner(lab, "lab-server", f"sudo -n {HELPER_PATH} nfsdctl threads -m {floor} {threads}")
        assert same.returncode == 0, same.stderr
    assert lab.run("lab-server", "nfsdctl threads").stdout == answer  # the same count and floor: nothing changed
    assert lab.run("lab-server", "nfsdctl listener").stdout.split() == ["tcp:[::]:2049", "tcp:0.0.0.0:2049"]


# -- issue 28: the switch's hole, and every other way past the boundary, tried on a real host --------------------
H = HELPER_PATH
MINE = "/run/nfs-tuner/a11ce0000001"  # tuner's own switch, armed for the attacks
ROOTS = "/run/nfs-tuner/b0b000000002"  # a switch armed by another login (root, through the full switch)
PLANTED = {"fifo": "/run/nfs-tuner/f1f000000003", "device": "/run/nfs-tuner/dede00000004",
           "symlink": "/run/nfs-tuner/5e1f00000005"}  # tuner's switches where root planted a FIFO, a device, a symlink
SHELL_STEP = json.dumps([{"id": 1, "steps": [{"argv": ["sh", "-c", "touch /root/pwned"]}]}])
# name: (argv after `sudo -n`, stdin)
SWITCH_ATTACKS: dict[str, tuple[list[str], str]] = {
    "read /etc/shadow by an absolute name": ([H, "deadman", "read", MINE, "/etc/shadow"], ""),
    "read /etc/shadow by ..": ([H, "deadman", "read", MINE, "../../../etc/shadow"], ""),
    "read a host key by ..": ([H, "deadman", "read", MINE, "../../../etc/ssh/ssh_host_ed25519_key"], ""),
    "read /proc/1/environ": ([H, "deadman", "read", MINE, "/proc/1/environ"], ""),
    "read /proc/1/environ by ..": ([H, "deadman", "read", MINE, "../../../proc/1/environ"], ""),
    "read /etc/sudoers": ([H, "deadman", "read", MINE, "/etc/sudoers"], ""),
    "read the switch's restore list": ([H, "deadman", "read", MINE, "restore.json"], ""),
    "read through a directory of ..": ([H, "deadman", "read", "/run/nfs-tuner/../../etc", "shadow"], ""),
    "read through a run directory of ..": ([H, "deadman", "read", MINE + "/../../../etc", "shadow"], ""),
    "read another login's report": ([H, "deadman", "read", ROOTS, "fired.json"], ""),
    "beat another login's switch": ([H, "deadman", "beat", ROOTS], ""),
    "disarm another login's switch": ([H, "deadman", "disarm", ROOTS], ""),
    "forget another login's switch": ([H, "deadman", "forget", ROOTS], ""),
    "write another login's restore list": ([H, "deadman", "write", ROOTS, "restore.json"], "[]"),
    "read a FIFO planted as the report": ([H, "deadman", "read", PLANTED["fifo"], "fired.json"], ""),
    "read a device node planted as the report": ([H, "deadman", "read", PLANTED["device"], "fired.json"], ""),
    "read a symlink to /etc/shadow planted as the report": ([H, "deadman", "read", PLANTED["symlink"], "fired.json"], ""),
    "forge a report": ([H, "deadman", "write", MINE, "fired.json"], '{"results": []}'),
    "a restore step that is a shell": ([H, "deadman", "write", MINE, "restore.json"], SHELL_STEP),
    "a restore list of 5 MiB": ([H, "deadman", "write", MINE, "restore.json"], "[" + " " * (5 << 20) + "]"),
    "arm with nan": ([H, "deadman", "arm", "/run/nfs-tuner/0dd000000010", "nan"], ""),
    "arm with inf": ([H, "deadman", "arm", "/run/nfs-tuner/0dd000000011", "inf"], ""),
    "arm with 1e9": ([H, "deadman", "arm", "/run/nfs-tuner/0dd000000012", "1e9"], ""),
    "arm with a timeout past 600 s": ([H, "deadman", "arm", "/run/nfs-tuner/0dd000000013", "601"], ""),
    "arm with a timeout under 10 s": ([H, "deadman", "arm", "/run/nfs-tuner/0dd000000014", "5"], ""),
    "arm with Arabic-Indic digits": ([H, "deadman", "arm", "/run/nfs-tuner/0dd000000015", "٣٠"], ""),
    "arm outside /run/nfs-tuner": ([H, "deadman", "arm", "/etc/sudoers.d", "60"], ""),
    "rpc.nfsd with an Arabic-Indic digit": ([H, "rpc.nfsd", "٣"], ""),
    "rpc.nfsd with a superscript two": ([H, "rpc.nfsd", "²"], ""),
    "an MTU in Devanagari digits": ([H, "ip", "link", "set", "dev", "lan0", "mtu", "९०००"], ""),
    "nfsd threads of a full-width digit": ([H, "tee", "/proc/fs/nfsd/threads"], "８\n"),
    "drop_caches 4": ([H, "tee", "/proc/sys/vm/drop_caches"], "4\n"),
    "cat /etc/shadow": ([H, "cat", "--", "/etc/shadow"], ""),
    "cat /proc/1/environ through nfsd's ..": ([H, "cat", "--", "/proc/fs/nfsd/../../1/environ"], ""),
    "cat a host key": ([H, "cat", "--", "/etc/ssh/ssh_host_ed25519_key"], ""),
    "a mount over RDMA (loads modules)": ([H, "mount", "-t", "nfs", "-o", "proto=rdma", "lab-server:/srv/nfs", "/mnt/nfs-tuner-x"], ""),
    "a krb5p mount (loads modules)": ([H, "mount", "-t", "nfs", "-o", "sec=krb5p", "lab-server:/srv/nfs", "/mnt/nfs-tuner-x"], ""),
    "a mount that retries for days": ([H, "mount", "-t", "nfs", "-o", "bg,retry=10000", "lab-server:/srv/nfs", "/mnt/nfs-tuner-x"], ""),
    "a soft mount with a short timeo": ([H, "mount", "-t", "nfs", "-o", "soft,timeo=1", "lab-server:/srv/nfs", "/mnt/nfs-tuner-x"], ""),
    "a mount from a foreign server": ([H, "mount", "-t", "nfs", "-o", "vers=4.2", "10.213.7.99:/srv/nfs", "/mnt/nfs-tuner-x"], ""),
    "a mount from a foreign name": ([H, "mount", "-t", "nfs", "-o", "vers=4.2", "evil.example:/srv", "/mnt/nfs-tuner-x"], ""),
    "unmounting the admin's /mnt/lab": ([H, "umount", "-l", "/mnt/lab"], ""),
    "a mount point climbing to /etc": ([H, "mkdir", "-p", "-m", "0755", "/mnt/nfs-tuner-x/../../etc/cron.d"], ""),
    "a flood ping": ([H, "ping", "-f", "-c", "2", "-i", "0.2", "-W", "2", "-M", "do", "-s", "1472", "10.213.7.10"], ""),
}  # fmt: skip

RUNNER = r"""
import json, subprocess, sys, time
out = {}
for name, (argv, stdin) in json.load(sys.stdin).items():
    t = time.monotonic()
    try:
        p = subprocess.run(["sudo", "-n"] + argv, input=stdin.encode(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=20)
        out[name] = [p.returncode, p.stdout.decode("utf-8", "replace")[:2000], p.stderr.decode("utf-8", "replace")[:500],
                     time.monotonic() - t]
    except subprocess.TimeoutExpired:
        out[name] = [None, "", "hung", time.monotonic() - t]
print(json.dumps(out))
"""
# What each host looks like from root: whatever an attack changed shows here.
STATE = ("sha256sum /etc/shadow /etc/sudoers /etc/sudoers.d/* 2>&1; findmnt -rn -o TARGET,FSTYPE,OPTIONS; "
         "exportfs -v 2>/dev/null | tr -d ' \\n'; echo; cut -d' ' -f1 /proc/modules | sort | tr '\\n' ' '; echo; "
         "ip -o link | awk '{print $2, $5}'; cat /proc/fs/nfsd/threads 2>/dev/null; ls /root/pwned 2>&1; "
         "ls /run/nfs-tuner; pgrep -fc 'nfs-tuner-helper deadman' || true")


def test_every_way_past_the_narrow_rule_is_refused_with_nothing_read_changed_or_left_running(
        lab: LabHandle, narrow: Path) -> None:
    host = "lab-client1"
    assert as_tuner(lab, host, f"sudo -n {H} deadman arm {MINE} 600").returncode == 0
    switch = "python3 -I -S -c \"$(cat)\""  # the full switch, as root: its directory is root's own (owner 0)
    source = (REPO / "app" / "knobs" / "deadman_host.py").read_text()
    subprocess.run(["ssh", "-F", str(lab.ssh_config), "-o", "BatchMode=yes", host, f"{switch} arm {ROOTS} 600"],
                   input=source, text=True, check=True, timeout=60)  # fmt: skip
    try:
        for kind, d in PLANTED.items():
            assert as_tuner(lab, host, f"sudo -n {H} deadman arm {d} 600").returncode == 0
            plant = {"fifo": "mkfifo -m 600", "device": "mknod -m 600 {} c 1 3 #",
                     "symlink": "ln -s /etc/shadow"}[kind]  # fmt: skip
            lab.run(host, plant.format(f"{d}/fired.json") if "{}" in plant else f"{plant} {d}/fired.json")
        before = lab.run(host, STATE, check=False).stdout
        proc = subprocess.run(["ssh", "-F", str(lab.ssh_config), "-o", "BatchMode=yes", "-l", "tuner", host,
                               f"python3 -c {shlex.quote(RUNNER)}"], input=json.dumps(SWITCH_ATTACKS),
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        outcomes = json.loads(proc.stdout)
        many = [as_tuner(lab, host, f"sudo -n {H} deadman arm /run/nfs-tuner/0aa00000002{i} 600") for i in range(3)]
        after = lab.run(host, STATE, check=False).stdout
    finally:
        for d in (MINE, *PLANTED.values(), *(f"/run/nfs-tuner/0aa00000002{i}" for i in range(3))):
            lab.run(host, f"rm -f {d}/fired.json; sudo -u tuner sudo -n {H} deadman disarm {d}", check=False)
        subprocess.run(["ssh", "-F", str(lab.ssh_config), "-o", "BatchMode=yes", host, f"{switch} disarm {ROOTS}"],
                       input=source, text=True, check=False, timeout=60)  # fmt: skip
    assert len(SWITCH_ATTACKS) + len(ATTACKS) >= 40
    let_through = {n: o for n, o in outcomes.items() if o[0] != 2 or not o[2].startswith("refused: ")}
    assert not let_through, let_through
    leaked = {n: o[1][:200] for n, o in outcomes.items() if o[1]}
    assert not leaked, leaked  # a refusal prints nothing on stdout: no byte of any file was read
    slow = {n: o[3] for n, o in outcomes.items() if o[3] > 10}
    assert not slow, slow  # a FIFO or a device never holds the helper
    # The three extra arms meet the limit: the login had MINE and the three planted ones live, four in all.
    assert [m.returncode for m in many] == [2, 2, 2] and all("at most 4" in m.stderr for m in many), [m.stderr for m in many]
    assert after == before, (before, after)  # no file, mount, export, module, MTU, nfsd or watcher changed
