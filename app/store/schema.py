"""The schema as an ordered list of migrations, versioned with ``PRAGMA user_version``.

Migration N takes a file from version N-1 to N inside one transaction (SQLite DDL is
transactional), so a failed migration leaves the file at its old version.
To change the schema, append a migration; never edit a released one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.store.sample_blocks import upgrade_v1_blob


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    description: str
    apply: Callable[[sqlite3.Connection], None]


V1_SQL = """
CREATE TABLE sessions (
    id          INTEGER PRIMARY KEY,
    created     REAL NOT NULL,
    updated     REAL NOT NULL,
    state       TEXT NOT NULL CHECK (state IN ('running','complete','interrupted','cancelled')),
    hosts       TEXT NOT NULL DEFAULT '[]',   -- JSON list of host names
    plan        TEXT,                         -- JSON: the current plan
    notes       TEXT NOT NULL DEFAULT '',
    owner_host  TEXT,                         -- machine and pid of the process running it,
    owner_pid   INTEGER,                      -- so a live sweep is never marked interrupted
    origin      TEXT                          -- NULL if made here; else where it was imported from
);
CREATE TABLE host_facts (
    id          INTEGER PRIMARY KEY,
    session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    host        TEXT NOT NULL,
    role        TEXT NOT NULL,                -- server / client
    taken_at    REAL NOT NULL,
    facts       TEXT NOT NULL                 -- JSON
);
CREATE INDEX host_facts_session ON host_facts(session_id, host);
CREATE TABLE plans (
    id          INTEGER PRIMARY KEY,
    session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    created     REAL NOT NULL,
    plan        TEXT NOT NULL                 -- JSON
);
CREATE INDEX plans_session ON plans(session_id);
CREATE TABLE trials (
    id          INTEGER PRIMARY KEY,
    session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    plan_id     INTEGER REFERENCES plans(id) ON DELETE SET NULL,
    config      TEXT NOT NULL,                -- JSON: knob -> value
    workload    TEXT NOT NULL,                -- JSON: workload spec
    repetition  INTEGER NOT NULL DEFAULT 0,
    order_index INTEGER NOT NULL,
    state       TEXT NOT NULL CHECK (state IN ('running','ok','broken','skipped')),
    reason      TEXT NOT NULL DEFAULT '',
    started     REAL,
    ended       REAL,
    summary     TEXT                          -- JSON: stability summary
);
CREATE INDEX trials_session ON trials(session_id, order_index);
-- Samples are kept as blocks of a packed little-endian record array (see samples.py):
-- one row per 4 Hz sample costs seconds to read back at a million samples; blocks
-- load a million in a few tens of milliseconds.
CREATE TABLE sample_blocks (
    id          INTEGER PRIMARY KEY,
    trial_id    INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
    client      TEXT NOT NULL,
    t_first     REAL NOT NULL,
    t_last      REAL NOT NULL,
    n           INTEGER NOT NULL,
    data        BLOB NOT NULL
);
CREATE INDEX sample_blocks_trial ON sample_blocks(trial_id, t_first);
CREATE TABLE telemetry (
    id             INTEGER PRIMARY KEY,
    trial_id       INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
    host           TEXT NOT NULL,
    t              REAL NOT NULL,
    interval       REAL NOT NULL,
    disk_read_bps  REAL NOT NULL,
    disk_write_bps REAL NOT NULL,
    net_rx_bps     REAL NOT NULL,
    net_tx_bps     REAL NOT NULL,
    cpu_busy       REAL NOT NULL,
    extra          TEXT                       -- JSON, NULL when empty
);
CREATE INDEX telemetry_trial ON telemetry(trial_id, t);
CREATE TABLE journal (
    id          INTEGER PRIMARY KEY,
    -- RESTRICT: a session whose changes may still be on a host cannot be deleted.
    session_id  INTEGER REFERENCES sessions(id) ON DELETE RESTRICT,
    host        TEXT NOT NULL,
    knob        TEXT NOT NULL,
    target      TEXT NOT NULL DEFAULT '',     -- path / export / mount point / interface
    old_value   TEXT,                         -- JSON
    new_value   TEXT,                         -- JSON
    created_at  REAL NOT NULL,
    updated_at  REAL NOT NULL,
    state       TEXT NOT NULL CHECK (state IN
                ('intended','applied','reverted','reverted_by_host','failed','dismissed')),
    detail      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX journal_state ON journal(state);
CREATE INDEX journal_session ON journal(session_id);
CREATE TABLE recommendations (
    id          INTEGER PRIMARY KEY,
    session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    objective   TEXT NOT NULL,
    config      TEXT NOT NULL,                -- JSON
    evidence    TEXT NOT NULL,                -- JSON (text lines and numbers)
    created_at  REAL NOT NULL
);
CREATE INDEX recommendations_session ON recommendations(session_id);
"""

# Tables every nfs-tuner file at version >= 1 has; used to spot damaged files.
V1_TABLES: frozenset[str] = frozenset(
    {"sessions", "host_facts", "plans", "trials", "sample_blocks", "telemetry", "journal", "recommendations"}
)


def _v1(conn: sqlite3.Connection) -> None:
    for statement in _split_sql(V1_SQL):
        conn.execute(statement)


def _split_sql(script: str) -> list[str]:
    """Statements of a script (executescript would commit our transaction)."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines():
        code = line.split("--", 1)[0]
        buf += code + "\n"
        if code.rstrip().endswith(";"):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out


def _v2(conn: sqlite3.Connection) -> None:
    """Sample blocks gain each sample's phase and count (SAMPLE_DTYPE_V1 -> SAMPLE_DTYPE).

    Every block is rewritten, in batches so a large file never sits in memory at once.
    """
    last = 0
    while True:
        batch = conn.execute(
            "SELECT id, n, data FROM sample_blocks WHERE id > ? ORDER BY id LIMIT 256", (last,)
        ).fetchall()
        if not batch:
            return
        conn.executemany(
            "UPDATE sample_blocks SET data=? WHERE id=?", [(upgrade_v1_blob(d, n), i) for i, n, d in batch]
        )
        last = batch[-1][0]


def _v3(conn: sqlite3.Connection) -> None:
    """Each trial names the step of its plan that asked for it (experiments.steps); older trials ran a search."""
    conn.execute("ALTER TABLE trials ADD COLUMN step TEXT NOT NULL DEFAULT ''")


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "initial schema", _v1),
    Migration(2, "sample phase and count in sample blocks", _v2),
    Migration(3, "the step of the plan each trial ran for", _v3),
)


def latest_version(migrations: Sequence[Migration] = MIGRATIONS) -> int:
    return migrations[-1].version if migrations else 0


def check_migrations(migrations: Sequence[Migration]) -> None:
    """Versions must run 1, 2, 3 … without gaps, or a file could skip a step."""
    versions = [m.version for m in migrations]
    if versions != list(range(1, len(versions) + 1)):
        raise ValueError(f"migrations must be numbered 1..n in order, got {versions}")


def migrate(conn: sqlite3.Connection, current: int, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Apply every migration above ``current``, each in its own transaction; returns the new version."""
    check_migrations(migrations)
    for m in migrations:
        if m.version <= current:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            m.apply(conn)
            conn.execute(f"PRAGMA user_version = {int(m.version)}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        current = m.version
    return current
