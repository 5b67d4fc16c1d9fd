"""Received session files that are damaged or hostile: an import takes all of a file or none of it.

Each file starts as a real export (``export_session``) and is then damaged with plain
SQLite, the way another program or a bit flip would. Whatever the damage, the import
raises a StoreError naming the user's file (never the private copy), the user's store
holds exactly what it held before, and the received file keeps every byte.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.cli import main
from app.recommend import save
from app.recommend.context import recommend_session
from app.store import (
    MIGRATIONS,
    DamagedDatabaseError,
    DamagedSessionFileError,
    ImportFailedError,
    JournalState,
    SchemaTooNewError,
    SessionState,
    Store,
    StoreError,
    TrialState,
    export_session,
    import_sessions,
)
from app.store import transfer
from app.store.sample_blocks import SAMPLE_DTYPE
from experiments.samples import HostTelemetry, Sample
from experiments.workloads import SeqRead

PRIVATE = "nfs-tuner-import-"  # the private copy's directory prefix: never in a message
TABLES = ("sessions", "host_facts", "plans", "trials", "sample_blocks", "telemetry", "journal", "recommendations")

SERVER_FACTS = {
    "hostname": "lab-server", "kernel": "6.1.0", "mem_total_kb": 4_000_000,
    "exports": [{"path": "/srv/nfs", "client": "10.213.7.0/24", "options": ["rw", "sync", "no_subtree_check"]}],
    "nics": [{"name": "lan0", "mtu": 1500, "addresses": ["10.213.7.10/24"]}],
    "export_filesystems": [{"export_path": "/srv/nfs", "md_array": "md0"}],
}  # fmt: skip
CLIENT_FACTS = {"nics": [{"name": "lan0", "addresses": ["10.213.7.11/24"]}],
                "nfs_mounts": [{"export": "/srv/nfs", "mount_point": "/mnt/lab"}]}


def samples(client: str, n: int, bps: int = 100_000_000) -> list[Sample]:
    return [Sample(client, (i + 1) * 0.25, 0.25, bps // 4 + i, 0, 10, 1.0, 2.0, 3.0, phase="read") for i in range(n)]


def fill(s: Store, hosts: tuple[str, ...] = ("lab-server", "lab-client1"), *, recommendation: bool = True) -> int:
    """A complete session through the store's own API: facts, plan, trials with samples, telemetry, journal."""
    sid = s.create_session(list(hosts), plan={"knobs": {"rsize": [65536, 1048576]}, "baseline": {"rsize": 65536}})
    s.save_plan(sid, {"knobs": {"rsize": [65536, 1048576]}, "baseline": {"rsize": 65536}, "workloads": ["seqread"]})
    s.add_host_facts(sid, "lab-server", "server", SERVER_FACTS)
    s.add_host_facts(sid, "lab-client1", "client", CLIENT_FACTS)
    s.add_host_facts(sid, "lab-client1", "ceiling", {"tcp_bps": 117e6, "mtu": 1500, "tool": "iperf3"})
    for cfg, means in (({"rsize": 65536}, (90e6, 91e6)), ({"rsize": 1048576}, (110e6, 111e6))):
        for m in means:
            tid = s.add_trial(sid, cfg, SeqRead(block_size=262144).to_dict())
            s.write_samples(tid, samples("lab-client1", 8, int(m)))
            s.write_telemetry(tid, [HostTelemetry("lab-server", 1.0, 1.0, 5e6, 1e6, 1e8, 1e6, 0.3,
                                                  {"nfsd.packets_arrived_per_s": 900.0})])
            s.finish_trial(tid, TrialState.OK, summary={"mean": m, "median": m, "p5": m * 0.9, "cv": 0.02,
                                                        "deepest_dip": 0.1, "dips": 0})
    tid = s.add_trial(sid, {"rsize": 4096}, SeqRead().to_dict())
    s.finish_trial(tid, TrialState.BROKEN, reason="ssh dropped")
    s.journal_update(s.journal_intend(sid, "lab-server", "nfsd_threads", "", 8, 32), JournalState.APPLIED)
    s.set_session_state(sid, SessionState.COMPLETE)
    if recommendation:
        save(s, recommend_session(s, sid))
    return sid


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One valid export, built once; each test damages its own copy."""
    d = tmp_path_factory.mktemp("pristine")
    with Store(d / "mine.db") as s:
        s.create_session(["other"])  # ids differ between the source and the export
        sid = fill(s)
        return export_session(s, sid, d / "session.db")


@pytest.fixture
def shared(pristine: Path, tmp_path: Path) -> Path:
    """This test's copy of the export, in a folder of its own (so stray side files would show)."""
    (tmp_path / "received").mkdir()
    path = tmp_path / "received" / "from-a-colleague.nfs-tuner.db"
    path.write_bytes(pristine.read_bytes())
    return path


