"""nfsd's threads through nfsdctl where the host answers it, and a self-scaling nfsd's floor.

The host is an in-process model of nfsdctl 3.1 on Linux 7.2 as the lab's UML 7.2 answers it
(tests/integration/test_knobs_lab.py runs the same changes there): ``nfsdctl threads`` prints
the pools' threads and min-threads; ``nfsdctl threads N`` spreads N over the pools and keeps
the floor; ``-m M N`` sets both; ``-m M`` alone only prints.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from app.hosts import CommandResult
from app.hosts.privilege import Privilege
from app.knobs.changes import ChangeJournal
from app.knobs.model import KnobError
from app.knobs.nfsd_netlink import NfsdctlThreadsTarget, NfsdMinThreadsTarget, threads_target
from app.knobs.recovery import target_for
from app.knobs.targets import KernelFileTarget
from app.snippets.model import SnippetContext
from app.snippets.nfs_files import nfs_conf, nfs_snippets, threads_command
from app.store import JournalState, Store
from app.store.records import JournalEntry
from app.sweep.apply import ConfigApplier
from app.sweep.host_side import Applying
from app.sweep.spec import SweepSpec
from tests.unit.app.knobs.served_switch import ServedSwitch
from experiments.plan import Plan


class _Nfsdctl(ServedSwitch):
    def __init__(self, pools: int = 1, floor: int | None = 0) -> None:
        self.name = "filer"
        self.pools, self.floor = [8 // pools] * pools, floor
        self.sets: list[list[str]] = []

    async def privilege(self) -> Privilege:
        return Privilege(user="root", uid=0, passwordless_sudo=False, sudo_installed=False)

    def _print(self) -> str:
        floor = f"min-threads: {self.floor}\n" if self.floor is not None else ""
        return f"gracetime: 90\nleasetime: 90\n{floor}scope: filer\npool-threads: {' '.join(map(str, self.pools))}\n"

    async def run(self, argv: Sequence[str], *, sudo: bool = False, input: str | None = None,
                  timeout: float | None = None) -> CommandResult:  # fmt: skip
        args = list(argv)
        if args[0] == "python3":  # the dead-man switch: armed, fed, its list written
            return CommandResult(0, "armed 4242\n" if "arm" in args else "", "")
        if args[:1] == ["env"]:
            args = args[2:]  # a login's PATH, with sbin
        if args[:2] != ["nfsdctl", "threads"]:
            raise AssertionError(f"unexpected command {args[:3]}")
        rest = args[2:]
        if rest[:1] == ["-m"]:
            if len(rest) == 2:
                return CommandResult(0, self._print(), "")  # a floor alone is not set: nfsdctl prints
            if self.floor is None:
                return CommandResult(1, "", "nfsdctl: Error: Invalid argument")
            self.floor, rest = int(rest[1]), rest[2:]
        if rest:
            self.sets.append(list(args[2:]))
            total = int(rest[0])
            self.pools = [total // len(self.pools) + (i < total % len(self.pools)) for i in range(len(self.pools))]
        return CommandResult(0, self._print() if not rest else "", "")


class _ProcOnly(_Nfsdctl):
    async def run(self, argv: Sequence[str], *, sudo: bool = False, input: str | None = None,
                  timeout: float | None = None) -> CommandResult:  # fmt: skip
        return CommandResult(127, "", "env: 'nfsdctl': No such file or directory")


def _journal(tmp_path: Path, host: _Nfsdctl) -> tuple[Store, ChangeJournal]:
    store = Store(tmp_path / "j.db")
    return store, ChangeJournal(store, {"filer": host}, None, deadman_timeout=60)  # type: ignore[arg-type]


def test_the_threads_knob_acts_through_the_interface_the_host_answers() -> None:
    assert isinstance(asyncio.run(threads_target(_Nfsdctl())), NfsdctlThreadsTarget)  # type: ignore[arg-type]
    assert isinstance(asyncio.run(threads_target(_ProcOnly())), KernelFileTarget)  # type: ignore[arg-type]


def test_threads_change_reads_back_and_goes_back_through_nfsdctl(tmp_path: Path) -> None:
    host = _Nfsdctl(pools=2, floor=2)

    async def scenario() -> None:
        store, journal = _journal(tmp_path, host)
        with store:
            applied = await journal.apply("filer", NfsdctlThreadsTarget(), 32)
            assert (applied.old, applied.effective, applied.target) == (8, 32, "nfsdctl threads")
            assert (host.pools, host.floor) == ([16, 16], 2)  # spread over the pools; the floor kept
            assert await journal.close() == []
            (entry,) = store.journal(None)
            assert entry.state is JournalState.REVERTED

    asyncio.run(scenario())
    assert host.sets == [["32"], ["8"]] and host.pools == [4, 4]


def test_the_floor_is_set_with_the_thread_count_nfsd_has_and_put_back(tmp_path: Path) -> None:
    host = _Nfsdctl(floor=0)

    async def scenario() -> None:
        store, journal = _journal(tmp_path, host)
        with store:
            applied = await journal.apply("filer", NfsdMinThreadsTarget(), 2)
            assert (applied.old, applied.effective, host.floor) == (0, 2, 2)
            assert await journal.close() == []

    asyncio.run(scenario())
    assert host.sets == [["-m", "2", "8"], ["-m", "0", "8"]] and host.floor == 0


def test_a_kernel_without_a_floor_refuses_the_floor_knob_and_says_why() -> None:
    with pytest.raises(KnobError, match="has no min-threads"):
        asyncio.run(NfsdMinThreadsTarget().read(_Nfsdctl(floor=None)))  # type: ignore[arg-type]
    with pytest.raises(KnobError, match="does not answer"):
        asyncio.run(NfsdMinThreadsTarget().read(_ProcOnly()))  # type: ignore[arg-type]


def test_a_sweep_of_both_ends_with_the_threads_and_floor_of_today(tmp_path: Path) -> None:
    """The floor follows the thread count in the held group: a thread change puts the floor back first
    and sets it again after, with the new count, so nothing stale is put back."""
    host = _Nfsdctl(floor=0)
    plan = Plan(knobs={"nfsd_threads": (8, 32), "nfsd_min_threads": (0, 2)}, strategy="grid")
    spec = SweepSpec("filer", ("c1",), "/srv/nfs", plan)

    async def scenario() -> None:
        store, journal = _journal(tmp_path, host)
        applier = ConfigApplier(journal, {"filer": host}, spec, "/mnt/nfs-tuner-t")  # type: ignore[arg-type]
        with store:
            for threads, floor in ((32, 2), (8, 2), (32, 0), (16, 2)):
                await applier._hold("filer", ("nfsd_threads", "nfsd_min_threads"),
                                    {"nfsd_threads": threads, "nfsd_min_threads": floor}, Applying())  # fmt: skip
                assert (sum(host.pools), host.floor) == (threads, floor)
            assert await journal.close() == []

    asyncio.run(scenario())
    assert (host.pools, host.floor) == ([8], 0)


def test_a_crash_leftover_is_rebuilt_as_the_interface_it_was_made_through() -> None:
    def entry(knob: str, target: str) -> JournalEntry:
        return JournalEntry(1, None, "filer", knob, target, "8", "32", 0.0, 0.0, JournalState.APPLIED, "")

    assert isinstance(target_for(entry("nfsd_threads", "nfsdctl threads")), NfsdctlThreadsTarget)
    assert isinstance(target_for(entry("nfsd_threads", "/proc/fs/nfsd/threads")), KernelFileTarget)
    assert isinstance(target_for(entry("nfsd_min_threads", "nfsdctl threads -m")), NfsdMinThreadsTarget)


def test_snippets_write_what_that_servers_nfs_utils_reads() -> None:
    config = {"nfsd_threads": 32, "nfsd_min_threads": 4}
    assert nfs_conf(config).splitlines()[-2:] == ["threads=32", "min-threads=4"]
    netlink, procfs = SnippetContext(nfsd_netlink=True), SnippetContext()
    assert threads_command(config, netlink) == "nfsdctl threads -m 4 32"
    assert threads_command({"nfsd_threads": 32}, procfs) == "rpc.nfsd 32"
    (conf,) = [s for s in nfs_snippets(config, netlink) if s.key == "nfs.conf"]
    assert "nfsdctl autostart" in conf.safety and "min-threads=" in conf.safety
    (conf,) = [s for s in nfs_snippets({"nfsd_threads": 32}, procfs) if s.key == "nfs.conf"]
    assert "rpc.nfsd N" in conf.safety


def test_the_pool_mode_persists_where_that_servers_nfs_utils_reads_it() -> None:
    netlink, procfs = SnippetContext(nfsd_netlink=True), SnippetContext()
    (conf,) = [s for s in nfs_snippets({"pool_mode": "percpu"}, netlink) if s.key == "nfs.conf"]
    assert conf.text.splitlines()[-1] == "pool-mode=percpu"  # nfsdctl autostart reads it
    snippets = {s.key: s for s in nfs_snippets({"pool_mode": "percpu", "nfsd_threads": 16}, procfs)}
    assert "pool-mode" not in snippets["nfs.conf"].text  # rpc.nfsd does not: sunrpc's module option does
    assert snippets["sunrpc-pool-mode"].text.splitlines()[-1] == "options sunrpc pool_mode=percpu"
    with pytest.raises(ValueError, match="pool_mode must be one of"):
        nfs_snippets({"pool_mode": "percpu\noptions sunrpc evil=1"}, procfs)
