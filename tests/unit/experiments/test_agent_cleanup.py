"""What the agent leaves on the export: the NFS client's silly-renamed files, and a trial's figures when
only removing files failed (seen in the lab soak: a 'Directory not empty' broke a trial that had measured)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from app.hosts import ConnectionLost
from app.runner.agent_handle import AgentHandle
from experiments import agent


def test_the_nfs_clients_silly_renames_are_outwaited_and_the_directory_goes(tmp_path: Path) -> None:
    work = tmp_path / ".nfs-tuner-agent-1-ab"
    (work / "tree").mkdir(parents=True)
    (work / ".nfs000000000001").write_text("held")
    (work / "tree" / ".nfs000000000002").write_text("held")
    beats: list[int] = []
    assert agent._outwait_silly_renames(str(work), 1e18, lambda: beats.append(1)) is True
    assert not work.exists()


def test_anything_but_silly_renames_is_left_in_place_at_once(tmp_path: Path) -> None:
    work = tmp_path / ".nfs-tuner-agent-1-ab"
    work.mkdir()
    (work / ".nfs000000000001").write_text("held")
    (work / "data.0").write_text("an admin's? never guessed at")
    assert agent._outwait_silly_renames(str(work), 1e18, lambda: None) is False
    assert (work / "data.0").exists()


class _Proc:
    """An agent that measured, then could not remove its directory (exit 1)."""

    def __init__(self, lines: list[dict[str, Any]]) -> None:
        self.lines = [json.dumps(x) + "\n" for x in lines]

    async def write(self, data: str) -> None:
        pass

    def __aiter__(self) -> AsyncIterator[str]:
        return self._gen()

    async def _gen(self) -> AsyncIterator[str]:
        for line in self.lines:
            yield line

    async def wait(self, timeout: float | None = None) -> SimpleNamespace:
        return SimpleNamespace(exit_status=agent.EXIT_ERROR, stderr="")


class _Conn:
    name = "c1"

    def __init__(self, proc: _Proc) -> None:
        self.proc = proc

    async def start(self, argv: list[str]) -> _Proc:
        return self.proc


SUMMARY = {"type": "summary", "mode": "seq_read", "end": "stopped", "stop_reason": "told", "duration": 3.0,
           "bytes_read": 3 << 20, "bytes_written": 0, "ops": 3, "errors": 0, "lat_p50_ms": 1.0, "lat_p99_ms": 2.0,
           "lat_max_ms": 2.5, "cache_mode": "dropped", "caches_dropped": True, "direct": False, "prepare_s": 0.0,
           "cpu_s": 0.1, "phases": {}, "python": "3.11.2", "agent_version": 1}


def _run(lines: list[dict[str, Any]]) -> AgentHandle:
    async def go() -> AgentHandle:
        handle = AgentHandle(_Conn(_Proc(lines)), {}, lambda handle, event: None)  # type: ignore[arg-type]
        await handle.start()
        await asyncio.wait_for(handle.ended.wait(), 5)
        return handle

    return asyncio.run(go())


def test_files_left_after_a_full_summary_are_a_warning_not_a_broken_trial() -> None:
    left = {"type": "cleanup", "seconds": 10.0, "removed": False,
            "problems": ["/mnt/nfs-tuner-4-4aa402/.nfs-tuner-agent-2815: [Errno 39] Directory not empty"]}
    handle = _run([{"type": "hello", "pid": 1, "dir": "/mnt/x"}, SUMMARY, left])
    assert handle.error is None and handle.summary is not None
    assert "Directory not empty" in handle.cleanup_problems[0]


def test_an_agent_that_fails_without_a_summary_still_breaks_the_trial() -> None:
    handle = _run([{"type": "hello", "pid": 1, "dir": "/mnt/x"}])
    assert handle.error is not None and "load agent failed" in str(handle.error)


class _GoneBeforeItsPayload(_Proc):
    """python3 not found: the remote command exits 127 at once, and the payload's write meets a closed channel."""

    async def write(self, data: str) -> None:
        raise ConnectionLost("c1", "Channel not open for sending")

    async def wait(self, timeout: float | None = None) -> SimpleNamespace:
        return SimpleNamespace(exit_status=127, stderr="sh: 1: python3-missing: not found")


def test_a_python_that_is_missing_is_named_even_when_the_payloads_write_meets_the_closed_channel() -> None:
    async def go() -> AgentHandle:
        handle = AgentHandle(_Conn(_GoneBeforeItsPayload([])), {}, lambda handle, event: None, python="python3-missing")  # type: ignore[arg-type]
        await handle.start()
        return handle

    handle = asyncio.run(go())
    assert handle.error is not None and "python3-missing was not found" in handle.error.message, handle.error