@pytest.fixture
def main_store(tmp_path: Path) -> Iterator[Store]:
    """The user's own store, with sessions of its own."""
    with Store(tmp_path / "mine.db") as s:
        s.create_session(["mine-a"], notes="keep me")
        fill(s, ("mine-b", "mine-c"), recommendation=False)
        yield s


def sql(path: Path, *statements: str | tuple[str, tuple[Any, ...]]) -> None:
    """Damage a file the way another program would: plain SQL, no constraints checked."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA ignore_check_constraints = ON")
        for st in statements:
            if isinstance(st, tuple):
                conn.execute(*st)
            else:
                conn.execute(st)
        conn.commit()
    finally:
        conn.close()


def snapshot(store: Store) -> tuple[Any, ...]:
    """Everything the user's store holds, as comparable values."""
    conn = sqlite3.connect(store.path)
    try:
        rows = tuple(tuple(conn.execute(f"SELECT * FROM {t} ORDER BY id").fetchall()) for t in TABLES)
    finally:
        conn.close()
    return (tuple((s.id, s.state, s.hosts, s.notes) for s in store.list_sessions()), rows)


def digest(path: Path) -> tuple[str, tuple[str, ...]]:
    """The file's bytes, and what lies beside it (an import must not leave a -wal or -shm there)."""
    data = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "-"
    return data, tuple(sorted(p.name for p in path.parent.iterdir()))


def assert_refused(store: Store, path: Path, *expected: str) -> StoreError:
    """The import raises a StoreError naming ``path`` and changes neither the store nor the file."""
    before, file_before = snapshot(store), digest(path)
    with pytest.raises(StoreError) as info:
        import_sessions(store, path)
    message = str(info.value)
    assert str(path) in message and PRIVATE not in message, message
    for fragment in expected:
        assert fragment in message, message
    assert snapshot(store) == before
    assert digest(path) == file_before
    assert store.check_integrity() == []
    return info.value


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# -- JSON columns that are not JSON, or not the JSON their readers rely on ------------------------

JSON_COLUMNS = (
    ("sessions", "hosts"), ("sessions", "plan"), ("host_facts", "facts"), ("plans", "plan"),
    ("trials", "config"), ("trials", "workload"), ("trials", "summary"), ("telemetry", "extra"),
    ("journal", "old_value"), ("journal", "new_value"), ("recommendations", "config"),
    ("recommendations", "evidence"),
)  # fmt: skip
NOT_JSON = ("not json", "[1,2", '{"a":', "NaN", "[Infinity]", "[1e400]", nested(100_000), "[" + "1" * 5000 + "]",
            nested(40), "")


@pytest.mark.parametrize(("table", "column"), JSON_COLUMNS)
@pytest.mark.parametrize("text", NOT_JSON, ids=lambda t: repr(t[:12]))
def test_a_json_column_that_is_not_strict_json_is_refused(
    shared: Path, main_store: Store, table: str, column: str, text: str
) -> None:
    sql(shared, (f"UPDATE {table} SET {column} = ? WHERE id = (SELECT MIN(id) FROM {table})", (text,)))
    err = assert_refused(main_store, shared, table, column)
    assert isinstance(err, DamagedSessionFileError) and err.table == table and err.row_id is not None


