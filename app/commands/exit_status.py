"""The exit statuses of every command, one place (the README's table is checked against it)."""

from __future__ import annotations

import signal
from enum import IntEnum


class Exit(IntEnum):
    OK = 0  # done; for a sweep or study: complete, every change put back
    FAILED = 1  # said on stderr: a host, a file or the database refused, or a run ended early with every change back
    USAGE = 2  # the command line: a bad or missing argument, a plan that makes no run; nothing was touched
    HOST_LOST = 3  # a sweep or study stopped because a host stopped answering; `sweep --resume ID` goes on later
    NOT_PUT_BACK = 4  # a run ended but some change could not be put back: `nfs-tuner journal` lists it


SIGNALLED = 128  # + the signal that cancelled a sweep or study (Ctrl-C 130, SIGHUP 129, SIGTERM 143); every change put back


def signalled(signum: int) -> int:
    return SIGNALLED + int(signum)


INTERRUPTED = signalled(signal.SIGINT)
