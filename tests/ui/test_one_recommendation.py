"""One session, one recommendation: every face shows the same configuration, and each objective's figure.

Seen before: one session listed at 178.5 MB/s by `sessions list` and at 111.8 MB/s in the
review window, because "the stored recommendation, else compute one" was written three
times with different arguments. Here two sessions made by the product's engine over
simulated hosts — one complete (its recommendation stored), one cancelled (none stored:
computed in the session's context, with its async opt-in and its ceilings) — are read
through `sessions list`, `sessions show`, the HTML report, the review window and the
wizard's Results page. A plan recommends one configuration for all its workloads (issue 29): only the
changes that earned their place, confirmed; each workload's figure beside it.
"""

from __future__ import annotations

import asyncio
import html
from pathlib import Path

import pytest

from app.cli import main
from app.vocabulary import config_text, figure_text
from app.report import objective_views
from app.session import TuningSession
from app.session.results import objective_results
from app.simulated import SimulatedHosts
from app.store import SessionState, Store
from tests.unit.app.session.test_session_service import connected
from ui.bridge import Bridge
from ui.pages.results import ResultsPage
from ui.review.launch import open_review_window
from ui.wizard import TuningWizard

from .test_review_window import ScriptedDialogs

CHOICES = {"knobs": {"read_ahead_kb": "128, 4096", "export_sync": "sync, async"}, "allow_async": True,
           "workloads": ("seq_read", "seq_write"), "strategy": "ofat", "repetitions": 2}  # fmt: skip


def _sessions(db: Path) -> tuple[int, int]:
    """(a complete session, a cancelled one), both swept with the async opt-in."""

    async def go() -> tuple[int, int]:
        with Store(db) as store:
            session = await connected(store, SimulatedHosts(speed=400.0))
            await session.baseline(["seq_read"])
            done = await session.run(session.plan(session.choices(**CHOICES)))
            run = asyncio.ensure_future(session.run(session.plan(session.choices(**CHOICES))))
            while sum(t.state.value == "ok" for t in store.trials(done.session_id + 1)) < 4 \
                    if len(store.list_sessions()) > 1 else True:
                await asyncio.sleep(0.01)
            await session.cancel_and_revert()
            cancelled = await run
            assert (done.state, cancelled.state) == ("complete", "cancelled")
            assert store.recommendations(done.session_id) and not store.recommendations(cancelled.session_id)
            return done.session_id, cancelled.session_id

    return asyncio.run(go())


def _results_page(qtbot, store: Store) -> tuple[TuningSession, ResultsPage, TuningWizard]:  # type: ignore[no-untyped-def]
    """The wizard's Results page on ``store``, as after a run."""
    session = TuningSession(store, SimulatedHosts())
    bridge = Bridge(session.bus)
    wizard = TuningWizard(session, bridge)
    qtbot.addWidget(wizard)
    wizard.destroyed.connect(bridge.close)
    results = wizard.page_of(ResultsPage)
    assert isinstance(results, ResultsPage)
    return session, results, wizard


def _run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_every_face_shows_the_same_configuration_and_figure(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                            capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    db = tmp_path / "s.db"
    ids = _sessions(db)
    store = Store(db)
    views = {sid: objective_views(store, sid)[0] for sid in ids}
    assert all(views.values()) and {v.objective for v in views[ids[0]]} == {"seq_read", "seq_write"}
    assert views[ids[0]][0].stored and not views[ids[1]][0].stored
    assert store.get_session(ids[1]).state == SessionState.CANCELLED
    for sid in ids:  # one configuration for the plan: the same on every objective
        assert len({config_text(v.config) for v in views[sid]}) == 1 and all(v.plan is not None for v in views[sid])
    # the complete session confirmed a change: readahead for reads and async for writes, combined
    assert views[ids[0]][0].plan.status == "confirmed"  # type: ignore[union-attr]
    assert views[ids[0]][0].config["read_ahead_kb"] == 4096 and views[ids[0]][0].config["export_sync"] == "async"

    listing = _run_cli(capsys, "--db", str(db), "sessions", "list").splitlines()
    review = open_review_window("", db, dialogs=ScriptedDialogs())  # type: ignore[arg-type]
    qtbot.addWidget(review)
    session, results, _wizard = _results_page(qtbot, store)
    for sid in ids:
        plan = views[sid][0].plan
        assert plan is not None
        line = next(x for x in listing if x.startswith(f"{sid:>4}  "))
        shown = _run_cli(capsys, "--db", str(db), "sessions", "show", str(sid), "--no-snippets")
        report = _run_cli(capsys, "--db", str(db), "report", str(sid), "--to", str(tmp_path / f"{sid}.html"))
        page = html.unescape((tmp_path / f"{sid}.html").read_text(encoding="utf-8"))
        assert "written to" in report
        row = next(r for r in review.visible_rows if r.id == sid)
        view = review.open_session(sid)
        assert view is not None
        boxes = {b.view.objective: b.verdict.text() for b in view.results.boxes}
        results.show_results(session.results(sid))
        assert (plan.change_text() or "keep today's settings") in line  # sessions list: the change, once
        assert plan.evidence[0] in shown  # sessions show: what to do, once
        for v in views[sid]:
            figure, verdict = figure_text(v.figure), v.verdict()
            assert f"{v.objective} {figure}" in line and f"[{v.objective}]: {figure}" in shown
            assert verdict in page  # the report
            assert f"{v.objective} {figure}" in row.best and boxes[v.objective] == verdict  # the review window
            results.objective.setCurrentText(v.objective)  # the wizard's Results
            assert verdict in html.unescape(results.recommendation.text())
    store.close()


def test_switching_the_objective_switches_the_figures_and_chart_not_the_configuration(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "s.db"
    done, _ = _sessions(db)
    store = Store(db)
    session, results, _wizard = _results_page(qtbot, store)
    data = session.results(done)
    results.show_results(data)
    seen = {}
    for objective in ("seq_read", "seq_write"):
        results.objective.setCurrentText(objective)
        view = data.objective(objective)
        group = data.snippet_group(objective)
        assert view is not None and group is not None
        fstab = next(p.snippet for p in results.snippet_views if p.snippet.key == "fstab")
        exports = next(p.snippet for p in results.snippet_views if p.snippet.key == "exports")
        # the same settings; the fio job and the playbook's title name the objective they were measured for
        assert [p.snippet.key for p in results.snippet_views] == [sn.key for sn in group.snippets]
        if objective == group.objectives[0]:
            assert [p.snippet for p in results.snippet_views] == list(group.snippets)
        assert results.chart.bars == objective_results(store, data, objective).knobs  # type: ignore[union-attr]
        seen[objective] = (results.recommendation.text(), fstab.text, exports.text, results.chart.bars)
    read, write = seen["seq_read"], seen["seq_write"]
    # one configuration: readahead, which reads gain from, and async, which writes gain from, both in it
    assert data.objective("seq_read").config == data.objective("seq_write").config  # type: ignore[union-attr]
    assert read[1:3] == write[1:3] and "async" in read[2]  # one set of snippets, the exports line async
    assert read[0] != write[0] and read[3] != write[3]  # each objective's figures and chart its own
    assert data.snippet_group("seq_read") is data.snippet_group("seq_write")
    store.close()
