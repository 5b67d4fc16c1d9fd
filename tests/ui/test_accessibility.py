"""The accessibility walk (tests/ui/accessibility.py) over every window and dialog a user meets.

The wizard runs over the demo's simulated hosts from Hosts to Results, each page walked
as it is shown (and its questions and dialogs as they open); the review window runs on
a real SQLite store, every tab of an opened session, the comparison and its message
boxes. Quit (Ctrl+Q) and Help (F1, Read me, About) are pressed as a user would.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractItemView, QApplication, QMenu, QMessageBox, QTabWidget, QWidget, QWizard

from app import __version__
from app.session import Role, TuningSession
from app.simulated import SimulatedHosts
from app.store import Store
from app.sweep.events import HostLost
from tests.fabricate_session import Recipe, fabricate_session
from ui.crash import CrashDialog
from ui.help_texts import PAGE_HELP
from ui.leftovers_dialog import LeftoversDialog
from ui.main_window import MainWindow
from ui.pages.baseline import BaselinePage
from ui.pages.hosts import HostsPage
from ui.pages.plan import PlanPage
from ui.pages.results import ResultsPage
from ui.pages.run import RunPage
from ui.review.dialogs import Dialogs
from ui.review.session_view import SessionView
from ui.review.window import ReviewWindow
from ui.standard_actions import HelpMenu
from ui.trust_dialog import TrustDialog
from ui.wizard import PAGES

from .accessibility import mnemonic, walk
from .wizard_driver import DEMO_RUN_MS, add_host, go_next, small_plan


@pytest.fixture(autouse=True, scope="module")
def _eager_collector() -> Iterator[None]:
    """The cyclic collector every few allocations: wrappers the walk leaves in a cycle (PySide makes what a
    getter returns the Python child of the widget asked) are collected, and segfault, here and not by chance
    somewhere later in CI (as a table header's viewport asked for its focus proxy, the header, once did)."""
    thresholds = gc.get_threshold()
    gc.set_threshold(3, 1, 1)
    yield
    gc.set_threshold(*thresholds)


W = TypeVar("W", bound=QWidget)


def assert_accessible(top: QWidget, where: str) -> None:
    problems = walk(top)
    assert not problems, f"{where}:\n  " + "\n  ".join(problems)


def _press(qtbot, window: QWidget, keys: str) -> None:  # type: ignore[no-untyped-def]
    """Keys as a user presses them: to the window that has the focus (shortcuts need it active)."""
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    QTest.keySequence(window, QKeySequence(keys))


def _help_for_page(qtbot, window: MainWindow) -> str:  # type: ignore[no-untyped-def]
    """F1 on the current page: its help opens beside the window; walked, read, closed."""
    before = window.help.dialog
    _press(qtbot, window, "F1")
    dialog = _wait_shown(qtbot, lambda: window.help.dialog if window.help.dialog is not before else None)
    assert_accessible(dialog, f"help on {window.wizard.currentPage().title()}")
    text = dialog.text()
    dialog.close()
    return text


def _wait_shown(qtbot, get: Callable[[], W | None]) -> W:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: (w := get()) is not None and w.isVisible())
    widget = get()
    assert widget is not None
    return widget


def test_the_help_texts_cover_every_page() -> None:
    assert set(PAGE_HELP) == {cls.TITLE for cls in PAGES}
    assert all(len(text) > 200 for text in PAGE_HELP.values())


