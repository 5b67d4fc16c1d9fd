"""Helpers (no tests): run the real load agent through its real bootstrap, reading stdout as it comes."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from experiments.agent_launch import bootstrap_argv, payload

PY36 = "/root/.pyenv/versions/3.6.15/bin/python3"
PYTHONS = [sys.executable] + ([PY36] if os.path.exists(PY36) else [])
HANG_GUARD_S = 30.0  # only catches hangs; never a speed claim


def python_ids() -> list[str]:
    return ["py312" if p == sys.executable else "py36" for p in PYTHONS]


def python_params() -> list[Any]:
    """Each Python as a test parameter: the targets' oldest (3.6) is marked ``slow``, so ``make check`` runs
    the agent under this one and ``make test`` under both."""
    return [pytest.param(p, id=i, marks=() if p == sys.executable else pytest.mark.slow)
            for p, i in zip(PYTHONS, python_ids(), strict=True)]  # fmt: skip


class AgentRun:
    def __init__(self, python: str, config: dict[str, Any]) -> None:
        self.proc = subprocess.Popen(
            bootstrap_argv(python), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        assert self.proc.stdin is not None
        self.proc.stdin.write(payload(config))
        self.proc.stdin.flush()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(json.loads(raw))
        self.lines.put(None)

    def next(self) -> dict[str, Any] | None:
        """The next line (None at EOF); fails the test if the agent hangs."""
        item = self.lines.get(timeout=HANG_GUARD_S)
        if item is not None:
            self.seen.append(item)
        return item

    def until(self, kind: str) -> dict[str, Any]:
        while (item := self.next()) is not None:
            if item["type"] == kind:
                return item
        raise AssertionError(f"no {kind!r} line; got {[s['type'] for s in self.seen]}; stderr: {self.stderr()}")

    def rest(self) -> list[dict[str, Any]]:
        out = []
        while (item := self.next()) is not None:
            out.append(item)
        return out

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def wait(self) -> int:
        return self.proc.wait(timeout=HANG_GUARD_S)

    def stderr(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return ""
        return self.proc.stderr.read().decode(errors="replace")

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [s for s in self.seen if s["type"] == kind]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def run_to_end(python: str, config: dict[str, Any]) -> tuple[AgentRun, int]:
    run = AgentRun(python, config)
    run.rest()
    return run, run.wait()


def leftovers(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))

