"""Every knob against the lab's real kernels: read → apply → verify afresh → revert."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest

from app.hosts import HostPool, SshSettings
from app.knobs.changes import ChangeJournal
from app.knobs.model import InvalidValue, KnobError, ReadOnlyHost
from app.knobs.network import MtuCheckFailed, MtuTarget, set_link_mtu
from app.knobs.nfsd_netlink import NfsdMinThreadsTarget, threads_target
from app.knobs.catalog import SPECS
from app.knobs.client_sysctls import client_sysctl
from app.knobs.nfsd_restart import BLOCK_SIZE_FILE, THREADS_FILE, VERSIONS_FILE, NfsdBlockSizeTarget, grace_wait
from app.knobs.targets import (ABSENT, ExportOptionTarget, ExportSyncTarget, KernelFileTarget, MountOptions, ScratchMount,
                               nfsd_threads, read_text, readahead, stripe_cache)  # fmt: skip
from app.store import JournalState, Store
from tests.conftest import LabHandle

pytestmark = pytest.mark.lab
T = TypeVar("T")


def _settings(lab: LabHandle, tmp_path: Path) -> SshSettings:
    return SshSettings(config_file=lab.ssh_config, app_known_hosts=tmp_path / "app_known_hosts")


def run(coro: Awaitable[T]) -> T:
    return asyncio.run(coro)  # type: ignore[arg-type]


async def fresh_read(settings: SshSettings, host: str, read: Callable) -> object:  # type: ignore[type-arg]
    """Read over a brand-new connection, so nothing cached can fake the result."""
    async with HostPool(settings) as pool:
        return await read(pool[host])


@pytest.mark.parametrize(
    ("host", "make", "value"),
    [
        ("lab-server", lambda: nfsd_threads(), 32),
        ("lab-server", lambda: stripe_cache("md0"), 4096),
    ],
    ids=["nfsd_threads", "stripe_cache_size"],
)
def test_kernel_file_knob_round_trip(lab: LabHandle, tmp_path: Path, host: str, make, value: int) -> None:  # type: ignore[no-untyped-def]
    settings = _settings(lab, tmp_path)

    async def scenario() -> None:
        target = make()
        with Store(tmp_path / "s.db") as store:
            async with HostPool(settings) as pool:
                original = await target.read(pool[host])
                journal = ChangeJournal(store, pool, deadman_timeout=60)
                applied = await journal.apply(host, target, value)
                assert applied.old == original and applied.effective == value
                assert await fresh_read(settings, host, target.read) == value
                assert store.journal()[0].state is JournalState.APPLIED
                assert await journal.close() == []
                assert await fresh_read(settings, host, target.read) == original
                assert [e.state for e in store.journal()] == [JournalState.REVERTED]

    run(scenario())


def _nfsd_threads_running(lab: LabHandle) -> int:
    return int(lab.run("lab-server", "ps -e -o comm= | grep -cx nfsd || true").stdout.strip() or 0)


@pytest.mark.every_kernel
def test_nfsd_threads_and_their_floor_act_through_the_interface_the_server_has(lab: LabHandle, tmp_path: Path) -> None:
    """nfsdctl where the server answers it (the lab's UML 7.2), /proc/fs/nfsd/threads otherwise (6.1); each read
    back and put back. On a kernel whose threads scale themselves the floor lets idle threads go: fewer run than
    the most while idle, and more start again under load."""
    settings = _settings(lab, tmp_path)
    answer = lab.run("lab-server", "nfsdctl threads", check=False).stdout
    netlink, scaling = "pool-threads:" in answer, "min-threads:" in answer

    async def scenario() -> None:
        with Store(tmp_path / "s.db") as store:
            async with HostPool(settings) as pool:
                target = await threads_target(pool["lab-server"])
                assert target.target == ("nfsdctl threads" if netlink else THREADS_FILE)
                journal = ChangeJournal(store, pool, deadman_timeout=60)
                applied = await journal.apply("lab-server", target, 16)
                assert (applied.old, applied.effective) == (8, 16)
                assert await fresh_read(settings, "lab-server", lambda c: read_text(c, THREADS_FILE)) == "16\n"
                if not scaling:
                    with pytest.raises(KnobError, match=r"has no min-threads|does not answer"):
                        await journal.apply("lab-server", NfsdMinThreadsTarget(), 2)
                else:
                    floor = await journal.apply("lab-server", NfsdMinThreadsTarget(), 2)
                    assert (floor.old, floor.effective) == (0, 2)
                    deadline = time.monotonic() + 30  # idle threads above the floor exit after 5 s
                    while _nfsd_threads_running(lab) >= 16 and time.monotonic() < deadline:
                        await asyncio.sleep(1)
                    assert 2 <= _nfsd_threads_running(lab) < 16
                    assert await fresh_read(settings, "lab-server", lambda c: read_text(c, THREADS_FILE)) == "16\n"
                assert await journal.close() == []
                assert await fresh_read(settings, "lab-server", target.read) == 8
                assert {e.knob: e.state for e in store.journal() if e.state is not JournalState.DISMISSED} == {
                    "nfsd_threads": JournalState.REVERTED, **({"nfsd_min_threads": JournalState.REVERTED} if scaling else {})}
        if scaling:
            assert "min-threads: 0" in lab.run("lab-server", "nfsdctl threads").stdout
        deadline = time.monotonic() + 10  # a fixed pool again: all 8 run
        while _nfsd_threads_running(lab) != 8 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _nfsd_threads_running(lab) == 8

    run(scenario())


def test_export_sync_async_round_trip(lab: LabHandle, tmp_path: Path) -> None:
    settings = _settings(lab, tmp_path)

    async def scenario() -> None:
        target = ExportSyncTarget("/srv/nfs", "10.213.7.0/24")
        with Store(tmp_path / "s.db") as store:
            async with HostPool(settings) as pool:
                assert await target.read(pool["lab-server"]) == "sync"
                journal = ChangeJournal(store, pool)
                await journal.apply("lab-server", target, "async")
                check = ExportSyncTarget("/srv/nfs", "10.213.7.0/24")
                assert await fresh_read(settings, "lab-server", check.read) == "async"
                assert "no_root_squash" in check._options and "rw" in check._options
                await journal.close()
                assert await fresh_read(settings, "lab-server", check.read) == "sync"
                assert "no_root_squash" in check._options

    run(scenario())


def test_export_wdelay_round_trip_keeps_sync_and_the_other_options(lab: LabHandle, tmp_path: Path) -> None:
    settings = _settings(lab, tmp_path)

    async def scenario() -> None:
        def wdelay() -> ExportOptionTarget:
            return ExportOptionTarget("/srv/nfs", "10.213.7.0/24", SPECS["export_wdelay"])

        with Store(tmp_path / "s.db") as store:
            async with HostPool(settings) as pool:
                assert await wdelay().read(pool["lab-server"]) == "wdelay"
                journal = ChangeJournal(store, pool)
                await journal.apply("lab-server", wdelay(), "no_wdelay")
                check = wdelay()
                assert await fresh_read(settings, "lab-server", check.read) == "no_wdelay"
                assert {"sync", "no_root_squash", "rw"} <= set(check._options)
                await journal.close()
                assert await fresh_read(settings, "lab-server", check.read) == "wdelay"
                assert "no_wdelay" not in lab.run("lab-server", "exportfs -v").stdout

    run(scenario())


def test_nocto_and_actimeo_reach_the_test_mount_and_go_with_it(lab: LabHandle, tmp_path: Path) -> None:
    settings = _settings(lab, tmp_path)

    async def scenario() -> None:
        mount = ScratchMount("lab-server", "/srv/nfs", "/mnt/nfs-tuner-coherence")
        with Store(tmp_path / "s.db") as store:
            async with HostPool(settings) as pool:
                journal = ChangeJournal(store, pool)
                await journal.apply("lab-client1", mount, MountOptions(nocto=True, actimeo=60).option_string())
                neg = await fresh_read(settings, "lab-client1", mount.negotiated)
                # the kernel shows only the attribute-cache times that differ from its own (max 60 s is its default)
                assert "nocto" in neg and all(neg.get(k, "60") == "60" for k in ("acregmin", "acregmax", "acdirmin", "acdirmax"))
                assert neg.get("acregmin") == neg.get("acdirmin") == "60"
                assert "nocto" not in lab.run("lab-client1", "findmnt -n -o OPTIONS /mnt/lab").stdout  # the admin's mount
                await journal.close()
                assert await fresh_read(settings, "lab-client1", mount.read) == ABSENT

    run(scenario())


def test_scratch_mount_options_and_readahead_round_trip(lab: LabHandle, tmp_path: Path) -> None:
    settings = _settings(lab, tmp_path)

    async def scenario() -> None:
        mount = ScratchMount("lab-server", "/srv/nfs", "/mnt/nfs-tuner-test")
        opts = MountOptions(rsize=65536, wsize=32768, nfsvers="3", nconnect=2).option_string()
        with Store(tmp_path / "s.db") as store:
            async with HostPool(settings) as pool:
                journal = ChangeJournal(store, pool)
                await journal.apply("lab-client1", mount, opts)
                neg = await fresh_read(settings, "lab-client1", mount.negotiated)
                assert neg["vers"] == "3" and neg["rsize"] == "65536" and neg["wsize"] == "32768"
                assert neg.get("nconnect") == "2"
                ra = readahead(await mount.bdi(pool["lab-client1"]))
                before = await ra.read(pool["lab-client1"])
                await journal.apply("lab-client1", ra, 8192)
                assert await fresh_read(settings, "lab-client1", ra.read) == 8192
                # The admin's own mount is untouched.
                admin = lab.run("lab-client1", "findmnt -n -o OPTIONS /mnt/lab").stdout
                assert "vers=4.2" in admin
                await journal.close()
                assert before > 0
                assert await fresh_read(settings, "lab-client1", mount.read) == ABSENT
                assert lab.run("lab-client1", "test -e /mnt/nfs-tuner-test", check=False).returncode != 0

    run(scenario())


def test_invalid_values_and_read_only_logins_are_refused(lab: LabHandle, tmp_path: Path) -> None:
    settings = _settings(lab, tmp_path)

    async def scenario() -> None:
        with Store(tmp_path / "s.db") as store:
            async with HostPool(settings) as pool:
                journal = ChangeJournal(store, pool)
                with pytest.raises(InvalidValue, match="never allowed"):
                    await journal.apply("lab-server", nfsd_threads(), 0)
                with pytest.raises(InvalidValue, match="17"):
                    await journal.apply("lab-server", stripe_cache("md0"), 5)
                cfg = tmp_path / "nosudo_config"
                cfg.write_text(lab.ssh_config.read_text().replace("User root", "User nosudo"))
                async with HostPool(SshSettings(config_file=cfg, app_known_hosts=tmp_path / "k")) as nosudo:
                    with pytest.raises(ReadOnlyHost, match="visudo"):
                        await ChangeJournal(store, nosudo).apply("lab-server", nfsd_threads(), 16)
                assert store.journal() == []

    run(scenario())


def test_mtu_black_hole_is_detected_and_both_ends_put_back(lab: LabHandle, tmp_path: Path) -> None:
    settings = _settings(lab, tmp_path)
    lab.lab.set_mtu(1500)
    try:

        async def scenario() -> None:
            with Store(tmp_path / "s.db") as store:
                async with HostPool(settings) as pool:
                    journal = ChangeJournal(store, pool)
                    with pytest.raises(MtuCheckFailed) as err:
                        await set_link_mtu(journal, pool, "lab-server", "lab-server", ["lab-client1"], 9000)
                    assert "lab-client1" in str(err.value) and "lab-server" in str(err.value)
                    for host in ("lab-server", "lab-client1"):
                        assert await MtuTarget("lan0").read(pool[host]) == 1500
                    assert {e.state for e in store.journal()} == {JournalState.REVERTED}
                    # SSH is still up on both.
                    assert (await pool["lab-client1"].run(["true"])).ok
                    await journal.close()

        run(scenario())
    finally:
        lab.lab.set_mtu(9000)


def test_mtu_9000_passes_on_a_jumbo_switch(lab: LabHandle, tmp_path: Path) -> None:
    settings = _settings(lab, tmp_path)

    async def scenario() -> None:
        with Store(tmp_path / "s.db") as store:
            async with HostPool(settings) as pool:
                journal = ChangeJournal(store, pool)
                applied = await set_link_mtu(journal, pool, "lab-server", "lab-server", ["lab-client1"], 9000)
                assert {a.host for a in applied} == {"lab-server", "lab-client1"}
                assert await fresh_read(settings, "lab-client1", MtuTarget("lan0").read) == 9000
                await journal.close()
                for host in ("lab-server", "lab-client1"):
                    assert await MtuTarget("lan0").read(pool[host]) == 1500

    run(scenario())


def test_client_kernel_settings_round_trip_and_the_displaced_ratio_comes_back(lab: LabHandle, tmp_path: Path) -> None:
    """vm.dirty_bytes zeroes vm.dirty_ratio in the kernel: putting the change back must bring the ratio back,
    not leave a byte limit of 0 (which the kernel would read as 'no byte limit' with a ratio of 0)."""
    settings = _settings(lab, tmp_path)
    dirty, background, slots = (client_sysctl(k) for k in ("dirty_bytes", "dirty_background",
                                                             "rpc_slots"))  # fmt: skip
    ratio = KernelFileTarget(SPECS["dirty_bytes"], "/proc/sys/vm/dirty_ratio")

    async def put(host, path: str, value: object) -> None:  # type: ignore[no-untyped-def]
        assert (await host.run(["tee", path], sudo=True, input=f"{value}\n")).ok

    async def scenario() -> None:
        with Store(tmp_path / "s.db") as store:
            async with HostPool(settings) as pool:
                host = pool["lab-client1"]
                lab_own = [await t.read(host) for t in (dirty, background)]  # the lab runs on byte limits
                # the kernel's defaults, ratios, as most hosts run: what the journal must bring back
                await put(host, "/proc/sys/vm/dirty_ratio", 20)
                await put(host, "/proc/sys/vm/dirty_background_ratio", 10)
                before = [await t.read(host) for t in (dirty, background, slots, ratio)]
                assert before[:2] == ["20%", "10%"] and before[3] == 20
                journal = ChangeJournal(store, pool, deadman_timeout=60)
                for target, value in ((dirty, 64 << 20), (background, 16 << 20), (slots, 16)):
                    applied = await journal.apply("lab-client1", target, value)
                    assert applied.old == before[[dirty, background, slots].index(target)] and applied.effective == value
                assert await fresh_read(settings, "lab-client1", ratio.read) == 0  # displaced by the byte limit
                assert await fresh_read(settings, "lab-client1", slots.read) == 16
                assert await journal.close() == []
                after = [await fresh_read(settings, "lab-client1", t.read) for t in (dirty, background, slots, ratio)]
                assert after == before
                assert {e.state for e in store.journal()} == {JournalState.REVERTED}
                await put(host, "/proc/sys/vm/dirty_bytes", lab_own[0])
                await put(host, "/proc/sys/vm/dirty_background_bytes", lab_own[1])

    run(scenario())


def test_max_block_size_restarts_nfsd_as_it_was_and_caps_a_new_mount(lab: LabHandle, tmp_path: Path) -> None:
    """The kernel takes it only while nfsd is stopped: the restart must bring back the same threads,
    listeners (both address families) and rpcbind registration (an NFSv3 mount after it works), a
    mount made after takes the smaller size, and the admin's own mount carries on once the grace
    period is over."""
    settings = _settings(lab, tmp_path)
    files = (BLOCK_SIZE_FILE, THREADS_FILE, VERSIONS_FILE)

    def listening() -> list[str]:
        """nfsd's listeners, and what rpcbind says of NFS (NFSv3 mounts ask it)."""
        out = lab.run("lab-server", "ss -Hltn 'sport = :2049'; rpcinfo -p | grep -w 100003 || true").stdout
        return sorted(" ".join(line.split()[3:5]) if line.startswith("LISTEN") else " ".join(line.split())
                      for line in out.splitlines() if line.strip())  # fmt: skip

    async def scenario() -> None:
        with Store(tmp_path / "s.db") as store:
            async with HostPool(settings) as pool:
                server = pool["lab-server"]
                before = [await read_text(server, f) for f in files]
                sockets = listening()
                assert int(before[0]) > 65536  # the lab's nfsd offers more than the value tried
                assert any("100003" in x for x in sockets) and any("[::]:2049" in x for x in sockets)
                journal = ChangeJournal(store, pool, deadman_timeout=60)
                applied = await journal.apply("lab-server", NfsdBlockSizeTarget(), 65536)
                assert applied.effective == 65536 and str(applied.old) == before[0].strip()
                assert await fresh_read(settings, "lab-server", lambda c: read_text(c, THREADS_FILE)) == before[1]
                assert listening() == sockets
                assert await grace_wait(server) <= 40  # the lab's grace time is 10 s
                mount = ScratchMount("lab-server", "/srv/nfs", "/mnt/nfs-tuner-mbs")
                made = await journal.apply("lab-client1", mount, MountOptions(rsize=1 << 20, nfsvers="4.2").option_string())
                assert ScratchMount.taken_options(made.effective)["rsize"] == "65536"
                assert await journal.close() == []
                assert [await fresh_read(settings, "lab-server", lambda c, f=f: read_text(c, f)) for f in files] == before
                assert listening() == sockets
                await grace_wait(server)
        assert lab.run("lab-client1", "timeout 60 stat -c %i /mnt/lab/").returncode == 0  # the admin's mount
        v3 = "mkdir -p /mnt/nfs-tuner-v3 && mount -t nfs -o vers=3 lab-server:/srv/nfs /mnt/nfs-tuner-v3"
        assert lab.run("lab-client1", f"{v3} && umount /mnt/nfs-tuner-v3; rmdir /mnt/nfs-tuner-v3").returncode == 0

    run(scenario())


@pytest.mark.every_kernel
def test_a_max_block_size_above_1_mib_is_what_the_kernel_takes_and_the_mount_says_what_it_got(
        lab: LabHandle, tmp_path: Path) -> None:  # fmt: skip
    """4 MiB: nfsd takes it from Linux 6.16 (the lab's 7.2) and clamps it to 1 MiB before (6.1); the journal's
    readback says which. A 4 MiB rsize then gets what both nfsd and the client's kernel allow (Linux's client
    keeps 1 MiB, 7.2's too), and the mount says so."""
    settings = _settings(lab, tmp_path)

    async def scenario() -> None:
        with Store(tmp_path / "s.db") as store:
            async with HostPool(settings) as pool:
                before = await read_text(pool["lab-server"], BLOCK_SIZE_FILE)
                journal = ChangeJournal(store, pool, deadman_timeout=60)
                applied = await journal.apply("lab-server", NfsdBlockSizeTarget(), 4 << 20)
                now = int(await fresh_read(settings, "lab-server", lambda c: read_text(c, BLOCK_SIZE_FILE)))
                assert applied.effective == now and now in (1 << 20, 4 << 20)
                assert applied.clamped == (now != 4 << 20)
                assert any("the host took 1048576" in n for n in applied.notes) == applied.clamped
                await grace_wait(pool["lab-server"])
                mount = ScratchMount("lab-server", "/srv/nfs", "/mnt/nfs-tuner-mbs4")
                made = await journal.apply("lab-client1", mount, MountOptions(rsize=4 << 20, wsize=4 << 20, nfsvers="4.2").option_string())
                taken = ScratchMount.taken_options(made.effective)
                assert int(taken["rsize"]) <= now and int(taken["wsize"]) <= now
                assert MountOptions.taken("rsize", taken) == taken["rsize"]
                assert await journal.close() == []
                assert await fresh_read(settings, "lab-server", lambda c: read_text(c, BLOCK_SIZE_FILE)) == before
                await grace_wait(pool["lab-server"])

    run(scenario())
