"""Sharing: one session out to a small standalone file, and sessions in with new ids.

Both directions copy between two schemas attached to one connection, so sample
blocks move in bulk by SQL, never through Python objects.
"""

from __future__ import annotations

import shutil
import socket
import sqlite3
import stat
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from app.output_files import staged
from app.store.errors import (
    DamagedDatabaseError,
    DamagedSessionFileError,
    ForeignDatabaseError,
    ImportFailedError,
    StoreError,
)
from app.store.import_check import check_session_file
from app.store.states import SessionState
from app.store.store import Store


def _copy_session(conn: sqlite3.Connection, src: str, dst: str, session_id: int, origin: str) -> int:
    """Copy one session with everything it holds from schema ``src`` to ``dst``; returns its new id."""
    row = conn.execute(
        f"SELECT created, updated, state, hosts, plan, notes FROM {src}.sessions WHERE id=?", (session_id,)
    ).fetchone()
    if row is None:
        raise StoreError(f"no session {session_id} to copy")
    created, updated, state, hosts, plan, notes = row
    if state == SessionState.RUNNING.value:  # a copy is never running anywhere
        state = SessionState.INTERRUPTED.value
    new_sid = conn.execute(
        f"INSERT INTO {dst}.sessions (created, updated, state, hosts, plan, notes, origin) VALUES (?,?,?,?,?,?,?)",
        (created, updated, state, hosts, plan, notes, origin),
    ).lastrowid
    conn.execute(
        f"INSERT INTO {dst}.host_facts (session_id, host, role, taken_at, facts)"
        f" SELECT ?, host, role, taken_at, facts FROM {src}.host_facts WHERE session_id=? ORDER BY id",
        (new_sid, session_id),
    )
    plan_map: dict[int, int] = {}
    for pid, pcreated, ptext in conn.execute(
        f"SELECT id, created, plan FROM {src}.plans WHERE session_id=? ORDER BY id", (session_id,)
    ).fetchall():
        plan_map[pid] = int(conn.execute(
            f"INSERT INTO {dst}.plans (session_id, created, plan) VALUES (?,?,?)", (new_sid, pcreated, ptext)
        ).lastrowid or 0)
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS trial_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL)")
    conn.execute("DELETE FROM temp.trial_map")
    for r in conn.execute(
        f"SELECT id, plan_id, config, workload, repetition, order_index, state, reason, started, ended, summary, step"
        f" FROM {src}.trials WHERE session_id=? ORDER BY id",
        (session_id,),
    ).fetchall():
        new_tid = conn.execute(
            f"INSERT INTO {dst}.trials (session_id, plan_id, config, workload, repetition, order_index, state,"
            " reason, started, ended, summary, step) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (new_sid, plan_map.get(r[1]) if r[1] is not None else None, *r[2:]),
        ).lastrowid
        conn.execute("INSERT INTO temp.trial_map (old, new) VALUES (?,?)", (r[0], new_tid))
    conn.execute(
        f"INSERT INTO {dst}.sample_blocks (trial_id, client, t_first, t_last, n, data)"
        f" SELECT m.new, b.client, b.t_first, b.t_last, b.n, b.data FROM {src}.sample_blocks b"
        " JOIN temp.trial_map m ON m.old = b.trial_id ORDER BY b.id"
    )
    conn.execute(
        f"INSERT INTO {dst}.telemetry (trial_id, host, t, interval, disk_read_bps, disk_write_bps, net_rx_bps,"
        " net_tx_bps, cpu_busy, extra)"
        " SELECT m.new, x.host, x.t, x.interval, x.disk_read_bps, x.disk_write_bps, x.net_rx_bps, x.net_tx_bps,"
        f" x.cpu_busy, x.extra FROM {src}.telemetry x JOIN temp.trial_map m ON m.old = x.trial_id ORDER BY x.id"
    )
    conn.execute(
        f"INSERT INTO {dst}.journal (session_id, host, knob, target, old_value, new_value, created_at, updated_at,"
        " state, detail) SELECT ?, host, knob, target, old_value, new_value, created_at, updated_at, state, detail"
        f" FROM {src}.journal WHERE session_id=? ORDER BY id",
        (new_sid, session_id),
    )
    conn.execute(
        f"INSERT INTO {dst}.recommendations (session_id, objective, config, evidence, created_at)"
        f" SELECT ?, objective, config, evidence, created_at FROM {src}.recommendations WHERE session_id=? ORDER BY id",
        (new_sid, session_id),
    )
    conn.execute("DELETE FROM temp.trial_map")
    return int(new_sid or 0)


SESSION_FILE = "the session file"  # as messages name it


