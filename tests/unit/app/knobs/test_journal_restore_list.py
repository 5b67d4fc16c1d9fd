"""The journal keeps the dead-man switch's restore list right with as few host calls as it can.

A revert leaves the list naming the change put back (replaying it is harmless); the next
change, or the next heartbeat, rewrites it. In-process host: the point is the order and
count of the switch's calls, which a real host cannot show.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

from app.hosts import CommandResult
from app.hosts.privilege import Privilege
from app.knobs.changes import ChangeJournal
from app.knobs.targets import nfsd_threads
from app.store import Store
from tests.unit.app.knobs.served_switch import ServedSwitch


class _Host(ServedSwitch):
    """Answers the journal's commands: kernel files by cat/tee, the switch's verbs recorded."""

    def __init__(self) -> None:
        self.name = "filer"
        self.files = {"/proc/fs/nfsd/threads": "8\n"}
        self.lists: list[list[int]] = []  # the restore list's journal ids, at each write
        self.beats = 0

    async def privilege(self) -> Privilege:
        return Privilege(user="root", uid=0, passwordless_sudo=False, sudo_installed=False)

    async def run(self, argv: Sequence[str], *, sudo: bool = False, input: str | None = None,
                  timeout: float | None = None) -> CommandResult:  # fmt: skip
        if argv[0] == "python3" and "-c" in argv:
            verb = argv[argv.index("-c") + 2]
            if verb == "arm":
                return CommandResult(0, "armed 4242\n", "")
            if verb == "write":
                self.lists.append([e["id"] for e in json.loads(input or "[]")])
            if verb == "beat":
                self.beats += 1
            return CommandResult(0, "", "")
        if argv[:3] == ["touch", "-c", "-h"] and argv[3].endswith("/heartbeat"):  # a root login's beat
            self.beats += 1
            return CommandResult(0, "", "")
        if argv[0] == "cat":
            return CommandResult(0, self.files[argv[-1]], "")
        if argv[0] == "tee":
            self.files[argv[-1]] = input or ""
            return CommandResult(0, input or "", "")
        raise AssertionError(f"unexpected command {argv}")


def test_a_revert_then_a_change_writes_the_list_once_and_it_names_only_the_held_change(tmp_path: Path) -> None:
    host = _Host()

    async def scenario() -> None:
        with Store(tmp_path / "j.db") as store:
            journal = ChangeJournal(store, {"filer": host}, None, deadman_timeout=60)  # type: ignore[arg-type]
            first = await journal.apply("filer", nfsd_threads(), 16)
            assert host.lists == [[first.journal_id]]
            await journal.revert(first)
            assert host.files["/proc/fs/nfsd/threads"] == "8\n"
            assert host.lists == [[first.journal_id]]  # not rewritten yet: replaying it would set 8 again
            second = await journal.apply("filer", nfsd_threads(), 32)
            assert host.lists == [[first.journal_id], [second.journal_id]]  # before the change, without the first
            await journal.close()

    asyncio.run(scenario())
    assert host.files["/proc/fs/nfsd/threads"] == "8\n"


def test_the_heartbeat_rewrites_a_list_left_naming_changes_already_put_back(tmp_path: Path) -> None:
    host = _Host()

    async def scenario() -> None:
        with Store(tmp_path / "j.db") as store:
            journal = ChangeJournal(store, {"filer": host}, None, deadman_timeout=6)  # type: ignore[arg-type]  # beats every 1 s
            held = await journal.apply("filer", nfsd_threads(), 16)
            other = await journal.apply("filer", nfsd_threads(), 24)
            await journal.revert(other)
            assert host.lists[-1] == [held.journal_id, other.journal_id]
            for _ in range(30):
                await asyncio.sleep(0.1)
                if host.beats:
                    break
            assert host.beats and host.lists[-1] == [held.journal_id]
            await journal.close()

    asyncio.run(scenario())


def test_a_host_written_to_within_half_the_interval_is_not_beaten_and_an_idle_one_is(tmp_path: Path) -> None:
    """A restore list written refreshes the switch's heartbeat (deadman_host.py): a sweep's busy hosts need no
    beat of their own, a python start on the host each; an idle one still gets them."""
    host = _Host()

    async def scenario() -> tuple[int, int]:
        with Store(tmp_path / "j.db") as store:
            journal = ChangeJournal(store, {"filer": host}, None, deadman_timeout=6)  # type: ignore[arg-type]  # rounds every 1 s
            for value in (16, 24, 16, 24, 16, 24, 16, 24, 16, 24, 16, 24):  # a write every 0.25 s for 3 s
                applied = await journal.apply("filer", nfsd_threads(), value)
                await asyncio.sleep(0.25)
                await journal.revert(applied)
            busy = host.beats
            await asyncio.sleep(3.2)  # idle: a beat each round once the last write is half an interval old
            idle = host.beats - busy
            await journal.close()
            return busy, idle

    busy, idle = asyncio.run(scenario())
    assert busy == 0 and idle >= 2, (busy, idle)


def test_a_value_already_in_force_is_read_once_and_neither_listed_nor_put_back(tmp_path: Path) -> None:
    """A trial at today's value (the MTU a sweep goes back to, on three hosts each trial) makes nothing: one read,
    no restore list to write (a python start on the host) and no read back, then or when it is let go."""
    host = _Host()
    reads: list[str] = []
    run = host.run

    async def counting(argv: Sequence[str], **kw: object) -> CommandResult:
        if argv[0] == "cat":
            reads.append(argv[-1])
        return await run(argv, **kw)  # type: ignore[arg-type]

    host.run = counting  # type: ignore[method-assign]

    async def scenario() -> None:
        with Store(tmp_path / "j.db") as store:
            journal = ChangeJournal(store, {"filer": host}, None, deadman_timeout=60)  # type: ignore[arg-type]
            same = await journal.apply("filer", nfsd_threads(), 8)
            assert same.effective == 8 and not same.clamped
            assert reads == ["/proc/fs/nfsd/threads"] and host.lists == []
            await journal.revert(same)
            assert reads == ["/proc/fs/nfsd/threads"] and host.lists == []
            changed = await journal.apply("filer", nfsd_threads(), 16)  # a change still goes list first
            assert host.lists == [[changed.journal_id]] and host.files["/proc/fs/nfsd/threads"] == "16\n"
            await journal.close()

    asyncio.run(scenario())
    assert host.files["/proc/fs/nfsd/threads"] == "8\n"
