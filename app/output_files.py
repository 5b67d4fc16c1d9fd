"""Files the admin names for nfs-tuner to write (a report, a session file, CSV): one set of rules for all.

- ``-`` means standard output, for the faces that offer it.
- A file that exists is replaced only when the admin said so (``--force``, a save dialog's
  "Replace?"); otherwise it is refused and left as it was.
- It is written beside its place under a temporary name and moved in at the end, so a
  failure leaves neither a half file nor the temporary one behind.
- It is readable as the admin's umask allows (0644 under the usual 022): these files are
  meant to be handed on; a file replaced keeps its own mode.
- A failure names the file the admin asked for, never the temporary one, and says what to do.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STDOUT = "-"  # a file name that means standard output
_ADVICE = {
    errno.EACCES: "choose a folder you may write to",
    errno.EPERM: "choose a folder you may write to",
    errno.EROFS: "that file system is read-only; choose another folder",
    errno.ENOSPC: "the disk is full; free some space or choose another disk",
    errno.EDQUOT: "your disk quota is used up; free some space or choose another disk",
    errno.ENAMETOOLONG: "choose a shorter name",
    errno.ENOTDIR: "a part of the path is a file, not a folder; choose another path",
}
_DEFAULT_ADVICE = "check the folder, its permissions and free space"


class OutputError(Exception):
    """A file the admin named was not written; nothing was left in its place."""

    def __init__(self, dest: Path, message: str) -> None:
        super().__init__(message)
        self.dest = dest


class OutputExists(OutputError):
    """The file exists and the admin did not ask to replace it."""

    def __init__(self, dest: Path, what: str) -> None:
        super().__init__(dest, f"{dest} exists already; {what} was not written. Choose another name.")


def is_stdout(name: str | os.PathLike[str]) -> bool:
    return os.fspath(name) == STDOUT


def failure(dest: Path, what: str, exc: OSError | sqlite3.Error) -> OutputError:
    """``exc`` (the OS's or SQLite's words, which may name a temporary file) told of ``dest``."""
    if isinstance(exc, OSError):
        cause = exc.strerror or type(exc).__name__
        advice = _ADVICE.get(exc.errno or 0, _DEFAULT_ADVICE)
    else:  # SQLite says "unable to open database file", "database or disk is full"
        cause = str(exc)
        advice = _ADVICE[errno.ENOSPC] if "full" in cause else _DEFAULT_ADVICE
    return OutputError(dest, f"{what[:1].upper()}{what[1:]} was not written to {dest}: {cause}; {advice}.")


def _umask() -> int:
    """The process's umask, read without changing it (os.umask would, for every thread, for a moment)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def _mode_for(dest: Path) -> int:
    try:
        return dest.stat().st_mode & 0o7777  # a file replaced keeps its mode
    except OSError:
        return 0o666 & ~_umask()


@contextmanager
def staged(dest: Path, what: str, *, replace: bool = False) -> Iterator[Path]:
    """A fresh temporary path beside ``dest`` to write; when the block ends it becomes ``dest``.

    ``what`` names the file in messages ("the report"). OutputExists when ``dest`` exists and
    ``replace`` is false (checked before and when moving in); OutputError on any write failure.
    The temporary file is gone either way.
    """
    if not replace and dest.exists():
        raise OutputExists(dest, what)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
        os.close(fd)
    except OSError as exc:
        raise failure(dest, what, exc) from exc
    tmp = Path(name)
    try:
        yield tmp  # empty: SQLite takes an empty file as a new database
        os.chmod(tmp, _mode_for(dest))
        _move_in(tmp, dest, what, replace)
    except (OSError, sqlite3.Error) as exc:
        raise failure(dest, what, exc) from exc
    finally:
        for leftover in (tmp, *(tmp.with_name(tmp.name + side) for side in ("-journal", "-wal", "-shm"))):
            leftover.unlink(missing_ok=True)


def _move_in(tmp: Path, dest: Path, what: str, replace: bool) -> None:
    if replace:
        os.replace(tmp, dest)
        return
    try:
        os.link(tmp, dest)  # never over a file that appeared meanwhile
    except FileExistsError:
        raise OutputExists(dest, what) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        if dest.exists():  # a file system without hard links (FAT)
            raise OutputExists(dest, what) from None
        os.replace(tmp, dest)


def write_text(dest: Path, text: str, what: str, *, replace: bool = False) -> Path:
    """``text`` (UTF-8) as the file ``dest``, by ``staged``'s rules; returns ``dest``."""
    with staged(dest, what, replace=replace) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return dest
