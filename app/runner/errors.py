"""Why a run ended early, in words the admin can act on."""

from __future__ import annotations

from app.vocabulary.hosts import about_host


class RunError(Exception):
    """A workload run ended with a problem; the samples gathered so far are kept.

    ``host`` names where it happened ("" when not one host's fault), ``errno`` is the
    agent's errno when it gave one (28 = ENOSPC, 110 = ETIMEDOUT, 5 = EIO). ``lost``: the
    host went away (its SSH connection dropped, or it fell silent), not the workload's fault.
    """

    def __init__(self, host: str, message: str, errno: int | None = None, *, lost: bool = False) -> None:
        super().__init__(about_host(host, message))
        self.host = host
        self.message = message
        self.errno = errno
        self.lost = lost
