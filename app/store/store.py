"""The session store: one writer connection over a WAL-mode SQLite file.

Readers (the session browser, a second process) may open the same file with
``Store(path, readonly=True)``. All writes go through ``transaction()`` under one lock,
so the SampleWriter's flusher thread and the asyncio loop can share the connection;
``attached()`` is the same transaction with a second database file attached, for the
bulk copies of ``app.store.transfer``.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from app.store.connection import open_database
from app.store.errors import (
    DamagedDatabaseError,
    InvalidTransitionError,
    LockedDatabaseError,
    NotFoundError,
    StoreError,
)
from app.store.records import (
    HostFactsRecord,
    JournalEntry,
    PlanRecord,
    RecommendationRecord,
    SessionRecord,
    TelemetryArrays,
    TrialRecord,
)
from app.store.sample_blocks import SampleArrays, assemble, pack, unpack
from app.store.schema import MIGRATIONS, Migration
from app.store.states import (
    JOURNAL_MOVES,
    OPEN_JOURNAL_STATES,
    SESSION_MOVES,
    JournalState,
    SessionState,
    TrialState,
)
from app.store.writer import SampleWriter
from experiments.samples import HostTelemetry, Sample

_R = TypeVar("_R")


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _object(value: Any) -> dict[str, Any]:
    """A JSON column that holds an object (a configuration, telemetry extras)."""
    if not isinstance(value, dict):
        raise TypeError(f"a JSON object belongs here, not {type(value).__name__}")
    return value


def _str_tuple(value: Any) -> tuple[str, ...]:
    """A JSON column that holds a list of strings (a session's hosts)."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError("a JSON list of strings belongs here")
    return tuple(value)


def _host_facts_record(r: Sequence[Any]) -> HostFactsRecord:
    return HostFactsRecord(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]))


def _plan_record(r: Sequence[Any]) -> PlanRecord:
    return PlanRecord(r[0], r[1], r[2], json.loads(r[3]))


def _recommendation_record(r: Sequence[Any]) -> RecommendationRecord:
    return RecommendationRecord(r[0], r[1], r[2], _object(json.loads(r[3])), json.loads(r[4]), r[5])


