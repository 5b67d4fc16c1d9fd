"""Controller death: the hosts put themselves back, and the next start knows it."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from app.hosts import HostPool, SshSettings
from app.knobs import recovery
from app.store import JournalState, Store
from tests.conftest import LabHandle

pytestmark = pytest.mark.lab
REPO = Path(__file__).resolve().parents[2]
DEADMAN_TIMEOUT = 15  # the product default is 60 s; shorter keeps the test quick

CONTROLLER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from app.hosts import HostPool, SshSettings
    from app.knobs.changes import ChangeJournal
    from app.knobs.nfsd_netlink import threads_target
    from app.knobs.targets import ScratchMount, readahead, stripe_cache
    from app.store import Store

    async def main(cfg, db, timeout):
        store = Store(db)
        session = store.create_session(["lab-server", "lab-client1"])
        settings = SshSettings(config_file=Path(cfg), app_known_hosts=Path(db).with_name("kh"))
        pool = HostPool(settings)
        journal = ChangeJournal(store, pool, session, deadman_timeout=timeout)
        # nfsdctl where the server answers it (UML 7.2): the switch then replays nfsdctl, else a /proc write
        await journal.apply("lab-server", await threads_target(pool["lab-server"]), 24)
        await journal.apply("lab-server", stripe_cache("md0"), 2048)
        mount = ScratchMount("lab-server", "/srv/nfs", "/mnt/nfs-tuner-deadman")
        await journal.apply("lab-client1", mount, "vers=4.2,rsize=65536")
        await journal.apply("lab-client1", readahead(await mount.bdi(pool["lab-client1"])), 4096)
        print("HELD", flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3])))
    """
)


def _values(lab: LabHandle) -> tuple[str, str, bool]:
    threads = lab.run("lab-server", "cat /proc/fs/nfsd/threads").stdout.strip()
    stripe = lab.run("lab-server", "cat /sys/block/md0/md/stripe_cache_size").stdout.strip()
    mounted = lab.run("lab-client1", "mountpoint -q /mnt/nfs-tuner-deadman", check=False).returncode == 0
    return threads, stripe, mounted


