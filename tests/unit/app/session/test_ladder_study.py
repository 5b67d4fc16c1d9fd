"""The load ladder headless (issue 17): `nfs-tuner study ladder` over the demo's simulated hosts, the knee
moving with nfsd threads, its --json, and the session it leaves for `sessions show` and the report."""

from __future__ import annotations

import asyncio
from html import escape
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.report.ladder import load_ladder
from app.session import TuningSession
from app.session.study import StudyChoice, StudyKind
from app.simulated import SimulatedHosts
from app.store import Store
from app.sweep.spec import SweepSpec
from tests.unit.app.session.study_hosts import cancel_then_resume, simulated_study_hosts, study_json, study_views
from app.sweep.ladder import ladder_steps

STEP_KEYS = {"trial", "streams_per_client", "clients", "load", "throughput_bps", "p50_ms", "p99_ms", "layers", "reason"}
LAYER_KEYS = {"nfsd_waiting", "server_cpu", "disk_util", "disk_queue", "nfsd_threads", "nic_util", "client_cpu"}


def ladder_args(db: Path, *extra: str) -> list[str]:
    return ["--db", str(db), "study", "ladder", "--server", "nfs-server", "--client", "client1", "--client", "client2",
            "--workload", "rand_read", "--max-streams", "64", "--duration", "20", *extra]  # fmt: skip


@pytest.fixture
def hosts(monkeypatch: pytest.MonkeyPatch) -> SimulatedHosts:
    return simulated_study_hosts(monkeypatch)


