"""For in-process hosts: the switch's ``serve`` (app.knobs.deadman._Writer), each line answered by the host's own
one-shot verb (``write`` or ``beat`` through its ``run``), as the real ``serve`` answers it with ``write``'s checks.

A host class takes it as a base: what the fake records of the switch's writes and beats holds either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.hosts import CommandResult


class ServedSwitch:
    starts = 0  # how many `serve` processes were started on this host

    async def start(self, argv: Sequence[str], *, sudo: bool = False, input: str | None = None) -> _Served:
        at = list(argv).index("serve")
        self.starts += 1
        return _Served(self, list(argv[:at]), str(argv[at + 1]), sudo)


class _Served:
    def __init__(self, host: Any, program: list[str], d: str, sudo: bool) -> None:
        self.host, self.program, self.dir, self.sudo = host, program, d, sudo
        self.answers: list[str] = []
        self.ended = False

    async def write(self, data: str) -> None:
        for line in data.splitlines():
            if line == "beat":
                result = await self.host.run([*self.program, "beat", self.dir], sudo=self.sudo)
            else:
                result = await self.host.run([*self.program, "write", self.dir, "restore.json"], sudo=self.sudo,
                                             input=line)  # fmt: skip
            self.answers.append("ok\n" if result.ok else f"refused: {result.stderr.strip() or 'no'}\n")

    async def readline(self) -> str:
        return "" if self.ended or not self.answers else self.answers.pop(0)

    def write_eof(self) -> None:
        self.ended = True

    async def wait(self, timeout: float | None = None) -> CommandResult:
        self.ended = True
        return CommandResult(0, "", "")

    def terminate(self) -> None:
        self.ended = True
