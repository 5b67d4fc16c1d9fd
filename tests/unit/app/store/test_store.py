"""The session store: schema, life cycles, samples, crash recovery, damaged files, sharing."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from app.events import EventBus, SamplesBatch
from app.output_files import OutputExists
from app.store import (
    DamagedDatabaseError,
    ForeignDatabaseError,
    InvalidTransitionError,
    JournalState,
    SchemaTooNewError,
    SessionState,
    Store,
    StoreError,
    TrialState,
    export_csv,
    export_session,
    import_sessions,
)
from app.store.schema import MIGRATIONS, Migration, check_migrations
from experiments.samples import HostTelemetry, Sample

LATEST = MIGRATIONS[-1].version


def samples(client: str, n: int, start: int = 0, bps: int = 1_000_000) -> list[Sample]:
    return [Sample(client, (start + i + 1) * 0.25, 0.25, bps // 4 + i, 0, 10, 1.0, 2.0, 3.0) for i in range(n)]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "s.db")
    yield s
    s.close()


def test_new_file_is_wal_with_foreign_keys_at_latest_version(store: Store) -> None:
    assert store._q("PRAGMA journal_mode")[0][0] == "wal"
    assert store._q("PRAGMA foreign_keys")[0][0] == 1
    assert store.schema_version == MIGRATIONS[-1].version == LATEST
    with pytest.raises(sqlite3.IntegrityError):
        store.add_trial(999, {"rsize": 1}, {"name": "x"})  # no such session


def test_sessions_plans_facts_recommendations(store: Store) -> None:
    sid = store.create_session(["srv", "c1"], plan={"knobs": {}}, notes="first")
    pid = store.save_plan(sid, {"knobs": {"rsize": [1, 2]}})
    store.add_host_facts(sid, "srv", "server", {"cpus": 4})
    rid = store.add_recommendation(sid, "seqread", {"rsize": 2}, {"gain": 0.18, "text": ["18 % ± 3 %"]})
    s = store.get_session(sid)
    assert s.state == SessionState.RUNNING and s.hosts == ("srv", "c1") and s.notes == "first"
    assert s.plan == {"knobs": {"rsize": [1, 2]}}
    assert [p.id for p in store.plans(sid)] == [pid]
    assert store.host_facts(sid)[0].facts == {"cpus": 4}
    assert store.recommendations(sid)[0].id == rid
    store.set_session_state(sid, SessionState.COMPLETE)
    with pytest.raises(InvalidTransitionError):
        store.set_session_state(sid, SessionState.RUNNING)


def test_writer_buffers_and_commits_in_blocks_readable_by_a_second_reader(store: Store) -> None:
    sid = store.create_session(["c1", "c2"])
    tid = store.add_trial(sid, {"rsize": 65536}, {"name": "seqread"})
    reader = Store(store.path, readonly=True)
    with store.sample_writer(flush_interval=3600, background=False) as w:
        w.add(tid, samples("c1", 8) + samples("c2", 8))
        assert w.pending == 16
        assert len(reader.load_samples(tid)) == 0  # nothing committed yet
        assert w.flush() == 16
        assert w.pending == 0
        assert len(reader.load_samples(tid)) == 16
        w.add(tid, samples("c1", 4, start=8))
    assert len(reader.load_samples(tid)) == 20  # close flushed the rest
    reader.close()


def test_background_flusher_commits_without_further_samples(store: Store) -> None:
    sid = store.create_session(["c1"])
    tid = store.add_trial(sid, {}, {})
    w = store.sample_writer(flush_interval=0.05)
    w.add(tid, samples("c1", 3))
    deadline = time.monotonic() + 10  # generous: this asserts that it happens, not how fast
    while w.pending and time.monotonic() < deadline:
        time.sleep(0.01)
    assert w.pending == 0
    assert len(store.load_samples(tid)) == 3
    w.close()


def test_writer_attached_to_the_event_bus(store: Store) -> None:
    sid = store.create_session(["c1"])
    tid = store.add_trial(sid, {}, {})
    bus = EventBus()
    w = store.sample_writer(background=False)
    detach = w.attach(bus)
    bus.publish(SamplesBatch(tid, samples("c1", 5)))
    detach()
    bus.publish(SamplesBatch(tid, samples("c1", 5, start=5)))
    w.close()
    assert len(store.load_samples(tid)) == 5


def test_finish_trial_flushes_and_compacts_one_block_per_client(store: Store) -> None:
    sid = store.create_session(["c1", "c2"])
    tid = store.add_trial(sid, {"rsize": 1}, {"name": "seqread"})
    w = store.sample_writer(background=False)
    for sec in range(5):
        w.add(tid, samples("c2", 4, start=4 * sec) + samples("c1", 4, start=4 * sec))
        w.flush()
    w.add(tid, samples("c1", 2, start=20))  # still buffered when the trial ends
    store.finish_trial(tid, TrialState.OK, summary={"mean": 1.5})
    blocks = store._q("SELECT client, n FROM sample_blocks WHERE trial_id=? ORDER BY client", (tid,))
    assert blocks == [("c1", 22), ("c2", 20)]
    arr = store.load_samples(tid)
    c1 = arr.for_client("c1")
    assert len(c1) == 22 and np.all(np.diff(c1.t) > 0)
    assert store.get_trial(tid).summary == {"mean": 1.5} and store.get_trial(tid).state == TrialState.OK
    window = store.load_samples(tid, t0=1.0, t1=2.0)
    assert len(window) > 0 and window.t.min() >= 1.0 and window.t.max() <= 2.0
    w.close()


def test_sample_values_roundtrip_exactly(store: Store) -> None:
    sid = store.create_session(["c1"])
    tid = store.add_trial(sid, {}, {})
    original = [Sample("c1", 0.25, 0.25, 123, 456, 7, 0.5, 2.5, 9.0, 1), Sample("c1", 0.5, 0.25, 2**40, 0, 1)]
    store.write_samples(tid, original)
    back = store.load_samples(tid).to_samples()
    assert back == original
    assert store.load_samples(tid).throughput_bps[0] == pytest.approx((123 + 456) / 0.25)


def test_session_samples_follow_trial_order(store: Store) -> None:
    sid = store.create_session(["c1"])
    late = store.add_trial(sid, {"k": 2}, {}, order_index=5)
    early = store.add_trial(sid, {"k": 1}, {}, order_index=1)
    store.write_samples(late, samples("c1", 3))
    store.write_samples(early, samples("c1", 2))
    arr = store.load_session_samples(sid)
    assert arr.trial_id.tolist() == [early] * 2 + [late] * 3
    assert store.sample_count(sid) == 5
    assert [t.id for t in store.trials(sid)] == [early, late]


def test_telemetry_roundtrip(store: Store) -> None:
    sid = store.create_session(["srv"])
    tid = store.add_trial(sid, {}, {})
    w = store.sample_writer(background=False)
    w.add_telemetry(tid, [HostTelemetry("srv", 1.0, 1.0, 5e7, 0, 1e8, 2e6, 0.3, {"pool_waits": 4.0}),
                          HostTelemetry("srv", 2.0, 1.0, 6e7)])
    w.close()
    tel = store.load_telemetry(tid)
    assert tel.host == ("srv", "srv") and tel.disk_read_bps.tolist() == [5e7, 6e7]
    assert tel.extra == ({"pool_waits": 4.0}, {})


def test_journal_life_cycle_and_unreverted_list(store: Store) -> None:
    sid = store.create_session(["srv"])
    a = store.journal_intend(sid, "srv", "nfsd_threads", "/proc/fs/nfsd/threads", 8, 32)
    b = store.journal_intend(sid, "c1", "rsize", "/mnt/nfs-tuner", 131072, 1048576)
    c = store.journal_intend(sid, "srv", "mtu", "eth0", 1500, 9000)
    store.journal_update(a, JournalState.APPLIED)
    store.journal_update(a, JournalState.REVERTED)
    store.journal_update(b, JournalState.APPLIED)
    store.journal_update(c, JournalState.FAILED, detail="ping with DF failed at 9000")
    with pytest.raises(InvalidTransitionError):
        store.journal_update(a, JournalState.APPLIED)  # reverted is final
    open_ids = [e.id for e in store.unreverted_journal()]
    assert open_ids == [c, b]  # newest first: revert in reverse order
    entry = store.get_journal_entry(c)
    assert entry.old_value == 1500 and entry.new_value == 9000 and "DF" in entry.detail
    with pytest.raises(StoreError, match="not yet reverted"):
        store.delete_session(sid)
    store.journal_update(b, JournalState.REVERTED_BY_HOST)
    store.journal_update(c, JournalState.DISMISSED)
    assert store.unreverted_journal() == []
    store.delete_session(sid)
    assert store.list_sessions() == [] and store.journal() == []


def test_recover_interrupted_marks_dead_owners_only(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Store(path) as s:
        dead = s.create_session(["srv"])
        alive = s.create_session(["srv"])
        tid = s.add_trial(dead, {}, {})
        s.write_samples(tid, samples("c1", 4))
        s.write_samples(tid, samples("c1", 4, start=4))
        s.journal_intend(dead, "srv", "nfsd_threads", "", 8, 16)
        # A pid that cannot exist stands in for a SIGKILLed sweep.
        s._conn.execute("UPDATE sessions SET owner_pid=? WHERE id=?", (2**31 - 1, dead))
    with Store(path) as s:
        assert s.recover_interrupted() == [dead]
        assert s.get_session(dead).state == SessionState.INTERRUPTED
        assert s.get_session(alive).state == SessionState.RUNNING  # this process is alive
        trial = s.get_trial(tid)
        assert trial.state == TrialState.BROKEN and "interrupted" in trial.reason
        assert len(s.load_samples(tid)) == 8  # kept, and compacted
        assert s._q("SELECT COUNT(*) FROM sample_blocks WHERE trial_id=?", (tid,))[0][0] == 1
        assert [e.knob for e in s.unreverted_journal()] == ["nfsd_threads"]
        s.set_session_state(dead, SessionState.RUNNING)  # resumable


def _bytes(path: Path) -> bytes:
    return path.read_bytes()


def test_not_a_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    path.write_bytes(b"this is my shopping list\n" * 100)
    before = _bytes(path)
    with pytest.raises(DamagedDatabaseError, match="untouched") as err:
        Store(path)
    assert str(path) in str(err.value)
    assert _bytes(path) == before


def test_corrupt_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Store(path) as s:
        s.create_session(["srv"])
    data = bytearray(_bytes(path))
    data[100:4096] = b"\xa5" * (4096 - 100)  # the schema page, header left intact
    path.write_bytes(bytes(data))
    before = _bytes(path)
    with pytest.raises(DamagedDatabaseError):
        Store(path)
    assert _bytes(path) == before
    assert not Path(str(path) + "-wal").exists() or Path(str(path) + "-wal").stat().st_size == 0


def test_too_new_schema_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Store(path) as s:
        s.create_session(["srv"])
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA user_version = 99")
    raw.commit()
    raw.close()
    before = _bytes(path)
    with pytest.raises(SchemaTooNewError, match="Upgrade nfs-tuner") as err:
        Store(path)
    assert (err.value.found, err.value.known) == (99, LATEST)
    assert _bytes(path) == before


def test_foreign_sqlite_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE photos (id INTEGER)")
    raw.commit()
    raw.close()
    with pytest.raises(ForeignDatabaseError):
        Store(path)


FAKE_NEXT = Migration(LATEST + 1, "session tags", lambda c: c.execute("ALTER TABLE sessions ADD COLUMN tags TEXT"))


def test_migration_to_a_fake_next_version_keeps_data_and_a_backup(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Store(path) as s:
        sid = s.create_session(["srv"])
    with Store(path, migrations=(*MIGRATIONS, FAKE_NEXT)) as s:
        assert s.schema_version == LATEST + 1
        assert "tags" in [r[1] for r in s._q("PRAGMA table_info(sessions)")]
        assert s.get_session(sid).hosts == ("srv",)
    backup = tmp_path / f"s.db.v{LATEST}.bak"
    with Store(backup, readonly=True) as b:
        assert b.schema_version == LATEST
    with pytest.raises(SchemaTooNewError):
        Store(path)  # today's code refuses the newer file


def test_sample_phase_and_count_roundtrip(store: Store) -> None:
    """The dir_scaling curve (count per sample) and phase labels survive storage."""
    sid = store.create_session(["c1"])
    tid = store.add_trial(sid, {}, {"kind": "dir_scaling"})
    original = [
        Sample("c1", 0.25 * (i + 1), 0.25, 0, 0, 100 + i, phase="create", count=100 * (i + 1)) for i in range(4)
    ] + [Sample("c1", 1.25, 0.25, 0, 0, 50, phase="delete", count=0), Sample("c1", 1.5, 0.25, 0, 0, 1, phase="")]
    store.write_samples(tid, original)
    store.compact_samples(tid)
    arr = store.load_samples(tid)
    assert arr.to_samples() == original
    assert arr.count.tolist() == [100, 200, 300, 400, 0, -1]
    assert arr.phase.tolist() == ["create"] * 4 + ["delete", ""]


def test_long_and_non_ascii_phases_are_cut_at_a_character(store: Store) -> None:
    sid = store.create_session(["c1"])
    tid = store.add_trial(sid, {}, {})
    store.write_samples(tid, [Sample("c1", 0.25, 0.25, phase="ä" * 20), Sample("c1", 0.5, 0.25, phase="x" * 40)])
    back = store.load_samples(tid).to_samples()
    assert [s.phase for s in back] == ["ä" * 8, "x" * 16]


def test_version_1_sample_blocks_are_migrated(tmp_path: Path) -> None:
    """A file written before samples had a phase and count opens with every sample intact."""
    from app.store.sample_blocks import SAMPLE_DTYPE_V1

    path = tmp_path / "old.db"
    with Store(path, migrations=MIGRATIONS[:1]) as s:
        assert s.schema_version == 1
        sid = s.create_session(["c1"])
        tids = [s.add_trial(sid, {}, {}, order_index=i) for i in range(2)]
    raw = sqlite3.connect(path)
    old = [samples("c1", 3), samples("c2", 600)]
    for tid, group in zip(tids, old, strict=True):
        rec = np.array([(x.t, x.interval, x.bytes_read, x.bytes_written, x.ops, x.lat_p50_ms, x.lat_p99_ms,
                         x.lat_max_ms, x.errors) for x in group], dtype=SAMPLE_DTYPE_V1)
        assert rec.itemsize == 52
        raw.execute("INSERT INTO sample_blocks (trial_id, client, t_first, t_last, n, data) VALUES (?,?,?,?,?,?)",
                    (tid, group[0].client, group[0].t, group[-1].t, len(group), rec.tobytes()))
    raw.commit()
    raw.close()
    with Store(path) as s:
        assert s.schema_version == LATEST
        for tid, group in zip(tids, old, strict=True):
            back = s.load_samples(tid)
            assert back.to_samples() == group  # phase "" and count None, as before
            assert back.count.tolist() == [-1] * len(group)
        s.write_samples(tids[0], [Sample("c1", 9.0, 0.25, phase="create", count=5)])
        s.compact_samples(tids[0])  # old and new blocks in one
        assert s.load_samples(tids[0]).to_samples()[-1].count == 5
    assert (tmp_path / "old.db.v1.bak").exists()


def test_damaged_version_1_block_fails_the_migration_and_keeps_the_file(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with Store(path, migrations=MIGRATIONS[:1]) as s:
        tid = s.add_trial(s.create_session(["c1"]), {}, {})
    raw = sqlite3.connect(path)
    raw.execute("INSERT INTO sample_blocks (trial_id, client, t_first, t_last, n, data) VALUES (?,?,?,?,?,?)",
                (tid, "c1", 0.0, 0.0, 2, b"x" * 60))
    raw.commit()
    raw.close()
    with pytest.raises(ValueError, match="version-1 samples"):
        Store(path)
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 1
    raw.close()


def test_failed_migration_leaves_the_old_version(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    Store(path).close()

    def broken(c: sqlite3.Connection) -> None:
        c.execute("ALTER TABLE sessions ADD COLUMN tags TEXT")
        raise RuntimeError("bug in migration")

    with pytest.raises(RuntimeError):
        Store(path, migrations=(*MIGRATIONS, Migration(LATEST + 1, "broken", broken)))
    with Store(path) as s:
        assert s.schema_version == LATEST
        assert "tags" not in [r[1] for r in s._q("PRAGMA table_info(sessions)")]


def test_migrations_must_be_numbered_without_gaps() -> None:
    with pytest.raises(ValueError):
        check_migrations((MIGRATIONS[0], Migration(3, "gap", lambda c: None)))


def test_readonly_store_cannot_write(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    Store(path).close()
    with Store(path, readonly=True) as r, pytest.raises(StoreError, match="read-only"):
        r.create_session(["srv"])
    with pytest.raises(StoreError, match="no session database"):
        Store(tmp_path / "missing.db", readonly=True)


def test_export_and_import_remap_ids_and_keep_everything(tmp_path: Path) -> None:
    src = Store(tmp_path / "mine.db")
    other = src.create_session(["x"])  # so ids differ between files
    sid = src.create_session(["srv", "c1"], notes="before upgrade")
    src.save_plan(sid, {"strategy": "grid"})
    src.add_host_facts(sid, "srv", "server", {"kernel": "6.8"})
    t1 = src.add_trial(sid, {"rsize": 1}, {"name": "seqread"})
    src.write_samples(t1, samples("c1", 10))
    src.write_telemetry(t1, [HostTelemetry("srv", 1.0, 1.0, 1.0)])
    src.finish_trial(t1, TrialState.OK, summary={"mean": 4.0})
    src.journal_update(src.journal_intend(sid, "srv", "nfsd_threads", "", 8, 32), JournalState.APPLIED)
    src.add_recommendation(sid, "seqread", {"rsize": 1}, ["text"])
    out = export_session(src, sid, tmp_path / "share.db")
    with pytest.raises(OutputExists, match="exists"):
        export_session(src, sid, out)
    assert not Path(str(out) + "-wal").exists()
    raw = sqlite3.connect(out)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert raw.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 1
    raw.close()

    dst = Store(tmp_path / "colleague.db")
    dst.create_session(["y"])
    dst.create_session(["z"])
    before = out.read_bytes()
    (new_sid,) = import_sessions(dst, out).ids
    assert out.read_bytes() == before
    s = dst.get_session(new_sid)
    assert s.notes == "before upgrade" and s.origin is not None and s.state == SessionState.INTERRUPTED
    (trial,) = dst.trials(new_sid)
    assert trial.summary == {"mean": 4.0}
    assert new_sid != sid  # remapped: the colleague's file had sessions already
    np.testing.assert_array_equal(dst.load_samples(trial.id).records, src.load_samples(t1).records)
    assert len(dst.load_telemetry(trial.id).t) == 1
    assert dst.host_facts(new_sid)[0].facts == {"kernel": "6.8"}
    assert dst.plans(new_sid)[0].plan == {"strategy": "grid"}
    assert [e.state for e in dst.journal(new_sid)] == [JournalState.APPLIED]
    assert dst.unreverted_journal() == []  # someone else's hosts
    assert dst.recommendations(new_sid)[0].config == {"rsize": 1}
    assert other != new_sid
    src.close()
    dst.close()


def test_import_of_a_damaged_file_raises_the_typed_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(os.urandom(4096))
    with Store(tmp_path / "s.db") as s, pytest.raises(DamagedDatabaseError):
        import_sessions(s, bad)


CHILD = r"""
import sys, time
sys.path.insert(0, sys.argv[2])
from app.store import Store
from experiments.samples import Sample
s = Store(sys.argv[1])
sid = s.create_session(["c1"])
tid = s.add_trial(sid, {"rsize": 1}, {"name": "seqread"})
w = s.sample_writer(flush_interval=0.2)
w.add(tid, [Sample("c1", (i + 1) * 0.25, 0.25, 1000, 0, 1) for i in range(40)])
while w.pending:  # the flusher thread commits without further samples arriving
    time.sleep(0.01)