def test_the_walker_finds_what_it_is_for(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A window with every fault once: the walk names each, and passes the window once they are fixed."""
    from PySide6.QtWidgets import QComboBox, QLabel, QPushButton, QTableWidget, QVBoxLayout

    window = QWidget()
    qtbot.addWidget(window)
    layout = QVBoxLayout(window)
    table = QTableWidget(3, 3, window)  # a table's default: Tab walks its cells
    combo = QComboBox(window)
    combo.addItem("Server")  # read out as "Server": not a name
    first, second = QPushButton("&Next", window), QPushButton("&Name", window)
    label = QLabel("&Role:", window)
    for w in (table, combo, first, second, label):
        layout.addWidget(w)
    window.show()
    problems = walk(window)
    assert any("QTableWidget" in p and "no accessible name" in p for p in problems)
    assert any("QComboBox" in p and "no accessible name" in p for p in problems)
    assert any(p.startswith("&n is shared by") for p in problems)
    assert any(p.startswith("Tab does not leave QTableWidget") for p in problems)
    assert any(p.startswith("Shift+Tab does not leave QTableWidget") for p in problems)
    table.setAccessibleName("Table")
    table.setTabKeyNavigation(False)
    label.setBuddy(combo)  # a buddy does not name a combo box (Qt reads its text): a name does
    assert any("QComboBox" in p for p in walk(window))
    combo.setAccessibleName("Role")
    second.setText("N&ame")
    assert walk(window) == []
    assert mnemonic("Fish && &Chips") == "c" and mnemonic("R&&D") is None


def test_every_page_and_dialog_of_the_wizard(qtbot, session: TuningSession, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow(db_path=tmp_path / "s.db", session=session)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    wizard = window.wizard
    menus = [a.text() for a in window.menuBar().actions()]
    assert menus == ["&Sessions", "&Help"]
    assert window.quit_action.shortcut().toString() == "Ctrl+Q"
    assert any(window.quit_action in m.actions() for m in window.menuBar().findChildren(QMenu))
    assert window.help.help_action.shortcut() == QKeySequence(QKeySequence.StandardKey.HelpContents)

    # Hosts, with the trust question, a second server's question and the leave-out question
    hosts = wizard.currentPage()
    assert isinstance(hosts, HostsPage)
    assert_accessible(window, "Hosts page, empty")
    assert "SSH" in _help_for_page(qtbot, window)
    hosts.add_host("nfs-server", Role.SERVER)
    trust = _wait_shown(qtbot, lambda: hosts.trust_dialog)
    assert isinstance(trust, TrustDialog)
    assert_accessible(trust, "trust dialog")
    trust.trust_button.click()
    add_host(qtbot, hosts, "client1", Role.CLIENT)
    add_host(qtbot, hosts, "client2", Role.CLIENT, trust=False)  # not connected: Next asks to leave it out
    hosts.add_host("backup-box", Role.SERVER)
    question = _wait_shown(qtbot, lambda: hosts.server_question)
    assert_accessible(question, "replace-the-server question")
    question.close()
    assert_accessible(window, "Hosts page")
    wizard.button(QWizard.WizardButton.NextButton).click()
    leave_out = _wait_shown(qtbot, lambda: hosts.left_out_question)
    assert isinstance(leave_out, QMessageBox)
    assert_accessible(leave_out, "leave-out question")
    next(b for b in leave_out.buttons() if "Go on" in b.text()).click()
    qtbot.waitUntil(lambda: wizard.currentPage() is not hosts)

    # Baseline: before, failed (its panel), measured
    baseline = wizard.currentPage()
    assert isinstance(baseline, BaselinePage)
    assert_accessible(window, "Baseline page")
    assert "ceilings" in _help_for_page(qtbot, window)
    baseline.show_failure("step 1 of 3", "iperf3: connection refused")
    assert_accessible(window, "Baseline page, failed")
    baseline.failure.hide()
    baseline.measure_button.click()
    qtbot.waitUntil(baseline.isComplete, timeout=10_000)
    assert_accessible(window, "Baseline page, measured")
    go_next(qtbot, wizard)

    # Plan, the async warning and the run confirmation
    plan = wizard.currentPage()
    assert isinstance(plan, PlanPage)
    assert_accessible(window, "Plan page")
    assert "values to try" in _help_for_page(qtbot, window)
    plan.async_box.click()
    warning = _wait_shown(qtbot, lambda: plan.async_warning)
    assert_accessible(warning, "async warning")
    assert isinstance(warning, QMessageBox)
    warning.button(QMessageBox.StandardButton.No).click()
    small_plan(plan)
    assert isinstance(session.hosts, SimulatedHosts)
    session.hosts.speed = 4.0  # slow enough that the run is still going while its questions are asked
    wizard.button(QWizard.WizardButton.CommitButton).click()
    confirmation = _wait_shown(qtbot, lambda: plan.confirmation)
    assert_accessible(confirmation, "run confirmation")
    confirmation.start_button.click()
    qtbot.waitUntil(lambda: wizard.currentPage() is not plan)

    # Run: its questions while it runs, Quit asks first, then the finished page
    run = wizard.currentPage()
    assert isinstance(run, RunPage)
    assert "dead-man switch" in _help_for_page(qtbot, window)
    assert_accessible(window, "Run page, running")
    run.ask_cancel()
    cancel = _wait_shown(qtbot, lambda: run.cancel_question)
    assert_accessible(cancel, "cancel question")
    assert isinstance(cancel, QMessageBox)
    cancel.button(QMessageBox.StandardButton.No).click()
    lost = asyncio.ensure_future(run.ask_host_lost(HostLost(0, "client1", "in trial 1", {}, droppable=True)))
    host_lost = _wait_shown(qtbot, lambda: run.host_lost_question)
    assert_accessible(host_lost, "host-lost question")
    assert isinstance(host_lost, QMessageBox)
    host_lost.defaultButton().click()  # wait: this question was asked by the test, not the run
    qtbot.waitUntil(lost.done)
    assert session.running
    _press(qtbot, window, "Ctrl+Q")
    close = _wait_shown(qtbot, lambda: window.close_question)
    assert_accessible(close, "quit question")
    assert isinstance(close, QMessageBox)
    close.button(QMessageBox.StandardButton.No).click()  # keep running
    assert window.isVisible() and session.running
    session.hosts.speed = 200.0
    qtbot.waitUntil(run.isComplete, timeout=DEMO_RUN_MS)
    assert_accessible(window, "Run page, finished")
    go_next(qtbot, wizard)

    # Results: both tabs, every snippet
    results = wizard.currentPage()
    assert isinstance(results, ResultsPage)
    assert "snippets" in _help_for_page(qtbot, window)
    for i in range(results.tabs.count()):
        results.tabs.setCurrentIndex(i)
        assert_accessible(window, f"Results page, tab {results.tabs.tabText(i)}")
    results.tabs.setCurrentIndex(0)
    for i in range(results.snippets.count()):
        results.snippets.setCurrentIndex(i)
        assert_accessible(window, f"Results page, snippet {results.snippets.tabText(i)}")

    # Read me and About, then Quit: idle, it closes at once
    window.help.readme_action.trigger()
    readme = _wait_shown(qtbot, lambda: window.help.dialog)
    assert_accessible(readme, "read me")
    assert "A desktop tuning assistant for NFS" in readme.text()
    window.help.about_action.trigger()
    about = _wait_shown(qtbot, lambda: window.help.dialog)
    assert about is not readme and not readme.isVisible()  # one help window at a time
    assert f"nfs-tuner {__version__}" in about.text()
    about.close()
    _press(qtbot, window, "Ctrl+Q")
    qtbot.waitUntil(lambda: not window.isVisible())


def test_the_crash_and_leftovers_dialogs(qtbot, session: TuningSession, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    store = session.store
    sid = store.create_session(["nfs-server"])
    store.journal_intend(sid, "nfs-server", "nfsd_threads", "/proc/fs/nfsd/threads", 8, 64, detail="simulated")
    store.journal_intend(sid, "nfs-server", "mtu", "eth0", 1500, 9000, detail="simulated")
    window = MainWindow(db_path=tmp_path / "s.db", session=session)
    qtbot.addWidget(window)
    window.show()
    window.check_leftovers()
    leftovers = _wait_shown(qtbot, lambda: window.leftovers_dialog)
    assert isinstance(leftovers, LeftoversDialog)
    assert_accessible(leftovers, "leftovers dialog")
    leftovers.later_button.click()
    crash = CrashDialog("Traceback (most recent call last):\nRuntimeError: boom", tmp_path / "nfs-tuner.log", window)
    crash.show()
    qtbot.waitExposed(crash)
    assert_accessible(crash, "crash dialog")
    crash.close()


def _answer_next_message_box(found: list[tuple[str, list[str]]]) -> None:
    """Walk the next modal message box (a static QMessageBox runs its own loop) and close it."""

    def check() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(10, check)
            return
        found.append((box.text(), walk(box)))
        box.close()

    QTimer.singleShot(0, check)


def test_the_review_window_its_tabs_comparison_and_messages(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "sessions.db"
    with Store(path) as store:
        a = fabricate_session(store, Recipe(samples_per_trial=8, seed=1, notes="before"))
        b = fabricate_session(store, Recipe(samples_per_trial=8, seed=2, speed=1.2, notes="after"))
    window = ReviewWindow(Store(path), source=str(path))  # the real Dialogs: its message boxes are walked too
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert [a.text() for a in window.menuBar().actions()] == ["&Session", "&Help"]
    assert window.act_quit.shortcut().toString() == "Ctrl+Q"
    assert_accessible(window, "review window, the list")

    view = window.open_session(a)
    assert isinstance(view, SessionView)
    for i in range(view.tabs.count()):
        view.tabs.setCurrentIndex(i)
        assert_accessible(window, f"review window, session tab {view.tabs.tabText(i)}")
    view.tabs.setCurrentIndex(view.tabs.indexOf(view.snippets))
    for pane in view.snippets.panes:
        tabs = next(t for t in view.snippets.findChildren(QTabWidget) if t.indexOf(pane) >= 0)
        tabs.setCurrentWidget(pane)
        assert_accessible(window, f"review window, snippet {pane.snippet.title}")
    assert window.compare(a, b) is not None
    assert_accessible(window, "review window, comparison")

    found: list[tuple[str, list[str]]] = []
    window.select_sessions(a)
    _answer_next_message_box(found)
    window.compare_selected()  # one session selected: it says to select two
    assert isinstance(window.dialogs, Dialogs)
    _answer_next_message_box(found)
    window.show_problem("The session file is damaged.")
    assert [text for text, _ in found] == ["Select exactly two sessions (Ctrl+click) to compare them.",
                                           "The session file is damaged."]  # fmt: skip
    assert all(problems == [] for _, problems in found), found

    _press(qtbot, window, "F1")
    help_menu = window.help
    assert isinstance(help_menu, HelpMenu)
    shown = _wait_shown(qtbot, lambda: help_menu.dialog)
    assert "Compare two" in shown.text()
    assert_accessible(shown, "review help")
    shown.close()
    _press(qtbot, window, "Ctrl+Q")
    qtbot.waitUntil(lambda: not window.isVisible())
    assert window.store is None  # closed as its close button would


def test_quit_in_the_main_window_closes_its_review_window(qtbot, session: TuningSession, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow(db_path=tmp_path / "s.db", session=session)
    qtbot.addWidget(window)
    window.show()
    _press(qtbot, window, "Ctrl+R")
    review = _wait_shown(qtbot, lambda: window.review_window)
    qtbot.addWidget(review)
    _press(qtbot, window, "Ctrl+Q")
    qtbot.waitUntil(lambda: not window.isVisible() and not review.isVisible())


def test_every_read_only_view_lets_tab_out(qtbot, session: TuningSession, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Also the ones no page shows before a run: every list, table and tree the windows build."""
    window = MainWindow(db_path=tmp_path / "s.db", session=session)
    qtbot.addWidget(window)
    views = window.findChildren(QAbstractItemView)
    assert len(views) > 8
    keeping = [v.accessibleName() or v.objectName() or type(v).__name__ for v in views if v.tabKeyNavigation()
               and v.focusPolicy() & Qt.FocusPolicy.TabFocus]  # fmt: skip
    assert keeping == []
