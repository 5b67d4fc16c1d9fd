"""A host that goes away while its changes are held or put back (issue 31): bounded, named, never hanging.

In-process hosts, because the point is what the journal does when one host stops answering (a frozen
guest keeps its connection up and answers nothing; a returning one may find its switch fired), which
the lab shows too (tests/integration/test_host_faults_lab.py) but not on demand in a second.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from pathlib import Path

from app.hosts import CommandResult, CommandTimeout
from app.hosts.privilege import Privilege
from app.knobs import changes
from app.knobs.deadman import token_of
from app.knobs.changes import ChangeJournal
from app.knobs.targets import nfsd_threads
from app.store import JournalState, Store
from tests.unit.app.knobs.served_switch import ServedSwitch


class _Host(ServedSwitch):
    """Kernel files by cat/tee; the switch's verbs; ``frozen``: every command hangs, as on a stopped guest."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.files = {"/proc/fs/nfsd/threads": "8\n"}
        self.frozen = False
        self.fired: list[int] = []  # journal ids its switch put back, when it fired
        self.armed = 0

    async def privilege(self) -> Privilege:
        return Privilege(user="root", uid=0, passwordless_sudo=False, sudo_installed=False)

    async def run(self, argv: Sequence[str], *, sudo: bool = False, input: str | None = None,
                  timeout: float | None = None) -> CommandResult:  # fmt: skip
        if self.frozen:
            await asyncio.sleep(3600)
        if argv[0] == "python3" and "-c" in argv:
            verb = argv[argv.index("-c") + 2]
            if verb == "arm":
                self.armed += 1
                return CommandResult(0, "armed 4242\n", "")
            if verb == "pending":
                return CommandResult(1 if self.fired else 0, "", "")
            if verb == "read":
                return CommandResult(0, json.dumps({"results": [{"id": i, "ok": True} for i in self.fired]}), "")
            return CommandResult(0, "", "")
        if argv[0] == "cat":
            return CommandResult(0, self.files[argv[-1]], "")
        if argv[0] == "tee":
            self.files[argv[-1]] = input or ""
            return CommandResult(0, input or "", "")
        raise AssertionError(f"unexpected command {argv}")


def test_a_host_that_freezes_while_its_changes_are_put_back_is_named_and_left_to_its_switch(
        tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(changes, "REVERT_BOUND", 0.5)
    frozen, fine = _Host("frozen"), _Host("fine")

    async def scenario() -> list[str]:
        with Store(tmp_path / "j.db") as store:
            journal = ChangeJournal(store, {"frozen": frozen, "fine": fine}, None, deadman_timeout=60)  # type: ignore[arg-type]
            await journal.apply("frozen", nfsd_threads(), 16)
            await journal.apply("frozen", nfsd_threads(), 32)
            await journal.apply("fine", nfsd_threads(), 16)
            frozen.frozen = True
            start = time.monotonic()
            problems = await journal.close()
            assert time.monotonic() - start < 3  # one bound for the frozen host, not one per change or a hang
            states = {(e.host, e.new_value): e.state for e in store.journal(None)}
            assert states[("fine", 16)] is JournalState.REVERTED
            assert states[("frozen", 16)] is states[("frozen", 32)] is JournalState.FAILED
            # each still names its switch: `nfs-tuner journal check` asks it (seen: "still changed?" for a change
            # the switch had put back, since the failure's words replaced the token)
            assert {token_of(e.detail) for e in store.journal(None) if e.host == "frozen"} == {journal.token}
            return problems

    (problem,) = asyncio.run(scenario())
    assert problem.startswith("frozen did not answer within 0 s while its changes were put back")
    assert "dead-man switch puts them back within 60 s" in problem and fine.files["/proc/fs/nfsd/threads"] == "8\n"


def test_a_host_back_after_its_switch_fired_is_noted_and_armed_again(tmp_path: Path) -> None:
    host = _Host("filer")

    async def scenario() -> str:
        with Store(tmp_path / "j.db") as store:
            journal = ChangeJournal(store, {"filer": host}, None, deadman_timeout=60)  # type: ignore[arg-type]
            held = await journal.apply("filer", nfsd_threads(), 16)
            host.fired = [held.journal_id]  # away past the timeout: its switch put the change back
            host.files["/proc/fs/nfsd/threads"] = "8\n"
            note = await journal.rejoin("filer")
            assert store.get_journal_entry(held.journal_id).state is JournalState.REVERTED_BY_HOST
            assert journal.held == [] and host.armed == 2
            host.fired = []
            again = await journal.apply("filer", nfsd_threads(), 32)  # protected again by the new switch
            await journal.close()
            assert store.get_journal_entry(again.journal_id).state is JournalState.REVERTED
            return note

    assert asyncio.run(scenario()) == "its dead-man switch had put back 1 change(s) while it was away; armed again"
    assert host.files["/proc/fs/nfsd/threads"] == "8\n"


def test_a_host_back_before_its_switch_fired_keeps_its_changes(tmp_path: Path) -> None:
    host = _Host("filer")

    async def scenario() -> tuple[str, int]:
        with Store(tmp_path / "j.db") as store:
            journal = ChangeJournal(store, {"filer": host}, None, deadman_timeout=60)  # type: ignore[arg-type]
            await journal.apply("filer", nfsd_threads(), 16)
            note = await journal.rejoin("filer")
            held = len(journal.held)
            await journal.close()
            return note, held

    assert asyncio.run(scenario()) == ("", 1) and host.armed == 1
    assert CommandTimeout  # the kind a frozen host's command ends in, past its bound (app.hosts.errors.HOST_GONE)
