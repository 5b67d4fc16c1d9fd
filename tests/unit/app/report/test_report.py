"""The HTML report and the Qt-free review model on sessions fabricated through the Store API."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from app.report import compare_sessions, load_session_data, render_html, workload_table, write_report
from app.report.session_data import objective_views, trial_mean
from app.report.svg import nice_ticks, reduce_minmax
from app.store import SessionState, Store, TrialState
from app.vocabulary import figure_text
from tests.fabricate_session import Recipe, fabricate_session

SMALL = Recipe(samples_per_trial=24)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "s.db") as s:
        yield s


def _html(store: Store, sid: int) -> str:
    return render_html(load_session_data(store, sid), store.load_session_samples(sid))


def test_report_holds_tables_recommendation_plots_snippets_facts_and_journal(store: Store, tmp_path: Path) -> None:
    sid = fabricate_session(store, SMALL)
    path = write_report(store, sid, tmp_path / "out" / "report.html")
    html = path.read_text(encoding="utf-8")
    # the bonnie++-style table: one row per configuration, two columns (mean ± CI, ops/s) per workload
    table = re.search(r'<table class="results">(.*?)</table>', html, re.S)
    assert table is not None
    assert '<th colspan="2">seq_write</th><th colspan="2">seq_read</th>' in table.group(1)
    assert table.group(1).count("<th>Mean (95 % CI)</th><th>ops/s</th>") == 2 and " ± " in table.group(1)
    assert table.group(1).count("<tr>") == 2 + 6  # two header rows, six configurations
    assert "nfsd_threads=32, rsize=1048576" in table.group(1)
    # the recommendation with its evidence and ranking
    data = load_session_data(store, sid)
    read = data.objective("seq_read")
    assert read is not None and read.stored and read.changed
    assert f"Change to: nfsd_threads=32, rsize=1048576 — {figure_text(read.figure)}" in html
    assert "Recommended for seq_read" in html and "beyond the run-to-run noise" in html
    assert html.count('<table class="ranking">') == 2
    # plots: over time per workload, against each knob per objective, with CI bars
    assert html.count('<svg class="chart"') == 2 + 4
    assert "<polyline" in html and 'class="ci"' in html
    # snippets in pre blocks, safety notes, host facts as they were, the journal
    assert re.search(r'<pre class="snippet">[^<]*threads=32', html)
    assert "rsize=1048576" in html and "/etc/fstab" in html
    assert '<h2 id="safety">' in html and "fresh mount" in html
    assert "lab-server" in html and "10.213.7.10/24" in html and "raid5" in html
    journal = re.search(r'<table class="journal">(.*?)</table>', html, re.S)
    assert journal is not None and journal.group(1).count("reverted") == len(store.journal(sid)) > 0
    assert "lab-client2: the load agent ended without a summary" in html  # the broken trial is reported


def test_report_is_self_contained(store: Store) -> None:
    html = _html(store, fabricate_session(store, SMALL))
    lowered = html.lower()
    for needle in ("http://", "https://", "src=", "href=", "<script", "<link", "url(", "@import", "<img", "<iframe"):
        assert needle not in lowered, needle
    # the browser is told to load nothing at all (the attribute's quotes are escaped)
    assert 'http-equiv="Content-Security-Policy" content="default-src &#x27;none&#x27;;' in html
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")


def test_everything_stored_is_escaped(store: Store) -> None:
    evil = '<script>alert("x")</script>'
    sid = fabricate_session(store, Recipe(samples_per_trial=8, repetitions=2, notes=evil,
                                          clients=("client&<b>",), knobs={"rsize": (65536, 1048576)}))
    html = _html(store, sid)
    assert "<script" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "client&amp;&lt;b&gt;" in html


def test_results_table_cells_are_means_of_the_ok_trials(store: Store) -> None:
    sid = fabricate_session(store, SMALL)
    trials = store.trials(sid)
    table = workload_table(trials)
    assert table.workloads == ("seq_write", "seq_read")
    row = next(i for i, c in enumerate(table.configs) if c == {"rsize": 262144, "nfsd_threads": 32})
    cell = table.cell(row, "seq_read")
    expected = [trial_mean(t) for t in trials if t.config == table.configs[row]
                and t.workload["kind"] == "seq_read" and t.state == TrialState.OK]
    assert cell is not None and cell.n == 3 == len(expected)
    assert cell.mean == pytest.approx(np.mean(expected)) and cell.unit == "B/s"
    assert cell.half_width is not None and cell.half_width > 0
    assert cell.ops is not None and cell.ops > 0


def test_without_a_stored_recommendation_it_is_computed_and_said_so(store: Store) -> None:
    sid = fabricate_session(store, Recipe(samples_per_trial=8, store_recommendation=False,
                                          state=SessionState.INTERRUPTED))
    data = load_session_data(store, sid)
    assert data.objectives and not any(o.stored for o in data.objectives)
    assert any("computed now" in n for n in data.notes)
    assert {v.objective for v in objective_views(store, sid, telemetry=False)[0]} == {"seq_read", "seq_write"}
    assert "computed now" in render_html(data, store.load_session_samples(sid))


def test_comparison_per_objective_and_configuration(store: Store) -> None:
    before = fabricate_session(store, Recipe(samples_per_trial=8, seed=1))
    after = fabricate_session(store, Recipe(samples_per_trial=8, seed=2, speed=1.2,
                                            knobs={"rsize": (65536, 262144, 1048576, 2097152), "nfsd_threads": (8, 32)}))
    rows = compare_sessions(store.trials(before), store.trials(after))
    best_read = next(r for r in rows if r.objective == "seq_read" and r.label == "best")
    assert best_read.beyond_noise and best_read.diff is not None and best_read.diff > 0
    assert best_read.rel == pytest.approx(0.2, abs=0.08)
    assert best_read.verdict == "B faster, beyond noise"
    only_b = [r for r in rows if r.objective == "seq_read" and "rsize=2097152" in r.label]
    assert len(only_b) == 2 and all(r.verdict == "only in B" and r.a.n == 0 and r.b.n == 3 for r in only_b)
    # every configuration of each objective, plus one "best" row per objective
    assert len([r for r in rows if r.objective == "seq_write"]) == 1 + 8

    same = compare_sessions(store.trials(before), store.trials(before))
    assert all(r.diff == 0 and not r.beyond_noise and r.verdict == "within noise" for r in same)


def test_svg_reduction_keeps_dips_and_ticks_are_round() -> None:
    x = np.arange(10_000, dtype=float)
    y = np.full(10_000, 100.0)
    y[5_123] = 3.0
    rx, ry = reduce_minmax(x, y, 200)
    assert len(rx) <= 400 and 3.0 in ry and 5_123.0 in rx
    assert np.all(np.diff(rx) >= 0)
    assert nice_ticks(0, 157) == [0, 50, 100, 150]
    assert nice_ticks(0, 1.2) == pytest.approx([0, 0.5, 1.0])
