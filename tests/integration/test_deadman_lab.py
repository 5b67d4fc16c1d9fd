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
    from app.knobs.targets import ScratchMount, nfsd_threads, readahead, stripe_cache
    from app.store import Store

    async def main(cfg, db, timeout):
        store = Store(db)
        session = store.create_session(["lab-server", "lab-client1"])
        settings = SshSettings(config_file=Path(cfg), app_known_hosts=Path(db).with_name("kh"))
        pool = HostPool(settings)
        journal = ChangeJournal(store, pool, session, deadman_timeout=timeout)
        await journal.apply("lab-server", nfsd_threads(), 24)
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
