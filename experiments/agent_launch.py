"""How the load agent reaches a host: a short bootstrap command plus a stdin payload.

The SSH layer runs ``bootstrap_argv()`` (joined with ``shlex.join`` for the remote
shell) and writes ``payload(config)`` to the channel's stdin, keeping stdin open: closing
it later tells the agent to stop. Nothing is written to the host's disk outside the test
directory. Payload layout: ``<len>\\n<agent source><config JSON>\\n``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

AGENT_PATH = Path(__file__).with_name("agent.py")

# Reads exactly <len> bytes of source, so the config line that follows stays in stdin's
# buffer for the agent. Kept to one line of 3.6-compatible code without quotes that a
# remote shell would need escaped beyond shlex.quote.
BOOTSTRAP = (
    "import sys;b=sys.stdin.buffer;n=int(b.readline());"
    "exec(compile(b.read(n),'nfs-tuner-agent','exec'),{'__name__':'__main__'})"
)

# Exit codes the controller can map to a message (127 comes from the shell).
EXIT_ERROR = 1
EXIT_CRASH = 2
EXIT_NO_PYTHON = 127


def bootstrap_argv(python: str = "python3") -> list[str]:
    """The command that starts the agent on a host; -u keeps stdout unbuffered, -I -S leave out
    the environment, user site and site module (stdlib only, and half the start-up on a slow host)."""
    return [python, "-u", "-I", "-S", "-c", BOOTSTRAP]


@cache
def agent_source() -> bytes:
    return AGENT_PATH.read_bytes()


def payload(config: dict[str, Any]) -> bytes:
    """Source and config for the bootstrap's stdin; the channel must stay open afterwards."""
    src = agent_source()
    line = json.dumps(config, separators=(",", ":"), allow_nan=False)
    if "\n" in line:  # json.dumps never emits raw newlines, but the protocol depends on it
        raise ValueError("config JSON must be one line")
    return b"%d\n" % len(src) + src + line.encode("utf-8") + b"\n"


def go_line(epoch: float) -> bytes:
    """The control line that starts agents configured with wait_go at an aligned time."""
    return json.dumps({"go": epoch}).encode("utf-8") + b"\n"


STOP_LINE = b"stop\n"


def exit_message(code: int, python: str = "python3") -> str | None:
    """Words for an agent exit code the agent itself could not explain."""
    if code == EXIT_NO_PYTHON:
        return f"{python} was not found on the host: install Python 3.6 or newer (e.g. the python3 package) or choose its path"
    if code in (0, EXIT_ERROR, EXIT_CRASH):
        return None  # the agent wrote an error line itself (or succeeded)
    if code < 0:
        return f"the load agent was killed by signal {-code}"
    return f"the load agent exited with code {code} without saying why; check that {python} is Python 3.6 or newer"
