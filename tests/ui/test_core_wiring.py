"""Which hosts the window gets, what the status bar says, the review window, crash leftovers,
and the Plan page checking values with the core's own validator."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel

from argparse import ArgumentTypeError

from app.commands.arguments import knob_assignment
from app.commands.sweep import check_choices
from app.session import PlanChoices, PlanError, TuningSession
from app.paths import resolve_db_path
from app.session.factory import DEMO_ENV, open_tuning_session
from app.simulated import SimulatedHosts
from app.sweep.ssh_hosts import SshHosts
from ui.bridge import Bridge
from ui.leftovers_dialog import LeftoversDialog
from ui.main_window import MainWindow
from ui.pages.plan import PlanPage
from ui.review.window import ReviewWindow
from ui.wizard import TuningWizard


def test_real_hosts_by_default_simulated_only_when_asked(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv(DEMO_ENV, raising=False)
    real = open_tuning_session(tmp_path / "s.db", tmp_path / "no-such-config")
    assert isinstance(real.hosts, SshHosts) and not real.simulated and real.store.path == tmp_path / "s.db"
    monkeypatch.setenv(DEMO_ENV, "1")
    demo = open_tuning_session(None)
    assert isinstance(demo.hosts, SimulatedHosts) and demo.simulated
    assert demo.store.path != resolve_db_path(None)  # the demo never writes into the default sessions
    chosen = open_tuning_session(tmp_path / "demo.db")  # but into a database the admin named (--db, $NFS_TUNER_DB)
    assert chosen.simulated and chosen.store.path == tmp_path / "demo.db"
    real.store.close()
    chosen.store.close()
    throwaway = demo.store.path.parent
    assert throwaway.name.startswith("nfs-tuner-demo-") and throwaway.exists()
    asyncio.run(demo.close())
    assert not throwaway.exists()  # the throwaway database goes with the session


def test_a_demo_launch_leaves_no_database_behind(tmp_path: Path) -> None:
    code = ("import sys; from app.session.factory import open_tuning_session\n"
            "s = open_tuning_session(None, demo=True); s.store.create_session(['nfs-server'])\n"
            "print(s.store.path)")  # the program ends without closing it, as a window's Quit does
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "TMPDIR": str(tmp_path)}, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).parent.parent == tmp_path
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("demo", [True, False])
def test_the_status_bar_says_which_hosts(qtbot, monkeypatch, tmp_path: Path, demo: bool) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(DEMO_ENV, "1" if demo else "0")
    window = MainWindow(db_path=None if demo else tmp_path / "s.db", ssh_config=tmp_path / "no-such-config")
    qtbot.addWidget(window)
    label = window.findChild(QLabel, "demoLabel" if demo else "coreLabel")
    assert label is not None
    assert ("simulated hosts" in label.text()) is demo and ("Real hosts" in label.text()) is not demo
    db_label = window.findChild(QLabel, "dbPathLabel")
    assert db_label is not None and (str(tmp_path / "s.db") in db_label.text()) is not demo
    assert ("nfs-tuner-demo-" in db_label.text()) is demo  # no database named: the demo's throwaway one


def test_the_review_window_opens_on_the_same_database(qtbot, session: TuningSession, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow(db_path=tmp_path / "s.db", session=session)
    qtbot.addWidget(window)
    window.review_action.trigger()
    assert isinstance(window.review_window, ReviewWindow) and window.review_window.isVisible()
    assert window.review_window.store is not None and window.review_window.store.path == session.store.path
    qtbot.addWidget(window.review_window)


@pytest.mark.parametrize("answer", ["revert", "dismiss"])
def test_crash_leftovers_are_offered_on_start(qtbot, session: TuningSession, tmp_path: Path, answer: str) -> None:  # type: ignore[no-untyped-def]
    store = session.store
    sid = store.create_session(["nfs-server"])
    ids = [store.journal_intend(sid, "nfs-server", "nfsd_threads", "/proc/fs/nfsd/threads", 8, 64, detail="simulated"),
           store.journal_intend(sid, "nfs-server", "mtu", "eth0", 1500, 9000, detail="simulated")]  # fmt: skip
    window = MainWindow(db_path=tmp_path / "s.db", session=session)
    qtbot.addWidget(window)
    window.show()
    window.check_leftovers()
    qtbot.waitUntil(lambda: window.leftovers_dialog is not None and window.leftovers_dialog.isVisible())
    dialog = window.leftovers_dialog
    assert isinstance(dialog, LeftoversDialog) and dialog.table.rowCount() == 2
    assert dialog.table.item(0, 3).text() == "still changed?"
    assert "nfsd_threads (/proc/fs/nfsd/threads)" in {dialog.table.item(r, 1).text() for r in range(2)}
    (dialog.revert_button if answer == "revert" else dialog.dismiss_button).click()
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert not store.unreverted_journal()
    states = {e.id: e.state.value for e in store.journal(sid)}
    assert set(states) == set(ids) and set(states.values()) == {"reverted" if answer == "revert" else "dismissed"}


def test_no_leftovers_no_dialog(qtbot, session: TuningSession, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow(db_path=tmp_path / "s.db", session=session)
    qtbot.addWidget(window)
    window.check_leftovers()
    qtbot.wait(50)
    assert window.leftovers_dialog is None


@pytest.mark.parametrize(("knob", "text"), [
    ("read_ahead_kb", "128, 4K"), ("read_ahead_kb", "128, 1G"), ("rsize", "4K, 1MiB"), ("rsize", "0x1000"),
    ("nfsd_threads", "-1"), ("nfsd_threads", ""), ("nconnect", "nan"), ("mtu", "1e400"), ("nfsvers", "4.0"),
])  # fmt: skip
def test_the_plan_page_takes_what_the_cli_takes_in_its_words(qtbot, session: TuningSession, bridge: Bridge,
                                                             knob: str, text: str) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    """Seen: '128, 4K' for readahead passed the page, then a ValueError escaped a slot."""
    wizard = TuningWizard(session, bridge)
    qtbot.addWidget(wizard)
    page = wizard.page_of(PlanPage)
    assert isinstance(page, PlanPage)
    page.initializePage()
    for name, check in page.checks.items():
        check.setChecked(name == knob)
    page.edits[knob].setText(text)
    try:  # what `nfs-tuner sweep` checks before touching a host: its --knob parser, then the plan
        check_choices(PlanChoices(knobs=dict([knob_assignment(f"{knob}={text}")])))
    except (ArgumentTypeError, PlanError) as exc:
        assert not page.isComplete() and page.error_label.text() == str(exc)
    else:
        assert page.isComplete() and page.error_label.text() == ""
        assert "trials" in page.estimate.text()
