"""The main window on small screens: every page fits a 960 × 540 screen (1920 × 1080 at 2×,
where QT_SCALE_FACTOR=2 leaves the same logical room) and a 1024 × 700 one, and none
scrolls sideways there; at 1024 × 700 no page scrolls at all, and the Run page's plots stay
in view at 960 × 540 too.

The wizard runs on the real application layer over the demo's simulated hosts, with the
hosts, plan and run the screenshots show (a server, four clients, three knobs)."""

from __future__ import annotations

from PySide6.QtWidgets import QWizard

from app.session import Role
from ui.main_window import MainWindow
from ui.pages.base import Page
from ui.pages.hosts import HostsPage
from ui.pages.plan import PlanPage
from ui.pages.results import ResultsPage
from ui.pages.run import RunPage
from ui.screenshots import horizontal_scroll_bars

from .wizard_driver import add_host, go_next, measure_baseline, new_window

SMALL = (960, 540)  # 1920 × 1080 at 2×
LAPTOP = (1024, 700)


def _look(qtbot, window: MainWindow, size: tuple[int, int]) -> Page:  # type: ignore[no-untyped-def]
    """The window resized to ``size`` and laid out (tables fit their columns to new data once
    the loop is back); its page."""
    window.resize(*size)
    qtbot.wait(50)
    page = window.wizard.currentPage()
    assert isinstance(page, Page)
    return page


def _fits(qtbot, window: MainWindow) -> list[str]:  # type: ignore[no-untyped-def]
    """What on the current page does not fit a small screen, in words (an empty list: all fits)."""
    hint = window.minimumSizeHint()
    page = window.wizard.currentPage()
    assert isinstance(page, Page)
    problems = [] if hint.width() <= SMALL[0] and hint.height() <= SMALL[1] else \
        [f"{page.TITLE}: the window needs {hint.width()}×{hint.height()}"]  # fmt: skip
    for size in (LAPTOP, SMALL):
        page = _look(qtbot, window, size)
        where = f"{page.TITLE} at {size[0]}×{size[1]}"
        if (window.width(), window.height()) != size:
            problems.append(f"{where}: the window stays {window.width()}×{window.height()}")
        problems += [f"{where}: {name} scrolls sideways" for name in horizontal_scroll_bars(window)]
        if (size == LAPTOP or isinstance(page, RunPage)) and page.scroller.verticalScrollBar().isVisible():
            problems.append(f"{where}: the page scrolls (it needs {page.body.minimumSizeHint().height()} pixels, "
                            f"it has {page.scroller.viewport().height()})")
    return problems


def test_every_page_fits_960_by_540_and_1024_by_700(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = new_window(qtbot, session, tmp_path)
    wizard = window.wizard
    hosts = wizard.currentPage()
    assert isinstance(hosts, HostsPage)
    problems = _fits(qtbot, window)  # nothing added yet: the empty table and lists
    add_host(qtbot, hosts, "nfs-server", Role.SERVER)
    for name in ("client1", "client2", "client3", "client4"):
        add_host(qtbot, hosts, name, Role.CLIENT)
    hosts.table.selectRow(0)
    problems += _fits(qtbot, window)  # the hosts' facts in the table and under it
    go_next(qtbot, wizard)
    measure_baseline(qtbot, wizard.currentPage())  # type: ignore[arg-type]
    problems += _fits(qtbot, window)
    go_next(qtbot, wizard)
    plan = wizard.currentPage()
    assert isinstance(plan, PlanPage)
    for name, check in plan.checks.items():
        check.setChecked(name in ("nfsd_threads", "nconnect", "read_ahead_kb"))
    plan.strategy_box.setCurrentIndex(plan.strategy_box.findData("grid"))
    plan.edits["nfsd_threads"].setText("8, 64")
    plan.edits["nconnect"].setText("1, 8")
    plan.edits["read_ahead_kb"].setText("128, 16384")
    plan.reps.setValue(1)
    problems += _fits(qtbot, window)  # its longest knob, values and safety words
    go_next(qtbot, wizard)
    run = wizard.currentPage()
    assert isinstance(run, RunPage)
    qtbot.waitUntil(lambda: len(run.finished_trials) >= 1, timeout=30_000)
    run.toggle_pause()  # the Paused banner is the tallest the page gets
    problems += _fits(qtbot, window)  # its plots, legends, a tile and the journal
    run.toggle_pause()
    qtbot.waitUntil(run.isComplete, timeout=60_000)
    go_next(qtbot, wizard)
    results = wizard.currentPage()
    assert isinstance(results, ResultsPage) and results.ranking.rowCount() >= 2
    for pane in (results.ranking, results.chart):  # the snippets' text keeps its lines whole: it may scroll
        results.tabs.setCurrentWidget(pane)
        problems += _fits(qtbot, window)
    assert wizard.button(QWizard.WizardButton.FinishButton).isVisible()
    assert not problems, "\n".join(problems)
