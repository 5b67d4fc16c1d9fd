"""Render every wizard page over the demo's simulated hosts to PNG files (for the README).

    xvfb-run -s "-screen 0 1280x800x24" .venv/bin/python -m ui.screenshots docs/screenshots
    QT_QPA_PLATFORM=offscreen .venv/bin/python -m ui.screenshots docs/screenshots   # also works
    QT_SCALE_FACTOR=2 xvfb-run -s "-screen 0 1920x1080x24" .venv/bin/python -m ui.screenshots \
        docs/screenshots --size 960x540 --suffix=-2x --only 1-hosts,4-run   # 1920×1080 at 2×

Drives the real wizard like an admin would (adding hosts, trusting keys, measuring,
planning, running), so the pictures show what the app really draws. It fails when the
window cannot be made as small as asked, and names on stderr each page with a part that
scrolls sideways (a snippet's text may: it keeps its lines whole).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QWidget, QWizard
from qasync import QEventLoop

from app.session import Role, TuningSession
from app.session.factory import open_tuning_session
from app.session.study import StudyKind
from ui.main_window import MainWindow
from ui.pages.baseline import BaselinePage
from ui.pages.hosts import HostsPage, HostState
from ui.pages.plan import PlanPage
from ui.pages.results import ResultsPage
from ui.pages.run import RunPage
from ui.theme import apply_app_style
from ui.trust_dialog import TrustDialog

DEFAULT_SIZE = (1280, 800)  # the README's main set, named without a suffix
SHOTS = ("1-hosts-empty", "1-hosts-trust-dialog", "1-hosts", "2-baseline-ready", "2-baseline", "3-plan",
         "3-plan-ladder", "3-plan-confirm", "4-run", "4-run-dark", "4-run-finished", "5-results", "5-results-snippets",
         "5-results-per-knob")


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
    """What a dark desktop hands the app: the 3D roles (rules, bevels) made from its dark button,
    and dimmed text for what is disabled (else a greyed-out Next reads as one to press)."""
    pal = QPalette(QColor("#353535"), QColor("#2b2b2b"))
    for role, colour in ((QPalette.ColorRole.Window, "#2b2b2b"), (QPalette.ColorRole.WindowText, "#e6e6e6"),
                         (QPalette.ColorRole.Base, "#1e1e1e"), (QPalette.ColorRole.AlternateBase, "#2b2b2b"),
                         (QPalette.ColorRole.Text, "#e6e6e6"), (QPalette.ColorRole.Button, "#353535"),
                         (QPalette.ColorRole.ButtonText, "#e6e6e6"), (QPalette.ColorRole.Highlight, "#3d8ee0"),
                         (QPalette.ColorRole.HighlightedText, "#ffffff"), (QPalette.ColorRole.ToolTipBase, "#353535"),
                         (QPalette.ColorRole.ToolTipText, "#e6e6e6"), (QPalette.ColorRole.PlaceholderText, "#9a9a9a")):
        pal.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor("#7a7a7a"))
    return pal


PNG_QUALITY = 0  # Qt's PNG writer: 0 is zlib's strongest compression (lossless; the files stay small)


@dataclass(slots=True)
class Camera:
    """Where the pictures go and which of them: a size's set carries a suffix (``3-plan-1024``)."""

    out: Path
    size: tuple[int, int] = DEFAULT_SIZE
    suffix: str = ""
    only: frozenset[str] | None = None  # the shots to keep; None: every one
    too_large: list[str] = field(default_factory=list)  # shots whose window could not be made this small
    scrolled: list[str] = field(default_factory=list)  # shots with a horizontal scroll bar (a snippet's may be fine)

    def save(self, widget: QWidget, name: str) -> Path | None:
        if self.only is not None and name not in self.only:
            return None
        if isinstance(widget, MainWindow):
            if (widget.width(), widget.height()) != self.size:
                hint = widget.minimumSizeHint()
                self.too_large.append(f"{name}: the window is {widget.width()}×{widget.height()}, not "
                                      f"{self.size[0]}×{self.size[1]} (its minimum is {hint.width()}×{hint.height()})")
            self.scrolled.extend(f"{name}: a horizontal scroll bar on {area}" for area in horizontal_scroll_bars(widget))
        path = self.out / f"{name}{self.suffix}.png"
        widget.grab().save(str(path), "PNG", PNG_QUALITY)
        print(path)
        return path


def horizontal_scroll_bars(window: QWidget) -> list[str]:
    """The shown scroll areas of ``window`` that scroll sideways, by their accessible names."""
    return [area.accessibleName() or area.objectName() or type(area).__name__
            for area in window.findChildren(QAbstractScrollArea)
            if area.isVisible() and area.horizontalScrollBar().isVisible()]


