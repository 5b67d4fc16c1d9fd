"""Phased workloads within the plan's time (issue 30): a slow phase ends at its share of the time
limit with the rate of what it completed, the later phases work on what it made, every file is
still removed, and every face says the figure is the rate of what completed. The real agent runs
on a local directory under Python 3.12 and 3.6; a phase is made slow by the agent's test hook
(``debug_slow_phase``: seconds added to each of its operations, as a slow disk adds them)."""

from __future__ import annotations

import asyncio
import io
import json
import time
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.commands.sweep import _Printer
from app.report.html_report import render_html
from app.report.session_data import load_session_data, trial_figure_text, trial_limit_text, trial_time_limited
from app.runner.agent_handle import CLEANUP_CAP_S, EXIT_CAP_S, cleanup_cap_s
from app.simulated import SimulatedHosts
from app.simulated.hosts import phase_plan
from app.store import Store, TrialState
from app.store.records import TrialRecord
from app.sweep.events import TrialFinished
from app.sweep.figures import phase_figures, phased_problem
from app.sweep.spec import PHASED, SweepSpec
from experiments.agent_protocol import AgentStream, AgentSummary
from experiments.plan import Plan, Timing
from tests.unit.experiments.test_agent_harness import leftovers, python_params, run_to_end
from tests.unit.app.session.test_session_service import connected

# one operation in flight past a deadline, and the drop of caches after a phase (a sync of the whole host, as root)
SLACK_S = 6.0  # make test runs this beside three labs, niced: a phase may wait seconds for the CPU


@pytest.fixture(params=python_params())
def python(request: pytest.FixtureRequest) -> str:
    return request.param


def _summary(run: Any) -> dict[str, Any]:
    (summary,) = run.of_type("summary")
    return summary


def test_a_slow_create_phase_ends_at_its_share_and_the_rest_work_on_what_it_made(python: str, tmp_path: Path) -> None:
    limit = 1.6
    cfg = {"mode": "small_files", "dir": str(tmp_path), "count": 5000, "file_size": 100, "interval": 0.05,
           "time_limit_s": limit, "debug_slow_phase": {"create": 0.02}}  # fmt: skip
    started = time.monotonic()
    run, code = run_to_end(python, cfg)
    took = time.monotonic() - started
    s, phases = _summary(run), _summary(run)["phases"]
    made = phases["create"]["ops"] - 1  # and the flat layout's directory
    # create is cut; on a loaded machine a later phase may run past its share too, and is then cut as well
    assert code == 0 and s["end"] == "done" and s["cut"][:1] == ["create"] and s["time_limit_s"] == limit
    assert 5 <= made < 5000  # it stopped at its share, far short of the planned files
    assert phases["create"]["seconds"] <= limit / 4 + SLACK_S
    assert phases["create"]["ops_per_s"] <= 1 / 0.02 + 1  # the rate of what it completed, at the slow disk's pace
    for name in ("stat", "read", "delete"):  # the later phases work on what create made
        assert (1 <= phases[name]["ops"] < made) if name in s["cut"] else phases[name]["ops"] == made, (name, phases)
    assert all(p["planned"] == 5000 for n, p in phases.items() if n != "create") and phases["create"]["planned"] == 5001
    assert sum(p["seconds"] for p in phases.values()) <= limit + 2 * SLACK_S and took < 30
    assert s["left"] == made - phases["delete"]["ops"] + 1  # the directory, and what a cut delete left, are the cleanup's
    assert run.of_type("cleanup")[-1]["removed"] and leftovers(tmp_path) == []


