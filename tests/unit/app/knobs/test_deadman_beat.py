"""A heartbeat starts no python where the login may run coreutils as root: a root or full-sudo login refreshes the
switch's heartbeat file with touch; under the narrow sudo rule the helper's own verb does it. In-process host: the
point is the command sent (the switch reading the file's age is test_deadman_host's)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from app.hosts import CommandResult
from app.hosts.privilege import Privilege
from app.knobs.deadman import DeadMan

TOKEN = "0123456789abcdef"


class _Host:
    name = "filer"

    def __init__(self, privilege: Privilege) -> None:
        self.priv = privilege
        self.sent: list[tuple[list[str], bool]] = []

    async def privilege(self) -> Privilege:
        return self.priv

    async def run(self, argv: Sequence[str], *, sudo: bool = False, input: str | None = None,
                  timeout: float | None = None) -> CommandResult:  # fmt: skip
        self.sent.append((list(argv), sudo))
        return CommandResult(0, "", "")


ROOT = Privilege(user="root", uid=0, passwordless_sudo=False, sudo_installed=False)
SUDO = Privilege(user="admin", uid=1000, passwordless_sudo=True, sudo_installed=True)
HELPER = Privilege(user="admin", uid=1000, passwordless_sudo=False, sudo_installed=True, helper="ab" * 32)


@pytest.mark.parametrize(("privilege", "sudo"), [(ROOT, False), (SUDO, True)])
def test_a_root_or_full_sudo_login_beats_with_touch(privilege: Privilege, sudo: bool) -> None:
    host = _Host(privilege)
    asyncio.run(DeadMan(host, TOKEN).beat())  # type: ignore[arg-type]
    assert host.sent == [(["touch", "-c", "-h", f"/run/nfs-tuner/{TOKEN}/heartbeat"], sudo)]


def test_the_narrow_rule_beats_through_the_helpers_own_verb() -> None:
    host = _Host(HELPER)
    asyncio.run(DeadMan(host, TOKEN).beat())  # type: ignore[arg-type]
    assert host.sent == [(["deadman", "beat", f"/run/nfs-tuner/{TOKEN}"], True)]
