"""nfsd's max_block_size: changed by a restart that brings back the threads and listeners, an
opt-in of its own, held with nfsd_threads so neither restores a stale value.

The host is an in-process model of knfsd's /proc/fs/nfsd as Linux 6.1 behaves (the lab
test in tests/integration/test_knobs_lab.py runs the same change on a real kernel): the
size is refused while the service exists; threads 0 ends the service, its listeners and
its rpcbind registration; rpc.nfsd listens on both families and registers; threads N
with no listener starts on the kernel's defaults, IPv4 only.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from app.hosts import CommandResult
from app.hosts.privilege import Privilege
from app.knobs.changes import ChangeJournal
from app.knobs.model import KnobError
from app.knobs.nfsd_restart import NfsdBlockSizeTarget, NfsdPoolModeTarget, bound_addresses, grace_wait, listeners, span_count

from app.commands.arguments import OPT_IN_FLAGS
from app.session.plan import PLAN_PAGE_OPT_INS, RESTART_RISK, PlanChoices, plan_problems
from app.store import JournalState, Store
from app.sweep.apply import ConfigApplier
from app.sweep.host_side import Applying
from app.sweep.spec import SweepSpec
from tests.unit.app.knobs.served_switch import ServedSwitch
from experiments.plan import Plan
from tests.unit.app.knobs.test_coherence_knobs import HELPER, RecordingJournal

MIB = 1 << 20


class _Nfsd(ServedSwitch):
    """knfsd's control files as the kernel answers them, and the commands that read them."""

    def __init__(self, *, bound: str | None = None) -> None:
        self.name = "filer"
        self.threads, self.size, self.keep_active = 8, MIB, False
        self.ports = ["tcp 2049 v4", "tcp 2049 v6"]
        self.bound = bound  # a listener on one address (rpc.nfsd -H)
        self.grace_reads = 0  # reads of v4_end_grace still answering N
        self.restarts = 0
        self.registered = True  # NFS's program with rpcbind: NFSv3 mounts need it
        self.no_rpc_nfsd = False
        self.commands: list[tuple[str, str]] = []

    @property
    def serving(self) -> bool:
        return self.threads > 0 or self.keep_active

    def _write(self, path: str, text: str) -> str | None:
        name = path.rsplit("/", 1)[-1]
        if name == "max_block_size":
            if self.serving:
                return "tee: /proc/fs/nfsd/max_block_size: Device or resource busy"
            self.size = int(text)
        elif name == "threads":
            n = int(text)
            if n == 0:
                self.threads, self.keep_active, self.ports, self.registered = 0, False, [], False
            else:
                if self.threads == 0:
                    self.restarts += 1
                    self.grace_reads = 2
                if not self.ports:
                    self.ports, self.registered = ["udp 2049 v4", "tcp 2049 v4"], True  # nfsd_init_socks
                self.threads, self.keep_active = n, False
        return None

    def _rpc_nfsd(self, threads: str) -> CommandResult:
        if self.no_rpc_nfsd:
            return CommandResult(127, "", "sudo: rpc.nfsd: command not found")
        if not self.ports:  # its own sockets, as nfs.conf says: both families, registered
            self.ports, self.registered = ["tcp 2049 v4", "tcp 2049 v6"], True
        self._write("threads", threads)
        return CommandResult(0, "", "")

    def _read(self, path: str) -> str:
        name = path.rsplit("/", 1)[-1]
        if name == "v4_end_grace":
            self.grace_reads -= 1
            return "N\n" if self.grace_reads >= 0 else "Y\n"
        if name == "portlist":
            return "".join(f"{p.rsplit(' ', 1)[0]}\n" for p in self.ports)
        return {"max_block_size": f"{self.size}\n", "threads": f"{self.threads}\n", "nfsv4gracetime": "10\n"}[name]

    async def privilege(self) -> Privilege:
        return Privilege(user="root", uid=0, passwordless_sudo=False, sudo_installed=False)

    async def run(self, argv: Sequence[str], *, sudo: bool = False, input: str | None = None,
                  timeout: float | None = None) -> CommandResult:  # fmt: skip
        if argv[0] == "python3":  # the dead-man switch: armed, fed, its list written
            return CommandResult(0, "armed 4242\n" if "arm" in argv else "", "")
        if argv[0] == "env" and "nfsdctl" in argv:  # a host without nfsdctl (nfs-utils before 2.7): /proc alone
            return CommandResult(127, "", "env: 'nfsdctl': No such file or directory")
        if argv[0] == "cat":
            return CommandResult(0, self._read(argv[-1]), "")
        if argv[0] == "tee":
            self.commands.append((argv[-1].rsplit("/", 1)[-1], (input or "").strip()))
            error = self._write(argv[-1], (input or "").strip())
            return CommandResult(1 if error else 0, "", error or "")
        if argv[0] == "rpc.nfsd":
            self.commands.append(("rpc.nfsd", argv[1]))
            return self._rpc_nfsd(argv[1])
        if argv[:2] == ["ss", "-Hltn"]:
            local = [f"{self.bound}:2049"] if self.bound else ["0.0.0.0:2049", "[::]:2049"]
            return CommandResult(0, "".join(f"LISTEN 0 64 {a} 0.0.0.0:*\n" for a in local), "")
        raise AssertionError(f"unexpected command {argv}")


