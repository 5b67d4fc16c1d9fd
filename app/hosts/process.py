"""Results of remote commands and the handle for streamed ones."""

from __future__ import annotations

import asyncio
import logging
import shlex
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import asyncssh

from app.hosts.errors import CommandTimeout, ConnectionLost, OutputTooLarge, command_text

log = logging.getLogger(__name__)
# How long leaving a started command waits for its channel to close once told to stop: a command that ignores
# the signal and EOF (iperf3's server still waiting for its one client) would otherwise hold the caller forever.
CLOSE_WAIT_S = 15.0

MAX_OUTPUT = 16 << 20  # characters of one command's stdout, and of its stderr, nfs-tuner reads (run)
MAX_LINE = 4 << 20  # characters of one streamed line: a longer one comes in pieces its reader refuses
MAX_STDERR = 1 << 20  # characters of a streamed command's stderr kept
CHUNK = 1 << 16


async def read_bounded(stream: asyncssh.SSHReader[str], limit: int, host: str, argv: tuple[str, ...]) -> str:
    """All of a stream up to its end, or OutputTooLarge past ``limit`` characters: memory stays bounded."""
    parts: list[str] = []
    size = 0
    while chunk := await stream.read(CHUNK):
        size += len(chunk)
        if size > limit:
            raise OutputTooLarge(host, command_text(argv), limit)
        parts.append(chunk)
    return "".join(parts)


@dataclass(frozen=True)
class CommandResult:
    exit_status: int | None  # None: killed by a signal or the channel closed early
    stdout: str
    stderr: str
    argv: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.exit_status == 0


class RemoteProcess:
    """A remote command whose stdin/stdout stream while it runs (load agent, telemetry).

    Use as ``async with await conn.start(argv) as proc:``; iterate ``proc`` for stdout
    lines, ``await proc.write(text)`` to feed stdin, ``proc.write_eof()`` to end it and
    ``await proc.wait()`` for the result. The channel slot is held until the process ends.
    """

    def __init__(
        self,
        host: str,
        argv: tuple[str, ...],
        proc: asyncssh.SSHClientProcess[str],
        release: Callable[[], None],
        is_lost: Callable[[], bool],
    ) -> None:
        self.host = host
        self.argv = argv
        self._proc = proc
        self._is_lost = is_lost
        self._release = release
        self._released = False
        self._pending = ""  # stdout read but not yet returned as a line
        self._watch = asyncio.ensure_future(self._release_when_closed())

    async def _release_when_closed(self) -> None:
        try:
            await self._proc.wait_closed()
        finally:
            self._release_once()

    def _release_once(self) -> None:
        if not self._released:
            self._released = True
            self._release()

    async def write(self, data: str) -> None:
        try:
            self._proc.stdin.write(data)
            await self._proc.stdin.drain()
        except (asyncssh.Error, OSError, BrokenPipeError) as exc:
            raise ConnectionLost(self.host, str(exc) or type(exc).__name__) from exc

    def write_eof(self) -> None:
        # The load agent exits on stdin EOF: the portable way to stop it over SSH.
        try:
            self._proc.stdin.write_eof()
        except (asyncssh.Error, OSError, BrokenPipeError):
            pass

    async def readline(self) -> str:
        """One stdout line ('' at the end of output); ConnectionLost if SSH dropped.

        A line longer than MAX_LINE comes as pieces of MAX_LINE characters without their newline:
        the stream's reader refuses them (as it refuses any bad record), and memory stays bounded.
        """
        while True:
            end = self._pending.find("\n")
            if end >= 0 or len(self._pending) >= MAX_LINE:
                cut = end + 1 if 0 <= end < MAX_LINE else MAX_LINE
                line, self._pending = self._pending[:cut], self._pending[cut:]
                return line
            try:
                chunk = await self._proc.stdout.read(CHUNK)
            except (asyncssh.Error, OSError, asyncio.IncompleteReadError) as exc:
                raise ConnectionLost(self.host, f"while running {command_text(self.argv)!r}") from exc
            if not chunk:
                line, self._pending = self._pending, ""
                if not line and self._is_lost():
                    raise ConnectionLost(self.host, f"while running {command_text(self.argv)!r}")
                return line
            self._pending += chunk

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while line := await self.readline():
            yield line

    async def read_stderr(self) -> str:
        """The command's stderr, its first MAX_STDERR characters: what a host says of its failure, not a flood."""
        parts: list[str] = []
        size = 0
        try:
            while size < MAX_STDERR and (chunk := await self._proc.stderr.read(CHUNK)):
                parts.append(chunk)
                size += len(chunk)
        except (asyncssh.Error, OSError) as exc:
            raise ConnectionLost(self.host, f"while running {command_text(self.argv)!r}") from exc
        return "".join(parts)[:MAX_STDERR]

    @property
    def exit_status(self) -> int | None:
        return self._proc.exit_status

    async def wait(self, timeout: float | None = None) -> CommandResult:
        try:
            done = await self._proc.wait(timeout=timeout)
        except asyncssh.TimeoutError as exc:
            self.terminate()
            raise CommandTimeout(self.host, shlex.join(self.argv), timeout or 0) from exc
        if done.exit_status is None and self._is_lost():
            raise ConnectionLost(self.host, f"while running {command_text(self.argv)!r}")
        return CommandResult(done.exit_status, str(done.stdout or ""), str(done.stderr or ""), self.argv)

    def terminate(self) -> None:
        """Ask the remote process to stop: SIGTERM (if sshd forwards it), EOF, close."""
        try:
            self._proc.send_signal("TERM")
        except (asyncssh.Error, OSError, ValueError):
            pass
        self.write_eof()
        self._proc.close()

    async def __aenter__(self) -> RemoteProcess:
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._proc.exit_status is None and self._proc.exit_signal is None:
            self.terminate()
        try:
            await asyncio.wait_for(self._proc.wait_closed(), CLOSE_WAIT_S)
        except TimeoutError:  # sshd holds a channel open until its command exits: the host's to end, not ours to wait
            log.warning("%s: %s still runs %.0f s after its channel was closed; it ends with the connection",
                        self.host, command_text(self.argv), CLOSE_WAIT_S)
            return  # its slot is released when the channel closes (_release_when_closed)
        self._release_once()
