"""After a crash: a fired switch's report is a claim from a host, read by a total reader (issue 28, finding 3).

A forged or damaged ``fired.json`` costs only its own entries their shortcut: they are
read back and shown as a problem, and every other host is still looked up; an entry
nfs-tuner cannot rebuild is shown, not raised.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from app.hosts import CommandResult
from app.hosts.privilege import Privilege
from app.knobs.deadman import restored_ids
from app.knobs.recovery import inspect
from app.store import JournalState, Store

TOKEN = "0123456789ab"


class Host:
    """A host whose switch fired with ``report`` and whose nfsd now runs ``threads`` threads."""

    def __init__(self, name: str, report: str, threads: str = "8") -> None:
        self.name, self.report, self.threads = name, report, threads

    async def privilege(self) -> Privilege:
        return Privilege("root", 0, True, True)

    async def run(self, argv: Any, **_: Any) -> CommandResult:
        argv = list(argv)
        if "read" in argv and "fired.json" in argv:
            return CommandResult(0, self.report, "")
        if argv[:2] == ["cat", "--"]:
            return CommandResult(0, self.threads + "\n", "")
        return CommandResult(1, "", "no such switch")  # pending, forget


@pytest.mark.parametrize("report", ['{"results":[1]}', '{"results":null}', '{"results":[{"id":[1],"ok":true}]}',
                                    '{"results":[{"id":{"a":1},"ok":true}]}', '{"results":"x"}', '[]', '7', '"x"',
                                    '{"results":[{"id":1.5,"ok":true},{"id":true,"ok":true}]}', "not json"])  # fmt: skip
def test_a_damaged_report_is_a_problem_of_its_own_entries_only(tmp_path: Path, report: str) -> None:
    with Store(tmp_path / "s.db") as store:
        sid = store.create_session(["forged", "fine"])
        ids = {}
        for host in ("forged", "fine"):
            ids[host] = store.journal_intend(sid, host, "nfsd_threads", "/proc/fs/nfsd/threads", 8, 32, f"deadman={TOKEN}")
            store.journal_update(ids[host], JournalState.APPLIED)
        fine_report = json.dumps({"results": [{"id": ids["fine"], "ok": True}]})
        pool = {"forged": Host("forged", report), "fine": Host("fine", fine_report)}
        found = {p.entry.host: p.status for p in asyncio.run(inspect(store, pool))}  # type: ignore[arg-type]
        assert found["fine"] == "reverted by host"
        assert found["forged"].startswith("still changed?"), found
        assert store.get_journal_entry(ids["forged"]).state is JournalState.APPLIED


def test_restored_ids_takes_only_whole_numbers_with_a_verdict() -> None:
    report = {"results": [{"id": 3, "ok": True}, {"id": 4, "ok": False}, {"id": "5", "ok": True}, 7]}
    assert restored_ids(report) == (frozenset({3}), "2 of its report's results unreadable")
    assert restored_ids({"results": []}) == (frozenset(), "")
    assert restored_ids(None)[1] and restored_ids({"results": None})[1]


def test_an_entry_of_an_unknown_knob_is_shown_not_raised(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        sid = store.create_session(["srv"])
        a = store.journal_intend(sid, "srv", "no_such_knob", "/x", 1, 2, f"deadman={TOKEN}")
        store.journal_update(a, JournalState.APPLIED)
        b = store.journal_intend(sid, "srv", "nfsd_threads", "/proc/fs/nfsd/threads", 8, 32, f"deadman={TOKEN}")
        store.journal_update(b, JournalState.APPLIED)
        report = json.dumps({"results": [{"id": a, "ok": True}, {"id": b, "ok": True}]})
        found = {p.entry.id: p.status for p in asyncio.run(inspect(store, {"srv": Host("srv", report)}))}  # type: ignore[arg-type]
        assert found[a].startswith("still changed?") and "unknown knob" in found[a] and found[b] == "reverted by host"


class Unfired(Host):
    """A host whose switch never fired (or whose report is gone) and is no longer armed."""

    async def run(self, argv: Any, **_: Any) -> CommandResult:
        if "read" in list(argv):
            return CommandResult(1, "", "no fired.json")
        return await super().run(argv)


@pytest.mark.parametrize(("threads", "status"), [("8", "reverted by host"), ("32", "still changed?")])
def test_a_change_found_at_its_old_value_is_back_though_no_switch_says_so(tmp_path: Path, threads: str,
                                                                           status: str) -> None:  # fmt: skip
    """Seen after a frozen server thawed: the put-back sent while it was frozen ran late, the switch then found
    nothing to do, and `journal check` said "still changed?" of a value read back as it was."""
    with Store(tmp_path / "s.db") as store:
        sid = store.create_session(["filer"])
        jid = store.journal_intend(sid, "filer", "nfsd_threads", "/proc/fs/nfsd/threads", 8, 32, f"deadman={TOKEN}")
        store.journal_update(jid, JournalState.FAILED, f"deadman={TOKEN}; filer did not answer within 45 s")
        (found,) = asyncio.run(inspect(store, {"filer": Unfired("filer", "", threads)}))  # type: ignore[dict-item]
        assert found.status == status
        want = JournalState.REVERTED_BY_HOST if threads == "8" else JournalState.FAILED
        assert store.get_journal_entry(jid).state is want