def _journal(tmp_path: Path, host: _Nfsd) -> tuple[Store, ChangeJournal]:
    store = Store(tmp_path / "j.db")
    return store, ChangeJournal(store, {"filer": host}, None, deadman_timeout=60)  # type: ignore[arg-type]


def test_a_change_restarts_nfsd_with_its_threads_and_both_families_and_the_restore_does_too(tmp_path: Path) -> None:
    host = _Nfsd()

    async def scenario() -> None:
        store, journal = _journal(tmp_path, host)
        with store:
            applied = await journal.apply("filer", NfsdBlockSizeTarget(), 256 * 1024)
            assert applied.old == MIB and applied.effective == 256 * 1024
            assert (host.threads, sorted(host.ports), host.registered) == (8, ["tcp 2049 v4", "tcp 2049 v6"], True)
            assert host.commands == [("threads", "0"), ("max_block_size", "262144"), ("rpc.nfsd", "8"),
                                     ("threads", "8")]  # fmt: skip
            assert await journal.close() == []
            assert store.journal(None)[0].state is JournalState.REVERTED

    asyncio.run(scenario())
    assert (host.size, host.threads, sorted(host.ports), host.restarts) == (MIB, 8, ["tcp 2049 v4", "tcp 2049 v6"], 2)
    assert host.registered


def test_without_rpc_nfsd_the_thread_count_still_brings_nfsd_back(tmp_path: Path) -> None:
    host = _Nfsd()
    host.no_rpc_nfsd = True

    async def scenario() -> None:
        store, journal = _journal(tmp_path, host)
        with store:
            await journal.apply("filer", NfsdBlockSizeTarget(), 65536)
            assert host.threads == 8 and host.registered  # on the kernel's defaults, but serving
            assert await journal.close() == []

    asyncio.run(scenario())
    assert (host.size, host.threads) == (MIB, 8)


def test_the_size_already_in_force_restarts_nothing(tmp_path: Path) -> None:
    host = _Nfsd()

    async def scenario() -> None:
        store, journal = _journal(tmp_path, host)
        with store:
            applied = await journal.apply("filer", NfsdBlockSizeTarget(), MIB)
            assert applied.effective == MIB
            await journal.close()

    asyncio.run(scenario())
    assert host.commands == [] and host.restarts == 0