WRONG_SHAPES = (
    ("sessions", "hosts", "null"), ("sessions", "hosts", '{"a": 1}'), ("sessions", "hosts", "[1, 2]"),
    ("sessions", "hosts", '"lab-server"'), ("sessions", "hosts", json.dumps(["x" * 5000])),
    ("sessions", "plan", "[1]"), ("sessions", "plan", '{"knobs": [1]}'), ("sessions", "plan", '{"knobs": {"a": 5}}'),
    ("sessions", "plan", '{"baseline": {"rsize": [1]}}'), ("plans", "plan", "null"),
    ("host_facts", "facts", "[]"), ("host_facts", "facts", '{"tcp_bps": "fast"}'), ("host_facts", "facts", '{"mtu": "x"}'),
    ("host_facts", "facts", '{"nics": 5}'), ("host_facts", "facts", '{"nics": [{"addresses": 7}]}'),
    ("host_facts", "facts", '{"exports": [{"options": 3}]}'), ("host_facts", "facts", "null"),
    ("trials", "config", "[1]"), ("trials", "config", "null"), ("trials", "config", '{"rsize": [1, 2]}'),
    ("trials", "config", '{"rsize": {"a": 1}}'), ("trials", "workload", '"seqread"'), ("trials", "workload", "null"),
    ("trials", "summary", "[1]"), ("trials", "summary", '{"mean": "fast"}'), ("trials", "summary", '{"cv": "x"}'),
    ("trials", "summary", '{"mean": 1e300}'), ("trials", "summary", '{"mean": -5}'),
    ("trials", "summary", '{"throughput": {"cv": -0.5}}'), ("host_facts", "facts", '{"tcp_bps": -1}'), ("trials", "summary", '{"throughput": {"mean": true}}'),
    ("telemetry", "extra", "[1]"), ("telemetry", "extra", '{"cpu.iowait": "x"}'),
    ("recommendations", "config", "[]"), ("recommendations", "config", '{"rsize": [1]}'),
    ("recommendations", "evidence", '{"ranking": 5}'), ("recommendations", "evidence", '{"ranking": [{"rank": "x"}]}'),
    ("recommendations", "evidence", '{"ranking": [{"trial_ids": ["a"]}]}'),
    ("recommendations", "evidence", '{"ranking": [{"config": [1]}]}'), ("recommendations", "evidence", '{"evidence": 5}'),
    ("recommendations", "evidence", '{"config": {"rsize": [1]}}'),
    ("recommendations", "evidence", '{"ranking": [{"throughput": {"n": "many"}}]}'),
    ("trials", "summary", '{"latency": [1]}'), ("trials", "summary", '{"latency": {"p99_ms": "low"}}'),
    ("trials", "summary", '{"latency": {"p99_ms": -1}}'), ("trials", "summary", '{"latency": {"hist": {"3": -1}}}'),
    ("trials", "summary", '{"latency": {"hist": {"3": 1.5}}}'), ("trials", "summary", '{"latency": {"hist": [1]}}'),
)  # fmt: skip


@pytest.mark.parametrize(("table", "column", "text"), WRONG_SHAPES, ids=lambda v: str(v)[:30])
def test_json_of_the_wrong_shape_is_refused(shared: Path, main_store: Store, table: str, column: str, text: str) -> None:
    sql(shared, (f"UPDATE {table} SET {column} = ? WHERE id = (SELECT MIN(id) FROM {table})", (text,)))
    assert_refused(main_store, shared, table, column)


# -- states, numbers, strings and plain types ----------------------------------------------------

ROW_DAMAGE = (
    ("sessions", "UPDATE sessions SET state = 'pwned'", "state 'pwned' is not one of"),
    ("trials", "UPDATE trials SET state = 'pwned' WHERE id = (SELECT MIN(id) FROM trials)", "state 'pwned'"),
    ("journal", "UPDATE journal SET state = 'pwned'", "state 'pwned'"),
    ("sessions", "UPDATE sessions SET state = 'Complete'", "state 'Complete'"),
    ("sessions", "UPDATE sessions SET created = 'NaN'", "created holds text"),
    ("sessions", "UPDATE sessions SET created = 1e400", "created is inf"),
    ("sessions", "UPDATE sessions SET created = -5", "created is -5"),
    ("sessions", "UPDATE sessions SET updated = 1e300", "updated is 1e+300"),
    ("trials", "UPDATE trials SET started = -1e400 WHERE id = (SELECT MIN(id) FROM trials)", "started is -inf"),
    ("trials", "UPDATE trials SET ended = 'yesterday' WHERE id = (SELECT MIN(id) FROM trials)", "ended holds text"),
    ("trials", "UPDATE trials SET repetition = -1 WHERE id = (SELECT MIN(id) FROM trials)", "repetition is -1"),
    ("trials", "UPDATE trials SET order_index = 1.5 WHERE id = (SELECT MIN(id) FROM trials)", "order_index holds real"),
    ("host_facts", "UPDATE host_facts SET taken_at = x'00'", "taken_at holds blob"),
    ("telemetry", "UPDATE telemetry SET cpu_busy = -1 WHERE id = (SELECT MIN(id) FROM telemetry)", "cpu_busy is -1"),
    ("telemetry", "UPDATE telemetry SET interval = -0.5 WHERE id = (SELECT MIN(id) FROM telemetry)", "interval is -0.5"),
    ("telemetry", "UPDATE telemetry SET t = 1e400 WHERE id = (SELECT MIN(id) FROM telemetry)", "t is inf"),
    ("telemetry", "UPDATE telemetry SET net_rx_bps = 'fast' WHERE id = (SELECT MIN(id) FROM telemetry)",
     "net_rx_bps holds text"),
    ("journal", "UPDATE journal SET created_at = 1e400", "created_at is inf"),
    ("recommendations", "UPDATE recommendations SET created_at = 'now'", "created_at holds text"),
    ("sessions", "UPDATE sessions SET notes = x'c0ffee'", "notes holds blob"),
    ("sessions", "UPDATE sessions SET notes = CAST(x'ff41' AS TEXT)", "notes is not UTF-8"),
    ("sessions", f"UPDATE sessions SET notes = '{'n' * (2 << 20)}'", "notes is 2097152 characters"),
    ("host_facts", f"UPDATE host_facts SET host = '{'h' * 5000}' WHERE id = (SELECT MIN(id) FROM host_facts)",
     "host is 5000 characters"),
    ("journal", "UPDATE journal SET knob = x'6b6e6f62'", "knob holds blob"),
    ("recommendations", "UPDATE recommendations SET objective = x'00'", "objective holds blob"),
    ("sample_blocks", "UPDATE sample_blocks SET client = zeroblob(4) WHERE id = (SELECT MIN(id) FROM sample_blocks)",
     "client holds blob"),
)


