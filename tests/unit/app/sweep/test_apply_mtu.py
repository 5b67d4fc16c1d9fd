"""The MTU between trials (app.sweep.apply, app.knobs.network): its path ends are looked up once a sweep, and
both ends of a change are put back side by side, as they were made.

In-process hosts answer the lookups and the don't-fragment pings and count them; a journal that records
what it applies and puts back stands in for the switch's round trips (the point is the calls, which a real
host cannot count).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from app.hosts import CommandResult
from app.knobs.model import Applied, Value
from app.knobs.targets import ScratchMount
from app.sweep.apply import ConfigApplier
from app.sweep.held import HeldChanges
from app.sweep.host_side import Applying
from app.sweep.spec import SweepSpec
from experiments.plan import Plan

ADDRESSES = {"srv": "10.0.0.1", "c1": "10.0.0.11", "c2": "10.0.0.12"}


class Host:
    def __init__(self, name: str) -> None:
        self.name = name
        self.ran: list[str] = []

    async def privilege(self) -> Any:
        from app.hosts.privilege import Privilege

        return Privilege(user="root", uid=0, passwordless_sudo=False, sudo_installed=False)

    async def run(self, argv: list[str], **_kwargs: Any) -> CommandResult:
        self.ran.append(argv[0])
        if argv[0] == "getent":
            return CommandResult(0, f"{ADDRESSES['srv']} STREAM srv\n", "", tuple(argv))
        if argv[:3] == ["ip", "-j", "route"]:
            return CommandResult(0, json.dumps([{"dev": "lan0", "prefsrc": ADDRESSES[self.name]}]), "", tuple(argv))
        if argv[0] == "ping":
            return CommandResult(0, "", "", tuple(argv))
        return CommandResult(127, "", "not here", tuple(argv))  # ss: none (the connection checks said unchecked)


class Journal:
    """Records each change made and put back; a put-back waits until every other one of its trial has begun."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str, str]] = []
        self.reverting = 0
        self.together: list[bool] = []  # per put-back: whether the trial's others had begun by then

    async def apply(self, host: str, target: Any, value: Value) -> Applied:
        self.log.append(("apply", host, str(value)))
        return Applied(target.spec.name, host, target.target, 1500, value, value, len(self.log))

    async def revert(self, item: Applied) -> None:
        self.reverting += 1
        for _ in range(50):  # one after another, the first would wait for the others in vain
            if self.reverting % 3 == 0:
                break
            await asyncio.sleep(0.01)
        self.together.append(self.reverting % 3 == 0)
        self.log.append(("revert", item.host, str(item.requested)))


def test_a_sweep_looks_the_paths_up_once_and_puts_both_ends_back_side_by_side() -> None:
    hosts = {name: Host(name) for name in ADDRESSES}
    journal = Journal()
    spec = SweepSpec("srv", ("c1", "c2"), "/srv/nfs", Plan(knobs={"mtu": (1500, 9000)}, strategy="grid"))
    applier = ConfigApplier(journal, hosts, spec, "/mnt/nfs-tuner-t")  # type: ignore[arg-type]

    async def trials() -> None:
        for mtu in (9000, 1500, 9000):
            await applier._hold("srv", ("mtu",), {"mtu": mtu}, Applying())

    asyncio.run(trials())
    lookups = {name: [p for p in h.ran if p in ("getent", "ip")] for name, h in hosts.items()}
    assert lookups == {"srv": ["ip", "ip"], "c1": ["getent", "ip"], "c2": ["getent", "ip"]}  # once, not per change
    assert sum(h.ran.count("ping") for h in hosts.values()) == 3 * 4  # every change is still proven both ways
    reverts = [entry for entry in journal.log if entry[0] == "revert"]
    assert len(reverts) == 6 and journal.together == [True] * 6
    assert {host for _, host, _ in reverts[:3]} == {"srv", "c1", "c2"}


def test_one_hosts_changes_of_a_key_are_put_back_newest_first_one_after_another() -> None:
    done: list[str] = []

    async def revert(item: tuple[str, str]) -> None:
        await asyncio.sleep(0.01 if item[1] == "old" else 0)
        done.append(item[1])

    async def scenario() -> None:
        held: HeldChanges[tuple[str, str]] = HeldChanges(revert, lambda item: item[0])

        async def make() -> list[tuple[str, str]]:
            return [("srv", "old"), ("srv", "new")]

        await held.put(("srv", "k"), 1, make)
        await held.drop(("srv", "k"))

    asyncio.run(scenario())
    assert done == ["new", "old"]


def test_a_put_back_that_fails_on_one_host_still_puts_back_the_others_then_says_so() -> None:
    done: list[str] = []

    async def revert(item: str) -> None:
        if item == "c1":
            raise RuntimeError("c1 did not answer")
        await asyncio.sleep(0.01)
        done.append(item)

    async def scenario() -> str:
        held: HeldChanges[str] = HeldChanges(revert, lambda item: item)

        async def make() -> list[str]:
            return ["srv", "c1", "c2"]

        await held.put(("srv", "mtu"), 9000, make)
        try:
            await held.drop(("srv", "mtu"))
        except RuntimeError as exc:
            return str(exc)
        return ""

    assert asyncio.run(scenario()) == "c1 did not answer"
    assert sorted(done) == ["c2", "srv"]


class TimedJournal:
    """Each change and put-back takes 50 ms and is logged at its start and end."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str, str]] = []

    async def apply(self, host: str, target: Any, value: Value) -> Applied:
        self.log.append(("start", target.spec.name, host))
        await asyncio.sleep(0.05)
        self.log.append(("end", target.spec.name, host))
        return Applied(target.spec.name, host, target.target, None, value, value, len(self.log))

    async def revert(self, item: Applied) -> None:
        self.log.append(("start", f"undo {item.knob}", item.host))
        await asyncio.sleep(0.05)
        self.log.append(("end", f"undo {item.knob}", item.host))


def _trials(plan: dict[str, tuple[Any, ...]], configs: list[dict[str, Value]],
            monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, str]]:  # fmt: skip
    async def bdi(self: ScratchMount, conn: Any) -> str:
        return "0:29"

    monkeypatch.setattr(ScratchMount, "bdi", bdi)
    hosts = {name: Host(name) for name in ADDRESSES}
    journal = TimedJournal()
    spec = SweepSpec("srv", ("c1", "c2"), "/srv/nfs", Plan(knobs=plan, strategy="grid"), restart_opt_in=True)
    applier = ConfigApplier(journal, hosts, spec, "/mnt/nfs-tuner-t")  # type: ignore[arg-type]

    async def run() -> None:
        for config in configs:
            await applier.apply(config)

    asyncio.run(run())
    return journal.log


def test_the_mounts_a_trial_does_not_keep_come_down_while_the_server_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    log = _trials({"mtu": (1500, 9000)}, [{"mtu": 9000}, {"mtu": 1500}], monkeypatch)
    second = log[log.index(("end", "test_mount", "c2")) + 1:]  # the second trial
    first_mount_down = second.index(("start", "undo test_mount", "c1"))
    server_mtu_done = second.index(("end", "mtu", "srv"))
    assert first_mount_down < server_mtu_done, second  # side by side, not after


def test_with_nfsd_restarting_in_the_plan_the_mounts_come_down_only_after_the_server(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    log = _trials({"mtu": (1500, 9000), "max_block_size": (1048576,)}, [{"mtu": 9000}, {"mtu": 1500}], monkeypatch)
    second = log[log.index(("end", "test_mount", "c2")) + 1:]  # the second trial
    assert second.index(("start", "undo test_mount", "c1")) > second.index(("end", "mtu", "srv")), second
