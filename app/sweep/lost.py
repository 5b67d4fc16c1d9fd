"""Whether a trial broke because a host went away, and which: words for the admin, never the configuration's fault.

A host that stops answering mid-trial shows as a dropped SSH connection, a command that
did not finish within its bound, a refused or unanswered connection, or a load agent that
fell silent. Such a trial is interrupted and runs again; it is held against its
configuration only when the same host goes away again under it (app.sweep.engine).
"""

from __future__ import annotations

from app.hosts import CommandTimeout, ConnectionLost, ConnectTimeout, HostError
from app.hosts.errors import HOST_GONE
from app.runner.errors import RunError


def lost_host(exc: BaseException | None) -> tuple[str, str] | None:
    """(the host that went away, what was seen) along the exception's chain, or None when none went away."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, HOST_GONE) and isinstance(exc, HostError) and exc.host:
            return exc.host, _cause(exc)
        if isinstance(exc, RunError) and exc.lost and exc.host:
            return exc.host.split(", ")[0], exc.message
        exc = exc.__cause__ or exc.__context__
    return None


def _cause(exc: HostError) -> str:
    if isinstance(exc, CommandTimeout):
        return f"a command did not finish within {exc.seconds:g} s"
    if isinstance(exc, ConnectionLost):
        return "SSH connection lost"
    if isinstance(exc, ConnectTimeout):
        return "no SSH answer"
    return "SSH connection refused"