@pytest.mark.parametrize(("table", "statement", "what"), ROW_DAMAGE, ids=lambda v: str(v)[:60])
def test_a_value_of_the_wrong_type_state_or_size_is_refused(
    shared: Path, main_store: Store, table: str, statement: str, what: str
) -> None:
    sql(shared, statement)
    assert_refused(main_store, shared, f"{table} row ", what)


def test_a_50_mb_string_is_refused_without_being_loaded(shared: Path, main_store: Store) -> None:
    sql(shared, ("UPDATE sessions SET notes = ?", ("x" * (50 << 20),)))
    assert_refused(main_store, shared, "sessions", "larger than")


def _first_block(path: Path) -> tuple[int, bytes]:
    conn = sqlite3.connect(path)
    try:
        rid, data = conn.execute("SELECT id, data FROM sample_blocks ORDER BY id LIMIT 1").fetchone()
    finally:
        conn.close()
    return int(rid), bytes(data)


def _with_sample(path: Path, field: str, value: float) -> str:
    rid, data = _first_block(path)
    rec = np.frombuffer(data, dtype=SAMPLE_DTYPE).copy()
    rec[field][len(rec) // 2] = value
    sql(path, ("UPDATE sample_blocks SET data = ? WHERE id = ?", (rec.tobytes(), rid)))
    return "sample_blocks"


BLOCK_DAMAGE: tuple[tuple[str, Callable[[Path], object]], ...] = (
    ("n claims a billion", lambda p: sql(p, "UPDATE sample_blocks SET n = 1000000000")),
    ("n negative", lambda p: sql(p, "UPDATE sample_blocks SET n = -1")),
    ("n off by one", lambda p: sql(p, "UPDATE sample_blocks SET n = n + 1")),
    ("n a float", lambda p: sql(p, "UPDATE sample_blocks SET n = n + 0.5")),
    ("data truncated", lambda p: sql(p, "UPDATE sample_blocks SET data = substr(data, 1, length(data) - 1)")),
    ("data empty", lambda p: sql(p, "UPDATE sample_blocks SET data = x''")),
    ("data as text", lambda p: sql(p, "UPDATE sample_blocks SET data = 'abc', n = 0")),
    ("t_first after t_last", lambda p: sql(p, "UPDATE sample_blocks SET t_first = t_last + 1")),
    ("t_first infinite", lambda p: sql(p, "UPDATE sample_blocks SET t_first = -1e400")),
    ("a sample's time NaN", lambda p: _with_sample(p, "t", float("nan"))),
    ("a sample's interval infinite", lambda p: _with_sample(p, "interval", float("inf"))),
    ("a sample's interval negative", lambda p: _with_sample(p, "interval", -0.25)),
)


@pytest.mark.parametrize(("name", "damage"), BLOCK_DAMAGE, ids=[b[0] for b in BLOCK_DAMAGE])
def test_a_sample_block_that_is_not_what_it_claims_is_refused(
    shared: Path, main_store: Store, name: str, damage: Callable[[Path], object]
) -> None:
    damage(shared)
    assert_refused(main_store, shared, "sample_blocks")


def test_a_claimed_billion_samples_are_never_allocated(shared: Path, main_store: Store) -> None:
    sql(shared, "UPDATE sample_blocks SET n = 1000000000")
    tracemalloc.start()
    try:
        assert_refused(main_store, shared, "sample_blocks", "n is 1000000000")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20  # 76 GB were claimed


# -- rows that point nowhere, sessions all or none -----------------------------------------------

ORPHANS = (
    ("trials", "UPDATE trials SET session_id = 999 WHERE id = (SELECT MAX(id) FROM trials)"),
    ("host_facts", "UPDATE host_facts SET session_id = 999"),
    ("recommendations", "UPDATE recommendations SET session_id = session_id + 1000"),
    ("sample_blocks", "UPDATE sample_blocks SET trial_id = 999 WHERE id = (SELECT MIN(id) FROM sample_blocks)"),
    ("telemetry", "UPDATE telemetry SET trial_id = -3 WHERE id = (SELECT MIN(id) FROM telemetry)"),
    ("journal", "UPDATE journal SET session_id = 999"),
    ("trials", "UPDATE trials SET plan_id = 999 WHERE id = (SELECT MIN(id) FROM trials)"),
)


@pytest.mark.parametrize(("table", "statement"), ORPHANS, ids=lambda v: str(v)[:50])
def test_rows_of_sessions_or_trials_the_file_lacks_are_refused(
    shared: Path, main_store: Store, table: str, statement: str
) -> None:
    sql(shared, statement)
    assert_refused(main_store, shared, table)


def test_one_bad_session_among_good_ones_imports_none(tmp_path: Path, main_store: Store) -> None:
    path = tmp_path / "several.db"
    with Store(path) as s:
        fill(s, ("a1", "a2"))
        bad = fill(s, ("b1", "b2"))
        fill(s, ("c1", "c2"))
    sql(path, (f"UPDATE trials SET summary = '{{\"mean\": \"fast\"}}' WHERE id = "
               f"(SELECT MAX(id) FROM trials WHERE session_id = {bad})", ()))
    assert_refused(main_store, path, "trials", "summary")


def test_a_failure_while_copying_rolls_every_session_back(
    tmp_path: Path, main_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "several.db"
    with Store(path) as s:
        fill(s, ("a1",))
        fill(s, ("b1",))
    real = transfer._copy_session
    copied: list[int] = []

    def failing(conn: sqlite3.Connection, src: str, dst: str, session_id: int, origin: str) -> int:
        if copied:  # the first session went in already: the second fails as a full disk would
            raise sqlite3.OperationalError("database or disk is full")
        copied.append(real(conn, src, dst, session_id, origin))
        return copied[-1]

    monkeypatch.setattr(transfer, "_copy_session", failing)
    err = assert_refused(main_store, path, "disk is full")
    assert isinstance(err, ImportFailedError) and copied
    monkeypatch.setattr(transfer, "_copy_session", real)
    assert len(import_sessions(main_store, path).ids) == 2  # the store is usable: nothing stayed attached


def test_no_room_for_the_private_copy_is_a_store_error_naming_the_users_file(
    shared: Path, main_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*_a: object, **_k: object) -> None:
        raise OSError(28, "No space left on device", f"/tmp/{PRIVATE}x1y2")

    monkeypatch.setattr(transfer.tempfile, "TemporaryDirectory", full)
    assert isinstance(assert_refused(main_store, shared, "No space left"), ImportFailedError)


# -- files that are no session file at all --------------------------------------------------------


def _truncated(p: Path) -> None:
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])


