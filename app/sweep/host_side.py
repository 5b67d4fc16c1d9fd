"""Everything the core does on hosts, behind one face.

The session layer and the sweep engine reach the hosts only through a ``HostSide``:
``SshHosts`` (app.sweep.ssh_hosts) does it over SSH; ``SimulatedHosts`` (app.simulated)
stands in for the demo and the UI tests. Both run under the same engine, strategies,
recommender, snippets and store, so what the demo shows is the product's own code.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from app.events import EventBus
from app.facts.model import HostFacts
from app.hosts import UnknownHostKey
from app.knobs.model import Value
from app.knobs.recovery import Pending
from app.runner.baselines import DiskCeiling, TcpCeiling
from app.runner.run import ClientWork, Engine, Monitor, RunResult, TelemetryTarget
from app.store import Store
from app.store.records import JournalEntry
from app.sweep.spec import SweepSpec
from experiments.workloads import WorkloadSpec


@dataclass
class Applying:
    """What a trial really ran with: effective values and the clients' negotiated options."""

    effective: dict[str, Any] = field(default_factory=dict)
    negotiated: dict[str, dict[str, str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class Applier(Protocol):
    """Puts one configuration on the hosts, through the journal; the journal's close puts it all back."""

    async def apply(self, config: Mapping[str, Value]) -> Applying: ...

    async def release_clients(self) -> None: ...

    async def forget_data(self, names: Sequence[str], *, avoid: str = "") -> str | None:
        """Remove the kept data directories ``names`` (app.runner.kept_data) through a client whose test mount stands,
        not ``avoid`` (a host that went away): before the clients are released, and before the journal puts the mounts
        back; None when gone, else why not."""
        ...

    def remount_next(self) -> None:
        """After a broken trial: the next trial mounts every client afresh, whatever it shares with this one
        (a standing mount may hold what the broken trial left: its open files, an agent not yet gone)."""
        ...

    async def release_all(self) -> None:
        """Put back everything held, the server's settings too (after a host came back)."""
        ...


class Journal(Protocol):
    """The change journal of one run (app.knobs.changes.ChangeJournal over SSH)."""

    token: str

    async def close(self) -> list[str]:
        """Revert every change still held; returns the problems (empty when all is back)."""
        ...

    async def rejoin(self, host: str) -> str:
        """A host that stopped answering answers again: take note of what its dead-man switch put back while
        it was away, and arm it again; returns that in words ("" when its switch held)."""
        ...


class TrialRunner(Protocol):
    """Runs one workload on the clients and publishes its samples (app.runner.WorkloadRunner)."""

    async def run(
        self,
        trial_id: int,
        workload: WorkloadSpec,
        clients: Sequence[ClientWork],
        *,
        telemetry: Sequence[TelemetryTarget] = (),
        drop_caches_on: Sequence[str] = (),
        monitor: Monitor | None = None,
        max_s: float | None = None,
        cancel: asyncio.Event | None = None,
        engine: Engine = "agent",
        latency_from_s: float = 0.0,
    ) -> RunResult: ...


@dataclass
class Prepared:
    """What a sweep needs on the hosts before its first trial."""

    applier: Applier
    telemetry: list[TelemetryTarget]
    shared_mounts: dict[str, list[str]] = field(default_factory=dict)  # client -> its mounts of the server


class HostSide(Protocol):
    def host_names(self) -> list[str]:
        """Names to offer the admin (the SSH config's Host aliases)."""
        ...

    async def discover(self, host: str) -> HostFacts:
        """Connect and gather facts; UnknownHostKey on first contact, HostError on failure."""
        ...

    async def trust(self, host: str, key: UnknownHostKey) -> None:
        """Record a key the admin trusted, so the next discover connects."""
        ...

    def runner(self, bus: EventBus, python: Mapping[str, str]) -> TrialRunner: ...

    async def tcp_ceiling(self, server: str, client: str, address: str, *, duration_s: float = 5.0,
                          python: str = "python3") -> TcpCeiling: ...  # fmt: skip

    async def disk_ceiling(self, server: str, export: str, *, file_size: int, python: str = "python3") -> DiskCeiling: ...

    async def export_free(self, server: str, export: str) -> int:
        """Bytes a writer may still use on the file system of ``export`` (RunError when it cannot be read)."""
        ...

    async def may_write(self, host: str, path: str) -> bool:
        """Whether the login may write the directory ``path`` on ``host``, as the load agent does."""
        ...

    async def round_trip(self, client: str, address: str) -> float | None:
        """The client's round trip to the server in ms; None when it cannot be measured."""
        ...

    async def flush_cost(self, server: str, export: str, *, python: str = "python3") -> float | None:
        """Seconds one synced small write costs on the export's file system; None when not timed."""
        ...

    def journal(self, store: Store, session_id: int, *, deadman_timeout: float) -> Journal: ...

    async def prepare(self, spec: SweepSpec, journal: Journal, mount_point: str) -> Prepared:
        """The sweep's applier and telemetry (and the client mounts its test mount would share)."""
        ...

    async def leftovers(self, store: Store) -> list[Pending]:
        """Unreverted journal entries as their hosts show them now (marks those a switch put back)."""
        ...

    async def revert_leftover(self, store: Store, entry: JournalEntry) -> None: ...

    async def answering(self, host: str) -> bool:
        """Whether the host runs a trivial command within seconds (after a trial broke)."""
        ...

    async def close(self) -> None: ...