def _telemetry_arrays(rows: Sequence[Sequence[Any]]) -> TelemetryArrays:
    cols = list(zip(*rows, strict=True)) if rows else [()] * 9
    num = [np.asarray(col, dtype=np.float64) for col in cols[1:8]]
    return TelemetryArrays(
        host=tuple(cols[0]), t=num[0], interval=num[1], disk_read_bps=num[2], disk_write_bps=num[3],
        net_rx_bps=num[4], net_tx_bps=num[5], cpu_busy=num[6],
        extra=tuple(_object(json.loads(e)) if e else {} for e in cols[8]),
    )


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def owner_tag() -> str:
    """This machine and boot: a pid means something only within one boot of one host."""
    return f"{socket.gethostname()}#{_boot_id()}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Store:
    """Sessions, trials, samples, journal and recommendations in one SQLite file."""

    def __init__(
        self,
        path: str | Path,
        *,
        readonly: bool = False,
        migrations: Sequence[Migration] = MIGRATIONS,
        clock: Callable[[], float] = time.time,
        shown_as: Path | None = None,
        create: bool = True,
    ) -> None:
        self.path = Path(path)
        # The file errors name: the user's own file when this store is a private copy of it.
        self.shown = shown_as or self.path
        self.readonly = readonly
        self._clock = clock
        self._lock = threading.RLock()
        self._depth = 0
        self._writers: list[SampleWriter] = []
        self._conn = open_database(self.path, readonly=readonly, migrations=migrations, shown_as=shown_as,
                                   create=create)

    # -- plumbing ---------------------------------------------------------------

    def close(self) -> None:
        for w in list(self._writers):
            w.close()
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return int(self._q("PRAGMA user_version")[0][0])

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (nested ones join the outer one); yields the connection."""
        if self.readonly:
            raise StoreError(f"{self.shown} is open read-only.")
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self._conn
                finally:
                    self._depth -= 1
                return
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.DatabaseError as e:
                self._raise_damaged(e)
                if getattr(e, "sqlite_errorname", "").startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
                    raise LockedDatabaseError(self.shown) from e  # held past the busy timeout
                raise
            self._depth = 1
            try:
                yield self._conn
            except BaseException:
                self._depth = 0
                if self._conn.in_transaction:  # SQLite may have rolled back already (disk full, I/O error)
                    self._conn.execute("ROLLBACK")
                raise
            self._depth = 0
            self._conn.execute("COMMIT")

    @contextmanager
    def attached(self, path: Path, alias: str) -> Iterator[sqlite3.Connection]:
        """A write transaction with the database file ``path`` attached as schema ``alias``.

        SQLite attaches only outside a transaction, so this cannot nest in ``transaction()``.
        """
        if not alias.isidentifier():
            raise ValueError(f"not a schema name: {alias!r}")
        with self._lock:
            if self._depth:
                raise StoreError("attached() cannot run inside another transaction")
            self._conn.execute("ATTACH DATABASE ? AS " + alias, (str(path),))
            try:
                with self.transaction() as conn:
                    yield conn
            except BaseException:
                # Rolled back; a failing DETACH must not hide why.
                with suppress(sqlite3.Error):
                    self._conn.execute("DETACH DATABASE " + alias)
                raise
            self._conn.execute("DETACH DATABASE " + alias)

    def _q(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.DatabaseError as e:
                self._raise_damaged(e)
                raise

    def _raise_damaged(self, e: sqlite3.DatabaseError) -> None:
        # Plain DatabaseError (not Operational/Integrity…) is what corruption raises.
        if type(e) is sqlite3.DatabaseError:
            raise DamagedDatabaseError(self.shown, str(e)) from e
        if isinstance(e, sqlite3.OperationalError) and "decode" in str(e):  # text that is not UTF-8
            raise DamagedDatabaseError(self.shown, str(e)) from e

    def _decode(self, where: str, make: Callable[[], _R]) -> _R:
        """A record from stored rows; a row that does not decode is a damaged file, not a traceback."""
        try:
            return make()
        except (ValueError, TypeError, KeyError, RecursionError) as e:  # json.JSONDecodeError is a ValueError
            raise DamagedDatabaseError(self.shown, f"{where}: {type(e).__name__}: {e}") from e

    def _now(self) -> float:
        return self._clock()

    def check_integrity(self) -> list[str]:
        """SQLite's quick_check: an empty list means the file is sound (reads every page)."""
        rows = [r[0] for r in self._q("PRAGMA quick_check")]
        return [] if rows == ["ok"] else rows

    def sample_writer(self, flush_interval: float = 1.0, *, background: bool = True) -> SampleWriter:
        """A buffered writer for the samples of running trials; ``close`` it (or the store) when done."""
        writer = SampleWriter(self, flush_interval=flush_interval, background=background, on_close=self._forget)
        self._writers.append(writer)
        return writer

    def _forget(self, writer: SampleWriter) -> None:
        if writer in self._writers:
            self._writers.remove(writer)

    def flush_writers(self) -> None:
        """Commit every open writer's buffered samples (before reading or copying a session)."""
        for w in list(self._writers):
            w.flush()

    # -- sessions ---------------------------------------------------------------

    def create_session(self, hosts: Sequence[str], plan: Any = None, notes: str = "") -> int:
        now = self._now()
        with self.transaction() as c:
            cur = c.execute(
                "INSERT INTO sessions (created, updated, state, hosts, plan, notes, owner_host, owner_pid)"
                " VALUES (?,?,?,?,?,?,?,?)",
                (now, now, SessionState.RUNNING.value, _dumps(list(hosts)),
                 None if plan is None else _dumps(plan), notes, owner_tag(), os.getpid()),
            )
            return int(cur.lastrowid or 0)

    _SESSION_COLS = "id, created, updated, state, hosts, plan, notes, origin"

    def _session(self, row: Sequence[Any]) -> SessionRecord:
        return self._decode(f"sessions row {row[0]}", lambda: SessionRecord(
            id=row[0], created=row[1], updated=row[2], state=SessionState(row[3]),
            hosts=_str_tuple(json.loads(row[4])), plan=_loads(row[5]), notes=row[6], origin=row[7],
        ))

    def get_session(self, session_id: int) -> SessionRecord:
        rows = self._q(f"SELECT {self._SESSION_COLS} FROM sessions WHERE id=?", (session_id,))
        if not rows:
            raise NotFoundError(f"no session {session_id}")
        return self._session(rows[0])

    def list_sessions(
        self, *, host: str | None = None, since: float | None = None, until: float | None = None
    ) -> list[SessionRecord]:
        """Newest first; optionally only those involving ``host`` or created in [since, until)."""
        sql = f"SELECT {self._SESSION_COLS} FROM sessions WHERE 1=1"
        params: list[Any] = []
        if since is not None:
            sql += " AND created >= ?"
            params.append(since)
        if until is not None:
            sql += " AND created < ?"
            params.append(until)
        rows = [self._session(r) for r in self._q(sql + " ORDER BY created DESC, id DESC", params)]
        return [s for s in rows if host is None or host in s.hosts]

    def set_session_state(self, session_id: int, state: SessionState) -> None:
        with self.transaction() as c:
            current = SessionState(self.get_session(session_id).state)
            if state != current and state not in SESSION_MOVES[current]:
                raise InvalidTransitionError(f"session {session_id}: {current} → {state} is not allowed")
            owner: tuple[str | None, int | None] = (
                (owner_tag(), os.getpid()) if state == SessionState.RUNNING else (None, None)
            )
            c.execute(
                "UPDATE sessions SET state=?, updated=?, owner_host=?, owner_pid=? WHERE id=?",
                (state.value, self._now(), owner[0], owner[1], session_id),
            )

    def update_session(
        self, session_id: int, *, notes: str | None = None, hosts: Sequence[str] | None = None
    ) -> None:
        with self.transaction() as c:
            self.get_session(session_id)
            if notes is not None:
                c.execute("UPDATE sessions SET notes=? WHERE id=?", (notes, session_id))
            if hosts is not None:
                c.execute("UPDATE sessions SET hosts=? WHERE id=?", (_dumps(list(hosts)), session_id))
            c.execute("UPDATE sessions SET updated=? WHERE id=?", (self._now(), session_id))

    def delete_session(self, session_id: int) -> None:
        """Delete a session and all it holds; refused while its journal has open entries."""
        with self.transaction() as c:
            self.get_session(session_id)
            open_states = [s.value for s in OPEN_JOURNAL_STATES]
            n = c.execute(
                f"SELECT COUNT(*) FROM journal WHERE session_id=? AND state IN ({','.join('?' * len(open_states))})",
                (session_id, *open_states),
            ).fetchone()[0]
            if n:
                raise StoreError(
                    f"Session {session_id} has {n} host change(s) not yet reverted; revert or dismiss them first."
                )
            c.execute("DELETE FROM journal WHERE session_id=?", (session_id,))
            c.execute("DELETE FROM sessions WHERE id=?", (session_id,))

    def recover_interrupted(self) -> list[int]:
        """Mark sessions left 'running' by a dead process as interrupted; return their ids.

        A session whose owner process is still alive on this machine (a sweep running in
        another window) is left alone. Trials it left running are marked broken, and
        their sample blocks compacted.
        """
        me = owner_tag()
        recovered: list[int] = []
        with self.transaction() as c:
            rows = c.execute(
                "SELECT id, owner_host, owner_pid FROM sessions WHERE state=?", (SessionState.RUNNING.value,)
            ).fetchall()
            for sid, host, pid in rows:
                if host == me and pid is not None and _pid_alive(int(pid)):
                    continue
                c.execute(
                    "UPDATE sessions SET state=?, updated=?, owner_host=NULL, owner_pid=NULL WHERE id=?",
                    (SessionState.INTERRUPTED.value, self._now(), sid),
                )
                trial_ids = [r[0] for r in c.execute(
                    "SELECT id FROM trials WHERE session_id=? AND state=?", (sid, TrialState.RUNNING.value)
                )]
                for tid in trial_ids:
                    c.execute(
                        "UPDATE trials SET state=?, reason=?, ended=COALESCE(ended, ?) WHERE id=?",
                        (TrialState.BROKEN.value, "interrupted: nfs-tuner stopped during this trial",
                         self._now(), tid),
                    )
                    self.compact_samples(tid)
                recovered.append(int(sid))
        return recovered

    # -- host facts and plans ---------------------------------------------------

    def add_host_facts(
        self, session_id: int, host: str, role: str, facts: Any, taken_at: float | None = None
    ) -> int:
        with self.transaction() as c:
            cur = c.execute(
                "INSERT INTO host_facts (session_id, host, role, taken_at, facts) VALUES (?,?,?,?,?)",
                (session_id, host, role, self._now() if taken_at is None else taken_at, _dumps(facts)),
            )
            return int(cur.lastrowid or 0)

    def host_facts(self, session_id: int, host: str | None = None) -> list[HostFactsRecord]:
        sql = "SELECT id, session_id, host, role, taken_at, facts FROM host_facts WHERE session_id=?"
        params: list[Any] = [session_id]
        if host is not None:
            sql += " AND host=?"
            params.append(host)
        rows = self._q(sql + " ORDER BY taken_at, id", params)
        return [self._decode(f"host_facts row {r[0]}", partial(_host_facts_record, r)) for r in rows]

    def save_plan(self, session_id: int, plan: Any) -> int:
        """Store a plan version; it also becomes the session's current plan."""
        now = self._now()
        with self.transaction() as c:
            text = _dumps(plan)
            cur = c.execute("INSERT INTO plans (session_id, created, plan) VALUES (?,?,?)", (session_id, now, text))
            c.execute("UPDATE sessions SET plan=?, updated=? WHERE id=?", (text, now, session_id))
            return int(cur.lastrowid or 0)

    def plans(self, session_id: int) -> list[PlanRecord]:
        rows = self._q("SELECT id, session_id, created, plan FROM plans WHERE session_id=? ORDER BY id", (session_id,))
        return [self._decode(f"plans row {r[0]}", partial(_plan_record, r)) for r in rows]

    # -- trials -----------------------------------------------------------------

    def add_trial(
        self,
        session_id: int,
        config: Mapping[str, Any],
        workload: Any,
        *,
        repetition: int = 0,
        order_index: int | None = None,
        plan_id: int | None = None,
        state: TrialState = TrialState.RUNNING,
        step: str = "",
    ) -> int:
        """A new trial; started now when it is created running. Order defaults to next."""
        with self.transaction() as c:
            if order_index is None:
                order_index = int(c.execute(
                    "SELECT COALESCE(MAX(order_index)+1, 0) FROM trials WHERE session_id=?", (session_id,)
                ).fetchone()[0])
            started = self._now() if state == TrialState.RUNNING else None
            cols = "session_id, plan_id, config, workload, repetition, order_index, state, started"
            values: tuple[Any, ...] = (session_id, plan_id, _dumps(dict(config)), _dumps(workload), repetition,
                                       order_index, state.value, started)  # fmt: skip
            if step:  # the column's default is "" (and a file older than it has none: migration tests make such)
                cols, values = cols + ", step", (*values, step)
            cur = c.execute(f"INSERT INTO trials ({cols}) VALUES ({','.join('?' * len(values))})", values)
            c.execute("UPDATE sessions SET updated=? WHERE id=?", (self._now(), session_id))
            return int(cur.lastrowid or 0)

    def finish_trial(
        self, trial_id: int, state: TrialState, *, summary: Any = None, reason: str = ""
    ) -> None:
        """End a trial: flush pending samples, store its summary, merge its sample blocks."""
        if state == TrialState.RUNNING:
            raise InvalidTransitionError("a trial cannot be finished as running")
        self.flush_writers()
        with self.transaction() as c:
            cur = c.execute(
                "UPDATE trials SET state=?, reason=?, summary=?, ended=? WHERE id=?",
                (state.value, reason, None if summary is None else _dumps(summary), self._now(), trial_id),
            )
            if cur.rowcount == 0:
                raise NotFoundError(f"no trial {trial_id}")
            self.compact_samples(trial_id)

    _TRIAL_COLS = ("id, session_id, plan_id, config, workload, repetition, order_index, state, reason,"
                   " started, ended, summary, step")

    def _trial(self, r: Sequence[Any]) -> TrialRecord:
        return self._decode(f"trials row {r[0]}", lambda: TrialRecord(
            id=r[0], session_id=r[1], plan_id=r[2], config=_object(json.loads(r[3])), workload=json.loads(r[4]),
            repetition=r[5], order_index=r[6], state=TrialState(r[7]), reason=r[8], started=r[9],
            ended=r[10], summary=_loads(r[11]), step=r[12],
        ))

    def get_trial(self, trial_id: int) -> TrialRecord:
        rows = self._q(f"SELECT {self._TRIAL_COLS} FROM trials WHERE id=?", (trial_id,))
        if not rows:
            raise NotFoundError(f"no trial {trial_id}")
        return self._trial(rows[0])

    def trials(self, session_id: int, state: TrialState | None = None) -> list[TrialRecord]:
        sql = f"SELECT {self._TRIAL_COLS} FROM trials WHERE session_id=?"
        params: list[Any] = [session_id]
        if state is not None:
            sql += " AND state=?"
            params.append(state.value)
        return [self._trial(r) for r in self._q(sql + " ORDER BY order_index, id", params)]

    # -- samples ----------------------------------------------------------------

    def write_samples(self, trial_id: int, samples: Iterable[Sample]) -> int:
        """Write samples as one block per client, in one transaction; returns how many."""
        by_client: dict[str, list[Sample]] = {}
        for s in samples:
            by_client.setdefault(s.client, []).append(s)
        if not by_client:
            return 0
        with self.transaction() as c:
            for client, group in by_client.items():
                rec = pack(group)
                c.execute(
                    "INSERT INTO sample_blocks (trial_id, client, t_first, t_last, n, data) VALUES (?,?,?,?,?,?)",
                    (trial_id, client, float(rec["t"][0]), float(rec["t"][-1]), len(rec), rec.tobytes()),
                )
        return sum(len(g) for g in by_client.values())

    def compact_samples(self, trial_id: int) -> None:
        """Merge a trial's many one-second blocks into one block per client."""
        with self.transaction() as c:
            rows = c.execute(
                "SELECT client, COUNT(*) FROM sample_blocks WHERE trial_id=? GROUP BY client", (trial_id,)
            ).fetchall()
            for client, count in rows:
                if count < 2:
                    continue
                blobs = c.execute(
                    "SELECT data FROM sample_blocks WHERE trial_id=? AND client=? ORDER BY t_first, id",
                    (trial_id, client),
                ).fetchall()
                rec = np.concatenate([unpack(b[0]) for b in blobs])
                rec = rec[np.argsort(rec["t"], kind="stable")]
                c.execute("DELETE FROM sample_blocks WHERE trial_id=? AND client=?", (trial_id, client))
                c.execute(
                    "INSERT INTO sample_blocks (trial_id, client, t_first, t_last, n, data) VALUES (?,?,?,?,?,?)",
                    (trial_id, client, float(rec["t"][0]), float(rec["t"][-1]), len(rec), rec.tobytes()),
                )

    def load_samples(self, trial_id: int, t0: float | None = None, t1: float | None = None) -> SampleArrays:
        """One trial's samples, by client then time; optionally only t0 <= t <= t1."""
        source = "FROM sample_blocks b WHERE b.trial_id=?"
        params: list[Any] = [trial_id]
        if t1 is not None:
            source += " AND b.t_first <= ?"
            params.append(t1)
        if t0 is not None:
            source += " AND b.t_last >= ?"
            params.append(t0)
        rows = self._blocks_in_order(source, params, "ORDER BY b.client, b.t_first, b.id")
        arrays = self._decode(f"sample_blocks of trial {trial_id}", lambda: assemble(rows))
        if t0 is None and t1 is None:
            return arrays
        t = arrays.t
        mask = np.ones(len(t), dtype=bool)
        if t0 is not None:
            mask &= t >= t0
        if t1 is not None:
            mask &= t <= t1
        return arrays.select(mask)

    def _blocks_in_order(self, source: str, params: list[Any], order: str) -> list[tuple[Any, ...]]:
        """(trial_id, client, n, data) of the blocks ``source`` selects (aliased b), in ``order``.

        An ORDER BY over rows that carry the blobs makes SQLite copy every blob into a
        temporary sort (spilling to disk at millions of samples); sorting the ids and
        fetching the blobs unsorted reads each blob once.
        """
        ids = self._q(f"SELECT b.id, b.trial_id, b.client, b.n {source} {order}", params)
        blobs: dict[int, bytes] = dict(self._q(f"SELECT b.id, b.data {source}", params))
        return [(tid, client, n, blobs[bid]) for bid, tid, client, n in ids]

    def load_session_samples(self, session_id: int) -> SampleArrays:
        """Every sample of a session: by trial order, then client, then time."""
        rows = self._blocks_in_order(
            "FROM sample_blocks b JOIN trials t ON t.id = b.trial_id WHERE t.session_id=?", [session_id],
            "ORDER BY t.order_index, t.id, b.client, b.t_first, b.id",
        )
        return self._decode(f"sample_blocks of session {session_id}", lambda: assemble(rows))

    def sample_count(self, session_id: int) -> int:
        return int(self._q(
            "SELECT COALESCE(SUM(b.n), 0) FROM sample_blocks b JOIN trials t ON t.id=b.trial_id WHERE t.session_id=?",
            (session_id,),
        )[0][0])

    # -- telemetry --------------------------------------------------------------

    def write_telemetry(self, trial_id: int, items: Iterable[HostTelemetry]) -> int:
        rows = [
            (trial_id, h.host, h.t, h.interval, h.disk_read_bps, h.disk_write_bps, h.net_rx_bps,
             h.net_tx_bps, h.cpu_busy, _dumps(h.extra) if h.extra else None)
            for h in items
        ]
        if rows:
            with self.transaction() as c:
                c.executemany(
                    "INSERT INTO telemetry (trial_id, host, t, interval, disk_read_bps, disk_write_bps,"
                    " net_rx_bps, net_tx_bps, cpu_busy, extra) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    rows,
                )
        return len(rows)

    def load_telemetry(self, trial_id: int) -> TelemetryArrays:
        rows = self._q(
            "SELECT host, t, interval, disk_read_bps, disk_write_bps, net_rx_bps, net_tx_bps, cpu_busy, extra"
            " FROM telemetry WHERE trial_id=? ORDER BY host, t",
            (trial_id,),
        )
        return self._decode(f"telemetry of trial {trial_id}", lambda: _telemetry_arrays(rows))

    # -- journal ----------------------------------------------------------------

    def journal_intend(
        self,
        session_id: int | None,
        host: str,
        knob: str,
        target: str,
        old_value: Any,
        new_value: Any,
        detail: str = "",
    ) -> int:
        """Record a change before it is made; returns the entry id to mark applied later."""
        now = self._now()
        with self.transaction() as c:
            cur = c.execute(
                "INSERT INTO journal (session_id, host, knob, target, old_value, new_value, created_at,"
                " updated_at, state, detail) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (session_id, host, knob, target, _dumps(old_value), _dumps(new_value), now, now,
                 JournalState.INTENDED.value, detail),
            )
            return int(cur.lastrowid or 0)

    def journal_update(self, entry_id: int, state: JournalState, detail: str | None = None) -> None:
        """Move an entry along its life cycle; impossible moves raise InvalidTransitionError."""
        with self.transaction() as c:
            row = c.execute("SELECT state FROM journal WHERE id=?", (entry_id,)).fetchone()
            if row is None:
                raise NotFoundError(f"no journal entry {entry_id}")
            current = JournalState(row[0])
            if state not in JOURNAL_MOVES[current]:
                raise InvalidTransitionError(f"journal entry {entry_id}: {current} → {state} is not allowed")
            if detail is None:
                c.execute("UPDATE journal SET state=?, updated_at=? WHERE id=?", (state.value, self._now(), entry_id))
            else:
                c.execute(
                    "UPDATE journal SET state=?, updated_at=?, detail=? WHERE id=?",
                    (state.value, self._now(), detail, entry_id),
                )

    _JOURNAL_COLS = ("j.id, j.session_id, j.host, j.knob, j.target, j.old_value, j.new_value, j.created_at,"
                     " j.updated_at, j.state, j.detail")

    def _journal(self, r: Sequence[Any]) -> JournalEntry:
        return self._decode(f"journal row {r[0]}", lambda: JournalEntry(
            id=r[0], session_id=r[1], host=r[2], knob=r[3], target=r[4], old_value=_loads(r[5]),
            new_value=_loads(r[6]), created_at=r[7], updated_at=r[8], state=JournalState(r[9]), detail=r[10],
        ))

    def get_journal_entry(self, entry_id: int) -> JournalEntry:
        rows = self._q(f"SELECT {self._JOURNAL_COLS} FROM journal j WHERE j.id=?", (entry_id,))
        if not rows:
            raise NotFoundError(f"no journal entry {entry_id}")
        return self._journal(rows[0])

    def journal(self, session_id: int | None = None) -> list[JournalEntry]:
        """Entries in the order they were made (all sessions when session_id is None)."""
        if session_id is None:
            rows = self._q(f"SELECT {self._JOURNAL_COLS} FROM journal j ORDER BY j.id")
        else:
            rows = self._q(f"SELECT {self._JOURNAL_COLS} FROM journal j WHERE j.session_id=? ORDER BY j.id", (session_id,))
        return [self._journal(r) for r in rows]

    def unreverted_journal(self) -> list[JournalEntry]:
        """Changes that may still be on a host: intended, applied or failed, newest first.

        Newest first because reverting in reverse order restores the oldest value last.
        Entries of imported sessions are left out: they concern someone else's hosts.
        """
        states = [s.value for s in OPEN_JOURNAL_STATES]
        rows = self._q(
            f"SELECT {self._JOURNAL_COLS} FROM journal j LEFT JOIN sessions s ON s.id = j.session_id"
            f" WHERE j.state IN ({','.join('?' * len(states))}) AND s.origin IS NULL ORDER BY j.id DESC",
            states,
        )
        return [self._journal(r) for r in rows]

    # -- recommendations --------------------------------------------------------

    def add_recommendation(self, session_id: int, objective: str, config: Mapping[str, Any], evidence: Any) -> int:
        with self.transaction() as c:
            cur = c.execute(
                "INSERT INTO recommendations (session_id, objective, config, evidence, created_at) VALUES (?,?,?,?,?)",
                (session_id, objective, _dumps(dict(config)), _dumps(evidence), self._now()),
            )
            return int(cur.lastrowid or 0)

    def recommendations(self, session_id: int) -> list[RecommendationRecord]:
        rows = self._q(
            "SELECT id, session_id, objective, config, evidence, created_at FROM recommendations"
            " WHERE session_id=? ORDER BY id",
            (session_id,),
        )
        return [self._decode(f"recommendations row {r[0]}", partial(_recommendation_record, r)) for r in rows]