def test_a_slow_delete_phase_is_cut_and_the_cleanup_removes_the_rest(python: str, tmp_path: Path) -> None:
    # 3 s: the fast phases' shares hold beside three labs (at 1 s, read was cut too); delete needs 8 s
    cfg = {"mode": "small_files", "dir": str(tmp_path), "count": 400, "file_size": 10, "interval": 0.05,
           "time_limit_s": 3.0, "debug_slow_phase": {"delete": 0.02}}  # fmt: skip
    run, code = run_to_end(python, cfg)
    s, phases = _summary(run), _summary(run)["phases"]
    assert code == 0 and s["cut"][-1] == "delete"  # an earlier phase may be cut too on a loaded machine
    created = phases["create"]["ops"]  # the 400 files and their directory, unless a loaded machine cut it too
    assert (created == 401) != ("create" in s["cut"]) and 1 <= phases["delete"]["ops"] < created - 1
    assert s["left"] == created - phases["delete"]["ops"]
    assert run.of_type("cleanup")[-1]["removed"] and leftovers(tmp_path) == []
    # the controller waits for that cleanup as long as it takes at the delete phase's rate, beyond its usual cap
    read = AgentStream("c1").feed(json.dumps(s).encode() + b"\n")
    (summary,) = [e for e in read if isinstance(e, AgentSummary)]
    assert summary.cut == tuple(s["cut"]) and summary.left == s["left"]
    assert summary.removal_s == pytest.approx(s["left"] / (phases["delete"]["ops"] / phases["delete"]["seconds"]))


@pytest.mark.parametrize(("mode", "size", "slow", "phases"), [
    ("tree", {"files": 3000}, "extract", ["extract", "find", "remove"]),
    ("dir_scaling", {"count": 5000}, "create", ["create", "delete"]),
])  # fmt: skip
def test_tree_and_directory_scaling_end_their_slow_phase_and_remove_what_it_made(
        python: str, tmp_path: Path, mode: str, size: dict[str, int], slow: str, phases: list[str]) -> None:  # fmt: skip
    # 3 s: the fast phases' shares hold beside three labs (at 1 s every phase was cut); the slow one needs 30-50 s
    cfg = {"mode": mode, "dir": str(tmp_path), "interval": 0.05, "time_limit_s": 3.0, "debug_slow_phase": {slow: 0.01},
           **size}  # fmt: skip
    run, code = run_to_end(python, cfg)
    s = _summary(run)
    got = s["phases"]
    assert code == 0 and list(got) == phases and s["cut"] == [slow]
    assert got[slow]["ops"] < got[slow]["planned"]
    assert got[phases[-1]]["ops"] == got[slow]["ops"] - (1 if mode == "tree" else 0)  # the tree's root is the cleanup's
    assert s["left"] == 0 and leftovers(tmp_path) == []


def test_without_a_limit_every_phase_runs_to_its_end(python: str, tmp_path: Path) -> None:
    run, code = run_to_end(python, {"mode": "small_files", "dir": str(tmp_path), "count": 50, "file_size": 10})
    s = _summary(run)
    assert code == 0 and s["cut"] == [] and s["time_limit_s"] is None
    assert [p["ops"] for p in s["phases"].values()] == [51, 50, 50, 50]


def _agent(phases: dict[str, dict[str, float]], **new: Any) -> AgentSummary:
    return AgentSummary("c1", "small_files", "done", 3.0, 0, 0, 0, 0, 1.0, 5.0, 9.0, "dropped", True, False, 0.2, 0.5,
                        phases=phases, **new)  # fmt: skip


def test_a_cut_phase_weighs_as_if_it_had_done_all_its_files() -> None:
    whole = {"create": {"ops": 100, "seconds": 10.0}, "delete": {"ops": 100, "seconds": 10.0}}
    cut = {"create": {"ops": 10, "seconds": 1.0, "planned": 100}, "delete": {"ops": 10, "seconds": 1.0, "planned": 100}}
    f_whole, f_cut = phase_figures({"c1": _agent(whole)}), phase_figures({"c1": _agent(cut, time_limit_s=2.0,
                                                                                         cut=("create",))})
    assert f_whole["mean"] == pytest.approx(10.0) == f_cut["mean"]  # the same rates: the same figure
    assert "time_limited" not in f_whole and f_cut["time_limited"] == ["create"] and f_cut["time_limit_s"] == 2.0
    # a slow phase cut short does not count less than it would have: 100 fast creates, 10 of 100 slow deletes
    slow = {"create": {"ops": 100, "seconds": 1.0, "planned": 100}, "delete": {"ops": 10, "seconds": 10.0, "planned": 100}}
    assert phase_figures({"c1": _agent(slow)})["mean"] == pytest.approx(200 / (1.0 + 100.0))
    assert phased_problem(f_cut) is None