print("flushed", flush=True)
time.sleep(600)
"""


def test_sigkill_keeps_flushed_samples_and_the_session_is_recovered(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[4]
    path = tmp_path / "s.db"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), str(repo)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "flushed"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    with Store(path) as s:
        (sid,) = s.recover_interrupted()
        assert s.get_session(sid).state == SessionState.INTERRUPTED
        assert s.sample_count(sid) == 40
        assert s.trials(sid)[0].state == TrialState.BROKEN


def test_missing_parent_folder_is_created(tmp_path: Path) -> None:
    with Store(tmp_path / "new" / "dir" / "sessions.db") as s:
        assert s.list_sessions() == []


def test_list_sessions_filters_by_host_and_date(tmp_path: Path) -> None:
    now = [100.0]
    with Store(tmp_path / "s.db", clock=lambda: now[0]) as s:
        a = s.create_session(["srv1", "c1"])
        now[0] = 200.0
        b = s.create_session(["srv2", "c1"])
        now[0] = 300.0
        c = s.create_session(["srv1"])
        assert [x.id for x in s.list_sessions()] == [c, b, a]
        assert [x.id for x in s.list_sessions(host="srv1")] == [c, a]
        assert [x.id for x in s.list_sessions(since=150, until=300)] == [b]


def test_csv_export_of_trials_and_samples(store: Store, tmp_path: Path) -> None:
    import csv

    sid = store.create_session(["c1"])
    tid = store.add_trial(sid, {"rsize": 65536, "threads": 8}, {"name": "seqread"})
    store.write_samples(tid, samples("c1", 3))
    store.finish_trial(tid, TrialState.OK, summary={"mean": 2.5, "dips": 0})
    trials_csv, samples_csv = export_csv(store, sid, tmp_path / "csv")
    rows = list(csv.DictReader(trials_csv.open()))
    assert rows[0]["rsize"] == "65536" and rows[0]["summary_mean"] == "2.5" and rows[0]["state"] == "ok"
    srows = list(csv.DictReader(samples_csv.open()))
    assert len(srows) == 3 and srows[0]["client"] == "c1" and float(srows[2]["t"]) == 0.75
