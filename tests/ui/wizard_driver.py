"""Drives the wizard like an admin would, for the page tests and the screenshots."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from PySide6.QtWidgets import QWizard

from app.session import Role, TuningSession
from app.simulated import SimulatedHosts
from app.store import Store
from ui.bridge import Bridge
from ui.pages.baseline import BaselinePage
from ui.pages.hosts import HostsPage, HostState
from ui.pages.plan import PlanPage
from ui.pages.results import ResultsPage
from ui.main_window import MainWindow
from ui.run_confirmation import RunConfirmation
from ui.trust_dialog import TrustDialog
from ui.wizard import TuningWizard

# How long a demo run may take to end: seconds alone, but `make test` runs it niced beside three labs.
DEMO_RUN_MS = 120_000


def go_next(qtbot, wizard: TuningWizard) -> None:  # type: ignore[no-untyped-def]
    page = wizard.currentPage()
    which = QWizard.WizardButton.CommitButton if page.isCommitPage() else QWizard.WizardButton.NextButton
    button = wizard.button(which)
    qtbot.waitUntil(button.isEnabled)
    button.click()
    if isinstance(page, PlanPage):  # the run starts only from its confirmation
        confirm_run(qtbot, page)
    qtbot.waitUntil(lambda: wizard.currentPage() is not page)


def confirm_run(qtbot, page: PlanPage) -> RunConfirmation:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: page.confirmation is not None and page.confirmation.isVisible())
    dialog = page.confirmation
    assert isinstance(dialog, RunConfirmation)
    dialog.start_button.click()
    return dialog


def measure_baseline(qtbot, page: BaselinePage, timeout: int = 10_000) -> None:  # type: ignore[no-untyped-def]
    """Press Measure baseline (nothing loads the hosts before) and wait for the result."""
    assert page.task is None
    page.measure_button.click()
    qtbot.waitUntil(page.isComplete, timeout=timeout)


def add_host(qtbot, page: HostsPage, name: str, role: Role, trust: bool = True) -> None:  # type: ignore[no-untyped-def]
    page.add_host(name, role)
    qtbot.waitUntil(lambda: page.trust_dialog is not None and page.trust_dialog.isVisible())
    dialog = page.trust_dialog
    assert isinstance(dialog, TrustDialog)
    (dialog.trust_button if trust else dialog.reject_button).click()
    qtbot.waitUntil(lambda: page.rows[name].state not in (HostState.CONNECTING, HostState.NEW))


def small_plan(page: PlanPage) -> None:
    """nfsd threads 8 vs 64 only, a full grid, once each: a quick run (no time budget: nothing left out to fit)."""
    page.budget_edit.setText("")
    for name, check in page.checks.items():
        check.setChecked(name == "nfsd_threads")
    page.edits["nfsd_threads"].setText("8, 64")
    page.strategy_box.setCurrentIndex(page.strategy_box.findData("grid"))
    page.reps.setValue(1)


def new_window(qtbot, session, tmp_path: Path) -> MainWindow:  # type: ignore[no-untyped-def]
    """The main window over ``session``, shown on its first page (Hosts)."""
    window = MainWindow(db_path=tmp_path / "s.db", session=session)
    qtbot.addWidget(window)
    window.show()
    assert isinstance(window.wizard.currentPage(), HostsPage)
    return window


def to_plan(qtbot, session, tmp_path: Path) -> MainWindow:  # type: ignore[no-untyped-def]
    """Hosts (a server, client1 and client2) and the baseline done: the Plan page shown."""
    window = new_window(qtbot, session, tmp_path)
    wizard = window.wizard
    hosts = wizard.currentPage()
    assert isinstance(hosts, HostsPage)
    assert not wizard.button(QWizard.WizardButton.NextButton).isEnabled()
    add_host(qtbot, hosts, "nfs-server", Role.SERVER)
    add_host(qtbot, hosts, "client1", Role.CLIENT)
    add_host(qtbot, hosts, "client2", Role.CLIENT)
    go_next(qtbot, wizard)
    baseline = wizard.currentPage()
    assert isinstance(baseline, BaselinePage)
    measure_baseline(qtbot, baseline)
    assert baseline.ceilings.rowCount() == 4  # two networks, disk read and write
    assert baseline.current.rowCount() == 2
    qtbot.waitUntil(lambda: bool(baseline.plot.client_curves))  # the live plot saw the probes (at its next tick)
    go_next(qtbot, wizard)
    assert isinstance(wizard.currentPage(), PlanPage)
    return window


def start_slow_run(qtbot, session, tmp_path: Path) -> MainWindow:  # type: ignore[no-untyped-def]
    """The default plan started on hosts slowed down so the run goes on while a test acts."""
    window = to_plan(qtbot, session, tmp_path)
    plan = window.wizard.currentPage()
    assert isinstance(plan, PlanPage)
    assert isinstance(session.hosts, SimulatedHosts)
    session.hosts.speed = 4.0  # slow enough that the run is still going while we act
    go_next(qtbot, window.wizard)
    qtbot.waitUntil(lambda: session.running)
    qtbot.waitUntil(lambda: bool(session.store.journal()))  # its first change is made
    return window


@contextmanager
def results_page(qtbot, db: Path, sid: int) -> Iterator[ResultsPage]:  # type: ignore[no-untyped-def]
    """The wizard's Results page showing a stored session, as after a run."""
    store = Store(db)
    session = TuningSession(store, SimulatedHosts())
    session.session_id = sid
    bridge = Bridge(session.bus)
    wizard = TuningWizard(session, bridge)
    qtbot.addWidget(wizard)
    results = wizard.page_of(ResultsPage)
    assert isinstance(results, ResultsPage)
    results.show_results(session.results(sid))
    try:
        yield results
    finally:
        bridge.close()
        store.close()
