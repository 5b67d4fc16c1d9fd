"""Directory scaling headless (issue 17): `nfs-tuner study dirs` over the demo's simulated hosts, a flat
directory's create rate collapsing where a hashed one holds, its --json, and the session it leaves for
`sessions show`/`list`, the report and a resume."""

from __future__ import annotations

import asyncio
from html import escape
from pathlib import Path
from typing import Any

import pytest

from app.cli import build_parser, main
from app.commands.study import dirs_choices
from app.report.dirs import load_dirs
from app.session import TuningSession
from app.session import PlanChoices, Where
from app.session.study import (PLANNED_CREATES_PER_S, StudyChoice, StudyKind, as_study, build_study, spec_estimate,
                               study_problems)  # fmt: skip
from app.simulated import SimulatedHosts
from app.store import Store
from app.sweep.spec import SweepSpec
from tests.unit.app.session.study_hosts import cancel_then_resume, simulated_study_hosts, study_json, study_views

CURVE_KEYS = {"trial", "layout", "client", "reason", "points", "collapse"}
COLLAPSE_KEYS = {"entries", "share", "early_rate", "end_share", "last_entries"}


def dirs_args(db: Path, *extra: str) -> list[str]:
    return ["--db", str(db), "study", "dirs", "--server", "nfs-server", "--client", "client1", *extra]


@pytest.fixture
def hosts(monkeypatch: pytest.MonkeyPatch) -> SimulatedHosts:
    return simulated_study_hosts(monkeypatch)


