"""The wizard from hosts to results on the real application layer over simulated hosts, page by page."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWizard

from app.simulated import SimulatedHosts
from app.store import JournalState, SessionState
from app.sweep.events import TrialFinished
from ui.pages.plan import PlanPage
from ui.pages.results import ResultsPage
from ui.pages.run import RunPage

from .wizard_driver import DEMO_RUN_MS, go_next, small_plan, start_slow_run, to_plan


def test_plan_enforces_ranges_and_updates_the_estimate(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = to_plan(qtbot, session, tmp_path)
    plan = window.wizard.currentPage()
    assert isinstance(plan, PlanPage)
    assert plan.isComplete()
    before = plan.estimate.text()
    plan.budget_edit.clear()  # no budget: nothing fits the repetitions back down
    plan.reps.setValue(5)
    assert plan.estimate.text() != before and "trials" in plan.estimate.text()
    plan.checks["nfsd_threads"].setChecked(True)  # not proposed: its threads hardly waited
    plan.edits["nfsd_threads"].setText("8, 5000")
    assert not plan.isComplete()
    assert plan.error_label.text().startswith("nfsd_threads: 5000 is above 1024")
    assert not window.wizard.button(QWizard.WizardButton.CommitButton).isEnabled()
    plan.edits["nfsd_threads"].setText("8, lots")
    assert "'lots' is not a whole number" in plan.error_label.text()
    plan.edits["nfsd_threads"].setText("8, 64")
    plan.checks["nfsvers"].setChecked(True)
    plan.edits["nfsvers"].setText("5")
    assert "nfsvers: '5' is not one of 3, 4.1, 4.2" in plan.error_label.text()
    plan.edits["nfsvers"].setText("4.2")
    assert plan.isComplete()
    plan.strategy_box.setCurrentIndex(plan.strategy_box.findData("grid"))
    assert plan.choices().strategy == "grid"
    for i in range(plan.workload_list.count()):
        plan.workload_list.item(i).setCheckState(plan.workload_list.item(i).checkState().Unchecked)
    assert "at least one workload" in plan.error_label.text()


def test_async_needs_the_warning_answered_yes(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    plan = to_plan(qtbot, session, tmp_path).wizard.currentPage()
    assert isinstance(plan, PlanPage)
    assert not plan.edits["export_sync"].isEnabled()
    assert "export_sync" not in plan.choices().knobs
    plan.async_box.click()
    qtbot.waitUntil(lambda: plan.async_warning is not None and plan.async_warning.isVisible())
    assert not plan.async_box.isChecked()  # not before the answer
    assert plan.async_warning is not None
    plan.async_warning.button(QMessageBox.StandardButton.No).click()
    assert not plan.async_box.isChecked() and not plan.choices().allow_async
    plan.async_box.click()
    qtbot.waitUntil(lambda: plan.async_warning is not None and plan.async_warning.isVisible())
    plan.async_warning.button(QMessageBox.StandardButton.Yes).click()
    assert plan.async_box.isChecked()
    plan.edits["export_sync"].setText("sync, async")
    built = plan.choices()
    assert built.allow_async and built.knobs["export_sync"] == "sync, async" and plan.isComplete()
    plan.async_box.click()  # turning it off needs no question
    assert "export_sync" not in plan.choices().knobs


def test_nfsd_restarts_have_their_own_opt_in_and_warning(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    plan = to_plan(qtbot, session, tmp_path).wizard.currentPage()
    assert isinstance(plan, PlanPage)
    assert not plan.edits["max_block_size"].isEnabled()
    plan.async_box.click()
    qtbot.waitUntil(lambda: plan.async_warning is not None and plan.async_warning.isVisible())
    assert plan.async_warning is not None
    plan.async_warning.button(QMessageBox.StandardButton.Yes).click()
    assert not plan.edits["max_block_size"].isEnabled()  # async's yes is not a yes to restarts
    plan.opt_in_boxes["restart"].click()
    qtbot.waitUntil(lambda: plan.warnings.get("restart") is not None and plan.warnings.get("restart").isVisible())
    assert plan.warnings.get("restart") is not None and "grace period" in plan.warnings.get("restart").text()
    assert not plan.opt_in_boxes["restart"].isChecked()  # not before the answer
    plan.warnings.get("restart").button(QMessageBox.StandardButton.Yes).click()
    assert plan.opt_in_boxes["restart"].isChecked() and plan.edits["max_block_size"].isEnabled()
    plan.edits["max_block_size"].setText("64K, 1M")
    built = plan.choices()
    assert built.allow_restart and built.knobs["max_block_size"] == "64K, 1M" and plan.isComplete()
    plan.opt_in_boxes["restart"].click()
    assert "max_block_size" not in plan.choices().knobs and not plan.choices().allow_restart
    assert "export_sync" in plan.choices().knobs  # the other opt-in stands


def test_run_then_results(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = to_plan(qtbot, session, tmp_path)
    wizard = window.wizard
    plan = wizard.currentPage()
    assert isinstance(plan, PlanPage)
    small_plan(plan)
    plan.checks["read_ahead_kb"].setChecked(True)  # the knob that does the work for reads in the demo's world
    plan.edits["read_ahead_kb"].setText("128, 4096")
    expected = session.estimate(plan.choices())
    assert plan.estimate.text().startswith(f"{expected.trials} trials")  # the grid, a put-back check, confirmation pairs
    go_next(qtbot, wizard)
    run = wizard.currentPage()
    assert isinstance(run, RunPage)
    assert not wizard.button(QWizard.WizardButton.BackButton).isEnabled()  # hosts change from here
    qtbot.waitUntil(run.isComplete, timeout=DEMO_RUN_MS)
    finished = window.wizard.state.finished
    assert finished is not None and finished.state == SessionState.COMPLETE.value
    trials = session.store.trials(finished.session_id)
    assert run.strip.count() == len(trials) > 8  # the 2 × 2 grid on both workloads, then the confirmation's pairs
    assert run.progress.value() == run.progress.maximum() == run.strip.count()
    rows = [(run.journal.item(i, 1).text(), run.journal.item(i, 3).text()) for i in range(run.journal.rowCount())]
    assert ("nfsd_threads (nfsd threads)", "reverted") in rows  # the server knob, put back at the end
    assert {state for _, state in rows} == {"reverted"}  # the test mounts too
    assert not session.store.unreverted_journal()
    assert run.plots.trial.client_curves.keys() == {"client1", "client2"}
    go_next(qtbot, wizard)
    results = wizard.currentPage()
    assert isinstance(results, ResultsPage)
    assert results.ranking.rowCount() == 4
    assert [results.objective.itemText(i) for i in range(results.objective.count())] == ["seq_read", "seq_write"]
    # one configuration for both workloads: only the change that earned it, confirmed (issue 29)
    assert "Change read_ahead_kb 128 → 4096" in results.recommendation.text()
    assert "nfsd_threads 8 → 64" not in results.recommendation.text().split("</b>")[0]
    assert results.snippets.count() >= 5
    fstab = next(v for v in results.snippet_views if v.snippet.key == "fstab")
    target = tmp_path / "fstab"
    fstab.save_to(target)
    assert target.read_text().startswith("nfs-server:/srv/nfs /mnt/nfs nfs")  # the server as its clients mount it
    assert "Saved" in fstab.status.text()
    fstab.copy_button.click()
    from PySide6.QtGui import QGuiApplication
    assert QGuiApplication.clipboard().text() == fstab.snippet.text


def test_cancel_asks_then_reverts(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = start_slow_run(qtbot, session, tmp_path)
    run = window.wizard.currentPage()
    assert isinstance(run, RunPage)
    run.cancel_button.click()
    qtbot.waitUntil(lambda: run.cancel_question is not None and run.cancel_question.isVisible())
    assert run.cancel_question is not None
    run.cancel_question.button(QMessageBox.StandardButton.No).click()
    assert session.running and session.store.unreverted_journal()  # "keep running" kept it running
    run.cancel_button.click()
    qtbot.waitUntil(lambda: run.cancel_question is not None and run.cancel_question.isVisible())
    run.cancel_question.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: not session.running and run.task is None, timeout=20_000)
    finished = window.wizard.state.finished
    assert finished is not None and finished.state == SessionState.CANCELLED.value
    assert not session.store.unreverted_journal()
    assert all(e.state is JournalState.REVERTED for e in session.store.journal())
    assert "cancelled" in run.trial_label.text()


def test_pause_and_skip_reach_the_core(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = start_slow_run(qtbot, session, tmp_path)
    run = window.wizard.currentPage()
    assert isinstance(run, RunPage)
    engine = session._engine
    assert engine is not None
    run.pause_button.click()
    assert not engine.go_on.is_set() and run.pause_button.text() == "&Resume"
    run.pause_button.click()
    assert engine.go_on.is_set()
    qtbot.waitUntil(lambda: run.bridge.live.version > 0)  # the trial measures
    run.skip_button.click()
    qtbot.waitUntil(lambda: run.strip.count() >= 1, timeout=20_000)
    assert "skipped" in run.strip.item(0).text()


def test_a_host_that_stops_answering_asks_and_can_be_left_behind(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = to_plan(qtbot, session, tmp_path)
    wizard = window.wizard
    plan = wizard.currentPage()
    assert isinstance(plan, PlanPage)
    small_plan(plan)
    hosts = session.hosts
    assert isinstance(hosts, SimulatedHosts)
    session.bus.subscribe(lambda _e: hosts.gone.add("client2"), TrialFinished)  # after the first trial
    go_next(qtbot, wizard)
    run = wizard.currentPage()
    assert isinstance(run, RunPage)
    qtbot.waitUntil(lambda: run.host_lost_question is not None and run.host_lost_question.isVisible(), timeout=30_000)
    box = run.host_lost_question
    assert box is not None and "client2 stopped answering" in box.text()
    labels = {b.text() for b in box.buttons()}
    assert labels == {"&Wait for client2", "&Go on without client2", "&Stop and put back"}
    assert box.defaultButton().text() == "&Wait for client2"  # Enter never drops a host or stops the run
    assert session.running  # nothing more runs until the admin chooses, but the run is not over
    next(b for b in box.buttons() if "without" in b.text()).click()
    qtbot.waitUntil(run.isComplete, timeout=DEMO_RUN_MS)
    finished = wizard.state.finished
    assert finished is not None and finished.state == SessionState.COMPLETE.value
    later = [t for t in session.store.trials(finished.session_id) if t.state.value == "ok"]
    assert later and "client2" not in str(later[-1].summary.get("clients", {}))


def test_a_stopped_run_names_the_whole_command_that_goes_on_with_it(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The Run page's resume command names this window's session database: run as printed, it finds the session."""
    window = to_plan(qtbot, session, tmp_path)
    wizard = window.wizard
    plan = wizard.currentPage()
    assert isinstance(plan, PlanPage)
    small_plan(plan)
    hosts = session.hosts
    assert isinstance(hosts, SimulatedHosts)
    session.bus.subscribe(lambda _e: hosts.gone.add("client2"), TrialFinished)
    go_next(qtbot, wizard)
    run = wizard.currentPage()
    assert isinstance(run, RunPage)
    qtbot.waitUntil(lambda: run.host_lost_question is not None and run.host_lost_question.isVisible(), timeout=30_000)
    next(b for b in run.host_lost_question.buttons() if "Stop" in b.text()).click()
    hosts.gone.clear()  # back while the others are put back: nothing waits out its silence
    qtbot.waitUntil(lambda: not session.running, timeout=DEMO_RUN_MS)
    sid = session.session_id
    assert sid is not None
    said = run.trial_label.text()
    command = f"nfs-tuner --db {session.store.path} sweep --resume {sid}"
    assert f"Go on later with `{command}`." in said, said