def test_an_old_summary_without_the_new_fields_still_reads() -> None:
    old = {"type": "summary", "mode": "small_files", "end": "done", "stop_reason": None, "duration": 3.4,
           "bytes_read": 0, "bytes_written": 0, "ops": 8001, "errors": 0, "lat_p50_ms": 1.0, "lat_p99_ms": 2.0,
           "lat_max_ms": 3.0, "cache_mode": "dropped", "caches_dropped": True, "direct": False, "prepare_s": 0.1,
           "cpu_s": 1.0, "phases": {"create": {"ops": 2001, "seconds": 1.2}, "stat": {"ops": 2000, "seconds": 0.3},
           "read": {"ops": 2000, "seconds": 0.9}, "delete": {"ops": 2000, "seconds": 1.0}}, "python": "3.6.15"}  # fmt: skip
    stream = AgentStream("c1")
    stream.feed(json.dumps(old).encode() + b"\n")
    s = stream.summary
    assert s is not None and not stream.garbage
    assert s.cut == () and s.left == 0 and s.time_limit_s is None and s.removal_s == 0.0 and "cut" not in s.extra
    f = phase_figures({"c1": s})
    assert f["mean"] == pytest.approx(8001 / 3.4) and "time_limited" not in f  # the old figure, unmarked
    stored = TrialRecord(1, 1, None, {"export_sync": "sync"}, {"kind": "small_files"}, 0, 0, TrialState.OK, "", 0.0,
                         1.0, {"unit": "ops/s", "mean": 2353.2})  # a session stored before the time limit  # fmt: skip
    assert trial_time_limited(stored) == () and trial_figure_text(stored) == "2,353 ops/s"
    assert cleanup_cap_s(s) == EXIT_CAP_S and cleanup_cap_s(None) == EXIT_CAP_S


@pytest.mark.parametrize("bad", [{"cut": "create"}, {"cut": ["nope"]}, {"cut": [7]}, {"left": -1}, {"left": 1.5},
                                 {"time_limit_s": "60"}, {"time_limit_s": float("inf")}])  # fmt: skip
def test_a_hosts_garbage_in_the_new_fields_is_refused(bad: dict[str, Any]) -> None:
    line = {"type": "summary", "mode": "small_files", "end": "done", "duration": 1.0, "bytes_read": 0,
            "bytes_written": 0, "ops": 1, "errors": 0, "lat_p50_ms": 1.0, "lat_p99_ms": 1.0, "lat_max_ms": 1.0,
            "cache_mode": "dropped", "caches_dropped": True, "direct": False, "prepare_s": 0.0, "cpu_s": 0.0,
            "phases": {"create": {"ops": 1, "seconds": 1.0}}, **bad}  # fmt: skip
    stream = AgentStream("c1")
    stream.feed(json.dumps(line).encode() + b"\n")
    assert stream.summary is None and stream.garbage_count == 1


def test_the_cleanup_is_waited_for_as_long_as_removing_what_is_left_takes_within_a_ceiling() -> None:
    slow = _agent({"delete": {"ops": 10, "seconds": 10.0}}, left=600)  # 1 removal a second: 600 s to go
    assert cleanup_cap_s(slow) == pytest.approx(2 * 600 + 30)
    assert cleanup_cap_s(_agent({"delete": {"ops": 1, "seconds": 100.0}}, left=10**6)) == CLEANUP_CAP_S
    no_rate = _agent({"create": {"ops": 0, "seconds": 5.0}}, left=10)
    assert no_rate.removal_s == 0.0 and cleanup_cap_s(no_rate) == EXIT_CAP_S


