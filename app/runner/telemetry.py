"""Which counters the telemetry agent watches: the export's disks and the NICs facing each other."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.hosts import HostConnection, HostPool
from app.knobs.network import resolve_address, route_to
from experiments.workloads import Telemetry


@dataclass(frozen=True, slots=True)
class PathInfo:
    """How the clients reach the server: each side's interface and address."""

    server_nic: str
    client_nics: dict[str, str]  # client -> its interface towards the server
    server_address: str  # as the clients see it


async def export_devices(conn: HostConnection, export: str) -> tuple[str, ...]:
    """The block device under the export and, for md or dm, the devices beneath it."""
    result = await conn.run(["findmnt", "-n", "-o", "SOURCE", "--target", export])
    source = result.stdout.strip().splitlines()[0] if result.ok and result.stdout.strip() else ""
    if not source.startswith("/dev/"):
        return ()
    real = await conn.run(["readlink", "-f", source])
    name = (real.stdout.strip() or source).rsplit("/", 1)[-1]
    slaves = await conn.run(["ls", f"/sys/block/{name}/slaves"])
    members = tuple(slaves.stdout.split()) if slaves.ok else ()
    return (name, *members)


async def path_info(pool: HostPool, server: str, server_address: str, clients: Sequence[str]) -> PathInfo:
    client_nics: dict[str, str] = {}
    server_nic = ""
    address = server_address
    for client in clients:
        address = await resolve_address(pool[client], server_address)
        end = await route_to(pool[client], address)
        client_nics[client] = end.iface
        if not server_nic:
            server_nic = (await route_to(pool[server], end.address)).iface
    return PathInfo(server_nic, client_nics, address)


def server_telemetry(devices: Sequence[str], path: PathInfo, interval_s: float) -> Telemetry:
    # nfsd pool_stats and thread counts come with every telemetry record on a server
    nics = (path.server_nic,) if path.server_nic else ()
    return Telemetry(devices=tuple(devices), nics=nics, interval_s=interval_s)


def client_telemetry(client: str, path: PathInfo, mount_point: str, interval_s: float) -> Telemetry:
    nic = path.client_nics.get(client)
    return Telemetry(nics=(nic,) if nic else (), mounts=(mount_point,), interval_s=interval_s)