def next_page(window: MainWindow) -> None:
    wizard = window.wizard
    which = QWizard.WizardButton.CommitButton if wizard.currentPage().isCommitPage() else QWizard.WizardButton.NextButton
    wizard.button(which).click()


async def shoot(window: MainWindow, session: TuningSession, camera: Camera) -> None:
    hosts: Any = session.hosts  # the demo's simulated hosts: their speed is the demo's clock
    assert session.simulated
    wizard = window.wizard
    page = wizard.currentPage()
    assert isinstance(page, HostsPage)
    await settle()
    camera.save(window, "1-hosts-empty")

    # The first host: show the trust-on-first-use question.
    page.add_host("nfs-server", Role.SERVER)
    await until(lambda: page.trust_dialog is not None and page.trust_dialog.isVisible())
    dialog = page.trust_dialog
    assert isinstance(dialog, TrustDialog)
    await settle()
    camera.save(dialog, "1-hosts-trust-dialog")
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
    camera.save(window, "1-hosts")
    page.remove_host("unreachable-client")

    hosts.speed = 25.0
    next_page(window)
    baseline = wizard.currentPage()
    assert isinstance(baseline, BaselinePage)
    await settle()
    camera.save(window, "2-baseline-ready")  # its steps and time, before anything loads the hosts
    baseline.measure_button.click()
    await until(baseline.isComplete)
    await settle(0.5)
    camera.save(window, "2-baseline")

    next_page(window)
    plan = wizard.currentPage()
    assert isinstance(plan, PlanPage)
    for name, check in plan.checks.items():
        check.setChecked(name in ("nfsd_threads", "nconnect", "read_ahead_kb"))
    plan.reps.setValue(2)
    await settle()
    camera.save(window, "3-plan")
    plan.study_fields.set_kind(StudyKind.LADDER)  # a study instead: knobs held at one value, no strategy
    plan.checks["nfsd_threads"].setChecked(True)
    plan.edits["nfsd_threads"].setText("8")
    await settle()
    camera.save(window, "3-plan-ladder")
    plan.study_fields.set_kind(StudyKind.SWEEP)  # the sweep's checks and values come back
    await settle()

    hosts.speed = 8.0
    next_page(window)  # asks first: what changes on which host
    await until(lambda: plan.confirmation is not None and plan.confirmation.isVisible())
    confirmation = plan.confirmation
    assert confirmation is not None
    await settle()
    camera.save(confirmation, "3-plan-confirm")
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
    camera.save(window, "4-run")
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    light = app.palette()
    app.setPalette(dark_palette())  # what a dark desktop hands the app
    await settle(0.5)
    camera.save(window, "4-run-dark")
    app.setPalette(light)
    await settle(0.3)
    run.toggle_pause()
    hosts.speed = 400.0
    await until(run.isComplete, timeout=600)
    await settle()
    camera.save(window, "4-run-finished")

    next_page(window)
    await settle(0.5)
    results = wizard.currentPage()
    assert isinstance(results, ResultsPage)
    camera.save(window, "5-results")  # the ranking
    for pane, name in ((results.snippets, "5-results-snippets"), (results.chart, "5-results-per-knob")):
        results.tabs.setCurrentWidget(pane)
        await settle()
        camera.save(window, name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Render the wizard's pages to PNG files.")
    parser.add_argument("out", nargs="?", default="docs/screenshots", type=Path)
    parser.add_argument("--size", type=window_size, default=DEFAULT_SIZE, metavar="WxH",
                        help="the window in logical pixels (default 1280x800; under QT_SCALE_FACTOR=2 "
                             "a 960x540 window is 1920×1080 pixels)")
    parser.add_argument("--suffix", default="", help="added to every file name, e.g. -1024")
    parser.add_argument("--only", type=lambda text: frozenset(text.split(",")), default=None, metavar="NAMES",
                        help=f"comma-separated shots to keep (default all: {','.join(SHOTS)})")
    args = parser.parse_args(argv)
    if args.only is not None and (unknown := args.only - set(SHOTS)):
        parser.error(f"no such shot: {', '.join(sorted(unknown))}")
    camera = Camera(args.out, args.size, args.suffix, args.only)
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
    window.resize(*args.size)  # never a forced minimum: a window that cannot be this small must show it
    window.show()
    with loop:
        loop.run_until_complete(shoot(window, session, camera))
    (args.out / ".screenshots.ini").unlink(missing_ok=True)
    for problem in (*camera.scrolled, *camera.too_large):
        print(f"check: {problem}", file=sys.stderr)
    return 1 if camera.too_large else 0


def window_size(text: str) -> tuple[int, int]:
    width, _, height = text.lower().partition("x")
    try:
        return int(width), int(height)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is no WIDTHxHEIGHT") from None


if __name__ == "__main__":
    sys.exit(main())
