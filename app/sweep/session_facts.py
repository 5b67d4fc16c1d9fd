"""What a sweep records besides trials: the hosts as they were, and the ceilings.

Both go into the session as host-fact snapshots (roles "server"/"client" and
"ceiling"), so an offline review shows them and a resumed sweep measures nothing twice.
"""

from __future__ import annotations

from app.discovery import discover_many
from app.events import EventBus, Level, Message
from app.hosts import HostError, HostPool
from app.recommend.model import Ceilings
from app.runner import RunError
from app.runner.baselines import disk_ceiling, tcp_ceiling
from app.store import Store
from app.sweep.spec import SweepSpec

CEILING = "ceiling"
MIB = 1024 * 1024


async def snapshot_hosts(store: Store, pool: HostPool, sid: int, spec: SweepSpec) -> None:
    if any(f.role in ("server", "client") for f in store.host_facts(sid)):
        return
    roles = {spec.server: "server", **{c: "client" for c in spec.clients}}
    for found in await discover_many(pool, roles):
        if found.facts is not None:
            store.add_host_facts(sid, found.host, roles[found.host], found.facts.to_dict())


def stored_ceilings(store: Store, sid: int, spec: SweepSpec) -> Ceilings | None:
    rows = {f.host: f.facts for f in store.host_facts(sid) if f.role == CEILING and isinstance(f.facts, dict)}
    if not rows:
        return None
    tcp = [float(rows[c]["tcp_bps"]) for c in spec.clients if c in rows and rows[c].get("tcp_bps")]
    disk = rows.get(spec.server, {})
    return Ceilings(
        network_per_client_bps=min(tcp) if tcp else None,
        clients=len(spec.clients),
        disk_read_bps=disk.get("disk_read_bps"),
        disk_write_bps=disk.get("disk_write_bps"),
    )


async def measure_ceilings(store: Store, pool: HostPool, bus: EventBus, sid: int, spec: SweepSpec) -> Ceilings:
    """TCP throughput per client and the server's local disk, measured once per session."""
    known = stored_ceilings(store, sid, spec)
    if known is not None:
        return known
    bus.publish(Message(Level.INFO, "Measuring the ceilings: TCP from each client, the server's own disk"))
    python = spec.python.get(spec.server, "python3")
    for client in spec.clients:
        try:
            tcp = await tcp_ceiling(pool, spec.server, client, spec.address, python=spec.python.get(client, "python3"))
            store.add_host_facts(sid, client, CEILING, {"tcp_bps": tcp.bps, "tool": tcp.tool})
        except (RunError, HostError) as exc:
            bus.publish(Message(Level.WARNING, f"No network ceiling for {client}", str(exc)))
    try:
        disk = await disk_ceiling(pool, spec.server, spec.export, file_size=min(spec.file_size, 256 * MIB), python=python)
        store.add_host_facts(sid, spec.server, CEILING, {"disk_read_bps": disk.read_bps,
                                                          "disk_write_bps": disk.write_bps,
                                                          "cache_mode": disk.cache_mode})  # fmt: skip
    except (RunError, HostError) as exc:
        bus.publish(Message(Level.WARNING, f"No disk ceiling for {spec.server}", str(exc)))
    return stored_ceilings(store, sid, spec) or Ceilings(clients=len(spec.clients))
