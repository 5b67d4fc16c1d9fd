"""Enter in a field never moves the wizard on, measures or starts a run.

Seen: Enter in a "Values to try" field started the run (the commit button was the
wizard's default button), and Enter on an invalid host name fell through to Next, so
Baseline started loading the hosts. Every field of every page is tried here, on the
real wizard over simulated hosts, with Next (or Start run) enabled where it can be.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractItemView, QAbstractSpinBox, QApplication, QDialog, QLineEdit, QWidget, QWizard

from app.session import Role, TuningSession
from ui.bridge import Bridge
from ui.main_window import MainWindow
from ui.pages.base import Page
from ui.pages.baseline import BaselinePage
from ui.pages.hosts import HostsPage
from ui.pages.plan import PlanPage
from ui.pages.results import ResultsPage
from ui.pages.run import RunPage
from ui.wizard import TuningWizard

from .wizard_driver import DEMO_RUN_MS, add_host, go_next, measure_baseline, small_plan

ENTER = ((Qt.Key.Key_Return, Qt.KeyboardModifier.NoModifier), (Qt.Key.Key_Enter, Qt.KeyboardModifier.KeypadModifier))


def _fields(page: Page) -> list[QWidget]:
    """What takes typing or Enter on the page: line edits, spin boxes, lists and tables."""
    kinds = (QLineEdit, QAbstractSpinBox, QAbstractItemView)
    return [w for kind in kinds for w in page.findChildren(kind) if w.isVisible() and w.isEnabled()]


def _open_dialogs() -> list[QWidget]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, QDialog) and w.isVisible()
            and not isinstance(w, QWizard)]  # fmt: skip


def _press_enter_everywhere(qtbot, wizard: TuningWizard, session: TuningSession) -> int:  # type: ignore[no-untyped-def]
    """Enter (and keypad Enter) in each field of the current page; nothing may move or start."""
    page = wizard.currentPage()
    assert isinstance(page, Page)
    rows = dict(page.rows) if isinstance(page, HostsPage) else {}
    fields = _fields(page)
    for field in fields:
        field.setFocus()
        for key, modifier in ENTER:
            QTest.keyClick(field, key, modifier)
            qtbot.wait(20)  # anything queued by the key (a click, a dialog) gets its turn
            where = f"{type(page).__name__}: {field.accessibleName() or type(field).__name__}"
            assert wizard.currentPage() is page, f"Enter in {where} left the page"
            assert not session.running, f"Enter in {where} started a run"
            assert not _open_dialogs(), f"Enter in {where} opened {_open_dialogs()}"
            if isinstance(page, BaselinePage):
                assert page.task is None, f"Enter in {where} started measuring"
            if isinstance(page, HostsPage):
                assert page.rows.keys() == rows.keys(), f"Enter in {where} added a host"
    return len(fields)


def test_enter_in_any_field_moves_nothing_and_starts_nothing(qtbot, session: TuningSession, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow(db_path=tmp_path / "s.db", session=session)  # as the admin sees it: the wizard embedded
    qtbot.addWidget(window)
    window.show()
    wizard = window.wizard
    hosts = wizard.currentPage()
    assert isinstance(hosts, HostsPage)
    add_host(qtbot, hosts, "nfs-server", Role.SERVER)
    add_host(qtbot, hosts, "client1", Role.CLIENT)
    assert wizard.button(QWizard.WizardButton.NextButton).isEnabled()
    hosts.name_edit.setText("srv; rm -rf /")  # the seen case: an invalid name, then Enter
    tried = _press_enter_everywhere(qtbot, wizard, session)
    assert "not a host name" in hosts.name_error.text()
    hosts.name_edit.clear()
    tried += _press_enter_everywhere(qtbot, wizard, session)

    go_next(qtbot, wizard)
    baseline = wizard.currentPage()
    assert isinstance(baseline, BaselinePage)
    tried += _press_enter_everywhere(qtbot, wizard, session)  # before measuring: nothing loads the hosts
    measure_baseline(qtbot, baseline)
    assert wizard.button(QWizard.WizardButton.NextButton).isEnabled()
    tried += _press_enter_everywhere(qtbot, wizard, session)

    go_next(qtbot, wizard)
    plan = wizard.currentPage()
    assert isinstance(plan, PlanPage)
    small_plan(plan)
    assert wizard.button(QWizard.WizardButton.CommitButton).isEnabled()
    assert plan.edits["nfsd_threads"] in _fields(plan) and plan.reps in _fields(plan)
    tried += _press_enter_everywhere(qtbot, wizard, session)

    go_next(qtbot, wizard)
    run = wizard.currentPage()
    assert isinstance(run, RunPage)
    qtbot.waitUntil(run.isComplete, timeout=DEMO_RUN_MS)
    tried += _press_enter_everywhere(qtbot, wizard, session)
    go_next(qtbot, wizard)
    assert isinstance(wizard.currentPage(), ResultsPage)
    tried += _press_enter_everywhere(qtbot, wizard, session)
    assert tried > 20  # the plan's values, its repetitions, the host name, the lists


def test_no_wizard_button_is_a_default_button(qtbot, session: TuningSession, bridge: Bridge) -> None:  # type: ignore[no-untyped-def]
    """The mechanism: QDialog presses its default button on Enter; the wizard has none."""
    from PySide6.QtWidgets import QPushButton

    wizard = TuningWizard(session, bridge)
    qtbot.addWidget(wizard)
    assert wizard.testOption(QWizard.WizardOption.NoDefaultButton)
    buttons = wizard.findChildren(QPushButton)
    assert buttons and not [b.text() for b in buttons if b.isDefault() or b.autoDefault()]
