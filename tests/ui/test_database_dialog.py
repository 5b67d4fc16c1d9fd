"""The desktop app never shows a traceback at start: a session database it cannot use opens a dialog with
the command line's words and a way on; any other failure is a dialog naming the log file.

Real SQLite files made damaged, locked, read-only or in a folder that cannot be made (tests.unwritable:
the kernel refuses, as it would on the admin's machine), real Qt dialogs clicked as an admin would.
"""

from __future__ import annotations

import argparse
import logging
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

import app.store.connection as connection
import ui.main as gui
from app import cli
from app.session import TuningSession
from app.store import Store, StoreError
from tests.fabricate_session import Recipe, fabricate_session
from tests.unwritable import unwritable
from ui.database_dialog import DatabaseDialog, Way
from ui.review.launch import open_review_window


@pytest.fixture(autouse=True)
def _private_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # the log file, never the user's
    monkeypatch.delenv("NFS_TUNER_DEMO", raising=False)
    before = list(logging.getLogger().handlers)
    yield
    for handler in [h for h in logging.getLogger().handlers if h not in before]:
        logging.getLogger().removeHandler(handler)
        handler.close()


def _db(path: Path) -> Path:
    with Store(path) as store:
        fabricate_session(store, Recipe(samples_per_trial=4, knobs={"rsize": (65536, 1048576)}, repetitions=2))
    return path


def _cli_words(db: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """What the command line says of the same file (a command that writes it, making it if need be, as the app)."""
    received = Path(os.environ["XDG_STATE_HOME"]).with_name("received.db")  # beside the test's log folder
    if not received.exists():
        _db(received)
    assert cli.main(["--db", str(db), "sessions", "import", str(received)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("nfs-tuner: ") and "Traceback" not in err
    return err.removeprefix("nfs-tuner: ").strip()


class Clicks:
    """Answers each dialog the start opens by clicking ``buttons`` in turn (a file dialog answering ``picks``
    in turn); keeps what each showed: its text, and whether it offered the review."""

    def __init__(self, *buttons: str, picks: tuple[Path, ...] = ()) -> None:
        self.buttons = list(buttons)
        self.picks = list(picks)
        self.shown: list[tuple[str, bool]] = []

    def __call__(self, error: StoreError, path: Path) -> Way:
        dialog = DatabaseDialog(error, path, pick=lambda _parent: self.picks.pop(0))
        self.shown.append((dialog.text(), not dialog.review_button.isHidden()))
        QTimer.singleShot(0, getattr(dialog, f"{self.buttons.pop(0)}_button").click)
        return dialog.way()


def _opened(result: TuningSession | Way) -> TuningSession:
    assert isinstance(result, TuningSession), result
    return result


def test_a_damaged_database_says_so_as_the_cli_and_another_file_is_used(
        qtbot, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "sessions.db"
    bad.write_bytes(os.urandom(8192))
    before = bad.read_bytes()
    words = _cli_words(bad, capsys)
    clicks = Clicks("other", picks=(tmp_path / "fresh.db",))
    session = _opened(gui.open_or_ask(bad, None, clicks))
    assert [text for text, _ in clicks.shown] == [words] and "damaged" in words
    assert clicks.shown[0][1] is False  # nothing to review in a damaged file
    assert session.store.path == tmp_path / "fresh.db" and bad.read_bytes() == before
    session.store.close()


def test_a_locked_database_is_said_locked_and_opens_read_only_for_review(
        qtbot, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", 200)
    db = _db(tmp_path / "sessions.db")
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another program writes it, and keeps its lock
    try:
        words = _cli_words(db, capsys)
        clicks = Clicks("review")
        way = gui.open_or_ask(db, None, clicks)
        assert [text for text, _ in clicks.shown] == [words] and "in use by another program" in words
        assert clicks.shown[0][1] is True
        assert way == Way(review=db)
        review = open_review_window(str(db), db)  # what the start opens then: a private copy, read-only
        qtbot.addWidget(review)
        assert len(review.visible_rows) == 1 and "a private copy" in review.windowTitle() + review.source
        review.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_read_only_database_is_said_so_and_quit_quits(
        qtbot, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    db = _db(tmp_path / "sessions.db")
    before = db.read_bytes()
    with unwritable(db):
        words = _cli_words(db, capsys)
        clicks = Clicks("quit")
        assert gui.open_or_ask(db, None, clicks) == Way()
    assert [text for text, _ in clicks.shown] == [words] and "cannot be written (the file is read-only)" in words
    assert clicks.shown[0][1] is True and db.read_bytes() == before


def test_a_database_whose_folder_cannot_be_made_is_said_so_and_another_file_is_used(
        qtbot, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    locked_up = tmp_path / "shared"
    locked_up.mkdir()
    db = locked_up / "nfs-tuner" / "sessions.db"
    with unwritable(locked_up):
        words = _cli_words(db, capsys)
        clicks = Clicks("other", "other", picks=(db, tmp_path / "mine.db"))  # a first pick as bad: said again
        session = _opened(gui.open_or_ask(db, None, clicks))
    assert [text for text, _ in clicks.shown] == [words, words] and f"its folder {db.parent} does not exist" in words
    assert session.store.path == tmp_path / "mine.db" and not db.parent.exists()
    session.store.close()


def _answer_next_box(click: Callable[[QMessageBox], object]) -> list[str]:
    """Clicks the next modal message box the start opens; says its text."""
    seen: list[str] = []

    def answer() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(20, answer)
            return
        seen.append(f"{box.text()}\n{box.informativeText()}")
        click(box)

    QTimer.singleShot(0, answer)
    return seen


def _args(db: Path) -> argparse.Namespace:
    return cli.parse(["--db", str(db)])


def test_the_app_started_on_a_damaged_database_asks_and_quits_without_a_traceback(
        qtbot, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "sessions.db"
    bad.write_bytes(os.urandom(4096))
    seen = _answer_next_box(lambda box: next(b for b in box.buttons() if b.text() == "&Quit").click())
    assert gui.run_gui(_args(bad)) == 1
    assert seen and "is damaged or is not a database" in seen[0]
    assert "Traceback" not in capfd.readouterr().err


def test_any_other_start_failure_is_a_dialog_that_names_the_log_file(
        qtbot, tmp_path: Path, capfd: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import ui.main_window

    def broken(*_args: object, **_kw: object) -> None:
        raise RuntimeError("the window could not be made")

    monkeypatch.setattr(ui.main_window, "MainWindow", broken)
    seen = _answer_next_box(lambda box: box.accept())
    assert gui.run_gui(_args(tmp_path / "s.db")) == 1
    log = tmp_path / "state" / "nfs-tuner" / "log" / "nfs-tuner.log"
    assert seen and "nfs-tuner could not start: RuntimeError: the window could not be made" in seen[0]
    assert f"The details are in {log}" in seen[0]
    assert "the window could not be made" in log.read_text(encoding="utf-8") and "Traceback" in log.read_text()
    assert "Traceback" not in capfd.readouterr().err