def run_json(db: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    return study_json(ladder_args(db, *extra), capsys)


def test_the_steps_double_up_to_the_limit() -> None:
    assert ladder_steps(64) == (1, 2, 4, 8, 16, 32, 64)
    assert ladder_steps(1) == (1,) and ladder_steps(12) == (1, 2, 4, 8, 12)
    with pytest.raises(ValueError, match="1 to 256"):
        ladder_steps(0)


def test_the_knee_moves_with_nfsd_threads(hosts: SimulatedHosts, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    few = run_json(tmp_path / "s.db", capsys, "--knob", "nfsd_threads=2")
    many = run_json(tmp_path / "s.db", capsys, "--knob", "nfsd_threads=32")
    assert few["config"] == {"nfsd_threads": 2} and many["config"] == {"nfsd_threads": 32}
    for data in (few, many):
        assert data["state"] == "complete" and data["workload"] == "rand_read" and data["revert_problems"] == []
        assert [s["load"] for s in data["steps"]] == [2, 4, 8, 16, 32, 64, 128]  # streams per client × 2 clients
        assert all(set(s) == STEP_KEYS and set(s["layers"]) == LAYER_KEYS for s in data["steps"])
        assert all(s["throughput_bps"] > 0 and s["p99_ms"] > 0 for s in data["steps"])
    # two threads: nfsd saturates early, requests wait for a thread; 32: the clients' links fill first, much later
    assert few["knee"]["layer"] == "nfsd" and few["knee"]["figure"] > 0.5
    assert many["knee"]["layer"] == "nic"
    # the simulated disk's second witness agrees: at 2 threads it is busy and holds ~one request per thread;
    # at 32 it reads as busy too (io_ticks) but holds far fewer than the threads, so the full links are named
    at_few, at_many = few["steps"][few["knee"]["step"]]["layers"], many["steps"][many["knee"]["step"]]["layers"]
    assert at_few["nfsd_threads"] == 2 and at_few["disk_util"] > 0.9 and at_few["disk_queue"] >= 0.75 * 2
    assert at_many["nfsd_threads"] == 32 and at_many["disk_util"] > 0.9 and at_many["disk_queue"] < 0.75 * 32
    assert few["knee"]["load"] < many["knee"]["load"]
    assert max(s["throughput_bps"] for s in few["steps"]) < 0.5 * max(s["throughput_bps"] for s in many["steps"])
    assert few["sentence"].startswith(f"Knee at {few['knee']['load']} streams") and "nfsd threads" in few["sentence"]


def test_without_a_knob_the_ladder_runs_at_the_hosts_own_settings_and_recommends_nothing(
        hosts: SimulatedHosts, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    db = tmp_path / "s.db"
    assert main(ladder_args(db, "--max-streams", "4")) == 0
    out = capsys.readouterr().out
    assert "Load ladder: rand_read at the hosts' own settings" in out and "No knee up to 8 streams" in out
    assert "rand_read 4 streams per client: " in out  # each trial's line names its step
    with Store(db, readonly=True) as store:
        (session,) = store.list_sessions()
        assert session.notes == "ladder" and store.recommendations(session.id) == []
        assert {dict(t.config).get("nfsd_threads") for t in store.trials(session.id)} == {None}
        assert not store.unreverted_journal()


def test_sessions_show_and_the_report_keep_the_ladder_for_offline_review(
        hosts: SimulatedHosts, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    db = tmp_path / "s.db"
    data = run_json(db, capsys, "--knob", "nfsd_threads=2")
    sid = data["session"]
    views = study_views(db, sid, tmp_path / "r.html", capsys)
    assert "Load ladder: rand_read at nfsd_threads=2" in views.shown and data["sentence"] in views.shown
    assert "Recommendation" not in views.shown  # a ladder recommends no knob
    assert f"(load ladder) knee at {data['knee']['load']} streams (nfsd)" in views.listed
    assert "recommended" not in views.listed
    assert views.shown_json["ladder"]["knee"] == data["knee"]
    html = views.html
    assert '<h2 id="ladder">Load ladder</h2>' in html and "Throughput against offered load" in html
    assert escape(data["sentence"]) in html
    assert html.count("<tr>") >= len(data["steps"]) + 1
    with Store(db, readonly=True) as store:  # the session read back alone gives the same knee
        ladder = load_ladder(store, sid)
        assert ladder is not None and ladder.to_json()["knee"] == data["knee"]


@pytest.mark.parametrize(("extra", "words"), [
    (["--knob", "nfsd_threads=2,32"], "a ladder holds nfsd_threads at one value for every step; give it one (--knob nfsd_threads=V)"),
    (["--knob", "nfsd_threads=2", "--knob", "nfsd_threads=4"], "given twice"),
    (["--workload", "small_files"], "a ladder needs a workload with streams"),
])  # fmt: skip
def test_a_bad_ladder_is_refused_before_any_host_is_touched(hosts: SimulatedHosts, tmp_path: Path, extra: list[str],
                                                            words: str, capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    assert main(ladder_args(tmp_path / "s.db", *extra)) == 2
    assert words in capsys.readouterr().err
    assert not hosts.state.server  # nothing applied


def test_a_cancelled_ladder_resumes_with_the_steps_it_had_not_climbed(tmp_path: Path) -> None:
    def plan(session: TuningSession) -> SweepSpec:
        return session.plan_study(session.choices(knobs={"nfsd_threads": "4"}, workloads=("rand_read",),
                                                  duration_s=8.0), StudyChoice(StudyKind.LADDER, max_streams=8))  # fmt: skip

    with Store(tmp_path / "s.db") as store:
        spec = asyncio.run(cancel_then_resume(store, plan))
        assert spec.ladder == (1, 2, 4, 8) and spec.plan.knobs == {"nfsd_threads": (4,)}
        trials = store.trials(1)
        ok = [t for t in trials if t.state.value == "ok"]
        assert sorted(t.workload["jobs"] for t in ok) == [1, 2, 4, 8]  # each step once, none twice
        assert all(t.config == {"nfsd_threads": 4} for t in trials)
        assert store.recommendations(1) == []
        ladder = load_ladder(store, 1)
        assert ladder is not None and [s.load for s in ladder.steps if s.throughput_bps] == [1, 2, 4, 8]
