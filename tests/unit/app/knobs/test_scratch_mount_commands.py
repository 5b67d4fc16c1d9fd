"""The test mount's way in and out costs as few commands on its client as it can (issue 30).

In-process client: the point is which commands run, which a real host cannot show. The lab runs the same
mount for real in every sweep test.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from app.hosts import CommandResult
from app.hosts.privilege import Privilege
from app.knobs.changes import ChangeJournal
from app.knobs.targets import ABSENT, ScratchMount
from app.store import JournalState, Store
from tests.unit.app.knobs.served_switch import ServedSwitch

POINT = "/mnt/nfs-tuner-t1"


class _Client(ServedSwitch):
    """Mounts by mount/umount on a mountinfo of its own; ``busy``: a plain umount fails, as with a straggler."""

    def __init__(self, *, busy: bool = False) -> None:
        self.name = "c1"
        self.busy = busy
        self.mounted = False
        self.commands: list[str] = []

    async def privilege(self) -> Privilege:
        return Privilege(user="root", uid=0, passwordless_sudo=False, sudo_installed=False)

    async def run(self, argv: Sequence[str], *, sudo: bool = False, input: str | None = None,
                  timeout: float | None = None) -> CommandResult:  # fmt: skip
        words = list(argv)
        if words[0] == "python3":  # the dead-man switch
            return CommandResult(0, "armed 4242\n" if "arm" in words else "", "")
        self.commands.append(" ".join(w for w in words[:2] if w != "--"))
        if words[0] == "cat":
            line = f"40 25 0:53 / {POINT} rw,nosuid,nodev shared:1 - nfs4 filer:/srv rw,vers=4.2,rsize=1048576\n"
            return CommandResult(0, line if self.mounted else "", "")
        if words[0] == "mount":
            self.mounted = True
        if words[:2] == ["umount", "-l"] or (words[0] == "umount" and not self.busy):
            self.mounted = False
        elif words[0] == "umount":
            return CommandResult(32, "", f"umount: {POINT}: target is busy.")
        return CommandResult(0, "", "")


@pytest.mark.parametrize("busy", [False, True])
def test_a_mount_is_read_once_after_it_is_made_and_detached_lazily_only_when_a_plain_umount_fails(
        tmp_path: Path, busy: bool) -> None:  # fmt: skip
    client = _Client(busy=busy)

    async def scenario() -> None:
        with Store(tmp_path / "j.db") as store:
            journal = ChangeJournal(store, {"c1": client}, None, deadman_timeout=60)  # type: ignore[arg-type]
            mount = ScratchMount("filer", "/srv", POINT)
            made = await journal.apply("c1", mount, "vers=4.2")
            assert await mount.bdi(client) == "0:53"  # type: ignore[arg-type]  # from the read back, not a new read
            assert client.commands == ["cat", "mkdir -p", "mount -t", "cat"]
            client.commands.clear()
            await journal.revert(made)
            assert client.commands == (["umount /mnt/nfs-tuner-t1", "umount -l", "rmdir /mnt/nfs-tuner-t1", "cat"] if busy
                                       else ["umount /mnt/nfs-tuner-t1", "rmdir /mnt/nfs-tuner-t1", "cat"])  # fmt: skip
            assert not client.mounted and [e.state for e in store.journal()] == [JournalState.REVERTED]
            assert await mount.read(client) == ABSENT  # type: ignore[arg-type]
            await journal.close()

    asyncio.run(scenario())