def _flipped(p: Path) -> None:
    data = bytearray(p.read_bytes())
    for i in range(4096, len(data), 4096):  # every b-tree page header but the first page's
        data[i : i + 12] = b"\x55" * 12
    p.write_bytes(bytes(data))


def _schema_only(p: Path) -> None:
    p.unlink()
    Store(p).close()
    _rollback_journal(p)


def _rollback_journal(p: Path) -> None:
    conn = sqlite3.connect(p)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()


def _foreign(p: Path) -> None:
    p.unlink()
    conn = sqlite3.connect(p)
    conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
    conn.commit()
    conn.close()


def _loose_schema(p: Path, id_type: str = "INTEGER PRIMARY KEY", drop: str = "", null: str = "",
                  encoding: str = "UTF-8", tail: str = "") -> None:  # fmt: skip
    """The same rows under tables with no types and no constraints (another program's idea of the schema)."""
    src = sqlite3.connect(p)
    tables = {t: [r[1] for r in src.execute(f"PRAGMA table_info({t})")] for t in TABLES}
    rows = {t: src.execute(f"SELECT * FROM {t}").fetchall() for t in TABLES}
    version = src.execute("PRAGMA user_version").fetchone()[0]
    src.close()
    p.unlink()
    out = sqlite3.connect(p)
    out.execute(f"PRAGMA encoding = '{encoding}'")
    for t, cols in tables.items():
        keep = [c for c in cols if f"{t}.{c}" != drop]
        out.execute(f"CREATE TABLE {t} (id {id_type}, {', '.join(c for c in keep if c != 'id')}){tail}")
        idx = [cols.index(c) for c in keep]
        out.executemany(f"INSERT INTO {t} ({', '.join(keep)}) VALUES ({', '.join('?' * len(keep))})",
                        [tuple(r[i] for i in idx) for r in rows[t]])
    if null:
        t, c = null.split(".")
        out.execute(f"UPDATE {t} SET {c} = NULL")
    out.execute(f"PRAGMA user_version = {version}")
    out.commit()
    out.close()


