"""One session, one recommendation: every face shows the same configuration and figure per objective.

Seen before: one session listed at 178.5 MB/s by `sessions list` and at 111.8 MB/s in the
review window, because "the stored recommendation, else compute one" was written three
times with different arguments. Here two sessions made by the product's engine over
simulated hosts — one complete (its recommendation stored), one cancelled (none stored:
computed in the session's context, with its async opt-in and its ceilings) — are read
through `sessions list`, `sessions show`, the HTML report, the review window and the
wizard's Results page.
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
from tests.unit.test_session_service import connected
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
    expected = {sid: {v.objective: (config_text(v.config), figure_text(v.figure)) for v in objective_views(store, sid)[0]}
                for sid in ids}  # fmt: skip
    assert all(expected.values()) and expected[ids[0]].keys() == {"seq_read", "seq_write"}
    assert objective_views(store, ids[0])[0][0].stored and not objective_views(store, ids[1])[0][0].stored
    # the cancelled session's computed recommendation took the session's async opt-in, as a stored one would
    assert store.get_session(ids[1]).state == SessionState.CANCELLED

    listing = _run_cli(capsys, "--db", str(db), "sessions", "list").splitlines()
    review = open_review_window("", db, dialogs=ScriptedDialogs())  # type: ignore[arg-type]
    qtbot.addWidget(review)
    session, results, _wizard = _results_page(qtbot, store)
    for sid, per_objective in expected.items():
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
        for objective, (config, figure) in per_objective.items():
            assert f"{objective} {config} {figure}" in line  # sessions list
            assert f"[{objective}] {config}: {figure}" in shown  # sessions show
            assert f"{config} — {figure}" in page  # the report
            assert f"{objective} {figure}" in row.best and boxes[objective].endswith(f"{config} — {figure}")
            results.objective.setCurrentText(objective)  # the wizard's Results
            assert f"{config} — {figure}" in html.unescape(results.recommendation.text())
    store.close()


def test_switching_the_objective_switches_recommendation_snippets_and_chart(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
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
        assert [p.snippet for p in results.snippet_views] == list(group.snippets)
        assert results.chart.bars == objective_results(store, data, objective).knobs  # type: ignore[union-attr]
        seen[objective] = (results.recommendation.text(), fstab.text, exports.text, results.chart.bars)
    read, write = seen["seq_read"], seen["seq_write"]
    # ofat from today's values: reads gain from readahead, writes from async exports
    assert data.objective("seq_read").config["read_ahead_kb"] == 4096  # type: ignore[union-attr]
    assert data.objective("seq_write").config["export_sync"] == "async"  # type: ignore[union-attr]
    assert read[0] != write[0] and read[3] != write[3]
    assert "async" not in read[2] and "async" in write[2]  # the exports line follows the objective
    store.close()
