"""A load ladder and a directory study chosen, run and shown in the wizard, on the core over simulated hosts."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWizard

from app.report.dirs import load_dirs
from app.report.ladder import load_ladder
from app.session.study import StudyKind
from app.store import SessionState
from app.sweep.events import SweepFinished
from app.sweep.spec import LOOPING
from ui.pages.plan import PlanPage
from ui.pages.results import ResultsPage
from ui.pages.run import RunPage
from ui.review.study_views import DirsView, LadderView

from tests.fabricate_session import fabricate_session

from .wizard_driver import go_next, to_plan


def _plan(qtbot, session, tmp_path) -> tuple[QWizard, PlanPage]:  # type: ignore[no-untyped-def]
    wizard = to_plan(qtbot, session, tmp_path).wizard
    plan = wizard.currentPage()
    assert isinstance(plan, PlanPage)
    return wizard, plan


def _run(qtbot, wizard: QWizard) -> tuple[RunPage, SweepFinished]:  # type: ignore[no-untyped-def]
    """Start the plan (confirmed) and wait for the run to complete."""
    go_next(qtbot, wizard)
    run = wizard.currentPage()
    assert isinstance(run, RunPage)
    qtbot.waitUntil(run.isComplete, timeout=60_000)
    finished = wizard.state.finished
    assert finished is not None and finished.state == SessionState.COMPLETE.value
    return run, finished


def _checked(plan: PlanPage) -> list[str]:
    return [name for name, check in plan.checks.items() if check.isChecked()]


def test_a_study_holds_knobs_at_one_value_and_the_sweep_comes_back_as_it_was(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _wizard, plan = _plan(qtbot, session, tmp_path)
    plan.edits["nfsd_threads"].setText("8, 64")
    sweep_knobs, sweep_workloads = _checked(plan), plan.choices().workloads
    assert sweep_knobs and plan.strategy_box.isVisibleTo(plan)

    plan.study_fields.set_kind(StudyKind.LADDER)
    assert _checked(plan) == []  # a study starts from the hosts' own settings
    assert plan.table.horizontalHeaderItem(0).text() == "Hold" and plan.table.horizontalHeaderItem(4).text() == "Value to hold"
    assert not plan.strategy_box.isVisibleTo(plan) and not plan.goal_box.isVisibleTo(plan)
    assert plan.study_fields.streams.isVisibleTo(plan) and not plan.study_fields.entries.isVisibleTo(plan)
    (workload,) = plan.choices().workloads  # a ladder climbs one workload, one with streams
    assert workload in LOOPING
    plan.study_fields.streams.setValue(8)
    assert plan.isComplete() and plan.estimate.text().startswith("4 trials")  # 1, 2, 4, 8 streams per client
    plan.checks["nfsd_threads"].setChecked(True)
    assert not plan.isComplete()
    assert "a ladder holds nfsd_threads at one value for every step" in plan.error_label.text()
    plan.edits["nfsd_threads"].setText("4")
    assert plan.isComplete() and plan.choices().knobs == {"nfsd_threads": "4"}
    spec = session.plan_study(plan.choices(), plan.study_fields.study())
    assert spec.ladder == (1, 2, 4, 8) and session.preview(spec).estimate.trials == 4  # what the confirmation says

    plan.opt_in_boxes["restart"].click()  # a yes during a study enables the knob; it is held only when checked
    qtbot.waitUntil(lambda: plan.warnings.get("restart") is not None and plan.warnings["restart"].isVisible())
    plan.warnings["restart"].button(QMessageBox.StandardButton.Yes).click()
    assert plan.checks["max_block_size"].isEnabled() and not plan.checks["max_block_size"].isChecked()
    assert plan.isComplete()

    plan.study_fields.set_kind(StudyKind.DIRS)  # from one study to another the held knobs stay
    assert plan.choices().knobs == {"nfsd_threads": "4"}
    assert plan.choices().workloads == ("dir_scaling",) and not plan.workload_list.isEnabled()
    assert plan._checked_workloads() == ("dir_scaling",)  # what the list shows is what runs
    assert plan.study_fields.entries.isVisibleTo(plan) and not plan.study_fields.streams.isVisibleTo(plan)
    assert plan.isComplete() and plan.estimate.text().startswith("2 trials")  # flat and hashed
    assert "creates/s per client" in plan.estimate.text()

    plan.study_fields.set_kind(StudyKind.SWEEP)  # the sweep as it was, with the knob the yes allowed
    assert _checked(plan) == sorted([*sweep_knobs, "max_block_size"], key=list(plan.checks).index)
    assert plan.edits["nfsd_threads"].text() == "8, 64" and plan.choices().workloads == sweep_workloads
    assert plan.table.horizontalHeaderItem(0).text() == "Sweep" and plan.strategy_box.isVisibleTo(plan)
    assert plan.workload_list.isEnabled() and plan.isComplete()


def test_a_ladder_runs_from_the_wizard_and_its_results_are_the_knee(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    wizard, plan = _plan(qtbot, session, tmp_path)
    plan.study_fields.set_kind(StudyKind.LADDER)
    plan.study_fields.streams.setValue(4)
    plan.checks["nfsd_threads"].setChecked(True)
    plan.edits["nfsd_threads"].setText("4")
    run, finished = _run(qtbot, wizard)
    assert run.progress.maximum() == 3  # 1, 2, 4 streams per client
    assert "4 streams per client, nfsd_threads=4" in run.strip.item(2).text()  # each tile names its step
    trials = session.store.trials(finished.session_id)
    assert sorted(t.workload["jobs"] for t in trials) == [1, 2, 4]
    assert all(t.config == {"nfsd_threads": 4} for t in trials)
    assert not session.store.unreverted_journal()
    assert load_ladder(session.store, finished.session_id) is not None
    go_next(qtbot, wizard)
    results = wizard.currentPage()
    assert isinstance(results, ResultsPage)
    assert isinstance(results.study, LadderView) and results.tabs.currentWidget() is results.study
    assert not results.rec_box.isVisibleTo(results)  # a ladder recommends no knob
    assert [results.tabs.isTabVisible(i) for i in range(results.tabs.count())] == [True, False, False, False]
    assert "curve" in results.header.subtitle.text()


def test_a_directory_study_runs_from_the_wizard_and_a_sweep_shown_after_it_has_its_ranking_back(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    wizard, plan = _plan(qtbot, session, tmp_path)
    plan.study_fields.set_kind(StudyKind.DIRS)
    plan.study_fields.entries.setValue(20_000)
    plan.study_fields.layouts.setCurrentIndex(plan.study_fields.layouts.findText("flat"))
    run, finished = _run(qtbot, wizard)
    result = load_dirs(session.store, finished.session_id)
    assert result is not None and {c.layout for c in result.curves} == {"flat"}  # a curve per client
    assert all(c.points[-1].entries == 20_000 for c in result.curves)
    assert "flat layout, 20,000 entries" in run.strip.item(0).text()
    go_next(qtbot, wizard)
    results = wizard.currentPage()
    assert isinstance(results, ResultsPage)
    assert isinstance(results.study, DirsView) and not results.rec_box.isVisibleTo(results)
    # The same page showing a sweep's session: the study's tab goes, the sweep's panes come back.
    sweep = fabricate_session(session.store)
    results.show_results(session.results(sweep))
    assert results.study is None and results.rec_box.isVisibleTo(results)
    assert all(results.tabs.isTabVisible(i) for i in range(results.tabs.count())) and results.tabs.count() == 3
    assert results.ranking.rowCount() > 0 and "Ranked" in results.header.subtitle.text()
