"""Opening a session file safely: check first, change nothing until the checks pass."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from app.store.errors import (
    DamagedDatabaseError,
    ForeignDatabaseError,
    LockedDatabaseError,
    MissingDatabaseError,
    ReadOnlyDatabaseError,
    SchemaTooNewError,
    StoreError,
    UnopenableDatabaseError,
)
from app.store.schema import MIGRATIONS, V1_TABLES, Migration, latest_version, migrate

SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT_MS = 5000  # how long a write waits for another connection's lock before the file counts as locked


def _check_header(path: Path, shown: Path) -> None:
    if path.is_dir():
        raise DamagedDatabaseError(shown, "it is a directory")
    with path.open("rb") as f:
        head = f.read(len(SQLITE_MAGIC))
    if head != SQLITE_MAGIC:
        raise DamagedDatabaseError(shown, "no SQLite header")


def _unwritable_why(path: Path) -> str | None:
    """Why ``path`` (or the -wal and -shm files SQLite keeps beside it) may not be written; None when it may."""
    folder = path.parent
    if not folder.exists():
        return f"its folder {folder} does not exist"
    if path.exists() and not os.access(path, os.W_OK):  # mode bits, an immutable file, a read-only mount
        return "the file is read-only"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"its folder {folder} may not be written, and SQLite keeps its -wal and -shm files there"
    return None


def refusal(path: Path, shown: Path, exc: sqlite3.Error) -> StoreError:
    """SQLite's refusal to open or write ``path`` in words that name the file and say what to do."""
    name = getattr(exc, "sqlite_errorname", "")
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return LockedDatabaseError(shown)
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
        why = _unwritable_why(path) or str(exc)
        return ReadOnlyDatabaseError(shown, why) if path.exists() else UnopenableDatabaseError(shown, why)
    return DamagedDatabaseError(shown, str(exc))


def _probe_write(conn: sqlite3.Connection, version: int) -> None:
    """Take the write lock and write (nothing new), then let go: a locked or read-only file says so now,
    not at the first change a run journals."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"PRAGMA user_version = {int(version)}")
    finally:
        conn.execute("ROLLBACK")


def _connect(path: Path, readonly: bool) -> sqlite3.Connection:
    # isolation_level=None: we issue BEGIN/COMMIT ourselves. check_same_thread=False:
    # the SampleWriter's flusher thread shares the connection under the store's lock.
    if readonly:
        uri = f"file:{quote(str(path.resolve()))}?mode=ro"
        return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    return sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)


def open_database(
    path: Path,
    *,
    readonly: bool = False,
    migrations: Sequence[Migration] = MIGRATIONS,
    backup: bool = True,
    shown_as: Path | None = None,
    create: bool = True,
) -> sqlite3.Connection:
    """Open (creating if absent, unless ``create`` is false) and bring the schema up to date; raise a
    typed error otherwise.

    Damaged, foreign and too-new files are refused before anything is written, so
    they stay byte for byte as they were. ``shown_as``: the file errors name, when
    ``path`` is a private copy of it (an import checks a copy of the user's file).
    """
    shown = shown_as or path
    exists = path.exists() and (path.is_dir() or path.stat().st_size > 0)
    if exists:
        _check_header(path, shown)
    elif readonly or not create:
        raise MissingDatabaseError(shown)
    else:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)  # the user data dir may not exist yet
        except OSError as e:
            raise UnopenableDatabaseError(shown, f"its folder {path.parent} does not exist and cannot be made: "
                                                 f"{e.strerror or type(e).__name__}") from e
    try:
        conn = _connect(path, readonly)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")  # another nfs-tuner's commit is a wait, not a refusal
    except sqlite3.Error as e:
        raise refusal(path, shown, e) from e
    try:
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            tables = {
                r[0]
                for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
                if not r[0].startswith("sqlite_")
            }
        except sqlite3.DatabaseError as e:
            raise refusal(path, shown, e) from e
        known = latest_version(migrations)
        if version > known:
            raise SchemaTooNewError(shown, version, known)
        if version == 0 and tables:
            raise ForeignDatabaseError(shown)
        if version >= 1 and not V1_TABLES <= tables:
            raise DamagedDatabaseError(shown, f"tables missing: {', '.join(sorted(V1_TABLES - tables))}")
        conn.execute("PRAGMA foreign_keys = ON")
        if readonly:
            if version < known:
                raise StoreError(
                    f"{shown} has schema version {version}; open it once read-write to upgrade it to {known}."
                )
            return conn
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            _probe_write(conn, version)
        except sqlite3.OperationalError as e:
            raise refusal(path, shown, e) from e
        if str(mode).lower() != "wal":
            raise StoreError(f"{shown}: SQLite refused WAL mode (got {mode}); is it on a network file system?")
        # NORMAL in WAL mode: a process crash loses nothing committed; only power loss
        # may lose the last transactions. Cheap commits matter at one flush a second.
        conn.execute("PRAGMA synchronous = NORMAL")
        if version < known:
            if backup and version > 0:
                _backup(conn, path, version)
            migrate(conn, version, migrations)
        return conn
    except BaseException:
        conn.close()
        raise


def _backup(conn: sqlite3.Connection, path: Path, version: int) -> None:
    """Keep a copy at the old version beside the file before migrating it."""
    dest = path.with_name(f"{path.name}.v{version}.bak")
    if dest.exists():
        return
    tmp = dest.with_name(dest.name + ".part")
    with sqlite3.connect(str(tmp)) as out:
        conn.backup(out)
    out.close()
    shutil.move(str(tmp), str(dest))
