"""Typed store errors whose messages tell the admin what to do next.

Every one of them means the file was left exactly as it was found.
"""

from __future__ import annotations

from pathlib import Path


class StoreError(Exception):
    """Base of every error the session store raises."""


class DamagedDatabaseError(StoreError):
    """The file is not a database, or SQLite found it corrupt."""

    def __init__(self, path: Path, cause: str) -> None:
        self.path = path
        self.cause = cause
        super().__init__(
            f"The session file {path} is damaged or is not a database ({cause}). "
            "nfs-tuner left it untouched. Move it aside (or restore it from a backup) "
            "and start again; point --db or $NFS_TUNER_DB elsewhere to keep it."
        )


class ForeignDatabaseError(StoreError):
    """A valid SQLite file that nfs-tuner did not create."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(
            f"{path} is an SQLite database, but not an nfs-tuner session file. "
            "nfs-tuner left it untouched; choose another path with --db or $NFS_TUNER_DB."
        )


class SchemaTooNewError(StoreError):
    """The file was written by a newer nfs-tuner than this one."""

    def __init__(self, path: Path, found: int, known: int) -> None:
        self.path = path
        self.found = found
        self.known = known
        super().__init__(
            f"The session file {path} has schema version {found}, but this nfs-tuner "
            f"only knows up to version {known}: it was written by a newer nfs-tuner. "
            "Upgrade nfs-tuner to open it. The file was not changed."
        )


_ELSEWHERE = "--db or $NFS_TUNER_DB choose another file"


class LockedDatabaseError(StoreError):
    """Another program holds the session database's write lock (another nfs-tuner, an sqlite3 shell)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(
            f"The session database {path} is in use by another program (it is locked). Close the other nfs-tuner, "
            f"or whatever has it open, and start again; or open it read-only for review (--review); {_ELSEWHERE}. "
            "The file was not changed."
        )


class ReadOnlyDatabaseError(StoreError):
    """The session database exists but may not be written: the file, its folder or its file system."""

    def __init__(self, path: Path, why: str) -> None:
        self.path = path
        self.why = why
        super().__init__(
            f"The session database {path} cannot be written ({why}); nfs-tuner writes every session and every "
            f"change's journal entry there. Open it read-only for review (--review), or make it writable; "
            f"{_ELSEWHERE}. The file was not changed."
        )


class UnopenableDatabaseError(StoreError):
    """No session database could be opened or made at that path: its folder is missing or may not be written."""

    def __init__(self, path: Path, why: str) -> None:
        self.path = path
        self.why = why
        super().__init__(f"No session database can be made at {path} ({why}); {_ELSEWHERE}, in a folder you may write.")


class MissingDatabaseError(StoreError):
    """No session file where one was to be read: nothing has been recorded there (none was created)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(f"There is no session database at {path}: nothing has been recorded there yet "
                         "(--db and $NFS_TUNER_DB choose another).")  # fmt: skip


class InvalidTransitionError(StoreError):
    """A state change the life cycle does not allow (e.g. reverted → applied)."""


class NotFoundError(StoreError, KeyError):
    """No row with that id."""


_UNCHANGED = "Nothing was imported: your session database is unchanged, and the file was left as it was."


class DamagedSessionFileError(DamagedDatabaseError):
    """A received session file failed the import's content checks (or is no database at all)."""

    def __init__(self, path: Path, cause: str, *, table: str | None = None, row_id: object = None) -> None:
        self.path = path
        self.cause = cause
        self.table = table
        self.row_id = row_id
        where = f"{table} row {row_id}: " if table is not None and row_id is not None else \
            f"table {table}: " if table is not None else ""
        # StoreError's constructor: DamagedDatabaseError's advice (move it aside) is for the user's own file.
        StoreError.__init__(self, f"The session file {path} cannot be imported: it is damaged or is not a "
                                  f"session file ({where}{cause}). {_UNCHANGED}")


class ImportFailedError(StoreError):
    """Importing a session file failed for a reason other than its content (unreadable, disk full…)."""

    def __init__(self, path: Path, cause: str) -> None:
        self.path = path
        self.cause = cause
        super().__init__(f"The session file {path} was not imported ({cause}). {_UNCHANGED}")
