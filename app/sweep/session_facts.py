"""What a sweep records besides trials: the hosts as they were, and the ceilings.

Both go into the session as host-fact snapshots (roles "server"/"client" and
"ceiling"), so an offline review shows them and a resumed sweep measures nothing twice.
What was measured before the session opened (the wizard's Hosts and Baseline pages)
comes in as ``Measured`` and is stored first, so nothing is measured twice either.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.events import EventBus, Level, Message
from app.hosts import HostError
from app.recommend.context import CEILING
from app.recommend.context import stored_ceilings as session_ceilings
from app.recommend.model import Ceilings
from app.runner import RunError
from app.store import Store
from app.sweep.host_side import HostSide
from app.sweep.spec import SweepSpec

MIB = 1024 * 1024


@dataclass(frozen=True)
class Measured:
    """Facts and ceilings measured before the session opened, to store into it."""

    facts: Mapping[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)  # host -> (role, facts)
    ceilings: Sequence[tuple[str, dict[str, Any]]] = ()  # (host, figures) as measure_ceilings stores them

    def record(self, store: Store, sid: int) -> None:
        for host, (role, facts) in self.facts.items():
            store.add_host_facts(sid, host, role, facts)
        for host, figures in self.ceilings:
            store.add_host_facts(sid, host, CEILING, figures)


async def snapshot_hosts(store: Store, hosts: HostSide, sid: int, spec: SweepSpec) -> None:
    if any(f.role in ("server", "client") for f in store.host_facts(sid)):
        return
    roles = {spec.server: "server", **dict.fromkeys(spec.clients, "client")}

    async def one(name: str) -> None:
        try:
            store.add_host_facts(sid, name, roles[name], (await hosts.discover(name)).to_dict())
        except HostError:
            pass  # the trials will say what is wrong with the host

    await asyncio.gather(*(one(n) for n in roles))


def stored_ceilings(store: Store, sid: int, spec: SweepSpec) -> Ceilings | None:
    """The ceilings this sweep's session measured (see app.recommend.context)."""
    return session_ceilings(store, sid, spec.server, spec.clients)


async def measure_tcp_ceilings(
    store: Store, hosts: HostSide, bus: EventBus, sid: int, spec: SweepSpec, mtu: int | None = None
) -> None:
    """TCP throughput from every client to the server, stored as ceiling facts (with the MTU)."""
    at = f" at MTU {mtu}" if mtu else ""
    for client in spec.clients:
        try:
            tcp = await hosts.tcp_ceiling(spec.server, client, spec.address, python=spec.python.get(client, "python3"))
            facts: dict[str, object] = {"tcp_bps": tcp.bps, "tool": tcp.tool}
            if mtu:
                facts["mtu"] = mtu
            store.add_host_facts(sid, client, CEILING, facts)
        except (RunError, HostError) as exc:
            bus.publish(Message(Level.WARNING, f"No network ceiling for {client}{at}", str(exc)))


async def measure_ceilings(store: Store, hosts: HostSide, bus: EventBus, sid: int, spec: SweepSpec) -> Ceilings:
    """TCP throughput per client and the server's local disk, measured once per session."""
    known = stored_ceilings(store, sid, spec)
    if known is not None:
        return known
    bus.publish(Message(Level.INFO, "Measuring the ceilings: TCP from each client, the server's own disk"))
    python = spec.python.get(spec.server, "python3")
    await measure_tcp_ceilings(store, hosts, bus, sid, spec)
    try:
        disk = await hosts.disk_ceiling(spec.server, spec.export, file_size=min(spec.file_size, 256 * MIB), python=python)
        store.add_host_facts(sid, spec.server, CEILING, {"disk_read_bps": disk.read_bps,
                                                          "disk_write_bps": disk.write_bps,
                                                          "cache_mode": disk.cache_mode})  # fmt: skip
    except (RunError, HostError) as exc:
        bus.publish(Message(Level.WARNING, f"No disk ceiling for {spec.server}", str(exc)))
    return stored_ceilings(store, sid, spec) or Ceilings(clients=len(spec.clients))