def export_session(store: Store, session_id: int, dest: Path, *, replace: bool = False) -> Path:
    """Write one session to a standalone file (rollback journal, vacuumed) by app.output_files' rules."""
    store.get_session(session_id)
    store.flush_writers()
    origin = f"exported from {socket.gethostname()} (session {session_id}) at {time.strftime('%Y-%m-%d %H:%M:%S')}"
    with staged(dest, SESSION_FILE, replace=replace) as tmp:
        Store(tmp, shown_as=dest).close()  # creates the schema at our version
        with store.attached(tmp, "export_db") as conn:
            _copy_session(conn, "main", "export_db", session_id, origin)
        # One self-contained file for mail or a USB stick: no -wal/-shm beside it.
        out = sqlite3.connect(str(tmp), isolation_level=None)
        try:
            out.execute("PRAGMA journal_mode = DELETE")
            out.execute("VACUUM")
        finally:
            out.close()
    return dest


@dataclass(frozen=True)
class Imported:
    """What an import did: the new ids, and the file's sessions this store already held (file id -> id here)."""

    ids: tuple[int, ...]
    already: Mapping[int, int]


def import_sessions(store: Store, src: Path, *, again: bool = False) -> Imported:
    """Copy every session of a shared file into this store, with new ids.

    A session this store already holds (the same one, as recorded then: created, last
    updated, hosts, plan, notes) is not copied again unless ``again``; ``Imported.already``
    names it. The received file is opened (and migrated if older) and its content checked
    (app.store.import_check) on a private copy; only then are its sessions copied, all in
    one transaction. Every failure is a StoreError naming ``src``, and leaves both this
    store and ``src`` exactly as they were.
    """
    try:
        mode = src.stat().st_mode
    except (OSError, ValueError) as e:  # ValueError: a NUL in the name
        cause = "there is no file there" if isinstance(e, FileNotFoundError) else getattr(e, "strerror", None) or str(e)
        raise ImportFailedError(src, cause) from e
    if stat.S_ISDIR(mode):
        raise DamagedSessionFileError(src, "it is a directory, not a session file")
    if not stat.S_ISREG(mode):  # a pipe or a device (/dev/zero) would be copied for ever
        raise DamagedSessionFileError(src, "it is not a regular file")
    try:
        with tempfile.TemporaryDirectory(prefix="nfs-tuner-import-") as tmp:
            return _import_via(Path(tmp), store, src, again)
    except OSError as e:  # the private copy's folder: no space, no /tmp (str(e) would name it)
        raise ImportFailedError(src, f"no private copy could be made: {e.strerror or type(e).__name__}") from e


def _import_via(tmp: Path, store: Store, src: Path, again: bool) -> Imported:
    """Copy ``src`` into ``tmp``, check the copy, then copy its sessions into ``store`` in one transaction."""
    copy = tmp / "import.db"
    try:
        shutil.copyfile(src, copy)
        side = src.with_name(src.name + "-wal")  # an export straight from a live database may have one
        if side.is_file():
            shutil.copyfile(side, copy.with_name(copy.name + "-wal"))
    except OSError as e:
        raise ImportFailedError(src, f"it cannot be read: {e.strerror or type(e).__name__}") from e
    if copy.stat().st_size == 0:
        raise DamagedSessionFileError(src, "it is empty")
    ids = _checked_copy(copy, src)
    try:
        with store.attached(copy, "import_db") as conn:
            already = {} if again else {sid: here for sid in ids if (here := _held(conn, sid)) is not None}
            new = tuple(_copy_session(conn, "import_db", "main", sid, f"imported from {src.name}")
                        for sid in ids if sid not in already)  # fmt: skip
            return Imported(new, already)
    except (StoreError, sqlite3.Error, OSError) as e:  # rolled back: all sessions or none
        raise ImportFailedError(src, _scrub(str(e), copy, src)) from e


def _held(conn: sqlite3.Connection, session_id: int) -> int | None:
    """The id under which this store holds the imported file's session ``session_id`` already, if it does."""
    row = conn.execute(
        "SELECT m.id FROM main.sessions m JOIN import_db.sessions i ON m.created = i.created AND m.updated = i.updated"
        " AND m.hosts = i.hosts AND m.plan IS i.plan AND m.notes IS i.notes WHERE i.id = ? ORDER BY m.id LIMIT 1",
        (session_id,),
    ).fetchone()
    return None if row is None else int(row[0])


def _checked_copy(copy: Path, src: Path) -> list[int]:
    """Open the private copy as a store (schema checked, migrated if older), then check its rows."""
    try:
        Store(copy, shown_as=src).close()  # its typed errors name src
    # The same findings told as an import's: their advice (move it aside, --db) is for one's own database.
    except DamagedDatabaseError as e:
        raise DamagedSessionFileError(src, e.cause) from e
    except ForeignDatabaseError as e:
        raise DamagedSessionFileError(src, "it is an SQLite database nfs-tuner did not write") from e
    except (sqlite3.Error, OSError, ValueError, TypeError) as e:  # a migration that cannot convert a row
        raise DamagedSessionFileError(src, _scrub(str(e), copy, src)) from e
    return check_session_file(copy, src)


def _scrub(text: str, copy: Path, src: Path) -> str:
    """A foreign message (SQLite's, the OS's) with the private copy's path put as the user's file."""
    return text.replace(str(copy), str(src)).replace(str(copy.parent), str(src.parent))