FILES: tuple[tuple[str, Callable[[Path], object], type[StoreError]], ...] = (
    ("random bytes", lambda p: p.write_bytes(os.urandom(8192)), DamagedDatabaseError),
    ("a text file", lambda p: p.write_text("hello\n" * 100), DamagedDatabaseError),
    ("empty", lambda p: p.write_bytes(b""), DamagedSessionFileError),
    ("the header alone", lambda p: p.write_bytes(b"SQLite format 3\x00"), DamagedSessionFileError),
    ("truncated", _truncated, DamagedSessionFileError),
    ("pages overwritten", _flipped, DamagedSessionFileError),
    ("only the schema", _schema_only, DamagedSessionFileError),
    ("from the future", lambda p: sql(p, "PRAGMA user_version = 99"), SchemaTooNewError),
    ("not nfs-tuner's", _foreign, DamagedSessionFileError),
    ("a table missing", lambda p: sql(p, "DROP TABLE telemetry"), DamagedSessionFileError),
    ("a column missing", lambda p: sql(p, "ALTER TABLE sessions DROP COLUMN notes"), DamagedSessionFileError),
    ("ids that are text", lambda p: _loose_schema(p, "TEXT"), DamagedSessionFileError),
    ("no types, a NULL state", lambda p: _loose_schema(p, null="sessions.state"), DamagedSessionFileError),
    ("no types, NULL hosts", lambda p: _loose_schema(p, null="sessions.hosts"), DamagedSessionFileError),
    ("no types, NULL sample data", lambda p: _loose_schema(p, null="sample_blocks.data"), DamagedSessionFileError),
    ("no types, NULL times", lambda p: _loose_schema(p, null="trials.order_index"), DamagedSessionFileError),
    ("no types, a column missing", lambda p: _loose_schema(p, drop="trials.config"), DamagedSessionFileError),
    ("UTF-16 text", lambda p: _loose_schema(p, encoding="UTF-16le"), DamagedSessionFileError),
    ("without rowids, text ids", lambda p: (_loose_schema(p, tail=" WITHOUT ROWID"),
                                             sql(p, "UPDATE trials SET id = 'x' || id")), DamagedSessionFileError),
    ("without rowids", lambda p: _loose_schema(p, tail=" WITHOUT ROWID"), DamagedSessionFileError),
)


@pytest.mark.parametrize(("name", "make", "kind"), FILES, ids=[f[0] for f in FILES])
def test_a_file_that_is_no_session_file_is_refused(
    shared: Path, main_store: Store, name: str, make: Callable[[Path], object], kind: type[StoreError]
) -> None:
    make(shared)
    err = assert_refused(main_store, shared)
    assert isinstance(err, kind), repr(err)


