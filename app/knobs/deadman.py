"""The controller's side of a host's dead-man switch (see deadman_host.py)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from app.hosts import HostConnection
from app.knobs.model import KnobError

DEFAULT_TIMEOUT = 60.0


def _source() -> str:
    return resources.files("app.knobs").joinpath("deadman_host.py").read_text(encoding="utf-8")


def state_dir(token: str, is_root: bool, user: str) -> str:
    # /run is root's tmpfs; a sudo user keeps the switch's files in a private dir of /tmp.
    return f"/run/nfs-tuner/{token}" if is_root else f"/tmp/nfs-tuner-{user}/{token}"


class DeadMan:
    def __init__(self, conn: HostConnection, token: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.conn = conn
        self.token = token
        self.timeout = timeout
        self.dir = ""
        self.pid: int | None = None

    async def arm(self) -> None:
        priv = await self.conn.privilege()
        self.dir = state_dir(self.token, priv.is_root, priv.user)
        parent = self.dir.rsplit("/", 1)[0]
        await self.conn.run(["mkdir", "-p", "-m", "0700", parent])
        result = await self.conn.run(["python3", "-c", _source(), self.dir, f"{self.timeout:g}"], timeout=30)
        words = result.stdout.split()
        if not result.ok or len(words) != 2 or words[0] != "armed":
            raise KnobError(
                f"could not start the dead-man switch on {self.conn.name} "
                f"({result.stderr.strip() or result.stdout.strip() or 'no output'}); nothing was changed. "
                "It needs python3 on the host."
            )
        self.pid = int(words[1])

    async def set_restore(self, entries: list[dict[str, Any]]) -> None:
        """Hand the host its way back before each change is made."""
        path = f"{self.dir}/restore.json"
        result = await self.conn.run(
            ["sh", "-c", 'cat > "$1.tmp" && mv "$1.tmp" "$1"', "nfs-tuner", path], input=json.dumps(entries)
        )
        if not result.ok:
            raise KnobError(f"could not update the dead-man switch on {self.conn.name}: {result.stderr.strip()}")

    async def beat(self) -> None:
        await self.conn.run(["touch", f"{self.dir}/heartbeat"], timeout=15)

    async def disarm(self) -> None:
        await self.conn.run(["touch", f"{self.dir}/disarm"], timeout=15)

    async def alive(self) -> bool:
        if self.pid is None:
            return False
        return (await self.conn.run(["kill", "-0", str(self.pid)])).ok


async def fired_report(conn: HostConnection, token: str) -> dict[str, Any] | None:
    """What a switch that fired did, if it fired (looked up after a controller crash)."""
    priv = await conn.privilege()
    path = f"{state_dir(token, priv.is_root, priv.user)}/fired.json"
    result = await conn.run(["cat", path])
    if not result.ok:
        return None
    try:
        report = json.loads(result.stdout)
    except ValueError:
        return None
    return report if isinstance(report, dict) else None


async def switch_pending(conn: HostConnection, token: str) -> bool:
    """Whether a switch of this token is still armed (its controller died less than a timeout ago)."""
    priv = await conn.privilege()
    d = state_dir(token, priv.is_root, priv.user)
    result = await conn.run(["sh", "-c", 'test -f "$1/pid" && kill -0 "$(cat "$1/pid")"', "nfs-tuner", d])
    return result.ok


async def forget(conn: HostConnection, token: str) -> None:
    """Remove a fired switch's files once the journal has taken note."""
    priv = await conn.privilege()
    d = state_dir(token, priv.is_root, priv.user)
    await conn.run(["rm", "-rf", "--", d])
