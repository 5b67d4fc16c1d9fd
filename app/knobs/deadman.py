"""The controller's side of a host's dead-man switch (see deadman_host.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from importlib import resources
from typing import Any

from app.hosts import CommandResult, HostConnection, HostError
from app.hosts.errors import CommandTimeout
from app.hosts.privilege import Privilege
from app.hosts.process import RemoteProcess
from app.knobs.model import KnobError

DEFAULT_TIMEOUT = 60.0
WRITE_BOUND = 30.0  # seconds a restore list's write may take before its host counts as not answering
BEAT_BOUND = 15.0
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


def _program(priv: Privilege) -> list[str]:
    # Under the narrow sudoers rule the helper runs its own built-in copy of the switch.
    # -I -S: no environment, user site or site module (root's python, and half the start-up time).
    return ["deadman"] if priv.via_helper else ["python3", "-I", "-S", "-c", _source()]


async def _switch(conn: HostConnection, verb: str, d: str, *args: str, input: str | None = None,
                  timeout: float | None = 30) -> CommandResult:  # fmt: skip
    """One verb of the host's switch program, run as root (deadman_host.py)."""
    priv = await conn.privilege()
    return await conn.run([*_program(priv), verb, d, *args], sudo=not priv.is_root, input=input, timeout=timeout)


class _Writer:
    """The switch's ``serve`` on one host: a single process for a run's restore lists (and beats), started at the
    first write, instead of a python start for each (0.5 s of a one-CPU host, several times a trial). A host
    whose switch or helper has no ``serve`` (one installed before it) is written to by the one-shot verbs."""

    def __init__(self, conn: HostConnection, d: str) -> None:
        self.conn = conn
        self.dir = d
        self._proc: RemoteProcess | None = None
        self._unavailable = False
        self._lock = asyncio.Lock()  # one line and its answer at a time: answers carry no id

    @property
    def serving(self) -> bool:
        return self._proc is not None

    async def send(self, line: str, timeout: float) -> str | None:
        """The switch's answer to ``line`` (``ok``, or ``refused: why`` / ``failed: why``); None when this host
        cannot serve (the one-shot verbs then)."""
        async with self._lock:
            if self._unavailable:
                return None
            if self._proc is None:
                priv = await self.conn.privilege()
                self._proc = await self.conn.start([*_program(priv), "serve", self.dir, "restore.json"],
                                                   sudo=not priv.is_root)  # fmt: skip
            proc = self._proc
            try:
                answer = await asyncio.wait_for(self._exchange(proc, line), timeout)
            except TimeoutError:
                self.stop()
                raise CommandTimeout(self.conn.name, "writing the dead-man switch's restore list", timeout) from None
            except BaseException:  # lost, or cancelled between a line and its answer: never read a stale answer
                self.stop()
                raise
            if not answer.endswith("\n"):  # it ended: `serve` refused (an older switch or helper), or it died
                self.stop()
                self._unavailable = True
                return None
            return answer.strip()

    @staticmethod
    async def _exchange(proc: RemoteProcess, line: str) -> str:
        await proc.write(line + "\n")
        return await proc.readline()

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc = None

    async def close(self) -> None:
        """End it as it ends by itself: stdin closed; a host that does not let it go within 5 s has it stopped."""
        async with self._lock:
            proc, self._proc = self._proc, None
            if proc is None:
                return
            proc.write_eof()
            with contextlib.suppress(HostError):
                await proc.wait(timeout=5)
            proc.terminate()


def _refusal(result: CommandResult) -> str:
    return result.stderr.strip() or result.stdout.strip() or f"exit {result.exit_status}"


class DeadMan:
    def __init__(self, conn: HostConnection, token: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.conn = conn
        self.token = token
        self.timeout = timeout
        self.dir = state_dir(token)
        self.pid: int | None = None
        self._writer = _Writer(conn, self.dir)

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
        data = json.dumps(entries)  # one line: JSON strings escape their newlines
        answer = await self._writer.send(data, WRITE_BOUND)
        if answer is None:
            result = await _switch(self.conn, "write", self.dir, "restore.json", input=data, timeout=WRITE_BOUND)
            answer = "ok" if result.ok else _refusal(result)
        if answer != "ok":
            raise KnobError(f"could not update the dead-man switch on {self.conn.name}: {answer}")

    async def beat(self) -> None:
        if self._writer.serving and await self._writer.send("beat", BEAT_BOUND) == "ok":
            return
        priv = await self.conn.privilege()
        if priv.via_helper:  # the narrow rule allows the helper's verbs only
            await _switch(self.conn, "beat", self.dir, timeout=BEAT_BOUND)
            return
        # A root or full-sudo login refreshes the heartbeat without a python start: on the lab's guests 0.2 s of
        # a host's CPU instead of 0.9 s, four times a trial, beside the workload. -c: a heartbeat file gone stays
        # gone (the switch reads that as silence); -h: never through a link (only root writes the directory).
        await self.conn.run(["touch", "-c", "-h", f"{self.dir}/heartbeat"], sudo=not priv.is_root, timeout=BEAT_BOUND)

    async def disarm(self) -> None:
        await self._writer.close()
        await _switch(self.conn, "disarm", self.dir, timeout=15)

    def let_go(self) -> None:
        """Stop writing to this switch (its host is lost, or a new switch replaces it): its writer's channel
        is closed, the switch itself is left to fire."""
        self._writer.stop()

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
