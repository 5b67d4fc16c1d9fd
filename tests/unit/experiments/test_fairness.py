"""Fairness between clients (issue 17): the rule (experiments.fairness), hostile figures, a sweep over the
demo's simulated hosts that stores the figures and publishes them as each trial ends, and the faces that
show them only beyond the noise (the sweep's progress lines among them)."""

from __future__ import annotations

import asyncio
import io
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.commands.sweep import _Printer
from app.recommend.evidence import fairness_lines
from app.report.html_report import render_html
from app.report.session_data import load_session_data, trial_fairness, trial_fairness_cell
from app.simulated import SimulatedHosts
from app.store import Store, TrialState
from app.sweep.events import TrialFinished
from app.vocabulary import clients_note, fairness_cell, fairness_sentences, ratio_text, shares_text
from experiments.agent_protocol import AgentSummary
from experiments.fairness import MIN_NOISE_CV, Fairness, config_fairness, fairness, pooled_cv, run_fairness
from experiments.latency import Latency
from experiments.samples import Sample
from tests.unit.app.session.test_session_service import connected


def test_equal_clients_are_not_shown() -> None:
    f = fairness({"client1": 100.0, "client2": 103.0, "client3": 98.0}, 0.05)
    assert f is not None and not f.uneven and not f.late
    assert math.isclose(sum(f.shares.values()), 1.0) and f.jain > 0.999 and f.ratio is not None and f.ratio < 1.06
    assert fairness_lines(config_fairness([f, f])) == []


def test_a_client_at_a_third_is_shown_with_its_share_and_the_rule() -> None:
    f = fairness({"client1": 200.0, "client2": 100.0}, 0.05)
    assert f is not None and f.uneven and f.lowest == "client2"
    assert math.isclose(f.shares["client2"], 1 / 3) and math.isclose(f.ratio or 0, 2.0) and math.isclose(f.jain, 0.9)
    (line,) = fairness_lines(config_fairness([f, f]))
    assert "client1 67 %, client2 33 %" in line and "client2 lowest" in line
    assert "beyond the noise in 2 of 2 run(s)" in line and "pooled per-interval CV" in line and "5.0 %" in line


def test_wide_noise_hides_the_same_difference() -> None:
    f = fairness({"client1": 200.0, "client2": 100.0}, 0.3)  # 1/3 is within 1/2 × (1 ± 0.6)
    assert f is not None and not f.uneven and fairness_lines(config_fairness([f])) == []
    unknown = fairness({"client1": 200.0, "client2": 100.0}, None)  # no measurable noise: no claim
    assert unknown is not None and not unknown.uneven and unknown.noise_cv is None


def test_a_tiny_noise_is_floored() -> None:
    f = fairness({"client1": 101.0, "client2": 99.0}, 0.0)
    assert f is not None and f.noise_cv == MIN_NOISE_CV and not f.uneven


def test_fixed_size_work_compares_first_and_last_done() -> None:
    late = fairness({"a": 1000, "b": 1000}, 0.05, "ops", {"a": 10.0, "b": 21.0})
    assert late is not None and late.late and not late.uneven
    assert (late.first_done_s, late.last_done_s) == (10.0, 21.0) and math.isclose(late.done_ratio or 0, 2.1)
    (line,) = fairness_lines(config_fairness([late]))
    assert "the last client was done 2.1× after the first" in line and "1 + 2 × that CV" in line
    close = fairness({"a": 1000, "b": 1000}, 0.05, "ops", {"a": 10.0, "b": 10.5})
    assert close is not None and not close.late
    unfinished = fairness({"a": 1000, "b": 1000}, 0.05, "ops", {"a": 10.0, "b": 0.0})  # b never said: no ratio
    assert unfinished is not None and unfinished.done_ratio is None and not unfinished.late


def test_across_runs_only_a_consistent_difference_is_shown() -> None:
    uneven = fairness({"client1": 200.0, "client2": 100.0}, 0.05)
    flipped = fairness({"client1": 100.0, "client2": 200.0}, 0.05)
    even = fairness({"client1": 100.0, "client2": 100.0}, 0.05)
    assert fairness_lines(config_fairness([uneven, even])) == []  # one run of two: not consistent
    assert fairness_lines(config_fairness([uneven, flipped])) == []  # a different client behind each time
    assert fairness_lines(config_fairness([None, uneven, None]))  # runs without figures do not count
    assert config_fairness([None, None]) is None and fairness_lines(None) == []


BAD: list[Any] = [None, "12", float("nan"), float("inf"), -5.0, True, [], {}, 1e308]