@pytest.mark.parametrize(("host", "words"), [
    (_Nfsd(bound="10.0.0.1"), "listens on 10.0.0.1:2049 only"),
    (_Nfsd(bound="[fd00::1]"), "listens on [fd00::1]:2049 only"),
])  # fmt: skip
def test_nfsd_bound_to_one_address_is_left_alone_with_what_to_do(tmp_path: Path, host: _Nfsd, words: str) -> None:
    async def scenario() -> None:
        store, journal = _journal(tmp_path, host)
        with store, pytest.raises(KnobError, match=re.escape(words)) as refused:
            await journal.apply("filer", NfsdBlockSizeTarget(), 65536)
        assert "restart nfs-server yourself" in str(refused.value)

    asyncio.run(scenario())
    assert host.commands == [] and host.size == MIB


def test_a_stopped_nfsd_is_refused_not_started(tmp_path: Path) -> None:
    host = _Nfsd()
    host.threads = 0

    async def scenario() -> None:
        store, journal = _journal(tmp_path, host)
        with store, pytest.raises(KnobError, match="nfsd is not running on filer"):
            await journal.apply("filer", NfsdBlockSizeTarget(), 65536)

    asyncio.run(scenario())
    assert host.commands == []


def test_nfsds_ports_come_from_portlist_and_only_its_own_listeners_count() -> None:
    assert listeners("tcp 2049\ntcp 2049\nudp 2049\nrdma 20049\nsctp 9\n") == ("tcp 2049", "udp 2049", "rdma 20049")
    ss = "LISTEN 0 64 0.0.0.0:2049 0.0.0.0:*\nLISTEN 0 64 [::]:2049 [::]:*\nLISTEN 0 128 10.0.0.1:22 0.0.0.0:*\n"
    assert bound_addresses(ss, ("tcp 2049",)) == []  # sshd's own address is not nfsd's
    assert bound_addresses("LISTEN 0 64 10.0.0.1:2049 0.0.0.0:*", ("tcp 2049",)) == ["10.0.0.1:2049"]


def test_the_grace_period_is_waited_out_and_a_stuck_one_is_said() -> None:
    host = _Nfsd()
    host.grace_reads = 2
    assert asyncio.run(grace_wait(host, poll_s=0.01)) < 1  # type: ignore[arg-type]
    host.grace_reads = 10**6
    with pytest.raises(KnobError, match="still in its NFSv4 grace period"):
        asyncio.run(grace_wait(host, limit_s=0.05, poll_s=0.01))  # type: ignore[arg-type]


# --- held with nfsd_threads ------------------------------------------------------------------------
def test_a_thread_change_puts_the_block_size_back_first_and_makes_it_again_after() -> None:
    """The restart brings back the thread count it read: kept across a thread change, it would
    put back a stale count at the end."""
    plan = Plan(knobs={"nfsd_threads": (8, 32), "max_block_size": (65536, MIB)}, strategy="grid")
    spec = SweepSpec("srv", ("c1",), "/srv/nfs", plan, restart_opt_in=True)
    journal = RecordingJournal()
    applier = ConfigApplier(journal, {"srv": _Nfsd()}, spec, "/mnt/nfs-tuner-t")  # type: ignore[arg-type]
    group = ("nfsd_threads", "max_block_size")

    async def run() -> None:
        for threads, size in ((8, 65536), (8, 65536), (32, 65536), (32, MIB)):
            await applier._hold("srv", group, {"nfsd_threads": threads, "max_block_size": size}, Applying())

    asyncio.run(run())
    assert journal.log == [
        ("apply", "nfsd_threads", "8"), ("apply", "max_block_size", "65536"),  # then held: nothing
        ("revert", "max_block_size", "65536"), ("revert", "nfsd_threads", "8"),
        ("apply", "nfsd_threads", "32"), ("apply", "max_block_size", "65536"),
        ("revert", "max_block_size", "65536"), ("apply", "max_block_size", str(MIB)),  # the threads stay
    ]  # fmt: skip


