"""Every host of a session, one HostConnection each, keyed by the name the admin gave."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

from app.hosts.connection import HostConnection
from app.hosts.errors import HostError
from app.hosts.settings import SshSettings

T = TypeVar("T")


class HostPool:
    def __init__(self, settings: SshSettings | None = None) -> None:
        self.settings = settings or SshSettings()
        self._hosts: dict[str, HostConnection] = {}

    def get(self, name: str) -> HostConnection:
        """The one connection object for this host name (created on first ask, not opened)."""
        conn = self._hosts.get(name)
        if conn is None:
            conn = self._hosts[name] = HostConnection(name, self.settings)
        return conn

    def __getitem__(self, name: str) -> HostConnection:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._hosts

    @property
    def names(self) -> list[str]:
        return list(self._hosts)

    async def each(
        self, names: Iterable[str], work: Callable[[HostConnection], Awaitable[T]]
    ) -> dict[str, T | HostError]:
        """Run work on several hosts concurrently; a host's HostError is its result."""
        order = list(dict.fromkeys(names))

        async def one(name: str) -> T | HostError:
            try:
                return await work(self.get(name))
            except HostError as exc:
                return exc

        results = await asyncio.gather(*(one(n) for n in order))
        return dict(zip(order, results, strict=True))

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for c in self._hosts.values()), return_exceptions=True)

    async def __aenter__(self) -> HostPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
