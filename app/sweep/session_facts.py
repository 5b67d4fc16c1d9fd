"""What a sweep records besides trials: the hosts as they were, and the ceilings.

Both go into the session as host-fact snapshots (roles "server"/"client" and
"ceiling"), so an offline review shows them and a resumed sweep measures nothing twice.
"""

from __future__ import annotations

from app.discovery import discover_many
from app.events import EventBus, Level, Message
from app.hosts import HostError, HostPool
from app.recommend.context import CEILING
from app.recommend.context import stored_ceilings as session_ceilings
from app.recommend.model import Ceilings
from app.runner import RunError
from app.runner.baselines import disk_ceiling, tcp_ceiling
from app.store import Store
from app.sweep.spec import SweepSpec

MIB = 1024 * 1024


async def snapshot_hosts(store: Store, pool: HostPool, sid: int, spec: SweepSpec) -> None:
    if any(f.role in ("server", "client") for f in store.host_facts(sid)):
        return
    roles = {spec.server: "server", **{c: "client" for c in spec.clients}}
    for found in await discover_many(pool, roles):
        if found.facts is not None:
            store.add_host_facts(sid, found.host, roles[found.host], found.facts.to_dict())


def stored_ceilings(store: Store, sid: int, spec: SweepSpec) -> Ceilings | None:
    """The ceilings this sweep's session measured (see app.recommend.context)."""
    return session_ceilings(store, sid, spec.server, spec.clients)


async def measure_tcp_ceilings(
    store: Store, pool: HostPool, bus: EventBus, sid: int, spec: SweepSpec, mtu: int | None = None
) -> None:
    """TCP throughput from every client to the server, stored as ceiling facts (with the MTU)."""
    at = f" at MTU {mtu}" if mtu else ""
    for client in spec.clients:
        try:
            tcp = await tcp_ceiling(pool, spec.server, client, spec.address, python=spec.python.get(client, "python3"))
            facts: dict[str, object] = {"tcp_bps": tcp.bps, "tool": tcp.tool}
            if mtu:
                facts["mtu"] = mtu
            store.add_host_facts(sid, client, CEILING, facts)
        except (RunError, HostError) as exc:
            bus.publish(Message(Level.WARNING, f"No network ceiling for {client}{at}", str(exc)))


async def measure_ceilings(store: Store, pool: HostPool, bus: EventBus, sid: int, spec: SweepSpec) -> Ceilings:
    """TCP throughput per client and the server's local disk, measured once per session."""
    known = stored_ceilings(store, sid, spec)
    if known is not None:
        return known
    bus.publish(Message(Level.INFO, "Measuring the ceilings: TCP from each client, the server's own disk"))
    python = spec.python.get(spec.server, "python3")
    await measure_tcp_ceilings(store, pool, bus, sid, spec)
    try:
        disk = await disk_ceiling(pool, spec.server, spec.export, file_size=min(spec.file_size, 256 * MIB), python=python)
        store.add_host_facts(sid, spec.server, CEILING, {"disk_read_bps": disk.read_bps,
                                                          "disk_write_bps": disk.write_bps,
                                                          "cache_mode": disk.cache_mode})  # fmt: skip
    except (RunError, HostError) as exc:
        bus.publish(Message(Level.WARNING, f"No disk ceiling for {spec.server}", str(exc)))
    return stored_ceilings(store, sid, spec) or Ceilings(clients=len(spec.clients))