def test_a_directory_a_pipe_a_missing_file_and_an_unreadable_one_are_refused(tmp_path: Path, main_store: Store) -> None:
    folder = tmp_path / "a-folder.db"
    folder.mkdir()
    (folder / "inside").write_text("x")
    assert isinstance(assert_refused(main_store, folder, "directory"), DamagedSessionFileError)
    pipe = tmp_path / "pipe.db"
    os.mkfifo(pipe)  # copying it would wait for a writer for ever
    assert isinstance(assert_refused(main_store, pipe, "not a regular file"), DamagedSessionFileError)
    with pytest.raises(DamagedSessionFileError, match="not a regular file"):
        import_sessions(main_store, Path("/dev/zero"))
    missing = tmp_path / "missing.db"
    with pytest.raises(ImportFailedError, match=r"missing\.db"):
        import_sessions(main_store, missing)
    for odd in (tmp_path / "nul\0.db", tmp_path / ("long" * 100 + ".db")):
        with pytest.raises(ImportFailedError):
            import_sessions(main_store, odd)
    if os.geteuid() != 0:  # root reads any file
        locked = tmp_path / "locked.db"
        locked.write_bytes(b"x" * 100)
        locked.chmod(0)
        try:
            assert isinstance(assert_refused(main_store, locked, "cannot be read"), ImportFailedError)
        finally:
            locked.chmod(0o600)


def test_a_version_1_file_whose_block_cannot_be_migrated_is_refused(tmp_path: Path, main_store: Store) -> None:
    path = tmp_path / "old.db"
    with Store(path, migrations=MIGRATIONS[:1]) as s:
        tid = s.add_trial(s.create_session(["c1"]), {"rsize": 1}, {"kind": "seq_read"})
    sql(path, ("INSERT INTO sample_blocks (trial_id, client, t_first, t_last, n, data) VALUES (?,?,?,?,?,?)",
               (tid, "c1", 0.0, 0.0, 2, b"x" * 60)))
    _rollback_journal(path)
    assert isinstance(assert_refused(main_store, path, "version-1 samples"), DamagedSessionFileError)


# -- what still imports, and the faces ------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_valid_export_imports_and_lists_shows_and_reports(
    shared: Path, main_store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = digest(shared)
    (sid,) = import_sessions(main_store, shared).ids
    assert digest(shared) == before
    s = main_store.get_session(sid)
    assert s.origin == f"imported from {shared.name}" and s.hosts == ("lab-server", "lab-client1")
    assert main_store.sample_count(sid) == 4 * 8 and len(main_store.trials(sid)) == 5
    db = str(main_store.path)
    code, out, err = run(capsys, "--db", db, "sessions", "list")
    assert code == 0 and "(imported)" in out and "rsize=1048576" in out, err
    code, out, err = run(capsys, "--db", db, "sessions", "show", str(sid))
    assert code == 0 and "Trials (5):" in out, err
    code, out, err = run(capsys, "--db", db, "report", str(sid), "--to", str(tmp_path / "r.html"))
    assert code == 0 and (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>"), err


LEGAL_ODDITIES = (
    ("a session with no trials, facts, plans or journal", (
        "DELETE FROM sample_blocks", "DELETE FROM telemetry", "DELETE FROM recommendations", "DELETE FROM trials",
        "DELETE FROM plans", "DELETE FROM host_facts", "DELETE FROM journal")),
    ("no plan, no summaries, no extras", (
        "UPDATE sessions SET plan = NULL", "UPDATE trials SET summary = NULL", "UPDATE telemetry SET extra = NULL")),
    ("null figures and unknown keys", (
        """UPDATE trials SET summary = '{"mean": 5e7, "cv": null, "deepest_dip": null, "future": [1, {"x": 2}]}'""",
        """UPDATE host_facts SET facts = '{"hostname": "x", "new_field": {"deep": [[1]]}}'""",
        "UPDATE recommendations SET evidence = '[\"a line\"]'")),
    ("a running session", ("UPDATE sessions SET state = 'running'", "UPDATE trials SET state = 'running'")),
    ("no hosts, empty notes", ("UPDATE sessions SET hosts = '[]', notes = ''",)),
)  # fmt: skip


@pytest.mark.parametrize(("name", "statements"), LEGAL_ODDITIES, ids=[o[0] for o in LEGAL_ODDITIES])
def test_odd_but_valid_files_import_and_every_face_reads_them(
    shared: Path, main_store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    name: str, statements: tuple[str, ...],
) -> None:  # fmt: skip
    sql(shared, *statements)
    (sid,) = import_sessions(main_store, shared).ids
    assert main_store.get_session(sid).state != SessionState.RUNNING  # a copy never runs anywhere
    db = str(main_store.path)
    for argv in (("sessions", "list"), ("sessions", "list", "--json"), ("sessions", "show", str(sid)),
                 ("report", str(sid), "--to", str(tmp_path / "r.html"))):
        code, _, err = run(capsys, "--db", db, *argv)
        assert code == 0, (argv, err)


def test_the_cli_import_command(shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "cli.db"
    Store(db).close()
    code, out, err = run(capsys, "--db", str(db), "sessions", "import", str(shared))
    assert code == 0 and "imported 1 session(s)" in out, err
    sql(shared, "UPDATE trials SET config = 'not json'")
    before = digest(shared)
    code, out, err = run(capsys, "--db", str(db), "sessions", "import", str(shared))
    assert code == 1 and out == ""
    assert str(shared) in err and "trials row" in err and "Nothing was imported" in err
    assert "Traceback" not in err and PRIVATE not in err
    assert digest(shared) == before
    with Store(db, readonly=True) as s:
        assert len(s.list_sessions()) == 1


@pytest.mark.parametrize(("statement", "command"), [
    ("UPDATE sessions SET hosts = 'not json'", "list"),
    ("UPDATE sessions SET state = 'pwned'", "list"),
    ("UPDATE trials SET config = '[1'", "show"),
    ("UPDATE sample_blocks SET n = 1000000000", "report"),
    ("UPDATE journal SET state = 'pwned'", "report"),
])  # fmt: skip
def test_a_bad_row_in_ones_own_database_is_a_message_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], statement: str, command: str
) -> None:
    db = tmp_path / "own.db"
    with Store(db) as s:
        sid = fill(s)
    sql(db, statement)
    argv = {"list": ("sessions", "list"), "show": ("sessions", "show", str(sid)),
            "report": ("report", str(sid), "--to", str(tmp_path / "r.html"))}[command]  # fmt: skip
    code, _, err = run(capsys, "--db", str(db), *argv)
    assert code == 1 and "damaged" in err and "Traceback" not in err, err


