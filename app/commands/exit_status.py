"""The exit statuses of every command, one place (docs/scripting.md's table is checked against it)."""

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

# Each status in words, for the man page's EXIT STATUS (app.shell.man_sections) and docs/scripting.md's table.
WORDS: tuple[tuple[str, str], ...] = (
    (str(int(Exit.OK)), "Success; for a sweep or a study: complete, every change put back."),
    (str(int(Exit.FAILED)), "The command ran but did not succeed: a host, a file or the session database refused, "
                            "or a run ended early with every change put back. The message on standard error says "
                            "which."),
    (str(int(Exit.USAGE)), "A usage error: a flag or value the parser refused (the message names it and what it "
                           "takes), or a plan that makes no run. Nothing was touched."),
    (str(int(Exit.HOST_LOST)), "sweep, study: a host stopped answering past the wait (--host-wait), so the run "
                               "stopped; every change on the hosts that answer was put back. The command it prints "
                               "(nfs-tuner sweep --resume ID) goes on once the host is back."),
    (str(int(Exit.NOT_PUT_BACK)), "The run ended but a change could not be put back: nfs-tuner journal lists it."),
    ("128+N", "sweep, study: stopped by signal N (130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP); every change "
              "was put back first. Any other command interrupted by Ctrl-C: 130."),
)  # fmt: skip
