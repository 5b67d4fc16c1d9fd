"""Render every wizard page over the demo's simulated hosts to PNG files (for the README).

    xvfb-run -s "-screen 0 1280x800x24" .venv/bin/python -m ui.screenshots docs/screenshots
    QT_QPA_PLATFORM=offscreen .venv/bin/python -m ui.screenshots docs/screenshots   # also works

Drives the real wizard like an admin would (adding hosts, trusting keys, measuring,
planning, running), so the pictures show what the app really draws.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable
from typing import Any
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QWidget, QWizard
from qasync import QEventLoop

from app.session import Role, TuningSession
from app.session.factory import open_tuning_session
from ui.main_window import MainWindow
from ui.pages.baseline import BaselinePage
from ui.pages.hosts import HostsPage, HostState
from ui.pages.plan import PlanPage
from ui.pages.run import RunPage
from ui.theme import apply_app_style
from ui.trust_dialog import TrustDialog

SIZE = (1280, 800)


async def until(predicate: Callable[[], bool], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the demo did not get there in time")
        await asyncio.sleep(0.02)


async def settle(seconds: float = 0.3) -> None:
    """Let layouts, plots and the frame timer catch up before grabbing (the loop runs Qt's events;
    processEvents() here would run the engine's task inside this one)."""
    await asyncio.sleep(seconds)


def dark_palette() -> QPalette:
    pal = QPalette()
    for role, colour in ((QPalette.ColorRole.Window, "#2b2b2b"), (QPalette.ColorRole.WindowText, "#e6e6e6"),
                         (QPalette.ColorRole.Base, "#1e1e1e"), (QPalette.ColorRole.AlternateBase, "#2b2b2b"),
                         (QPalette.ColorRole.Text, "#e6e6e6"), (QPalette.ColorRole.Button, "#353535"),
                         (QPalette.ColorRole.ButtonText, "#e6e6e6"), (QPalette.ColorRole.Highlight, "#3d8ee0"),
                         (QPalette.ColorRole.HighlightedText, "#ffffff"), (QPalette.ColorRole.ToolTipBase, "#353535"),
                         (QPalette.ColorRole.ToolTipText, "#e6e6e6"), (QPalette.ColorRole.PlaceholderText, "#9a9a9a")):
        pal.setColor(role, QColor(colour))
    return pal


def save(widget: QWidget, out: Path, name: str) -> Path:
    path = out / f"{name}.png"
    widget.grab().save(str(path))
    print(path)
    return path


def next_page(window: MainWindow) -> None:
    wizard = window.wizard
    which = QWizard.WizardButton.CommitButton if wizard.currentPage().isCommitPage() else QWizard.WizardButton.NextButton
    wizard.button(which).click()


async def shoot(window: MainWindow, session: TuningSession, out: Path) -> None:
    hosts: Any = session.hosts  # the demo's simulated hosts: their speed is the demo's clock
    assert session.simulated
    wizard = window.wizard
    page = wizard.currentPage()
    assert isinstance(page, HostsPage)
    await settle()
    save(window, out, "1-hosts-empty")

    # The first host: show the trust-on-first-use question.
    page.add_host("nfs-server", Role.SERVER)
    await until(lambda: page.trust_dialog is not None and page.trust_dialog.isVisible())
    dialog = page.trust_dialog
    assert isinstance(dialog, TrustDialog)
    await settle()
    save(dialog, out, "1-hosts-trust-dialog")
    dialog.trust_button.click()
    await until(lambda: page.rows["nfs-server"].state is HostState.OK)

    async def trusting(host: str, key: object) -> bool:  # the rest: trusted without asking
        return True

    page.ask_trust = trusting  # type: ignore[method-assign]
    for name in ("client1", "client2", "client3", "client4", "unreachable-client"):
        page.add_host(name, Role.CLIENT)
    await until(lambda: all(r.state not in (HostState.CONNECTING, HostState.NEW) for r in page.rows.values()))
    page.table.selectRow(0)
    await settle()
    save(window, out, "1-hosts")
    page.remove_host("unreachable-client")

    hosts.speed = 25.0
    next_page(window)
    baseline = wizard.currentPage()
    assert isinstance(baseline, BaselinePage)
    await settle()
    save(window, out, "2-baseline-ready")  # its steps and time, before anything loads the hosts
    baseline.measure_button.click()
    await until(baseline.isComplete)
    await settle(0.5)
    save(window, out, "2-baseline")

    next_page(window)
    plan = wizard.currentPage()
    assert isinstance(plan, PlanPage)
    for name, check in plan.checks.items():
        check.setChecked(name in ("nfsd_threads", "nconnect", "read_ahead_kb"))
    plan.reps.setValue(2)
    await settle()
    save(window, out, "3-plan")

    hosts.speed = 8.0
    next_page(window)  # asks first: what changes on which host
    await until(lambda: plan.confirmation is not None and plan.confirmation.isVisible())
    confirmation = plan.confirmation
    assert confirmation is not None
    await settle()
    save(confirmation, out, "3-plan-confirm")
    confirmation.start_button.click()
    await until(lambda: wizard.currentPage() is not plan)
    run = wizard.currentPage()
    assert isinstance(run, RunPage)
    await until(lambda: len(run.finished_trials) >= 5)
    for _attempt in range(20):  # pause mid-trial, with a settled curve on screen
        await until(lambda: len(run.bridge.live.total_series()[0]) >= 50)
        run.toggle_pause()
        await settle(0.3)
        if len(run.bridge.live.total_series()[0]) >= 50:
            break
        run.toggle_pause()
    run.plots.draw_all()
    await settle(0.5)
    save(window, out, "4-run")
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    light = app.palette()
    app.setPalette(dark_palette())  # what a dark desktop hands the app
    await settle(0.5)
    save(window, out, "4-run-dark")
    app.setPalette(light)
    await settle(0.3)
    run.toggle_pause()
    hosts.speed = 400.0
    await until(run.isComplete, timeout=600)
    await settle()
    save(window, out, "4-run-finished")

    next_page(window)
    await settle(0.5)
    save(window, out, "5-results")
    results = wizard.currentPage()
    results.tabs.setCurrentIndex(1)  # type: ignore[attr-defined]
    await settle()
    save(window, out, "5-results-per-knob")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Render the wizard's pages to PNG files.")
    parser.add_argument("out", nargs="?", default="docs/screenshots", type=Path)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("nfs-tuner-screenshots")  # never the user's remembered geometry
    apply_app_style(app)
    loop = QEventLoop(app)
    asyncio.set_event_loop(loop)
    session = open_tuning_session(Path("unused"), demo=True)
    settings = QSettings(str(args.out / ".screenshots.ini"), QSettings.Format.IniFormat)
    window = MainWindow(db_path=session.store.path, session=session, settings=settings)
    window.setMinimumSize(*SIZE)
    window.resize(*SIZE)
    window.show()
    with loop:
        loop.run_until_complete(shoot(window, session, args.out))
    window.setMinimumSize(0, 0)
    (args.out / ".screenshots.ini").unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