def run_json(db: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    return study_json(dirs_args(db, *extra), capsys)


def test_a_flat_directory_collapses_where_a_hashed_one_holds(hosts: SimulatedHosts, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    data = run_json(tmp_path / "s.db", capsys)
    assert data["state"] == "complete" and data["revert_problems"] == [] and data["entries"] == 1_000_000
    assert [c["layout"] for c in data["curves"]] == ["flat", "hashed"]
    assert all(set(c) == CURVE_KEYS and set(c["collapse"]) == COLLAPSE_KEYS for c in data["curves"])
    flat, hashed = data["curves"]
    for c in (flat, hashed):  # every point, growing to the entries asked for
        entries = [p["entries"] for p in c["points"]]
        assert 4 <= len(entries) <= 200 and entries == sorted(entries) and entries[-1] == 1_000_000
        assert all(p["rate"] > 0 for p in c["points"])
    assert flat["collapse"]["entries"] is not None and flat["collapse"]["share"] < 0.5
    assert 0 < flat["collapse"]["entries"] < 1_000_000
    assert hashed["collapse"]["entries"] is None and hashed["collapse"]["end_share"] > 0.5
    assert data["sentence"].startswith("flat fell to ") and f"at {flat['collapse']['entries']:,} entries" in data["sentence"]
    assert "hashed held" in data["sentence"] and "up to 1,000,000 entries" in data["sentence"]


def test_the_text_table_shows_about_ten_points_per_layout(hosts: SimulatedHosts, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    db = tmp_path / "s.db"
    assert main(dirs_args(db, "--entries", "400000", "--layout", "flat")) == 0
    out = capsys.readouterr().out
    assert "Directory scaling: 400,000 entries at the hosts' own settings" in out
    rows = [line for line in out.splitlines() if line.strip()[:1].isdigit() and "," in line.split()[0]]
    assert 8 <= len(rows) <= 12 and rows[-1].split()[0] == "400,000"
    assert "flat /s" in out and "hashed" not in out.split("flat fell")[0]
    with Store(db, readonly=True) as store:
        (session,) = store.list_sessions()
        assert session.notes == "dirs" and store.recommendations(session.id) == []
        assert [t.workload["layout"] for t in store.trials(session.id)] == ["flat"]
        assert store.trials(session.id)[0].workload["count"] == 400_000
        assert not store.unreverted_journal()


def test_sessions_show_list_and_the_report_keep_the_curves(hosts: SimulatedHosts, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    db = tmp_path / "s.db"
    data = run_json(db, capsys, "--knob", "nfsd_threads=16")
    sid = data["session"]
    assert data["config"] == {"nfsd_threads": 16}
    views = study_views(db, sid, tmp_path / "r.html", capsys)
    assert "Directory scaling: 1,000,000 entries at nfsd_threads=16" in views.shown and data["sentence"] in views.shown
    assert "Recommendation" not in views.shown  # a study recommends no knob
    assert "(directory scaling) flat fell to " in views.listed and "recommended" not in views.listed
    assert f"at {data['curves'][0]['collapse']['entries']:,} entries" in views.listed
    assert views.shown_json["dirs"]["curves"] == data["curves"]
    html = views.html
    assert '<h2 id="dirs">Directory scaling</h2>' in html and "Create rate against entries in the directory" in html
    assert escape(data["sentence"]) in html
    assert html.count("<tr>") >= sum(len(c["points"]) for c in data["curves"]) + 1


@pytest.mark.parametrize(("extra", "words"), [
    (["--knob", "nfsd_threads=2,32"], "a directory study holds nfsd_threads at one value for every step; give it one (--knob nfsd_threads=V)"),
    (["--knob", "nfsd_threads=2", "--knob", "nfsd_threads=4"], "given twice"),
    (["--entries", "0"], "entries"),
    (["--entries", "60000000"], "entries"),
    (["--layout", "tree"], "invalid choice"),
])  # fmt: skip
def test_a_bad_study_is_refused_before_any_host_is_touched(hosts: SimulatedHosts, tmp_path: Path, extra: list[str],
                                                           words: str, capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    assert main(dirs_args(tmp_path / "s.db", *extra)) == 2
    assert words in capsys.readouterr().err
    assert not hosts.state.server  # nothing applied
    assert not (tmp_path / "s.db").exists() or not Store(tmp_path / "s.db", readonly=True).list_sessions()


def test_a_cancelled_study_resumes_with_the_layouts_it_had_not_grown(tmp_path: Path) -> None:
    def plan(session: TuningSession) -> SweepSpec:
        return session.plan_study(session.choices(knobs={"nfsd_threads": "4"}, workloads=("dir_scaling",)),
                                  StudyChoice(StudyKind.DIRS, entries=200_000, layouts=("flat", "hashed")))  # fmt: skip

    with Store(tmp_path / "s.db") as store:
        spec = asyncio.run(cancel_then_resume(store, plan))
        assert spec.dirs == ("flat", "hashed") and spec.plan.knobs == {"nfsd_threads": (4,)}
        ok = [t for t in store.trials(1) if t.state.value == "ok"]
        assert sorted(t.workload["layout"] for t in ok) == ["flat", "hashed"]  # each layout once, none twice
        assert all(t.config == {"nfsd_threads": 4} for t in store.trials(1))
        assert store.recommendations(1) == []
        result = load_dirs(store, 1)
        assert result is not None and [c.layout for c in result.curves] == ["flat", "hashed"]
        assert all(c.points and c.points[-1].entries == 200_000 for c in result.curves)


def test_a_directory_study_is_planned_at_its_stated_create_rate_and_a_ladder_by_its_steps() -> None:
    where = Where("server", ("client",), "/srv/nfs")
    choices = PlanChoices(workloads=("dir_scaling",), repetitions=1)
    dirs = build_study(choices, where, StudyChoice(StudyKind.DIRS, entries=100_000))
    est = spec_estimate(dirs)
    each = dirs.plan.timing.setup_s + 2 * 100_000 / PLANNED_CREATES_PER_S  # creates, then the timed delete
    assert est.trials == 2 and est.seconds == pytest.approx(2 * each)
    assert est.worst_seconds >= est.seconds
    ladder = build_study(PlanChoices(workloads=("rand_read",), repetitions=1), where,
                         StudyChoice(StudyKind.LADDER, max_streams=16))  # fmt: skip
    assert spec_estimate(ladder).trials == 5  # 1, 2, 4, 8, 16
    assert study_problems(choices, StudyChoice(StudyKind.DIRS, layouts=())) == {
        "layouts": "layouts are one each of flat, hashed, got none"}


def test_both_faces_take_a_study_s_choices_by_one_rule() -> None:
    """A study measures each step once; a directory study runs its own workload whatever was checked."""
    sweep = PlanChoices(workloads=("seq_read", "rand_read"), repetitions=5, knobs={"nfsd_threads": "8"})
    assert as_study(sweep, StudyKind.SWEEP) == sweep
    ladder = as_study(sweep, StudyKind.LADDER)
    assert (ladder.workloads, ladder.repetitions, ladder.knobs) == (("seq_read", "rand_read"), 1, {"nfsd_threads": "8"})
    dirs = as_study(sweep, StudyKind.DIRS)
    assert (dirs.workloads, dirs.repetitions, dirs.knobs) == (("dir_scaling",), 1, {"nfsd_threads": "8"})
    args = ["study", "dirs", "--server", "s", "--client", "c", "--knob", "nfsd_threads=8"]
    assert dirs_choices(build_parser().parse_args(args)) == as_study(PlanChoices(knobs={"nfsd_threads": "8"}), StudyKind.DIRS)
