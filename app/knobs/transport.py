"""Which TCP connection a test mount really uses, and the frames it carries.

The kernel keeps one NFS client per server address and NFS version, and a new mount
of the same server joins it, with its TCP connection. TCP fixes its segment size when
it connects, so an MTU raised afterwards never reaches a connection made before: a
trial at MTU 9000 that rides an old connection still moves 1500-byte frames. The same
sharing pins ``nconnect``. So the applier looks at the connections to the server's
NFS port before and after the test mount, and a trial whose connection cannot carry
the MTU it claims is refused with the reason and what to do, not measured.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from app.facts.model import MountEntry
from app.hosts import HostConnection
from app.hosts.remote_args import address as host_address
from app.knobs.model import KnobError, Value, remote_value

NFS_PORT = 2049
# advmss is the MTU less 40 bytes of IP and TCP headers and, as Linux reports it, the
# 12 of the timestamp option: 8948 at MTU 9000, 1448 at 1500.
ADVMSS_TO_MTU = 52
MTU_SLACK = 16  # kernels that leave the option out report 12 more; this close carries the MTU


@dataclass(frozen=True)
class TcpConnection:
    local: str  # "10.0.0.11:862"
    peer: str
    advmss: int | None  # the segment size this end announced when it connected

    @property
    def mtu(self) -> int | None:
        """The largest frame the peer may send on this connection."""
        return None if self.advmss is None else self.advmss + ADVMSS_TO_MTU


def parse_ss_tcp_info(text: str) -> list[TcpConnection]:
    """``ss -tin``: a line per connection, then an indented line of its TCP info."""
    out: list[TcpConnection] = []
    head: list[str] | None = None

    def close(info: list[str]) -> None:
        nonlocal head
        if head is None:
            return
        fields = dict(t.split(":", 1) for t in info if ":" in t)
        mss = fields.get("advmss", "")
        out.append(TcpConnection(head[-2], head[-1], int(mss) if mss.isdigit() else None))
        head = None

    for line in text.splitlines():
        if not line.strip() or line.startswith("State"):
            continue
        if line[0].isspace():
            close(line.split())
            continue
        close([])  # a connection without an info line
        words = line.split()
        head = words if len(words) >= 5 else None
    close([])
    return out


async def nfs_connections(conn: HostConnection, address: str) -> list[TcpConnection] | None:
    """This host's TCP connections to ``address``'s NFS port; None if ``ss`` is missing."""
    result = await conn.run(["ss", "-tin", "dst", remote_value(host_address, address, "server address"),
                             "dport", "=", f":{NFS_PORT}"])  # fmt: skip
    if not result.ok:
        return None
    return parse_ss_tcp_info(result.stdout)


def other_mounts_of(mounts: Iterable[MountEntry], address: str, exclude: str) -> list[str]:
    """Mount points of NFS mounts of ``address`` other than ``exclude`` (they share a connection)."""
    return [
        m.mount_point
        for m in mounts
        if m.fstype.startswith("nfs") and m.mount_point != exclude and f"addr={address}" in m.super_options.split(",")
    ]


class SharedConnection(KnobError):
    """The test mount joined an older connection that cannot carry the trial's MTU."""


@dataclass(frozen=True)
class MountTransport:
    fresh: bool  # the test mount opened its own connection(s)
    mtu: int | None  # the smallest frame size its connection(s) carry

    def to_negotiated(self) -> dict[str, str]:
        out = {"transport": "new" if self.fresh else "shared"}
        if self.mtu is not None:
            out["transport_mtu"] = str(self.mtu)
        return out


def mount_transport(before: list[TcpConnection], after: list[TcpConnection]) -> MountTransport:
    """What the test mount rides on, from the connections before and after mounting it."""
    known = {c.local for c in before}
    new = [c for c in after if c.local not in known]
    used = new or after
    mtus = [c.mtu for c in used if c.mtu is not None]
    return MountTransport(bool(new), min(mtus) if mtus else None)


def check_mtu(transport: MountTransport, mtu: int, client: str, server: str) -> None:
    if transport.mtu is None or transport.mtu + MTU_SLACK >= mtu:
        return
    raise SharedConnection(
        f"{client}'s NFS connection to {server} carries {transport.mtu}-byte frames, not MTU {mtu}: it was "
        f"made before the MTU change by another mount of {server} on {client}, which the test mount shares "
        f"(the kernel keeps one connection per server and NFS version). Unmount {server}'s other mounts on "
        f"{client} for the sweep, or leave the MTU out of it"
    )


def check_fresh(transport: MountTransport, knob: str, value: Value, today: object, client: str, server: str) -> None:
    """``knob`` sizes a connection when it is made: a test mount riding an older one does not measure ``value``,
    unless it is ``today``'s, the value in force when that connection was made (before the sweep, by the
    admin's own mount)."""
    if transport.fresh or (today is not None and str(value) == str(today)):
        return
    raise SharedConnection(
        f"{client}'s test mount shares an NFS connection to {server} made before {knob} was set, by another "
        f"mount of {server} on {client} (the kernel keeps one connection per server and NFS version): "
        f"{knob} applies to new connections only. Unmount {server}'s other mounts on {client} for the sweep, "
        f"or leave {knob} out of it"
    )


def check_nconnect(asked: int, taken: str, others: list[str], client: str, server: str) -> None:
    """A test mount of a server that ``client`` already mounts runs with that mount's nconnect, whatever
    it asked for: such a trial would measure the other mount's value under this one's name."""
    if taken == str(asked):
        return
    pinned = f"{server}'s mount at {', '.join(others)}" if others else f"an earlier mount of {server}"
    raise SharedConnection(
        f"{client}'s test mount runs nconnect={taken}, not {asked}: {pinned} on {client} set it (every mount of "
        f"one server shares the first mount's connections). Unmount {server}'s other mounts on {client} for "
        f"the sweep, or leave nconnect out of it"
    )
