"""The wizard from hosts to results on the fake core, page by page."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QWizard

from ui.core_api import HostRole, RunOutcome, Strategy
from ui.main_window import MainWindow
from ui.pages.baseline import BaselinePage
from ui.pages.hosts import HostsPage
from ui.pages.plan import PlanPage
from ui.pages.results import ResultsPage
from ui.pages.run import RunPage

from .wizard_driver import add_host, go_next, small_plan


def _to_plan(qtbot, core, tmp_path: Path) -> MainWindow:  # type: ignore[no-untyped-def]
    window = MainWindow(db_path=tmp_path / "s.db", core=core)
    qtbot.addWidget(window)
    window.show()
    wizard = window.wizard
    hosts = wizard.currentPage()
    assert isinstance(hosts, HostsPage)
    assert not wizard.button(QWizard.WizardButton.NextButton).isEnabled()
    add_host(qtbot, hosts, "nfs-server", HostRole.SERVER)
    add_host(qtbot, hosts, "client1", HostRole.CLIENT)
    add_host(qtbot, hosts, "client2", HostRole.CLIENT)
    go_next(qtbot, wizard)
    baseline = wizard.currentPage()
    assert isinstance(baseline, BaselinePage)
    qtbot.waitUntil(baseline.isComplete)
    assert baseline.ceilings.rowCount() == 4  # two networks, disk read and write
    assert baseline.current.rowCount() == 2
    assert baseline.plot.client_curves  # the live plot saw the probes
    go_next(qtbot, wizard)
    assert isinstance(wizard.currentPage(), PlanPage)
    return window


def test_plan_enforces_ranges_and_updates_the_estimate(qtbot, core, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = _to_plan(qtbot, core, tmp_path)
    plan = window.wizard.currentPage()
    assert isinstance(plan, PlanPage)
    assert plan.isComplete()
    before = plan.estimate.text()
    plan.reps.setValue(5)
    assert plan.estimate.text() != before and "trials" in plan.estimate.text()
    plan.edits["nfsd.threads"].setText("8, 5000")
    assert not plan.isComplete()
    assert "above the maximum 1024" in plan.error_label.text()
    assert not window.wizard.button(QWizard.WizardButton.CommitButton).isEnabled()
    plan.edits["nfsd.threads"].setText("8, lots")
    assert "not a number" in plan.error_label.text()
    plan.edits["nfsd.threads"].setText("8, 64")
    plan.edits["mount.nfsvers"].setText("5")
    assert "not one of" in plan.error_label.text()
    plan.edits["mount.nfsvers"].setText("4.2")
    assert plan.isComplete()
    plan.strategy_box.setCurrentIndex(plan.strategy_box.findData(Strategy.GRID))
    assert plan.build_plan().strategy is Strategy.GRID
    for i in range(plan.workload_list.count()):
        plan.workload_list.item(i).setCheckState(plan.workload_list.item(i).checkState().Unchecked)
    assert "at least one workload" in plan.error_label.text()


def test_async_needs_the_warning_answered_yes(qtbot, core, tmp_path) -> None:  # type: ignore[no-untyped-def]
    plan = _to_plan(qtbot, core, tmp_path).wizard.currentPage()
    assert isinstance(plan, PlanPage)
    assert not plan.edits["export.sync"].isEnabled()
    assert "export.sync" not in plan.build_plan().knob_values
    plan.async_box.click()
    qtbot.waitUntil(lambda: plan.async_warning is not None and plan.async_warning.isVisible())
    assert not plan.async_box.isChecked()  # not before the answer
    assert plan.async_warning is not None
    plan.async_warning.button(QMessageBox.StandardButton.No).click()
    assert not plan.async_box.isChecked() and not plan.build_plan().allow_async
    plan.async_box.click()
    qtbot.waitUntil(lambda: plan.async_warning is not None and plan.async_warning.isVisible())
    plan.async_warning.button(QMessageBox.StandardButton.Yes).click()
    assert plan.async_box.isChecked()
    built = plan.build_plan()
    assert built.allow_async and built.knob_values["export.sync"] == ("sync", "async")
    plan.async_box.click()  # turning it off needs no question
    assert "export.sync" not in plan.build_plan().knob_values


def test_run_then_results(qtbot, core, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = _to_plan(qtbot, core, tmp_path)
    wizard = window.wizard
    plan = wizard.currentPage()
    assert isinstance(plan, PlanPage)
    small_plan(plan)
    assert plan.estimate.text().startswith("4 trials")
    go_next(qtbot, wizard)
    run = wizard.currentPage()
    assert isinstance(run, RunPage)
    assert not wizard.button(QWizard.WizardButton.BackButton).isEnabled()  # hosts change from here
    qtbot.waitUntil(run.isComplete, timeout=20_000)
    assert window.wizard.state.outcome is RunOutcome.COMPLETED
    assert run.strip.count() == 4
    assert run.progress.value() == 4
    assert run.journal.rowCount() == 1
    assert run.journal.item(0, 1).text() == "nfsd threads"
    assert run.journal.item(0, 3).text() == "reverted"  # put back at the end
    assert run.plots.trial.client_curves.keys() == {"client1", "client2"}
    go_next(qtbot, wizard)
    results = wizard.currentPage()
    assert isinstance(results, ResultsPage)
    assert results.ranking.rowCount() == 2
    assert results.objective.count() == 2
    assert "nfsd threads = 64" in results.recommendation.text()
    assert results.snippets.count() >= 8
    assert [v.snippet.title for v in results.snippet_views][:2] == ["fstab", "exports"]
    target = tmp_path / "fstab"
    results.snippet_views[0].save_to(target)
    assert target.read_text().startswith("nfs-server:/srv/nfs")
    assert "Saved" in results.snippet_views[0].status.text()
    results.snippet_views[0].copy_button.click()
    from PySide6.QtGui import QGuiApplication
    assert QGuiApplication.clipboard().text() == results.snippet_views[0].snippet.text
    assert "sync" in results.safety.text()
    assert core.revert_calls >= 1


def _start_slow_run(qtbot, core, tmp_path) -> MainWindow:  # type: ignore[no-untyped-def]
    window = _to_plan(qtbot, core, tmp_path)
    plan = window.wizard.currentPage()
    assert isinstance(plan, PlanPage)
    core.speed = 4.0  # slow enough that the run is still going while we act
    go_next(qtbot, window.wizard)
    qtbot.waitUntil(lambda: core.running)
    return window


def test_cancel_asks_then_reverts(qtbot, core, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = _start_slow_run(qtbot, core, tmp_path)
    run = window.wizard.currentPage()
    assert isinstance(run, RunPage)
    reverts = core.revert_calls
    run.cancel_button.click()
    qtbot.waitUntil(lambda: run.cancel_question is not None and run.cancel_question.isVisible())
    assert run.cancel_question is not None
    run.cancel_question.button(QMessageBox.StandardButton.No).click()
    assert core.running  # "keep running" kept it running
    run.cancel_button.click()
    qtbot.waitUntil(lambda: run.cancel_question is not None and run.cancel_question.isVisible())
    run.cancel_question.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: not core.running and run.task is None, timeout=20_000)
    assert window.wizard.state.outcome is RunOutcome.CANCELLED
    assert core.revert_calls > reverts
    assert "cancelled" in run.trial_label.text()


def test_pause_and_skip_reach_the_core(qtbot, core, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = _start_slow_run(qtbot, core, tmp_path)
    run = window.wizard.currentPage()
    assert isinstance(run, RunPage)
    run.pause_button.click()
    assert not core._paused.is_set() and run.pause_button.text() == "&Resume"
    run.pause_button.click()
    assert core._paused.is_set()
    run.skip_button.click()
    qtbot.waitUntil(lambda: run.strip.count() >= 1, timeout=20_000)
    assert "skipped" in run.strip.item(0).text()