def test_a_real_sweep_order_ends_with_the_threads_and_size_of_today(tmp_path: Path) -> None:
    """The same through the real journal and the modelled kernel: nothing stale is put back."""
    host = _Nfsd()
    plan = Plan(knobs={"nfsd_threads": (8, 32), "max_block_size": (65536, MIB)}, strategy="grid")
    spec = SweepSpec("filer", ("c1",), "/srv/nfs", plan, restart_opt_in=True)

    async def scenario() -> None:
        store, journal = _journal(tmp_path, host)
        applier = ConfigApplier(journal, {"filer": host}, spec, "/mnt/nfs-tuner-t")  # type: ignore[arg-type]
        with store:
            for threads, size in ((32, 65536), (8, 65536), (32, MIB), (16, 65536)):
                out = Applying()
                await applier._hold("filer", ("nfsd_threads", "max_block_size"),
                                    {"nfsd_threads": threads, "max_block_size": size}, out)  # fmt: skip
                assert (host.threads, host.size) == (threads, size)
            assert await journal.close() == []

    asyncio.run(scenario())
    assert (host.threads, host.size, sorted(host.ports)) == (8, MIB, ["tcp 2049 v4", "tcp 2049 v6"])


# --- the opt-in ----------------------------------------------------------------------------------
def test_sweeping_it_needs_the_restart_opt_in_in_both_faces() -> None:
    refused = PlanChoices(knobs={"max_block_size": "64K, 1M"})
    assert plan_problems(refused) == {"max_block_size": RESTART_RISK.format(opt_in=PLAN_PAGE_OPT_INS["restart"])}
    assert plan_problems(refused, OPT_IN_FLAGS)["max_block_size"].endswith("sweep it only with --restart-opt-in")
    assert plan_problems(PlanChoices(knobs={"max_block_size": "64K, 1M"}, allow_restart=True)) == {}
    plan = Plan(knobs={"max_block_size": (65536, MIB)}, baseline={"max_block_size": MIB})
    with pytest.raises(ValueError, match="--restart-opt-in"):
        SweepSpec("srv", ("c1",), "/srv/nfs", plan)
    SweepSpec("srv", ("c1",), "/srv/nfs", Plan(knobs={"max_block_size": (MIB,)}, baseline={"max_block_size": MIB}))
    stored = SweepSpec("srv", ("c1",), "/srv/nfs", plan, restart_opt_in=True).to_json()
    assert SweepSpec.from_json(json.loads(json.dumps(stored))).restart_opt_in


def test_the_helper_starts_rpc_nfsd_with_a_thread_count_and_nothing_else() -> None:
    ns: dict[str, Any] = {"__name__": "helper_under_test"}
    exec(compile(HELPER, "sudo_helper_host.py", "exec"), ns)
    ns["_tool"] = lambda name: f"/usr/sbin/{name}"
    assert ns["check"](["rpc.nfsd", "8"]) == ["/usr/sbin/rpc.nfsd", "8"]
    for bad in (["rpc.nfsd", "0"], ["rpc.nfsd", "-H", "1.2.3.4"], ["rpc.nfsd", "8", "-N", "4"], ["rpc.nfsd", "2000"],
                ["rpc.nfsd", "+8"], ["rpc.nfsd"]):  # fmt: skip
        with pytest.raises(ns["Refused"]):
            ns["check"](bad)
    assert ns["check"](["tee", "/proc/fs/nfsd/max_block_size"], "65536\n")[1] == "/proc/fs/nfsd/max_block_size"
    with pytest.raises(ns["Refused"]):
        ns["check"](["tee", "/proc/fs/nfsd/portlist"], "tcp 2049\n")
    for readable in ("v4_end_grace", "nfsv4gracetime", "portlist"):  # the restart reads them (digits too)
        assert ns["check"](["cat", "--", f"/proc/fs/nfsd/{readable}"])[-1] == f"/proc/fs/nfsd/{readable}"
    for bad in ("/proc/fs/nfsd/../../../etc/shadow", "/proc/fs/nfsd/4x", "/proc/fs/nfsd/"):
        with pytest.raises(ns["Refused"]):
            ns["check"](["cat", "--", bad])