def test_a_sweeps_phased_trials_get_the_plans_time_and_a_study_its_size() -> None:
    timing = Timing(warmup_s=5.0, min_measure_s=15.0, max_measure_s=60.0)
    spec = SweepSpec("s", ("c",), "/srv", Plan(knobs={"nfsd_threads": (8,)}, workloads=tuple(PHASED), timing=timing))
    assert spec.phased_limit_s == 65.0
    for kind in PHASED:
        w = spec.workload(kind)
        assert w.duration_s is None and w.to_dict()["time_limit_s"] == 65.0
        assert w.to_agent_config("/m")["time_limit_s"] == 65.0
    study = SweepSpec("s", ("c",), "/srv", Plan(knobs={}, workloads=("dir_scaling",)), dirs=("flat",), entries=1000)
    assert study.workload("dir_scaling", {"layout": "flat"}).to_dict()["time_limit_s"] is None
    assert "time_limit_s" not in study.workload("dir_scaling", {"layout": "flat"}).to_agent_config("/m")


def test_the_simulated_hosts_cut_a_slow_phase_as_the_agent_does() -> None:
    fast, _ = phase_plan("small_files", 2000, 2000.0, 65.0)
    assert [p.cut for p in fast] == [False] * 4 and sum(p.seconds for p in fast) == pytest.approx(4.0)
    slow, left = phase_plan("small_files", 2000, 5.0, 60.0)
    assert [p.name for p in slow if p.cut] == ["create"] and slow[0].seconds == pytest.approx(15.0)
    assert sum(p.seconds for p in slow) == pytest.approx(60.0) and left == 0


def test_a_sync_export_on_a_slow_disk_is_measured_not_broken_and_every_face_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    db = tmp_path / "s.db"
    events: list[TrialFinished] = []

    async def go() -> int:
        with Store(db) as store:
            hosts = SimulatedHosts(speed=400.0)
            hosts.slow_path["client1"] = 0.001  # a couple of creates a second: 2,000 files would take many minutes
            session = await connected(store, hosts, ("client1",))
            session.bus.subscribe(events.append, TrialFinished)
            finished = await session.run(session.plan(session.choices(
                knobs={"nfsd_threads": "8, 64"}, workloads=("small_files",), strategy="grid", repetitions=1,
                max_repetitions=1, duration_s=8.0)))  # fmt: skip
            assert finished.state == "complete"
            return finished.session_id

    sid = asyncio.run(go())
    with Store(db, readonly=True) as store:
        trials = store.trials(sid)
        view = load_session_data(store, sid)
        html = render_html(view, store.load_session_samples(sid))
    assert trials and all(t.state == TrialState.OK for t in trials), [t.reason for t in trials]
    assert all(trial_time_limited(t) == ("create",) and t.summary["time_limit_s"] == 10.0 for t in trials)
    assert all(trial_figure_text(t).endswith(" ops/s (time-limited)") for t in trials)
    assert all(ev.limited == ("create",) and ev.value_bps is not None for ev in events)
    assert "(time-limited)" in html
    assert any("ended a phase at its share of the time limit" in e for v in view.objectives for e in v.evidence)
    assert main(["--db", str(db), "sessions", "show", str(sid), "--no-snippets"]) == 0
    assert "(time-limited)" in capsys.readouterr().out
    out = io.StringIO()
    _Printer(out, quiet=False)(events[0])
    assert "create ended at its share of the 10 s limit: the rate of what it completed" in out.getvalue()


@pytest.mark.parametrize("stored", [{"time_limited": "create"}, {"time_limited": [1, None, {"a": 1}]},
                                    {"time_limited": {"create": 1}}, {"time_limited": ["create"], "time_limit_s": "x"},
                                    {"time_limited": ["create"], "time_limit_s": float("nan")}])  # fmt: skip
def test_a_stored_summarys_garbage_reads_as_no_mark_or_a_plain_sentence(stored: dict[str, Any]) -> None:
    t = TrialRecord(1, 1, None, {}, {"kind": "small_files"}, 0, 0, TrialState.OK, "", 0.0, 1.0,
                    {"unit": "ops/s", "mean": 12.0, **stored})  # fmt: skip
    cut = trial_time_limited(t)
    assert cut in ((), ("create",))
    assert trial_figure_text(t) == ("12 ops/s (time-limited)" if cut else "12 ops/s")
    assert trial_limit_text(t) in ("", "create ended at its share of the time limit: the rate of what it completed")
