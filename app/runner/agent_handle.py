"""One load agent on one host: started over SSH, its JSON lines turned into events.

The agent is started with ``wait_go`` so every host can finish its preparation
(laying out files) before any clock starts; ``go()`` then releases it. Closing stdin
(``stop()``) is the portable stop: the agent ends its workload, writes its summary,
removes its files and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any, Protocol

from app.hosts import HostConnection, HostError, RemoteProcess
from app.runner.errors import RunError
from experiments.agent_launch import bootstrap_argv, exit_message, go_line, payload
from experiments.agent_protocol import AgentError, AgentEvent, AgentNotice, AgentStream, AgentSummary
from experiments.samples import HostTelemetry, Sample
from app.vocabulary.hosts import host_detail

EventSink = Callable[["AgentHandle", AgentEvent], None]

EXIT_WAIT_S = 5.0  # silence after stdin EOF before the channel is closed: the agent says it is alive every interval
EXIT_CAP_S = 300.0  # however busy (removing a large tree over NFS), an agent is closed after this
CLEANUP_CAP_S = 3600.0  # nor longer, whatever removal its timed phases left it (AgentHandle.wait)


class _Streamed(Protocol):
    host: str
    proc: RemoteProcess | None
    ended: asyncio.Event
    last_line: float  # monotonic time of the last line it sent
    _reader: asyncio.Task[None] | None

    def _fail(self, error: RunError) -> None: ...


async def wait_or_close(handle: _Streamed, what: str, timeout: float, cap: float = EXIT_CAP_S) -> None:
    """Wait for a streamed remote process to end; close its channel once it is silent for ``timeout`` s.

    A process that keeps sending lines (an agent removing its files) is waited for, up to ``cap``.
    """
    start = time.monotonic()
    while True:
        silent_for = time.monotonic() - max(handle.last_line, start)
        try:
            await asyncio.wait_for(handle.ended.wait(), max(timeout - silent_for, 0.05))
            return
        except TimeoutError:
            now = time.monotonic()
            if now - max(handle.last_line, start) < timeout and now - start < cap:
                continue  # it spoke meanwhile: still busy, not stuck
            break
    if not handle.ended.is_set():
        if handle.proc is not None:
            handle.proc.terminate()
        handle._fail(RunError(handle.host, f"{what} did not stop within {time.monotonic() - start:.0f} s "
                                           f"(silent for {timeout:.0f} s); its channel was closed"))  # fmt: skip
        if handle._reader is not None:
            handle._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await handle._reader
        handle.ended.set()


def cleanup_cap_s(summary: AgentSummary | None) -> float:
    """How long an agent that said ``summary`` is waited for while it removes its files (AgentHandle.wait)."""
    expected = summary.removal_s if summary is not None else 0.0
    return min(max(EXIT_CAP_S, 2.0 * expected + 30.0), CLEANUP_CAP_S)


GARBAGE_WORDS = "could not be read and were left out of the figures"  # the report marks trials by them


def garbage_warning(source: str, count: int, first: list[str]) -> list[str]:
    """Lines a host sent that were not records, said once with the first of them."""
    if not count:
        return []
    return [f"{count} line(s) from the {source} {GARBAGE_WORDS}; first: {first[0][:160]}"]


class AgentHandle:
    def __init__(
        self,
        conn: HostConnection,
        config: dict[str, Any],
        on_event: EventSink,
        *,
        python: str = "python3",
        role: str = "workload",
    ) -> None:
        self.conn = conn
        self.host = conn.name
        self.config = config
        self.python = python
        self.role = role  # "workload" or "telemetry"
        self._on_event = on_event
        self.stream = AgentStream(conn.name)
        self.proc: RemoteProcess | None = None
        self.ready = asyncio.Event()
        self.ended = asyncio.Event()
        self.started_epoch: float | None = None  # the host's clock when its run began
        self.last_line = time.monotonic()
        self.exit_status: int | None = None
        self.stderr = ""
        self.error: RunError | None = None
        self.summary: AgentSummary | None = None
        self.notices: list[AgentNotice] = []
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        try:
            self.proc = await self.conn.start(bootstrap_argv(self.python))
            # payload() is UTF-8 bytes whose length prefix counts bytes; the channel
            # encodes text as UTF-8, so the same bytes arrive.
            await self.proc.write(payload(self.config).decode("utf-8"))
        except HostError as exc:
            said = await self._exit_said() if self.proc is not None else None
            self._fail(RunError(self.host, said or f"could not start the load agent: {host_detail(self.host, str(exc))}"))
            self.ended.set()
            return
        self._reader = asyncio.create_task(self._read(), name=f"agent-{self.host}-{self.role}")

    async def _exit_said(self) -> str | None:
        """Why a process that ended before it took its payload ended, by its exit status (python3 not found:
        127); the payload's write then races the channel's close and reads as a lost connection."""
        assert self.proc is not None
        try:
            result = await self.proc.wait(timeout=EXIT_WAIT_S)
        except HostError:
            return None
        self.exit_status, self.stderr = result.exit_status, result.stderr
        return exit_message(result.exit_status, self.python) if result.exit_status is not None else None

    def _fail(self, error: RunError) -> None:
        if self.error is None:
            self.error = error

    async def _read(self) -> None:
        assert self.proc is not None
        try:
            async for line in self.proc:
                self.last_line = time.monotonic()
                for event in self.stream.feed(line.encode("utf-8")):
                    self._dispatch(event)
            for event in self.stream.close():
                self._dispatch(event)
            result = await self.proc.wait(timeout=EXIT_WAIT_S)
            self.exit_status = result.exit_status
            self.stderr = result.stderr
        except HostError as exc:
            self._fail(RunError(self.host, f"lost the SSH connection during the run: {host_detail(self.host, str(exc))}",
                                lost=True))
        finally:
            # Files it could not remove after a full summary do not undo the figures: the run's
            # warnings name them (cleanup problems), the trial stands.
            left_files_only = self.summary is not None and bool(self.cleanup_problems)
            if self.error is None and self.stream.error is None and self.exit_status not in (0, None) \
                    and not left_files_only:
                message = exit_message(self.exit_status, self.python) or "the load agent failed"
                detail = self.stderr.strip().splitlines()[-1:] if self.stderr.strip() else []
                self._fail(RunError(self.host, message + (f" ({detail[0]})" if detail else "")))
            if self.error is None and self.summary is None and self.stream.error is None and self.exit_status is None:
                self._fail(RunError(self.host, "the load agent ended without a summary (killed, or the channel closed)"))
            self.ended.set()
            self.ready.set()  # nobody waits for a ready that will never come

    def _dispatch(self, event: AgentEvent) -> None:
        if isinstance(event, AgentError):
            self._fail(RunError(self.host, event.message, event.errno))
        elif isinstance(event, AgentSummary):
            self.summary = event
        elif isinstance(event, AgentNotice):
            self.notices.append(event)
            if event.type == "ready":
                self.ready.set()
            elif event.type == "start":
                self.started_epoch = float(event.data.get("epoch", 0.0)) or None
        if isinstance(event, Sample | HostTelemetry | AgentError | AgentNotice | AgentSummary):
            self._on_event(self, event)

    async def go(self, epoch: float = 0.0) -> None:
        """Release the agent; epoch 0 means at once (an epoch is on the host's clock)."""
        if self.proc is None or self.ended.is_set():
            return
        with contextlib.suppress(HostError):
            await self.proc.write(go_line(epoch).decode("utf-8"))

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.write_eof()

    async def wait(self, timeout: float = EXIT_WAIT_S) -> None:
        """Wait for the end; terminate the channel if the agent does not leave in time.

        A phased workload's time limit ends its phases, not its cleanup: every entry they made is
        removed. The cleanup (saying it is alive every interval) is waited for twice as long as the
        entries its summary says are left take at the rate its phases removed at, and at least
        EXIT_CAP_S; a slow disk removes slowly, and a cap it cannot meet would leave its files."""
        await wait_or_close(self, "the load agent", timeout, cleanup_cap_s(self.summary))

    @property
    def warnings(self) -> list[str]:
        said = [str(n.data.get("message", "")) for n in self.notices if n.type == "warning"]
        return said + garbage_warning("agent", self.stream.garbage_count, self.stream.garbage)

    @property
    def workdir(self) -> str | None:
        """The agent's own directory on the mount, as its hello said."""
        dirs = [str(n.data["dir"]) for n in self.notices if n.type == "hello" and n.data.get("dir")]
        return dirs[-1] if dirs else None

    @property
    def cleanup_problems(self) -> list[str]:
        return [str(p) for n in self.notices if n.type == "cleanup" for p in n.data.get("problems", [])]