def test_the_snippet_writes_it_before_nfsd_starts_and_says_the_restart() -> None:
    from app.snippets import SnippetContext, render_all

    snippets = {s.key: s for s in render_all({"max_block_size": 262144, "nfsd_threads": 32}, SnippetContext())}
    dropin = snippets["nfsd-max-block-size"]
    assert dropin.target.startswith("/etc/systemd/system/nfs-server.service.d/") and dropin.host_role == "server"
    assert "ExecStartPre=/bin/sh -c 'echo 262144 > /proc/fs/nfsd/max_block_size'" in dropin.text
    assert "grace period" in dropin.safety
    assert "nfs-tuner-max-block-size.conf" in snippets["ansible"].text
    kept = {s.key for s in render_all({"max_block_size": 3000}, SnippetContext())}  # not a size nfsd offers
    assert "refused:nfsd" in kept and "nfsd-max-block-size" not in kept


def test_the_evidence_says_the_cap_on_what_clients_asked_and_the_restart() -> None:
    from app.recommend.evidence import block_size_sentence
    from app.recommend.model import ConfigResult

    def result(config: dict[str, Any]) -> ConfigResult:
        return ConfigResult(config, (), None, None, None)  # type: ignore[arg-type]  # only the config is read

    base, best = result({"max_block_size": MIB, "rsize": MIB}), result({"max_block_size": 262144, "rsize": MIB})
    sentence = block_size_sentence(best, base)
    assert sentence is not None and "at most 262144 bytes (rsize 1048576 asked for is cut to it)" in sentence
    assert "grace period" in sentence
    assert block_size_sentence(base, base) is None


# --- pool_mode: the same restart ------------------------------------------------------------------
class _Pools(_Nfsd):
    """The same nfsd with sunrpc's pool_mode, taken only while no nfsd runs, on a host of ``cpus``."""

    def __init__(self, cpus: str) -> None:
        super().__init__()
        self.mode, self.cpus = "global", cpus

    def _write(self, path: str, text: str) -> str | None:
        if path.endswith("/pool_mode"):
            if self.serving:
                return "tee: /sys/module/sunrpc/parameters/pool_mode: Device or resource busy"
            self.mode = text
            return None
        return super()._write(path, text)

    def _read(self, path: str) -> str:
        found = {"pool_mode": f"{self.mode}\n", "online": f"{self.cpus}\n" if "/cpu/" in path else "0\n"}
        return found.get(path.rsplit("/", 1)[-1]) or super()._read(path)

    async def run(self, argv: Sequence[str], *, sudo: bool = False, input: str | None = None,
                  timeout: float | None = None) -> CommandResult:  # fmt: skip
        if argv[0] == "cat" and len(argv) > 3:
            return CommandResult(0, "".join(self._read(p) for p in argv[2:]), "")
        return await super().run(argv, sudo=sudo, input=input, timeout=timeout)


def test_a_pool_mode_change_restarts_nfsd_as_it_was_and_one_cpu_refuses_it(tmp_path: Path) -> None:
    host = _Pools("0-3")

    async def scenario() -> None:
        store, journal = _journal(tmp_path, host)
        with store:
            applied = await journal.apply("filer", NfsdPoolModeTarget(), "percpu")
            assert (applied.old, applied.effective, host.mode, host.threads) == ("global", "percpu", "percpu", 8)
            assert host.commands[:3] == [("threads", "0"), ("pool_mode", "percpu"), ("rpc.nfsd", "8")]
            assert await journal.close() == []
        with pytest.raises(KnobError, match="one CPU and one NUMA node: every pool mode makes one pool"):
            await NfsdPoolModeTarget().read(_Pools("0"))  # type: ignore[arg-type]

    asyncio.run(scenario())
    assert (host.mode, host.threads, sorted(host.ports)) == ("global", 8, ["tcp 2049 v4", "tcp 2049 v6"])
    assert [span_count(s) for s in ("0", "0-3", "0-3,8,10-11", "x", "")] == [1, 4, 7, 1, 1]