@pytest.mark.every_kernel
@pytest.mark.timeout(300)
def test_sigkill_controller_hosts_restore_themselves(lab: LabHandle, tmp_path: Path) -> None:
    original = _values(lab)
    assert original[2] is False
    db = tmp_path / "sessions.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", CONTROLLER, str(lab.ssh_config), str(db), str(DEADMAN_TIMEOUT)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "HELD", proc.stderr.read() if proc.stderr else ""
        # The switch must not fire while the controller lives: hold past its timeout.
        time.sleep(DEADMAN_TIMEOUT * 1.6)
        assert _values(lab) == ("24", "2048", True)
        os.kill(proc.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    while _values(lab) != original:
        assert time.monotonic() - killed_at < DEADMAN_TIMEOUT + 15, f"not restored: {_values(lab)}"
        time.sleep(1)
    assert lab.run("lab-client1", "test -e /mnt/nfs-tuner-deadman", check=False).returncode != 0

    async def next_start() -> list[recovery.Pending]:
        with Store(db) as store:
            async with HostPool(SshSettings(config_file=lab.ssh_config, app_known_hosts=tmp_path / "kh")) as pool:
                found = await recovery.inspect(store, pool)
                assert store.unreverted_journal() == []
                assert {e.state for e in store.journal()} == {JournalState.REVERTED_BY_HOST}
                return found

    found = asyncio.run(next_start())
    assert len(found) == 4 and {p.status for p in found} == {"reverted by host"}
    # The switch cleaned up after the journal took note.
    assert lab.run("lab-server", "ls /run/nfs-tuner/ 2>/dev/null | wc -l").stdout.strip() == "0"


HOSTILE_PREP = """
set -e
for u in tuner root; do
    mkdir -m 0777 -p /tmp/nfs-tuner-$u/0badc0de
    ln -sf /etc/shadow /tmp/nfs-tuner-$u/0badc0de/fired.json
    printf '%s' '[{"id": 1, "steps": [{"argv": ["touch", "/tmp/pwned-by-nosudo"]}]}]' > /tmp/nfs-tuner-$u/0badc0de/restore.json
    printf '%s' '{"results": [{"id": 1, "ok": true}, {"id": 2, "ok": true}]}' > /tmp/nfs-tuner-$u/fired.json
done
mkdir /run/nfs-tuner 2>/dev/null && echo PLANTED || echo "no way into /run"
"""
PROBE_STOP = "/tmp/nfs-tuner-probe-stop"


@pytest.mark.timeout(300)
def test_a_hostile_local_user_cannot_stop_forge_or_borrow_the_switch(lab: LabHandle, tmp_path: Path) -> None:
    """nosudo prepares the places a switch used to keep its state (world-writable dirs, symlinks to
    /etc/shadow, a restore list that runs a command, forged reports) and keeps trying to get into
    the switch's directory while a sudo user's controller holds changes; the controller is killed."""
    original = _values(lab)
    shadow = lab.run("lab-server", "md5sum /etc/shadow").stdout
    base = ["ssh", "-F", str(lab.ssh_config), "-o", "BatchMode=yes", "-l", "nosudo", "lab-server"]
    prep = subprocess.run([*base, HOSTILE_PREP], capture_output=True, text=True, timeout=60)
    assert prep.returncode == 0 and "no way into /run" in prep.stdout, prep.stderr
    # While the run holds its changes, nosudo keeps trying to plant files beside the switch's.
    lab.run("lab-server", f"rm -f {PROBE_STOP}")
    # It stops when root leaves the stop file (once the hosts are restored), at the latest after ~2 min.
    prober = subprocess.Popen([*base, f"for i in $(seq 600); do [ -e {PROBE_STOP} ] && break; "
                               "ln -s /etc/shadow /run/nfs-tuner/restore.json 2>/dev/null && echo GOT-IN; "
                               "ls /run/nfs-tuner/ 2>/dev/null && echo LISTED; sleep 0.2; done; echo PROBED $i"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    as_tuner = tmp_path / "ssh_config"
    as_tuner.write_text(lab.ssh_config.read_text().replace("User root", "User tuner"))
    db = tmp_path / "sessions.db"
    proc = subprocess.Popen([sys.executable, "-c", CONTROLLER, str(as_tuner), str(db), str(DEADMAN_TIMEOUT)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "HELD", proc.stderr.read() if proc.stderr else ""
        assert _values(lab) == ("24", "2048", True)
        # The switch runs as root in a directory only root can enter.
        owner = lab.run("lab-server", "stat -c '%U %a' /run/nfs-tuner /run/nfs-tuner/*").stdout.split()
        assert owner[:2] == ["root", "700"] and owner[2:4] == ["root", "700"], owner
        os.kill(proc.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    while _values(lab) != original:
        assert time.monotonic() - killed_at < DEADMAN_TIMEOUT + 15, f"not restored: {_values(lab)}"
        time.sleep(1)
    lab.run("lab-server", f"touch {PROBE_STOP}")
    probed = prober.communicate(timeout=150)[0]
    assert "GOT-IN" not in probed and "LISTED" not in probed
    assert "PROBED" in probed and int(probed.split()[-1]) > 10, probed  # it kept trying through the whole hold

    async def next_start() -> list[recovery.Pending]:
        with Store(db) as store:
            settings = SshSettings(config_file=as_tuner, app_known_hosts=tmp_path / "kh")
            async with HostPool(settings) as pool:
                found = await recovery.inspect(store, pool)
                assert {e.state for e in store.journal()} == {JournalState.REVERTED_BY_HOST}
                return found

    found = asyncio.run(next_start())
    assert {p.status for p in found} == {"reverted by host"}
    assert lab.run("lab-server", "test -e /tmp/pwned-by-nosudo", check=False).returncode != 0
    assert lab.run("lab-server", "md5sum /etc/shadow").stdout == shadow
    # nosudo's own files are left as they were: nothing of the switch wrote through them.
    assert lab.run("lab-server", "stat -c %U /tmp/nfs-tuner-tuner/fired.json").stdout.strip() == "nosudo"
    lab.run("lab-server", f"rm -rf /tmp/nfs-tuner-tuner /tmp/nfs-tuner-root /tmp/pwned-by-nosudo {PROBE_STOP}")
