"""``nfs-tuner sessions list|show|export`` over a real Store file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from app.cli import main
from app.recommend import save
from app.recommend.context import recommend_session
from app.store.states import SessionState, TrialState
from app.store.store import Store
from experiments.workloads import SeqRead

SERVER_FACTS = {
    "exports": [{"path": "/srv/nfs", "client": "10.213.7.0/24", "options": ["rw", "sync", "no_subtree_check"]}],
    "nics": [{"name": "lan0", "addresses": ["10.213.7.10/24"]}],
    "export_filesystems": [{"export_path": "/srv/nfs", "md_array": "md0"}],
}
CLIENT_FACTS = {"nics": [{"name": "lan0", "addresses": ["10.213.7.11/24"]}],
                "nfs_mounts": [{"export": "/srv/nfs", "mount_point": "/mnt/lab"}]}


def make_db(path: Path, *, store_recommendation: bool = False) -> int:
    with Store(path) as s:
        sid = s.create_session(["lab-server", "lab-client1"], plan={"knobs": {}, "baseline": {"rsize": 65536}})
        s.add_host_facts(sid, "lab-server", "server", SERVER_FACTS)
        s.add_host_facts(sid, "lab-client1", "client", CLIENT_FACTS)
        s.add_host_facts(sid, "lab-client1", "ceiling", {"tcp_bps": 117e6, "tool": "iperf3"})
        for cfg, means in (({"rsize": 65536}, (90e6, 91e6, 92e6)), ({"rsize": 1048576}, (110e6, 111e6, 112e6))):
            for m in means:
                tid = s.add_trial(sid, cfg, SeqRead(block_size=262144).to_dict())
                s.finish_trial(tid, TrialState.OK, summary={"mean": m, "median": m, "p5": m * 0.9, "cv": 0.02,
                                                            "deepest_dip": 0.1, "dips": 0})
        tid = s.add_trial(sid, {"rsize": 4096}, SeqRead().to_dict())
        s.finish_trial(tid, TrialState.BROKEN, reason="ssh dropped")
        s.set_session_state(sid, SessionState.COMPLETE)
        if store_recommendation:
            save(s, recommend_session(s, sid))
        return sid


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_list_shows_date_hosts_state_and_the_recommendation_per_objective(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.db"
    sid = make_db(db, store_recommendation=True)
    code, out, _ = run(capsys, "--db", str(db), "sessions", "list")
    assert code == 0
    assert out.startswith(f"{sid:>4}  ") and "complete" in out and "lab-server,lab-client1" in out
    assert "7 trial(s)" in out and "recommended: seq_read rsize=1048576 111.0 MB/s" in out
    code, out, _ = run(capsys, "--db", str(db), "sessions", "list", "--json")
    data = json.loads(out)
    assert data["sessions"][0]["recommendation_stored"] is True
    assert data["sessions"][0]["recommended"] == {"seq_read": {
        "config": {"rsize": 1048576}, "figure_bps": pytest.approx(111e6), "unit": "B/s",
        "p99_ms": None, "met_goal": True,  # a session from before latency was kept: no p99, the throughput goal
        "goal": {"kind": "throughput", "p99_max_ms": None, "load_iops": None},
        "changes": None}}  # nor checked and confirmed: no plan-wide changes, its objectives' own configurations


def test_list_says_a_recommendation_none_stored_was_computed_now_as_show_and_results_do(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.db"
    sid = make_db(db)  # no recommendation stored: as a cancelled sweep leaves it
    code, out, _ = run(capsys, "--db", str(db), "sessions", "list")
    assert code == 0
    assert "recommended:" not in out and "computed now, none stored: seq_read rsize=1048576 111.0 MB/s" in out
    code, out, _ = run(capsys, "--db", str(db), "sessions", "list", "--json")
    assert json.loads(out)["sessions"][0]["recommendation_stored"] is False
    code, out, _ = run(capsys, "--db", str(db), "sessions", "show", str(sid))
    assert "Recommendation (computed now, none stored):" in out


def test_list_without_a_database_says_so_and_creates_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "none.db"
    code, out, _ = run(capsys, "--db", str(db), "sessions", "list")
    assert code == 0 and "no sessions yet" in out
    assert not db.exists()


def test_show_computes_the_recommendation_with_evidence_and_snippets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.db"
    sid = make_db(db)
    code, out, err = run(capsys, "--db", str(db), "sessions", "show", str(sid))
    assert code == 0, err
    assert "Trials (7):" in out and "broken" in out and "(ssh dropped)" in out
    assert "(computed now, none stored)" in out
    assert "[seq_read] rsize=1048576" in out
    assert "+22 % ±" in out and "The network limits" in out
    assert "excluded trials: #7 (ssh dropped)" in out
    assert "10.213.7.10:/srv/nfs /mnt/lab nfs rsize=1048576,hard,_netdev 0 0" in out
    assert "bs=262144" in out  # the fio job reproduces the stored workload


def test_show_prefers_the_stored_recommendation_and_prints_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.db"
    sid = make_db(db, store_recommendation=True)
    code, out, _ = run(capsys, "--db", str(db), "sessions", "show", str(sid))
    assert code == 0 and "computed now" not in out and "The network limits" in out
    code, out, _ = run(capsys, "--db", str(db), "sessions", "show", str(sid), "--json")
    data = json.loads(out)
    assert data["recommendations"][0]["stored"] is True
    assert data["recommendations"][0]["config"] == {"rsize": 1048576}
    assert {s["key"] for s in data["snippets"]} >= {"fstab", "exports", "ansible", "fio"}
    assert len(data["trials"]) == 7
    code, _, err = run(capsys, "--db", str(db), "sessions", "show", str(sid), "--objective", "mixed")
    assert code == 1 and "no recommendation for 'mixed'" in err


def test_show_unknown_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.db"
    make_db(db)
    code, _, err = run(capsys, "--db", str(db), "sessions", "show", "99")
    assert code == 1 and "no session 99" in err


def test_damaged_and_too_new_files_give_clear_messages_and_stay_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database at all" * 50)
    before = junk.read_bytes()
    for argv in (("sessions", "list"), ("sessions", "show", "1"), ("sessions", "export", "1", "--to", str(tmp_path / "x.db"))):
        code, _, err = run(capsys, "--db", str(junk), *argv)
        assert code == 1 and "damaged or is not a database" in err, argv
    assert junk.read_bytes() == before

    newer = tmp_path / "newer.db"
    make_db(newer)
    with sqlite3.connect(newer) as c:
        c.execute("PRAGMA user_version = 999")
    c.close()
    before = newer.read_bytes()
    code, _, err = run(capsys, "--db", str(newer), "sessions", "list")
    assert code == 1 and "written by a newer nfs-tuner" in err
    code, _, err = run(capsys, "--db", str(newer), "sessions", "export", "1", "--to", str(tmp_path / "y.db"))
    assert code == 1 and "newer nfs-tuner" in err
    assert newer.read_bytes() == before


def test_export_writes_a_standalone_file_and_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.db"
    sid = make_db(db)
    dest = tmp_path / "out" / "one.db"
    dest.parent.mkdir()
    code, out, err = run(capsys, "--db", str(db), "sessions", "export", str(sid), "--to", str(dest),
                         "--csv", str(tmp_path / "csv"))
    assert code == 0, err
    assert f"written to {dest}" in out
    with Store(dest, readonly=True) as s:
        (only,) = s.list_sessions()
        assert len(s.trials(only.id)) == 7 and only.origin
    assert (tmp_path / "csv" / f"session-{sid}-trials.csv").read_text().count("\n") == 8
    code, _, err = run(capsys, "--db", str(db), "sessions", "export", str(sid), "--to", str(dest))
    assert code == 1 and "exists already" in err
    code, _, err = run(capsys, "--db", str(db), "sessions", "export", "42", "--to", str(tmp_path / "z.db"))
    assert code == 1 and "no session 42" in err


def test_importing_the_same_file_twice_names_the_session_held_already_and_copies_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sid = make_db(tmp_path / "mine.db")
    shared = tmp_path / "shared.db"
    assert run(capsys, "--db", str(tmp_path / "mine.db"), "sessions", "export", str(sid), "--to", str(shared))[0] == 0
    theirs = str(tmp_path / "theirs.db")
    code, out, err = run(capsys, "--db", theirs, "sessions", "import", str(shared))
    assert code == 0 and out.startswith("imported 1 session(s)"), err
    code, out, _ = run(capsys, "--db", theirs, "sessions", "import", str(shared))
    assert code == 0 and "imported" not in out.split(":")[0]
    assert f"session 1 of {shared} is here already as session 1: not imported again" in out and "--again" in out
    with Store(tmp_path / "theirs.db", readonly=True) as s:
        assert len(s.list_sessions()) == 1
    # into the database it came from: the same session, held already under its own id
    code, out, _ = run(capsys, "--db", str(tmp_path / "mine.db"), "sessions", "import", str(shared))
    assert f"is here already as session {sid}" in out
    code, out, _ = run(capsys, "--db", theirs, "sessions", "import", str(shared), "--again")
    assert code == 0 and out.startswith("imported 1 session(s)")
    with Store(tmp_path / "theirs.db", readonly=True) as s:
        assert len(s.list_sessions()) == 2
