"""Leaving a started command is bounded: sshd keeps a channel open until its command exits, and a command that
ignores the stop (iperf3's server waiting for a client that never came) must not hold the caller forever.
In-process channel: a real sshd does this only when a command hangs, which is what the test needs on demand."""

from __future__ import annotations

import asyncio
import time

import pytest

from app.hosts import process
from app.hosts.process import RemoteProcess


class _Stdin:
    def write_eof(self) -> None:
        pass


class _NeverClosing:
    """An SSH process whose command never exits: its channel never closes, whatever it is told."""

    exit_status = None
    exit_signal = None
    stdin = _Stdin()

    def __init__(self) -> None:
        self.closed = asyncio.Event()
        self.told: list[str] = []

    def send_signal(self, name: str) -> None:
        self.told.append(name)

    def close(self) -> None:
        self.told.append("close")

    async def wait_closed(self) -> None:
        await self.closed.wait()


def test_leaving_a_command_that_never_ends_returns_and_keeps_its_slot_until_its_channel_closes(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(process, "CLOSE_WAIT_S", 0.2)
    released: list[float] = []

    async def scenario() -> float:
        proc = _NeverClosing()
        handle = RemoteProcess("filer", ("iperf3", "-s", "-1"), proc, lambda: released.append(time.monotonic()),  # type: ignore[arg-type]
                               lambda: False)  # fmt: skip
        start = time.monotonic()
        async with handle:
            pass
        left = time.monotonic() - start
        assert proc.told == ["TERM", "close"] and released == []  # told to stop; the channel still holds its slot
        proc.closed.set()  # the command ends at last (or its connection closes)
        await asyncio.sleep(0.05)
        assert len(released) == 1
        return left

    assert asyncio.run(scenario()) < 2