@pytest.mark.parametrize("bad", BAD)
def test_hostile_per_client_figures_never_crash(bad: Any) -> None:
    f = fairness({"client1": bad, "client2": 100.0}, bad, "ops", {"client1": bad, "client2": 5.0})
    assert f is None or (all(0 <= s <= 1 for s in f.shares.values()) and 0 < f.jain <= 1
                         and (f.ratio is None or math.isfinite(f.ratio)))  # fmt: skip
    assert fairness({"client1": bad, "client2": bad}, 0.05) is None or bad == 1e308
    assert Fairness.from_json(bad) is None
    assert Fairness.from_json({"shares": {"a": bad, "b": 1}, "ratio": bad, "jain": bad, "uneven": bad}) is not None
    assert pooled_cv([[bad, bad, bad], []]) is None or bad == 1e308
    if f is not None:  # what is stored reads back the same, and JSON has no inf or nan
        assert Fairness.from_json(json.loads(json.dumps(f.to_json(), allow_nan=False))) == f


def test_one_client_or_nothing_moved_has_no_fairness() -> None:
    assert fairness({"client1": 100.0}, 0.05) is None and fairness({}, 0.05) is None
    assert fairness({"a": 0, "b": 0}, 0.05) is None
    zero = fairness({"a": 0, "b": 10}, 0.05)
    assert zero is not None and zero.ratio is None and zero.uneven and fairness_cell(zero.ratio, zero.jain) == "—, Jain 0.50"


def _summary(client: str, phases: dict[str, dict[str, float]] | None = None) -> AgentSummary:
    return AgentSummary(client, "seq_read", "done", 10.0, 10**9, 0, 100, 0, 1.0, 2.0, 3.0, "warm", False, False, 0.1,
                        0.2, phases=phases or {})  # fmt: skip


def test_a_run_reads_bytes_after_the_warm_up_and_phases_for_fixed_size_work() -> None:
    samples = [Sample(c, t / 4, 0.25, bytes_read=int(rate * (1 + 0.01 * (t % 3)))) for t in range(1, 41)
               for c, rate in (("client1", 2e6), ("client2", 1e6))]  # fmt: skip
    samples.append(Sample("client1", 0.25, 0.25, bytes_read=10**12))  # a warm-up burst: left out
    samples.append(Sample("stranger", 5.0, 0.25, bytes_read=10**12))  # not a client of the run: left out
    f = run_fairness({"client1": _summary("client1"), "client2": _summary("client2"), "gone": None}, samples,
                     phased=False, warmup_s=2.0)  # fmt: skip
    assert f is not None and set(f.shares) == {"client1", "client2"} and f.uneven
    assert math.isclose(f.shares["client2"], 1 / 3, rel_tol=0.01) and f.noise_cv == MIN_NOISE_CV
    phases = {"create": {"ops": 500.0, "seconds": 5.0}, "stat": {"ops": 500.0, "seconds": float("nan")}}
    slow = {"create": {"ops": 500.0, "seconds": 12.0}, "stat": {"ops": 500.0, "seconds": -1}}
    p = run_fairness({"a": _summary("a", phases), "b": _summary("b", slow)}, [], phased=True)
    assert p is not None and p.basis == "ops" and not p.uneven and p.noise_cv is None  # no samples: no noise
    assert (p.first_done_s, p.last_done_s) == (5.0, 12.0) and not p.late


def test_the_vocabulary_words_fairness() -> None:
    assert shares_text({"b": 0.31, "a": 0.69}) == "a 69 %, b 31 %"
    assert ratio_text(2.126) == "2.1×" and ratio_text(12.4) == "12×" and ratio_text(None) == "—"
    assert ratio_text(float("inf")) == "—"
    assert fairness_cell(2.2, 0.87, 2.1) == "2.2×, Jain 0.87, last done 2.1× after first"
    assert fairness_cell(None, None) == "—"
    even = fairness({"a": 100.0, "b": 101.0}, 0.05)
    assert clients_note(even) is None and clients_note(None) is None and fairness_sentences(even) == []
    assert clients_note(fairness({"a": 200.0, "b": 100.0}, 0.05)) == "clients 2.0×, Jain 0.90"


