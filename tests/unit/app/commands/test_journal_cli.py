from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main
from app.store import JournalState, Store


def test_journal_lists_open_changes_and_dismisses_checked_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.db"
    with Store(db) as store:
        sid = store.create_session(["srv"])
        a = store.journal_intend(sid, "srv", "nfsd_threads", "/proc/fs/nfsd/threads", 8, 32, "deadman=ab12")
        store.journal_update(a, JournalState.APPLIED)
        b = store.journal_intend(sid, "srv", "stripe_cache_size", "/sys/block/md0/md/stripe_cache_size", 256, 4096)
        store.journal_update(b, JournalState.APPLIED)
        store.journal_update(b, JournalState.REVERTED)
    assert main(["--db", str(db), "journal"]) == 0
    out = capsys.readouterr().out
    assert "nfsd_threads" in out and "8 → 32" in out and "stripe_cache_size" not in out
    assert main(["--db", str(db), "journal", "dismiss"]) == 2
    assert main(["--db", str(db), "journal", "dismiss", str(a)]) == 0
    assert main(["--db", str(db), "journal"]) == 0
    assert "no changes are waiting" in capsys.readouterr().out
    with Store(db) as store:
        assert store.get_journal_entry(a).state is JournalState.DISMISSED


def test_journal_on_a_damaged_database_says_so_and_keeps_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.db"
    db.write_bytes(b"this is not a database" * 100)
    before = db.read_bytes()
    assert main(["--db", str(db), "journal"]) == 1
    assert "nfs-tuner:" in capsys.readouterr().err
    assert db.read_bytes() == before


@pytest.mark.parametrize("action", ["list", "check", "revert"])
def test_journal_on_no_database_says_nothing_is_open_and_creates_none(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], action: str) -> None:
    db = tmp_path / "none" / "s.db"
    assert main(["--db", str(db), "journal", action]) == 0
    out = capsys.readouterr().out
    assert out.startswith("no changes are waiting to be put back") and str(db) in out
    assert (action == "list") == ("nothing to" not in out)
    assert not db.exists() and not db.parent.exists()


def test_journal_revert_with_nothing_open_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.db"
    Store(db).close()
    assert main(["--db", str(db), "journal", "revert"]) == 0
    assert capsys.readouterr().out == "no changes are waiting to be put back; nothing to revert\n"
    assert main(["--db", str(db), "journal", "revert", "7"]) == 2
    assert "no open journal entries [7]" in capsys.readouterr().err
