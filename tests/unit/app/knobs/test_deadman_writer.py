"""The controller's resident writer to a host's dead-man switch (app.knobs.deadman._Writer): one `serve` process
for a run's restore lists, and the one-shot verbs where a host has none.

In-process host and processes: the cases are the ones a real host cannot produce on demand (a switch without
`serve`, an answer that never comes, a cancel between a line and its answer); the real `serve` is tested in
test_deadman_host.py and test_sudo_helper.py, and every lab sweep writes through it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from app.hosts import CommandResult
from app.hosts.errors import CommandTimeout
from app.hosts.privilege import Privilege
from app.knobs import deadman
from app.knobs.deadman import DeadMan
from app.knobs.model import KnobError


class Proc:
    def __init__(self, answer: str | None) -> None:
        self.answer = answer  # what it says to each line ("" : it ended; None: never answers)
        self.lines: list[str] = []
        self.eof = self.terminated = False

    async def write(self, data: str) -> None:
        self.lines.append(data)

    async def readline(self) -> str:
        if self.answer is None:
            await asyncio.sleep(3600)
        return self.answer or ""

    def write_eof(self) -> None:
        self.eof = True

    async def wait(self, timeout: float | None = None) -> CommandResult:
        return CommandResult(0, "", "")

    def terminate(self) -> None:
        self.terminated = True


class Host:
    name = "filer"

    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)  # one per `serve` started
        self.procs: list[Proc] = []
        self.one_shot: list[str] = []  # the switch's verbs run as commands

    async def privilege(self) -> Privilege:
        return Privilege(user="root", uid=0, passwordless_sudo=False, sudo_installed=False)

    async def start(self, argv: Sequence[str], **_kw: Any) -> Proc:
        assert argv[-3] == "serve" and argv[-1] == "restore.json"
        self.procs.append(Proc(self.answers.pop(0)))
        return self.procs[-1]

    async def run(self, argv: Sequence[str], **_kw: Any) -> CommandResult:
        self.one_shot.append(argv[0] if argv[0] == "touch" else argv[5])
        return CommandResult(0, "", "")


def switch(host: Host) -> DeadMan:
    return DeadMan(host, "0123456789ab")  # type: ignore[arg-type]


def test_lists_go_through_one_process_and_beats_too_while_it_serves() -> None:
    host = Host("ok\n")
    man = switch(host)

    async def scenario() -> None:
        await man.set_restore([{"id": 1, "steps": []}])
        await man.set_restore([])
        await man.beat()
        await man.disarm()

    asyncio.run(scenario())
    assert len(host.procs) == 1 and host.procs[0].lines == ['[{"id": 1, "steps": []}]\n', "[]\n", "beat\n"]
    assert host.procs[0].eof and host.one_shot == ["disarm"]


def test_a_host_without_serve_is_written_to_by_the_one_shot_verbs_and_not_asked_again() -> None:
    host = Host("")  # an older switch or helper: `serve` refused, the process ended
    man = switch(host)

    async def scenario() -> None:
        await man.set_restore([])
        await man.set_restore([])
        await man.beat()

    asyncio.run(scenario())
    assert len(host.procs) == 1 and host.one_shot == ["write", "write", "touch"]


def test_a_refusal_is_said_with_the_switchs_words() -> None:
    man = switch(Host("refused: a restore step must be an object with an argv list\n"))
    with pytest.raises(KnobError, match="could not update the dead-man switch on filer: refused: a restore step"):
        asyncio.run(man.set_restore([]))


def test_an_answer_that_never_comes_is_a_timeout_and_the_next_write_starts_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deadman, "WRITE_BOUND", 0.05)
    host = Host(None, "ok\n")
    man = switch(host)

    async def scenario() -> None:
        with pytest.raises(CommandTimeout):
            await man.set_restore([])
        await man.set_restore([])

    asyncio.run(scenario())
    assert host.procs[0].terminated and len(host.procs) == 2 and host.procs[1].lines == ["[]\n"]


def test_a_write_cancelled_before_its_answer_leaves_no_answer_for_the_next_one_to_read() -> None:
    host = Host(None, "ok\n")
    man = switch(host)

    async def scenario() -> None:
        task = asyncio.ensure_future(man.set_restore([{"id": 1, "steps": []}]))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await man.set_restore([])

    asyncio.run(scenario())
    assert host.procs[0].terminated and host.procs[1].lines == ["[]\n"]


def test_a_switch_let_go_closes_its_writer() -> None:
    host = Host("ok\n")
    man = switch(host)
    asyncio.run(man.set_restore([]))
    man.let_go()
    assert host.procs[0].terminated
