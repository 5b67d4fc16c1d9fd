"""Sharing: one session out to a small standalone file, and sessions in with new ids.

Both directions copy between two schemas attached to one connection, so sample
blocks move in bulk by SQL, never through Python objects.
"""

from __future__ import annotations

import shutil
import socket
import sqlite3
import tempfile
import time
from pathlib import Path

from app.store.errors import StoreError
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
        f"SELECT id, plan_id, config, workload, repetition, order_index, state, reason, started, ended, summary"
        f" FROM {src}.trials WHERE session_id=? ORDER BY id",
        (session_id,),
    ).fetchall():
        new_tid = conn.execute(
            f"INSERT INTO {dst}.trials (session_id, plan_id, config, workload, repetition, order_index, state,"
            " reason, started, ended, summary) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
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


def export_session(store: Store, session_id: int, dest: Path) -> Path:
    """Write one session to a new standalone file (rollback journal, vacuumed) and return its path."""
    if dest.exists():
        raise StoreError(f"{dest} exists already; choose a new file name for the export.")
    store.get_session(session_id)
    store.flush_writers()
    Store(dest).close()  # creates the schema at our version
    origin = f"exported from {socket.gethostname()} (session {session_id}) at {time.strftime('%Y-%m-%d %H:%M:%S')}"
    with store.attached(dest, "export_db") as conn:
        _copy_session(conn, "main", "export_db", session_id, origin)
    # One self-contained file for mail or a USB stick: no -wal/-shm beside it.
    out = sqlite3.connect(str(dest), isolation_level=None)
    try:
        out.execute("PRAGMA journal_mode = DELETE")
        out.execute("VACUUM")
    finally:
        out.close()
    return dest


def import_sessions(store: Store, src: Path) -> list[int]:
    """Copy every session of a shared file into this store, with new ids; returns them.

    The received file is checked (and migrated if older) on a private copy, so a damaged
    or too-new file raises the usual typed error and the original is never written.
    """
    if not src.exists():
        raise StoreError(f"There is no session file at {src}.")
    with tempfile.TemporaryDirectory(prefix="nfs-tuner-import-") as tmp:
        copy = Path(tmp) / "import.db"
        shutil.copyfile(src, copy)
        for suffix in ("-wal",):  # an export straight from a live database may have one
            side = src.with_name(src.name + suffix)
            if side.exists():
                shutil.copyfile(side, copy.with_name(copy.name + suffix))
        with Store(copy) as incoming:
            ids = [s.id for s in sorted(incoming.list_sessions(), key=lambda s: (s.created, s.id))]
        with store.attached(copy, "import_db") as conn:
            return [_copy_session(conn, "import_db", "main", sid, f"imported from {src.name}") for sid in ids]