# -- whatever an import accepts, every face reads ---------------------------------------------------

ODD_VALUES: tuple[Any, ...] = (None, "x", "", 0, -1, 1.5, True, [], {}, [1], {"a": 1}, ["x"], [[1]], 1e300, "async")
READER_KEYS = ("sweep", "clients", "server", "baseline", "knobs", "workloads", "kind", "name", "objective",
               "throughput", "telemetry", "unit", "extra", "host", "tcp_bps", "mtu", "disk_read_bps", "os", "nics",
               "exports", "ranking", "gain", "evidence", "warnings", "config", "excluded", "rank", "trial_ids", "mean",
               "cv", "deepest_dip", "ops_per_s")  # fmt: skip


def _key_paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    items = value.items() if isinstance(value, dict) else enumerate(value[:2]) if isinstance(value, list) else ()
    for k, v in items:
        yield from _key_paths(v, (*path, k))


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    out = json.loads(json.dumps(value))
    at = out
    for k in path[:-1]:
        at = at[k]
    at[path[-1]] = new
    return out


@pytest.mark.parametrize(("table", "column"), JSON_COLUMNS)
def test_whatever_an_import_accepts_every_face_reads(
    pristine: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str, column: str
) -> None:
    """A seeded sample of odd values anywhere in a column (the full sweep found no reader that crashes)."""
    conn = sqlite3.connect(pristine)
    rid, text = conn.execute(f"SELECT id, {column} FROM {table} ORDER BY id LIMIT 1").fetchone()
    conn.close()
    original = json.loads(text) if text is not None else None
    mutations = [_replaced(original, p, v) for p in _key_paths(original) for v in ODD_VALUES]
    if isinstance(original, dict):
        mutations += [{**original, k: v} for k in READER_KEYS for v in ODD_VALUES]
    for i, value in enumerate(random.Random(f"{table}.{column}").sample(mutations, 12)):
        path = tmp_path / f"odd-{i}.db"
        path.write_bytes(pristine.read_bytes())
        sql(path, (f"UPDATE {table} SET {column} = ? WHERE id = ?", (json.dumps(value), rid)))
        with Store(tmp_path / f"main-{i}.db") as store:
            try:
                (sid,) = import_sessions(store, path).ids
            except StoreError:
                continue  # refused: fine, as long as it is a StoreError
        db = str(tmp_path / f"main-{i}.db")
        for argv in (("sessions", "list", "--json"), ("sessions", "show", str(sid)),
                     ("report", str(sid), "--to", str(tmp_path / "r.html"), "--force")):
            code, _, err = run(capsys, "--db", db, *argv)
            assert code == 0, (value, argv, err)
