"""Each host's changes go one at a time; different hosts are changed side by side (app.knobs.changes).

In-process hosts whose kernel-file writes wait on each other: what a real host cannot show on demand is
the order of the journal's calls across hosts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from app.hosts import CommandResult
from app.knobs.changes import ChangeJournal
from app.knobs.targets import nfsd_threads
from app.store import JournalState, Store
from tests.unit.app.knobs.test_journal_restore_list import _Host


class _SlowHost(_Host):
    """Its writes wait until ``gate`` opens; it records when each write starts and ends."""

    def __init__(self, name: str, log: list[str], gate: asyncio.Event) -> None:
        super().__init__()
        self.name, self.log, self.gate = name, log, gate

    async def run(self, argv: Sequence[str], *, sudo: bool = False, input: str | None = None,
                  timeout: float | None = None) -> CommandResult:  # fmt: skip
        if argv[0] == "tee":
            self.log.append(f"{self.name} writes {input.strip() if input else ''}")
            await self.gate.wait()
            self.log.append(f"{self.name} wrote")
        return await super().run(argv, sudo=sudo, input=input, timeout=timeout)


def test_two_hosts_are_changed_side_by_side(tmp_path: Path) -> None:
    log: list[str] = []
    gate = asyncio.Event()

    async def scenario() -> None:
        hosts = {n: _SlowHost(n, log, gate) for n in ("client1", "client2")}
        with Store(tmp_path / "j.db") as store:
            journal = ChangeJournal(store, hosts, None, deadman_timeout=60)  # type: ignore[arg-type]
            changes = asyncio.gather(*(journal.apply(n, nfsd_threads(), 16) for n in hosts))
            for _ in range(100):  # both writes under way before either ends: one lock for both hosts would hang here
                await asyncio.sleep(0.01)
                if len(log) == 2:
                    break
            gate.set()
            applied = await asyncio.wait_for(changes, 10)
            assert sorted(log[:2]) == ["client1 writes 16", "client2 writes 16"], log
            states = {e.id: e.state for e in store.journal()}
            assert [states[a.journal_id] for a in applied] == [JournalState.APPLIED] * 2
            assert await journal.close() == []
        assert all(h.files["/proc/fs/nfsd/threads"] == "8\n" for h in hosts.values())

    asyncio.run(scenario())


def test_one_hosts_changes_go_one_at_a_time_and_revert_all_waits_for_a_change_under_way(tmp_path: Path) -> None:
    log: list[str] = []
    gate = asyncio.Event()

    async def scenario() -> None:
        host = _SlowHost("filer", log, gate)
        with Store(tmp_path / "j.db") as store:
            journal = ChangeJournal(store, {"filer": host}, None, deadman_timeout=60)  # type: ignore[arg-type]
            first = asyncio.ensure_future(journal.apply("filer", nfsd_threads(), 16))
            await asyncio.sleep(0.05)
            second = asyncio.ensure_future(journal.apply("filer", nfsd_threads(), 32))
            closing = asyncio.ensure_future(journal.revert_all())  # the host is new: its lock is taken all the same
            await asyncio.sleep(0.05)
            assert log == ["filer writes 16"]  # the second change and the put-back wait for the first
            gate.set()
            await asyncio.wait_for(asyncio.gather(first, second), 10)
            assert await asyncio.wait_for(closing, 10) == []
            assert log[:4] == ["filer writes 16", "filer wrote", "filer writes 32", "filer wrote"], log
        assert host.files["/proc/fs/nfsd/threads"] == "8\n"

    asyncio.run(scenario())
