"""Closing during a run, crashes, the core's messages, remembered geometry."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox

from app.events import Level, Message
from ui.main_window import MainWindow

from .wizard_driver import start_slow_run


def test_closing_during_a_run_asks_and_reverts_before_quitting(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = start_slow_run(qtbot, session, tmp_path)
    assert not window.close()  # not yet: it asks
    qtbot.waitUntil(lambda: window.close_question is not None and window.close_question.isVisible())
    assert window.isVisible()
    assert window.close_question is not None
    window.close_question.button(QMessageBox.StandardButton.No).click()
    assert window.isVisible() and session.running
    window.close()
    qtbot.waitUntil(lambda: window.close_question is not None and window.close_question.isVisible())
    window.close_question.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=20_000)
    assert not session.running
    assert session.store.journal() and not session.store.unreverted_journal()


def test_closing_when_idle_does_not_ask(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow(db_path=tmp_path / "s.db", session=session)
    qtbot.addWidget(window)
    window.show()
    assert window.close()
    assert window.close_question is None


def test_an_unexpected_exception_opens_the_crash_dialog_and_reverts(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow(db_path=tmp_path / "s.db", session=session)
    qtbot.addWidget(window)
    window.show()
    sid = session.store.create_session(["nfs-server"])
    session.session_id = sid  # a change of this session's run is still on the host
    entry = session.store.journal_intend(sid, "nfs-server", "nfsd_threads", "/proc/fs/nfsd/threads", 8, 64,
                                         detail="simulated")  # fmt: skip
    try:
        raise RuntimeError("boom in a slot")
    except RuntimeError as exc:
        window.crash.handle(RuntimeError, exc, exc.__traceback__)
    qtbot.waitUntil(lambda: not session.store.unreverted_journal())  # the crash path put it back
    assert session.store.get_journal_entry(entry).state.value == "reverted"
    dialog = window.crash.dialog
    assert dialog is not None and dialog.isVisible()
    assert "boom in a slot" in dialog.details.toPlainText()


def test_crash_dialog_names_the_log(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QLabel

    window = MainWindow(db_path=tmp_path / "s.db", session=session)
    qtbot.addWidget(window)
    try:
        raise ValueError("x")
    except ValueError as exc:
        window.crash.handle(ValueError, exc, exc.__traceback__)
    assert window.crash.dialog is not None
    texts = " ".join(label.text() for label in window.crash.dialog.findChildren(QLabel))
    assert str(session.log_path) in texts


def test_core_errors_show_in_words_with_the_log_path(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow(db_path=tmp_path / "s.db", session=session)
    qtbot.addWidget(window)
    window.show()
    assert not window.banner.isVisible()
    with qtbot.waitSignal(window.bridge.message):
        session.bus.publish(Message(Level.ERROR, "nfsd on nfs-server did not come back after the restart."))
    assert window.banner.isVisible()
    text = window.banner.text.text()
    assert "did not come back" in text and str(session.log_path) in text


def test_geometry_is_remembered(qtbot, session, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    settings = QSettings(str(tmp_path / "geo.ini"), QSettings.Format.IniFormat)
    first = MainWindow(db_path=tmp_path / "s.db", session=session, settings=settings)
    qtbot.addWidget(first)
    first.show()
    first.resize(700, 500)
    qtbot.waitUntil(lambda: first.width() == 700)
    first.close()
    second = MainWindow(db_path=tmp_path / "s.db", session=session, settings=settings)
    qtbot.addWidget(second)
    assert (second.width(), second.height()) == (700, 500)


def test_the_window_fits_1280_by_800(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow(db_path=tmp_path / "s.db", session=session)
    qtbot.addWidget(window)
    assert window.minimumSizeHint().width() <= 1280 and window.minimumSizeHint().height() <= 800
