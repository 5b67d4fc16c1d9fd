"""MTU on both ends of the server–client path, proven by a full-size don't-fragment ping.

Both ends are journaled and changed, then every path is checked in both directions
with a ping of exactly MTU bytes that may not be fragmented. If any fails, both
ends go back at once and the error names the hop that did not carry the frames.
(SSH sessions opened before the change keep their smaller segment size, so the
controller can still put things back; if it cannot, the dead-man switches will.)
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

from app.hosts import HostConnection, HostPool
from app.hosts.side_by_side import settled, side_by_side
from app.hosts.remote_args import address as host_address
from app.hosts.remote_args import interface, ip_address
from app.knobs.catalog import SPECS
from app.knobs.changes import ChangeJournal
from app.knobs.model import Applied, InvalidValue, KnobError, KnobSpec, Step, Value, as_int, remote_value
from app.knobs.targets import read_text

ICMP_AND_IP_HEADERS = 28


@dataclass
class MtuTarget:
    iface: str
    spec: KnobSpec = SPECS["mtu"]

    def __post_init__(self) -> None:
        remote_value(interface, self.iface, "network interface")  # from `ip route get` or the journal

    @property
    def target(self) -> str:
        return self.iface

    async def read(self, conn: HostConnection) -> Value:
        return as_int(await read_text(conn, f"/sys/class/net/{self.iface}/mtu"), f"{self.iface} MTU")

    def set_steps(self, value: Value) -> list[Step]:
        return [Step(("ip", "link", "set", "dev", self.iface, "mtu", str(int(value))))]

    def restore_steps(self, old: Value) -> list[Step]:
        return self.set_steps(old)


@dataclass(frozen=True)
class PathEnd:
    host: str
    iface: str
    address: str


class MtuCheckFailed(KnobError):
    pass


async def resolve_address(conn: HostConnection, name: str) -> str:
    """The IPv4 address ``name`` has as seen from this host."""
    result = await conn.run(["getent", "ahostsv4", remote_value(host_address, name, "server address")])
    words = result.stdout.split()
    if not result.ok or not words:
        raise KnobError(f"{conn.name} cannot resolve {name!r}: give the server's address as the clients see it")
    return remote_value(ip_address, words[0], f"{conn.name}'s getent answer for {name!r}")


async def route_to(conn: HostConnection, address: str) -> PathEnd:
    """Which interface and source address this host uses to reach ``address``."""
    result = await conn.run(["ip", "-j", "route", "get", remote_value(ip_address, address, "route destination")])
    try:
        route = json.loads(result.stdout)[0]
        dev, source = str(route["dev"]), str(route.get("prefsrc", ""))
    except (ValueError, LookupError, TypeError):
        raise KnobError(f"{conn.name} has no route to {address}: {result.stderr.strip()}") from None
    # both go on to other commands (ip link, ping, the server's own route lookup)
    remote_value(interface, dev, f"{conn.name}'s route to {address}: interface")
    if source:
        remote_value(ip_address, source, f"{conn.name}'s route to {address}: source address")
    return PathEnd(conn.name, dev, source)


async def df_ping(conn: HostConnection, address: str, mtu: int) -> bool:
    """Whether a full-size don't-fragment ping gets an answer.

    Run as root (through the changes' own sudo): a login's ping may lack the raw
    socket it needs, and "could not ping" must never read as "frames do not pass".
    """
    size = mtu - ICMP_AND_IP_HEADERS
    target = remote_value(ip_address, address, "ping target")
    priv = await conn.privilege()
    # 0.2 s apart (ping's least interval for any user): the default second between the two is most of a check
    result = await conn.run(["ping", "-n", "-c", "2", "-i", "0.2", "-W", "2", "-M", "do", "-s", str(size), target],
                            sudo=not priv.is_root, timeout=20)
    if result.exit_status not in (0, 1):  # iputils: 1 is "no answer", anything else is ping's own failure
        raise KnobError(f"{conn.name} could not run the MTU check's ping to {address} "
                        f"({(result.stderr or result.stdout).strip()[:200] or f'exit {result.exit_status}'}); "
                        "nothing was learnt about the path, and the MTU was put back")
    return result.ok


async def link_paths(pool: HostPool, server: str, server_address: str, clients: list[str]) -> list[tuple[PathEnd, PathEnd]]:
    """Each client's end of its path to the server and the server's end back, the clients side by side. An MTU
    change does not move a route: a sweep looks them up once."""

    async def pair(client: str) -> tuple[PathEnd, PathEnd]:
        address = await resolve_address(pool[client], server_address)
        client_end = await route_to(pool[client], address)
        server_end = await route_to(pool[server], client_end.address)
        return client_end, PathEnd(server, server_end.iface, address)

    return await side_by_side(pair(client) for client in clients)


async def set_link_mtu(
    journal: ChangeJournal, pool: HostPool, server: str, server_address: str, clients: list[str], mtu: int,
    paths: list[tuple[PathEnd, PathEnd]] | None = None,
) -> list[Applied]:
    """Set ``mtu`` on the server's and each client's interface facing each other (``paths``: link_paths's, when
    looked up already)."""
    problem = SPECS["mtu"].validity.problem(mtu)
    if problem:
        raise InvalidValue(f"MTU: {problem}")
    pairs = paths if paths is not None else await link_paths(pool, server, server_address, clients)
    ends: dict[str, PathEnd] = {}
    for client_end, server_end in pairs:
        ends.setdefault(server_end.host, server_end)
        ends[client_end.host] = client_end
    applied: list[Applied] = []
    try:
        # every end at once (the journal changes different hosts side by side); one that failed is raised once all
        # have ended, and the ends made are put back below
        applied, failed = await settled(journal.apply(end.host, MtuTarget(end.iface), mtu) for end in ends.values())
        if failed is not None:
            raise failed
        # every direction of every pair at once: each waits on the network, not on the others
        directions = [(src, dst) for client_end, server_end in pairs
                      for src, dst in ((client_end, server_end), (server_end, client_end))]
        answers = await asyncio.gather(*(df_ping(pool[src.host], dst.address, mtu) for src, dst in directions),
                                       return_exceptions=True)  # each ends within its timeout: none left running
        for (src, dst), answer in zip(directions, answers, strict=True):  # judged in order, as one by one
            if isinstance(answer, BaseException):
                raise answer
            if not answer:
                raise MtuCheckFailed(
                    f"MTU {mtu} does not pass from {src.host} ({src.iface}) to {dst.host} ({dst.address}, "
                    f"{dst.iface}): a {mtu}-byte don't-fragment ping got no answer, so a switch or NIC on "
                    "that path carries smaller frames. Both ends were put back; raise the MTU on every "
                    "switch port of the path first."
                )
    except BaseException:
        for item in reversed(applied):
            try:
                await journal.revert(item)
            except KnobError:
                pass  # the dead-man switches still hold the way back
        raise
    return applied
