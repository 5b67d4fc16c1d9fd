"""Latency on the wizard's faces (issue 17), over the demo's simulated hosts: the goal chosen on the Plan
page, p50/p99/p99.9 beside throughput on the Results page's ranking and in the review's tables."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.report.session_data import trial_latency, trial_latency_cells
from app.store import TrialState
from app.vocabulary import latency_text
from experiments.goals import Goal, GoalKind
from tests.unit.app.session.test_session_service import run_demo
from ui.pages.plan import PlanPage
from ui.pages.results import RANK_COLUMNS, ResultsPage
from ui.review.launch import open_review_window
from ui.review.tables import cell_texts

from .test_review_window import ScriptedDialogs
from .wizard_driver import results_page, small_plan, to_plan


def test_the_plan_page_chooses_the_goal_and_its_limit(qtbot, session, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = to_plan(qtbot, session, tmp_path)
    plan = window.wizard.currentPage()
    assert isinstance(plan, PlanPage)
    small_plan(plan)
    assert plan.goal_box.currentData() == "throughput"
    assert not plan.p99_edit.isEnabled() and not plan.load_edit.isEnabled()  # no goal of theirs chosen
    plan.goal_box.setCurrentIndex(plan.goal_box.findData("p99_cap"))
    assert plan.p99_edit.isEnabled() and not plan.load_edit.isEnabled()
    assert not plan.isComplete() and "needs a p99 limit" in plan.error_label.text()  # a limit is wanted
    plan.p99_edit.setText("fast")
    assert not plan.isComplete() and "finite number above 0" in plan.error_label.text()
    plan.p99_edit.setText("7.5")
    assert plan.isComplete() and not plan.error_label.text()
    assert session.plan(plan.choices()).goal == Goal(GoalKind.P99_CAP, p99_max_ms=7.5)
    plan.goal_box.setCurrentIndex(plan.goal_box.findData("lowest_p99"))  # the limit stays typed, but out of the plan
    assert plan.isComplete() and session.plan(plan.choices()).goal == Goal(GoalKind.LOWEST_P99)
    plan.load_edit.setText("250")
    spec = session.plan(plan.choices())
    assert spec.goal == Goal(GoalKind.LOWEST_P99, load_iops=250.0) and spec.workload("mixed").rate_iops == 250.0


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """A complete demo session judged by the lowest p99."""
    db = tmp_path_factory.mktemp("latency_faces") / "s.db"
    return db, run_demo(db, knobs={"nfsd_threads": "2, 64"}, workloads=("seq_read",), strategy="grid",
                        repetitions=2, goal="lowest_p99")  # fmt: skip


@pytest.fixture
def results(qtbot, demo_db: tuple[Path, int]) -> Iterator[ResultsPage]:  # type: ignore[no-untyped-def]
    with results_page(qtbot, *demo_db) as page:
        yield page


def test_the_results_ranking_shows_p99_beside_throughput_and_ranks_by_it(results: ResultsPage) -> None:
    view = results.view
    assert view is not None and view.goal == Goal(GoalKind.LOWEST_P99)
    table = results.ranking
    assert [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())] == list(RANK_COLUMNS)  # type: ignore[union-attr]
    p99 = cell_texts(table, RANK_COLUMNS.index("p99"))
    assert p99 == [latency_text(r.p99_ms) for r in view.ranking] and all(t.endswith(" ms") for t in p99)
    assert cell_texts(table, RANK_COLUMNS.index("p50")) == [latency_text(r.p50_ms) for r in view.ranking]
    assert cell_texts(table, RANK_COLUMNS.index("p99.9")) == [latency_text(r.p999_ms) for r in view.ranking]
    ranked = [r.p99_ms for r in view.ranking]
    assert all(x is not None for x in ranked) and ranked == sorted(ranked)  # type: ignore[type-var]  # lowest first
    assert view.ranking[0].config == {"nfsd_threads": 64}  # 2 threads queue requests: the long tail
    # the verdict stands on the p99 under this goal, and the evidence says the goal and the p99 change
    assert f"p99 {latency_text(view.p99_ms)}" in results.recommendation.text()
    assert "Goal: the lowest p99 at the plan&#x27;s own load" in results.recommendation.text()
    assert "p99 −" in results.recommendation.text().split("</b>")[0]  # the gain shown is p99's, a reduction


def test_the_review_shows_each_trials_latency_and_the_rankings(qtbot, demo_db: tuple[Path, int]) -> None:  # type: ignore[no-untyped-def]
    db, sid = demo_db
    review = open_review_window("", db, dialogs=ScriptedDialogs())  # type: ignore[arg-type]
    qtbot.addWidget(review)
    view = review.open_session(sid)
    assert view is not None
    trials = view.samples.table
    heads = [trials.horizontalHeaderItem(c).text() for c in range(trials.columnCount())]  # type: ignore[union-attr]
    columns = [heads.index(h) for h in ("p50", "p99", "p99.9")]
    for row, t in enumerate(view.samples.trials):
        cells = tuple(cell_texts(trials, c)[row] for c in columns)
        assert cells == trial_latency_cells(t)
        if t.state == TrialState.OK:
            assert trial_latency(t) is not None and all(c.endswith(" ms") for c in cells)
    (box,) = view.results.boxes
    heads = [box.ranking.horizontalHeaderItem(c).text() for c in range(box.ranking.columnCount())]  # type: ignore[union-attr]
    assert cell_texts(box.ranking, heads.index("p99")) == [latency_text(r.p99_ms) for r in box.view.ranking]
