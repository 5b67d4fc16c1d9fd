"""The host side over SSH: real connections, real knobs, the real load agent."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

from app.discovery import discover_host, hosts_from_ssh_config
from app.knobs.sudo_helper import with_helper_check
from app.events import EventBus
from app.facts.model import HostFacts
from app.facts.parse_nfs import parse_exportfs
from app.hosts import HostError, HostPool, UnknownHostKey
from app.knobs import recovery
from app.knobs.changes import ChangeJournal
from app.knobs.recovery import Pending
from app.runner import TelemetryTarget, WorkloadRunner
from app.runner.export_probe import export_free, may_write
from app.runner.baselines import DiskCeiling, TcpCeiling, disk_ceiling, flush_cost, round_trip, tcp_ceiling
from app.runner.telemetry import client_telemetry, export_devices, path_info, server_telemetry
from app.store import Store
from app.store.records import JournalEntry
from app.sweep.apply import ConfigApplier
from app.sweep.host_side import Journal, Prepared
from app.sweep.spec import EXPORT_KNOBS, PINNED, SweepSpec

ANSWER_S = 10.0  # a host that cannot run `true` in this long has stopped answering


class SshHosts:
    def __init__(self, pool: HostPool, ssh_config: Path | None = None) -> None:
        self.pool = pool
        self.ssh_config = ssh_config if ssh_config is not None else pool.settings.config_file

    def host_names(self) -> list[str]:
        return hosts_from_ssh_config(self.ssh_config)

    async def discover(self, host: str) -> HostFacts:
        return with_helper_check(await discover_host(self.pool.get(host)))

    async def trust(self, host: str, key: UnknownHostKey) -> None:
        await self.pool.get(host).trust(key)

    def runner(self, bus: EventBus, python: Mapping[str, str]) -> WorkloadRunner:
        return WorkloadRunner(self.pool, bus, python=python)

    async def tcp_ceiling(self, server: str, client: str, address: str, *, duration_s: float = 5.0,
                          python: str = "python3") -> TcpCeiling:  # fmt: skip
        return await tcp_ceiling(self.pool, server, client, address, duration_s=duration_s, python=python)

    async def disk_ceiling(self, server: str, export: str, *, file_size: int, python: str = "python3") -> DiskCeiling:
        return await disk_ceiling(self.pool, server, export, file_size=file_size, python=python)

    async def export_free(self, server: str, export: str) -> int:
        return await export_free(self.pool[server], export)

    async def may_write(self, host: str, path: str) -> bool:
        return await may_write(self.pool[host], path)

    async def round_trip(self, client: str, address: str) -> float | None:
        return await round_trip(self.pool, client, address)

    async def flush_cost(self, server: str, export: str, *, python: str = "python3") -> float | None:
        return await flush_cost(self.pool, server, export, python=python)

    def journal(self, store: Store, session_id: int, *, deadman_timeout: float) -> ChangeJournal:
        return ChangeJournal(store, self.pool, session_id, deadman_timeout=deadman_timeout)

    async def prepare(self, spec: SweepSpec, journal: Journal, mount_point: str) -> Prepared:
        assert isinstance(journal, ChangeJournal), "SshHosts prepares with its own journal"
        server = self.pool[spec.server]
        devices = await export_devices(server, spec.export)
        md = next((d for d in devices if d.startswith("md")), None)
        export_client = None
        if any(k in spec.plan.knobs for k in EXPORT_KNOBS):
            listing = await server.run(["exportfs", "-v"], sudo=True)
            export_client = next((e.client for e in parse_exportfs(listing.stdout).value if e.path == spec.export), None)
        path = await path_info(self.pool, spec.server, spec.address, spec.clients)
        applier = ConfigApplier(journal, self.pool, spec, mount_point, md=md, export_client=export_client)
        shared = await applier.shared_mounts() if any(k in spec.plan.knobs for k in PINNED) else {}
        telemetry = [TelemetryTarget(spec.server, server_telemetry(devices, path, spec.interval_s))]
        telemetry += [TelemetryTarget(c, client_telemetry(c, path, mount_point, spec.interval_s)) for c in spec.clients]
        return Prepared(applier, telemetry, shared)

    async def leftovers(self, store: Store) -> list[Pending]:
        return await recovery.inspect(store, self.pool)

    async def revert_leftover(self, store: Store, entry: JournalEntry) -> None:
        await recovery.revert_entry(store, self.pool, entry)

    async def answering(self, host: str) -> bool:
        # the whole probe is bounded: a wedged host can hold every channel of its connection
        try:
            result = await asyncio.wait_for(self.pool[host].run(["true"], timeout=ANSWER_S), ANSWER_S + 5)
        except (HostError, TimeoutError, OSError):
            return False
        return result.exit_status == 0

    async def close(self) -> None:
        await self.pool.close()
