"""The content check a received session file passes before any of it is imported.

Opening a file with ``Store`` checks its schema; this checks what its rows hold, on the
import's private copy: every value has its column's type and a sane size, every state is
one the life cycles know, times and figures are finite, JSON parses strictly and has the
shape the readers rely on (app.store.json_shapes), sample blocks hold exactly the samples
they claim, and no row belongs to a session or trial the file lacks. The work is bounded:
rows are streamed, SQLite refuses to load any value over MAX_VALUE_BYTES, and sample data
is read through incremental blob I/O in fixed chunks, never whole.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from app.store.errors import DamagedSessionFileError
from app.store.json_shapes import (
    AnyJson,
    ListOf,
    Nullable,
    Num,
    Obj,
    Scalar,
    Shape,
    ShapeError,
    Str,
    parse,
)
from app.store.sample_blocks import SAMPLE_DTYPE
from app.store.states import JournalState, SessionState, TrialState

MAX_VALUE_BYTES = 16 << 20  # any one stored value; the largest real ones (host facts) are ~100 kB
MAX_NAME = 4096  # host, client, knob, role, target (PATH_MAX), objective
MAX_TEXT = 1 << 20  # notes, reasons, details
MAX_TIME = 1e10  # seconds since 1970 (year 2286): time.localtime refuses far beyond
MAX_FIGURE = 1e18  # any rate or figure: keeps sums and means finite
MAX_BLOCK_SAMPLES = 4_000_000  # 11 days at 4 Hz in one block; a trial lasts minutes
CHUNK_SAMPLES = 65_536  # samples read at a time (5 MB)

# -- the JSON each column holds ------------------------------------------------

ANY = AnyJson()
NAME = Str(MAX_NAME)
KNOB_VALUE = Scalar(null=False)  # experiments.plan.Value: snippets render it
CONFIG = Obj(values=KNOB_VALUE)  # knob -> value
FIGURE = Nullable(Num(0, MAX_FIGURE))  # rates, counts, shares: the writers' are never below 0
_FIGURES: dict[str, Shape] = dict.fromkeys(
    ("mean", "median", "p5", "cv", "deepest_dip", "dips", "ops_per_s", "half_width", "n"), FIGURE
)
# a trial's latency (experiments.latency): its figures in ms and the histogram (bucket -> operations) they come from
_LATENCY = Obj({**dict.fromkeys(("ops", "p50_ms", "p99_ms", "p999_ms", "max_ms"), FIGURE),
                "hist": Obj(values=Num(0, 2**62, integer=True))})  # fmt: skip
SUMMARY = Nullable(Obj({**_FIGURES, "throughput": Obj(_FIGURES, loose=True), "latency": Nullable(_LATENCY)}))
PLAN = Obj({
    "knobs": Obj(values=ListOf(KNOB_VALUE)), "baseline": Obj(values=Scalar()), "workloads": ListOf(ANY),
    "sweep": Obj({"clients": ListOf(NAME), "server": Nullable(NAME)}),
})  # fmt: skip
_NIC = Obj({"name": Scalar(), "addresses": Nullable(ListOf(Scalar()))}, loose=True)
_EXPORT = Obj({"path": Scalar(), "client": Scalar(), "options": ListOf(Scalar())}, loose=True)
FACTS = Obj({
    "nics": Nullable(ListOf(_NIC)), "exports": Nullable(ListOf(_EXPORT)),
    "export_filesystems": Nullable(ListOf(ANY)), "md_arrays": Nullable(ListOf(ANY)),
    "nfs_mounts": Nullable(ListOf(ANY)), "mem_total_kb": FIGURE,
    # a measured ceiling's facts
    "tcp_bps": FIGURE, "mtu": Nullable(Num(0, 1 << 20)), "disk_read_bps": FIGURE, "disk_write_bps": FIGURE,
})  # fmt: skip
_INTERVAL = Obj({"n": Nullable(Num(0, 1e9)), "mean": FIGURE, "half_width": FIGURE}, loose=True)
_RANKED = Obj({
    "rank": Nullable(Num(-1e9, 1e9)), "config": Nullable(CONFIG), "trial_ids": Nullable(ListOf(Num(integer=True))),
    "throughput": _INTERVAL, "sustainable": _INTERVAL,
}, loose=True)  # fmt: skip
EVIDENCE = Obj({
    "config": Nullable(CONFIG), "ranking": Nullable(ListOf(_RANKED)), "evidence": Nullable(ListOf(ANY)),
    "warnings": Nullable(ListOf(ANY)), "excluded": Nullable(ListOf(Obj({"config": Nullable(CONFIG)}, loose=True))),
}, loose=True)  # fmt: skip
EXTRA = Obj(values=Nullable(Num(-MAX_FIGURE, MAX_FIGURE)))  # telemetry extras: name -> number

# -- the columns of each table --------------------------------------------------


@dataclass(frozen=True, slots=True)
class Col:
    """One column: ``kind`` int, real, text, state or json; bounds, size or shape as the kind needs."""

    name: str
    kind: Literal["int", "real", "text", "state", "json"]
    nullable: bool = False
    low: float | None = None
    high: float | None = None
    max_len: int = MAX_TEXT
    states: frozenset[str] = frozenset()
    shape: Shape = ANY


def _int(name: str, low: float | None = None, high: float | None = None, *, nullable: bool = False) -> Col:
    return Col(name, "int", nullable, low, high)


def _real(name: str, low: float | None = -MAX_FIGURE, high: float | None = MAX_FIGURE, *,
          nullable: bool = False) -> Col:  # fmt: skip
    return Col(name, "real", nullable, low, high)


def _time(name: str, *, nullable: bool = False) -> Col:
    return _real(name, 0.0, MAX_TIME, nullable=nullable)


def _text(name: str, max_len: int = MAX_TEXT, *, nullable: bool = False) -> Col:
    return Col(name, "text", nullable, max_len=max_len)


def _state(name: str, values: Sequence[str]) -> Col:
    return Col(name, "state", states=frozenset(values))


def _json(name: str, shape: Shape, *, nullable: bool = False) -> Col:
    return Col(name, "json", nullable, max_len=MAX_VALUE_BYTES, shape=shape)


_RATE = (0.0, MAX_FIGURE)
_ID = _int("id")  # an INTEGER PRIMARY KEY holds integers only in a rowid table: checked, not assumed
TABLES: dict[str, tuple[Col, ...]] = {
    "sessions": (
        _ID, _time("created"), _time("updated"), _state("state", [s.value for s in SessionState]),
        _json("hosts", ListOf(NAME)), _json("plan", PLAN, nullable=True), _text("notes"),
        _text("origin", nullable=True),
    ),
    "host_facts": (_ID, _int("session_id"), _text("host", MAX_NAME), _text("role", MAX_NAME), _time("taken_at"),
                   _json("facts", FACTS)),
    "plans": (_ID, _int("session_id"), _time("created"), _json("plan", PLAN)),
    "trials": (
        _ID, _int("session_id"), _int("plan_id", nullable=True), _json("config", CONFIG), _json("workload", Obj()),
        _int("repetition", 0, 1e9), _int("order_index", -1e12, 1e12), _state("state", [s.value for s in TrialState]),
        _text("reason"), _time("started", nullable=True), _time("ended", nullable=True),
        _json("summary", SUMMARY, nullable=True), _text("step", MAX_NAME),
    ),
    "sample_blocks": (_ID, _int("trial_id"), _text("client", MAX_NAME), _real("t_first"), _real("t_last"),
                      _int("n", 0, MAX_BLOCK_SAMPLES)),  # data: checked on its own (_Check.blocks)
    "telemetry": (
        _ID, _int("trial_id"), _text("host", MAX_NAME), _real("t"), _real("interval", *_RATE),
        *(_real(c, *_RATE) for c in ("disk_read_bps", "disk_write_bps", "net_rx_bps", "net_tx_bps", "cpu_busy")),
        _json("extra", EXTRA, nullable=True),
    ),
    "journal": (
        _ID, _int("session_id", nullable=True), _text("host", MAX_NAME), _text("knob", MAX_NAME),
        _text("target", MAX_NAME), _json("old_value", ANY, nullable=True),
        _json("new_value", ANY, nullable=True), _time("created_at"), _time("updated_at"),
        _state("state", [s.value for s in JournalState]), _text("detail"),
    ),
    "recommendations": (_ID, _int("session_id"), _text("objective", MAX_NAME), _json("config", CONFIG),
                        _json("evidence", EVIDENCE), _time("created_at")),
}

# Rows that point at a row the file lacks: (table, the query for the first such row's id, what is wrong).
_ORPHANS: tuple[tuple[str, str, str], ...] = (
    *((t, f"SELECT id FROM {t} WHERE session_id NOT IN (SELECT id FROM sessions)", "belongs to no session in the file")
      for t in ("host_facts", "plans", "trials", "recommendations")),
    ("journal", "SELECT id FROM journal WHERE session_id IS NOT NULL AND session_id NOT IN (SELECT id FROM sessions)",
     "belongs to no session in the file"),
    ("trials", "SELECT t.id FROM trials t WHERE t.plan_id IS NOT NULL AND NOT EXISTS"
     " (SELECT 1 FROM plans p WHERE p.id = t.plan_id AND p.session_id = t.session_id)",
     "names a plan its session does not have"),
    *((t, f"SELECT id FROM {t} WHERE trial_id NOT IN (SELECT id FROM trials)", "belongs to no trial in the file")
      for t in ("sample_blocks", "telemetry")),
)  # fmt: skip


class _Bad(Exception):
    """A problem with one value; the walk adds the table and row."""


def _value(col: Col, kind: str, value: Any) -> None:
    """Check one stored value (text arrives as bytes: decoding is part of the check)."""
    if kind == "null":
        if not col.nullable:
            raise _Bad(f"{col.name} is empty (NULL)")
        return
    if col.kind in ("int", "real"):
        if kind not in ("integer", "real") or (col.kind == "int" and kind != "integer"):
            raise _Bad(f"{col.name} holds {kind}, not {'an integer' if col.kind == 'int' else 'a number'}")
        if not math.isfinite(value):
            raise _Bad(f"{col.name} is {value}, not a finite number")
        if (col.low is not None and value < col.low) or (col.high is not None and value > col.high):
            raise _Bad(f"{col.name} is {value}, outside [{col.low}, {col.high}]")
        return
    if kind != "text":
        raise _Bad(f"{col.name} holds {kind}, not text")
    try:
        text = bytes(value).decode("utf-8")
    except UnicodeDecodeError as e:
        raise _Bad(f"{col.name} is not UTF-8 text ({e.reason} at byte {e.start})") from e
    if col.kind == "json":
        try:
            parse(text, col.shape, col.name)
        except ShapeError as e:
            raise _Bad(str(e)) from e
        return
    if len(text) > col.max_len:
        raise _Bad(f"{col.name} is {len(text)} characters long (at most {col.max_len})")
    if col.kind == "state" and text not in col.states:
        raise _Bad(f"{col.name} {text[:40]!r} is not one of {', '.join(sorted(col.states))}")


def _values(cols: Sequence[Col], row: Sequence[Any]) -> dict[str, Any]:
    """Check a streamed row (``id, typeof, value, typeof, value…``); returns its values by column name."""
    out: dict[str, Any] = {}
    for i, col in enumerate(cols):
        _value(col, row[1 + 2 * i], row[2 + 2 * i])
        out[col.name] = row[2 + 2 * i]
    return out


class _Check:
    """One walk over a private copy; every finding names the user's file (``shown``)."""

    def __init__(self, conn: sqlite3.Connection, shown: Path) -> None:
        self.conn = conn
        self.shown = shown

    def damaged(self, cause: str, table: str | None = None, row_id: object = None) -> DamagedSessionFileError:
        return DamagedSessionFileError(self.shown, cause, table=table, row_id=row_id)

    def rows(self, table: str, cols: Sequence[Col], extra: str = "") -> Iterator[tuple[Any, ...]]:
        """Stream ``id, (typeof, value) per column[, extra]``; a value over the size limit is a finding at its row."""
        # Text as bytes: decoding is part of the check, so bad UTF-8 is a finding, not a crash.
        select = ", ".join(
            f"typeof({c.name}), CASE typeof({c.name}) WHEN 'text' THEN CAST({c.name} AS BLOB) ELSE {c.name} END"
            for c in cols
        )
        last = -(2**63)
        try:
            for row in self.conn.execute(f"SELECT id, {select}{extra} FROM {table} ORDER BY id"):
                last = row[0]
                yield row
        except sqlite3.DataError as e:  # SQLITE_TOOBIG: SQLite refused to load a value
            nxt = self.conn.execute(f"SELECT id FROM {table} WHERE id > ? ORDER BY id LIMIT 1", (last,)).fetchone()
            raise self.damaged(f"a value is larger than {MAX_VALUE_BYTES >> 20} MB", table,
                               None if nxt is None else nxt[0]) from e  # fmt: skip

    def table(self, table: str, cols: Sequence[Col]) -> None:
        for row in self.rows(table, cols):
            try:
                _values(cols, row)
            except _Bad as e:
                raise self.damaged(str(e), table, row[0]) from e

    def blocks(self) -> None:
        """Sample blocks: n within bounds and len(data) == n × the record size, then every record's time."""
        size = SAMPLE_DTYPE.itemsize
        for row in self.rows("sample_blocks", TABLES["sample_blocks"], ", typeof(data), length(data)"):
            rid, data_kind, data_len = row[0], row[-2], row[-1]
            try:
                v = _values(TABLES["sample_blocks"], row)
                if data_kind != "blob":
                    raise _Bad(f"data holds {data_kind}, not a blob")
                if data_len != v["n"] * size:
                    raise _Bad(f"n claims {v['n']} samples, but data holds {data_len} bytes "
                               f"({data_len / size:g} samples)")  # fmt: skip
                if v["t_first"] > v["t_last"]:
                    raise _Bad(f"t_first {v['t_first']} is after t_last {v['t_last']}")
                self.samples(rid, v["n"])
            except _Bad as e:
                raise self.damaged(str(e), "sample_blocks", rid) from e

    def samples(self, rid: int, n: int) -> None:
        """Every sample's time and interval finite (the plots' axes), read a chunk at a time."""
        size = SAMPLE_DTYPE.itemsize
        with self.conn.blobopen("sample_blocks", "data", rid, readonly=True) as blob:
            for start in range(0, n, CHUNK_SAMPLES):
                rec = np.frombuffer(blob.read(min(CHUNK_SAMPLES, n - start) * size), dtype=SAMPLE_DTYPE)
                if not (np.isfinite(rec["t"]).all() and np.isfinite(rec["interval"]).all()):
                    raise _Bad(f"a sample from #{start} on has a time or interval that is not a finite number")
                if (rec["interval"] < 0).any():
                    raise _Bad(f"a sample from #{start} on has a negative interval")

    def columns(self) -> None:
        encoding = str(self.conn.execute("PRAGMA encoding").fetchone()[0])
        if encoding != "UTF-8":  # the user's store is UTF-8, and SQLite attaches only the same
            raise self.damaged(f"its text is {encoding}; nfs-tuner writes UTF-8")
        for table, cols in TABLES.items():
            info = {r[1]: r for r in self.conn.execute(f"PRAGMA table_info({table})")}
            for name in (*(c.name for c in cols), *(("data",) if table == "sample_blocks" else ())):
                if name not in info:
                    raise self.damaged(f"it has no column {name}", table)
            _, _, decl, _, _, pk = info["id"]
            if str(decl).upper() != "INTEGER" or pk != 1:
                raise self.damaged("its id is not an INTEGER PRIMARY KEY", table)

    def run(self) -> list[int]:
        conn = self.conn
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        conn.execute("PRAGMA query_only = ON")
        conn.execute("PRAGMA trusted_schema = OFF")
        self.columns()
        for table, cols in TABLES.items():
            if table == "sample_blocks":
                self.blocks()
            else:
                self.table(table, cols)
        for table, sql, what in _ORPHANS:
            bad = conn.execute(sql + " LIMIT 1").fetchone()
            if bad is not None:
                raise self.damaged(what, table, int(bad[0]))
        # Last, as the rows' own findings name a row: pages and indexes the walk did not read.
        problems = [str(r[0]) for r in conn.execute("PRAGMA quick_check(3)")]
        if problems != ["ok"]:
            raise self.damaged("SQLite's check: " + "; ".join(problems))
        ids = [int(r[0]) for r in conn.execute("SELECT id FROM sessions ORDER BY created, id")]
        if not ids:
            raise self.damaged("it holds no session")
        return ids


def check_session_file(copy: Path, shown: Path) -> list[int]:
    """Check the private copy ``copy`` of the user's file ``shown``; its session ids, oldest first.

    Raises DamagedSessionFileError naming ``shown``, the table, the row and what is wrong.
    """
    try:
        with closing(sqlite3.connect(str(copy), isolation_level=None)) as conn:
            return _Check(conn, shown).run()
    except sqlite3.Error as e:  # corrupt pages and the like, found while reading
        raise DamagedSessionFileError(shown, f"SQLite: {e}") from e
    except (ValueError, TypeError, OverflowError) as e:  # content no check above foresaw: still the file's
        raise DamagedSessionFileError(shown, f"{type(e).__name__}: {e}") from e
