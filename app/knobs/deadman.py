"""The controller's side of a host's dead-man switch (see deadman_host.py)."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

from app.hosts import CommandResult, HostConnection
from app.knobs.model import KnobError

DEFAULT_TIMEOUT = 60.0
# The range an admin may choose: under 10 s a slow heartbeat over a busy link could fire a
# switch under a live run; over 10 min a lost controller leaves a host tuned too long.
MIN_TIMEOUT = 10
MAX_TIMEOUT = 600


def _source() -> str:
    return resources.files("app.knobs").joinpath("deadman_host.py").read_text(encoding="utf-8")


# /run is root's tmpfs: the switch's parent directory there is root's alone (the
# switch checks owner and mode and refuses otherwise). The same for a root login
# and a sudo one: the switch always runs as root, through the changes' own sudo.
STATE_ROOT = "/run/nfs-tuner"
_TOKEN = re.compile(r"[0-9a-f]{12,64}")  # the helper takes these only (sudo_helper_host.SWITCH)


_IN_DETAIL = re.compile(r"deadman=([0-9a-f]+)")


def with_token(token: str | None, detail: str) -> str:
    """A journal entry's detail that still names its switch: `nfs-tuner journal check` asks that switch whether it
    put the change back (token_of reads it), so a failure's words must not lose it."""
    return f"deadman={token}; {detail}" if token else detail


def token_of(detail: str | None) -> str | None:
    """The switch a journal entry's detail names (with_token wrote it), if any."""
    m = _IN_DETAIL.search(detail or "")
    return m.group(1) if m else None


def state_dir(token: str) -> str:
    if not _TOKEN.fullmatch(token):
        raise KnobError(f"a dead-man token must be hex, not {token!r}")
    return f"{STATE_ROOT}/{token}"


async def _switch(conn: HostConnection, verb: str, d: str, *args: str, input: str | None = None,
                  timeout: float | None = 30) -> CommandResult:  # fmt: skip
    """One verb of the host's switch program, run as root (deadman_host.py)."""
    priv = await conn.privilege()
    # Under the narrow sudoers rule the helper runs its own built-in copy of the switch.
    # -I -S: no environment, user site or site module (root's python, and half the start-up time).
    program = ["deadman"] if priv.via_helper else ["python3", "-I", "-S", "-c", _source()]
    return await conn.run([*program, verb, d, *args], sudo=not priv.is_root, input=input, timeout=timeout)


def _refusal(result: CommandResult) -> str:
    return result.stderr.strip() or result.stdout.strip() or f"exit {result.exit_status}"


class DeadMan:
    def __init__(self, conn: HostConnection, token: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.conn = conn
        self.token = token
        self.timeout = timeout
        self.dir = state_dir(token)
        self.pid: int | None = None

    async def arm(self) -> None:
        result = await _switch(self.conn, "arm", self.dir, f"{self.timeout:g}")
        words = result.stdout.split()
        if not result.ok or len(words) != 2 or words[0] != "armed" or not words[1].isdigit():
            raise KnobError(
                f"could not start the dead-man switch on {self.conn.name} ({_refusal(result)}); nothing was "
                f"changed. It needs python3 on the host and a {STATE_ROOT} that only root can write."
            )
        self.pid = int(words[1])

    async def set_restore(self, entries: list[dict[str, Any]]) -> None:
        """Hand the host its way back before each change is made."""
        result = await _switch(self.conn, "write", self.dir, "restore.json", input=json.dumps(entries))
        if not result.ok:
            raise KnobError(f"could not update the dead-man switch on {self.conn.name}: {_refusal(result)}")

    async def beat(self) -> None:
        priv = await self.conn.privilege()
        if priv.via_helper:  # the narrow rule allows the helper's verbs only
            await _switch(self.conn, "beat", self.dir, timeout=15)
            return
        # A root or full-sudo login refreshes the heartbeat without a python start: on the lab's guests 0.2 s of
        # a host's CPU instead of 0.9 s, four times a trial, beside the workload. -c: a heartbeat file gone stays
        # gone (the switch reads that as silence); -h: never through a link (only root writes the directory).
        await self.conn.run(["touch", "-c", "-h", f"{self.dir}/heartbeat"], sudo=not priv.is_root, timeout=15)

    async def disarm(self) -> None:
        await _switch(self.conn, "disarm", self.dir, timeout=15)

    async def alive(self) -> bool:
        return self.pid is not None and (await _switch(self.conn, "pending", self.dir)).ok


async def fired_report(conn: HostConnection, token: str) -> Any:
    """What a switch that fired says it did (None: it has not fired), looked up after a controller crash.

    A claim, not a fact, of any shape: restored_ids judges it, and recovery reads each value back before it
    believes one. A report that is not JSON is returned as its text, so it reads as damaged, not as none.
    """
    result = await _switch(conn, "read", state_dir(token), "fired.json")
    if not result.ok:
        return None
    try:
        return json.loads(result.stdout)
    except ValueError:
        return result.stdout


def restored_ids(report: Any) -> tuple[frozenset[int], str]:
    """The journal ids a fired switch's report says it put back, and what was wrong with it ("": nothing).

    Total over any shape: the report came from a host, and a damaged or forged one must cost
    its own entries their shortcut (they are read back instead), never the look-up of every host.
    """
    if not isinstance(report, dict) or not isinstance(report.get("results"), list):
        return frozenset(), "its report has no list of results"
    ids: set[int] = set()
    bad = 0
    for r in report["results"]:
        if isinstance(r, dict) and type(r.get("id")) is int and isinstance(r.get("ok"), bool):
            if r["ok"]:
                ids.add(r["id"])
        else:
            bad += 1
    return frozenset(ids), (f"{bad} of its report's results unreadable" if bad else "")


async def switch_pending(conn: HostConnection, token: str) -> bool:
    """Whether a switch of this token is still armed (its controller died less than a timeout ago)."""
    return (await _switch(conn, "pending", state_dir(token))).ok


async def forget(conn: HostConnection, token: str) -> None:
    """Remove a fired switch's files once the journal has taken note."""
    await _switch(conn, "forget", state_dir(token))
