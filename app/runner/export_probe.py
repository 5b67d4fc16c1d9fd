"""Read-only looks at the export before a run: its free space, and whether a login may write it.

Nothing here changes a host: ``stat -f`` reads the file system's counters, ``test -w`` asks
access(2) (over NFS the client asks the server, so root_squash and the export's owner count).
"""

from __future__ import annotations

from app.hosts import HostConnection, HostError
from app.hosts.remote_args import absolute_path
from app.runner.errors import RunError

PROBE_TIMEOUT_S = 15.0  # a hung mount answers never: said as such, not waited for


async def export_free(conn: HostConnection, export: str) -> int:
    """Bytes an unprivileged writer may still use on the file system that holds ``export``."""
    path = absolute_path(export, "export path")
    try:
        result = await conn.run(["stat", "-f", "-c", "%a %S", "--", path], timeout=PROBE_TIMEOUT_S)
    except HostError as exc:
        raise RunError(conn.name, f"could not read the free space of {path}: {exc}") from exc
    fields = result.stdout.split()
    if not result.ok or len(fields) != 2 or not all(f.isdigit() for f in fields):
        raise RunError(conn.name, f"could not read the free space of {path}: {(result.stderr or result.stdout).strip()[:200]}")
    return int(fields[0]) * int(fields[1])


async def may_write(conn: HostConnection, path: str) -> bool:
    """Whether the login may write the directory ``path`` (as the load agent, which runs as the login)."""
    checked = absolute_path(path, "directory")
    try:
        result = await conn.run(["test", "-w", checked], timeout=PROBE_TIMEOUT_S)
    except HostError as exc:
        raise RunError(conn.name, f"could not check whether {checked} may be written: {exc}") from exc
    if result.exit_status not in (0, 1):
        raise RunError(conn.name, f"could not check whether {checked} may be written: {result.stderr.strip()[:200]}")
    return result.ok