def test_the_sweeps_progress_line_adds_the_clients_only_beyond_the_noise() -> None:
    out = io.StringIO()
    printer = _Printer(out, quiet=False)
    latency = Latency(1000, 1.0, 4.0, 9.0, 12.0, {})
    uneven = fairness({"client1": 200.0, "client2": 100.0}, 0.05)
    late = fairness({"a": 1000, "b": 1000}, 0.05, "ops", {"a": 10.0, "b": 21.0})
    even = fairness({"client1": 100.0, "client2": 101.0}, 0.05)
    for tid, fair in enumerate((uneven, late, even, None), start=1):
        printer(TrialFinished(1, tid, {"nfsd_threads": 8}, "seq_read", "ok", 112.3e6, latency=latency, fairness=fair))
    head, lat = "seq_read nfsd_threads=8: 112.3 MB/s", "(p50 1.00 ms, p99 4.00 ms, p99.9 9.00 ms)"
    assert out.getvalue().splitlines() == [
        f"trial 1 {head} {lat}, clients 2.0×, Jain 0.90",  # the words of `sessions show` and the report's cell
        f"trial 2 {head} {lat}, clients 1.0×, Jain 1.00, last done 2.1× after first",
        f"trial 3 {head} {lat}",  # even clients add nothing
        f"trial 4 {head} {lat}",
    ]


Sessions = tuple[Path, int, int, dict[int, list[TrialFinished]]]  # db, even, slow, each one's trial events


def _sweep(db: Path, slow_path: dict[str, float], published: dict[int, list[TrialFinished]]) -> int:
    async def go() -> int:
        with Store(db) as store:
            hosts = SimulatedHosts(speed=400.0)
            hosts.slow_path.update(slow_path)
            session = await connected(store, hosts)
            events: list[TrialFinished] = []
            session.bus.subscribe(events.append, TrialFinished)
            finished = await session.run(session.plan(session.choices(
                knobs={"nfsd_threads": "8, 64"}, workloads=("seq_read",), strategy="grid", repetitions=2)))
            assert finished.state == "complete"
            published[finished.session_id] = events
            return finished.session_id

    return asyncio.run(go())


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Sessions:
    db = tmp_path_factory.mktemp("fairness") / "s.db"
    published: dict[int, list[TrialFinished]] = {}
    return db, _sweep(db, {}, published), _sweep(db, {"client2": 0.5}, published), published


def test_a_sweep_over_simulated_hosts_stores_each_trials_fairness(sessions: Sessions) -> None:
    db, even_sid, slow_sid, events = sessions
    with Store(db, readonly=True) as store:
        even = [trial_fairness(t) for t in store.trials(even_sid) if t.state == TrialState.OK]
        slow = [trial_fairness(t) for t in store.trials(slow_sid) if t.state == TrialState.OK]
        stored = {t.id: trial_fairness(t) for sid in (even_sid, slow_sid) for t in store.trials(sid)}
    assert even and all(f is not None and not f.uneven and abs(f.shares["client1"] - 0.5) < 0.02 for f in even)
    assert slow and all(f is not None and f.uneven and f.lowest == "client2" for f in slow)
    assert all(f is not None and abs(f.shares["client2"] - 1 / 3) < 0.02 for f in slow)
    # each trial's event carried the figures it stored, so the live faces need not read the store
    published = {ev.trial_id: ev.fairness for sid in (even_sid, slow_sid) for ev in events[sid]}
    assert published == stored and all(f is not None for f in published.values())


def test_the_faces_show_fairness_only_beyond_the_noise(sessions: Sessions,
                                                       capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    db, even_sid, slow_sid, _ = sessions
    with Store(db, readonly=True) as store:
        views = {sid: load_session_data(store, sid) for sid in (even_sid, slow_sid)}
        html = {sid: render_html(views[sid], store.load_session_samples(sid)) for sid in views}
        cells = {sid: {trial_fairness_cell(t) for t in store.trials(sid) if t.state == TrialState.OK} for sid in views}
    (slow_rec,) = views[slow_sid].objectives
    (line,) = [e for e in slow_rec.evidence if e.startswith("Clients' shares")]
    assert re.search(r"client1 67 %, client2 33 %, client2 lowest: beyond the noise in (\d+) of \1 run\(s\)", line), line
    assert "shares of the total under it" in html[slow_sid] and "shares of the total" not in html[even_sid]
    assert "<th>Fairness</th>" in html[slow_sid] and cells[even_sid] == {"even"}
    assert cells[slow_sid] and all(re.fullmatch(r"[12]\.\d×, Jain 0\.(89|90|91)", c) for c in cells[slow_sid])
    assert all(f"<td>{c}</td>" in html[slow_sid] for c in cells[slow_sid])
    assert main(["--db", str(db), "sessions", "show", str(slow_sid), "--no-snippets"]) == 0
    text = capsys.readouterr().out
    assert all(f", clients {c}" in text for c in cells[slow_sid]) and "client2 lowest" in text
    assert main(["--db", str(db), "sessions", "show", str(even_sid), "--json", "--no-snippets"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert all(t["fairness"] is not None and t["fairness"]["uneven"] is False  # --json carries the figures always
               for t in shown["trials"] if t["state"] == "ok")  # fmt: skip
