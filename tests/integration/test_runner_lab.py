"""The workload runner against the lab: samples from two clients at once, and the faults
that must end a trial with a clear error while keeping what was gathered."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.events import EventBus, SamplesBatch, TelemetryBatch
from app.hosts import HostPool, SshSettings
from app.runner import ClientWork, TelemetryTarget, WorkloadRunner, client_telemetry, export_devices, path_info, server_telemetry
from experiments.samples import Sample
from experiments.workloads import MIB, SeqRead, SeqWrite
from tests.conftest import LabHandle

pytestmark = pytest.mark.lab
CLIENTS = ("lab-client1", "lab-client2")


def _settings(lab: LabHandle, tmp_path: Path) -> SshSettings:
    return SshSettings(config_file=lab.ssh_config, app_known_hosts=tmp_path / "app_known_hosts")


def test_two_clients_stream_samples_and_telemetry(lab: LabHandle, tmp_path: Path) -> None:
    bus = EventBus()
    batches: list[SamplesBatch | TelemetryBatch] = []
    bus.subscribe(batches.append)

    async def scenario() -> None:
        async with HostPool(_settings(lab, tmp_path)) as pool:
            path = await path_info(pool, "lab-server", "lab-server", list(CLIENTS))
            devices = await export_devices(pool["lab-server"], "/srv/nfs")
            assert devices[0] == "md0" and len(devices) >= 3  # the array and its members
            telemetry = [TelemetryTarget("lab-server", server_telemetry(devices, path, 0.25))]
            telemetry += [TelemetryTarget(c, client_telemetry(c, path, "/mnt/lab", 0.25)) for c in CLIENTS]
            runner = WorkloadRunner(pool, bus)
            result = await runner.run(
                7, SeqRead(file_size=16 * MIB, loop=True, duration_s=2.0), [ClientWork(c, "/mnt/lab") for c in CLIENTS],
                telemetry=telemetry, drop_caches_on=["lab-server", *CLIENTS],
            )
            assert result.ok, result.error
            assert result.ended == "done"
            assert {s.client for s in result.samples} == set(CLIENTS)
            assert sum(s.bytes_read for s in result.samples) > 0
            assert sum(t.bytes_read for t in result.totals) == sum(s.bytes_read for s in result.samples)
            assert result.caches_dropped == ("lab-server", *CLIENTS)
            assert all(s.caches_dropped for s in result.summaries.values())
            # The 100 ms goal is a figure to read (printed below), not a timed assert; this
            # checks the agents started together rather than one after the other's setup.
            assert result.start_skew_s is not None and result.start_skew_s < 1.0  # hosts share the lab's clock
            assert result.stop_s is not None and result.stop_s < 1.0
            server_rows = [t for t in result.telemetry if t.host == "lab-server"]
            assert server_rows and any("nfsd.threads" in t.extra for t in server_rows)
            assert any(t.net_tx_bps > 0 for t in server_rows)
            client_rows = [t for t in result.telemetry if t.host == "lab-client1"]
            assert any(k.startswith("mount./mnt/lab.") for t in client_rows for k in t.extra)
            print(f"\nseq read, 2 clients: {sum(s.bytes_read for s in result.samples) / 2.0 / 1e6:.1f} MB/s total; "
                  f"start skew {result.start_skew_s * 1e3:.0f} ms, stop {result.stop_s * 1e3:.0f} ms")
        streamed = [s for b in batches if isinstance(b, SamplesBatch) for s in b.samples]
        assert len(streamed) == len(result.samples) and all(b.trial_id == 7 for b in batches)
        assert any(isinstance(b, TelemetryBatch) for b in batches)
        # nothing left behind by the agents (others' tests may have their own there)
        assert set(result.workdirs) == set(CLIENTS)
        for c, d in result.workdirs.items():
            assert d.startswith("/mnt/lab/.nfs-tuner-agent-")
            assert lab.run(c, f"test -e {d}", check=False).returncode != 0

    asyncio.run(scenario())


def test_client_without_python_ends_the_run_clearly(lab: LabHandle, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with HostPool(_settings(lab, tmp_path)) as pool:
            runner = WorkloadRunner(pool, EventBus(), python={"lab-client2": "python3-missing"})
            result = await runner.run(
                1, SeqWrite(file_size=4 * MIB, duration_s=2.0), [ClientWork(c, "/mnt/lab") for c in CLIENTS]
            )
            assert result.error is not None and result.error.host == "lab-client2"
            assert "python3-missing was not found" in result.error.message
            assert "install Python 3.6" in result.error.message

    asyncio.run(scenario())


@pytest.fixture
def tiny_export(lab: LabHandle) -> Iterator[str]:
    """A 16 MiB tmpfs exported on its own, so filling it bothers nobody else's tests."""
    path = "/srv/nfs-tuner-enospc"
    lab.run("lab-server", f"mkdir -p {path} && mount -t tmpfs -o size=16m tmpfs {path} && "
                          f"exportfs -o rw,sync,no_root_squash,no_subtree_check,fsid=4711 10.213.7.0/24:{path}")
    lab.run("lab-client1", f"mkdir -p /mnt/nfs-tuner-enospc && mount -t nfs lab-server:{path} /mnt/nfs-tuner-enospc")
    try:
        yield "/mnt/nfs-tuner-enospc"
    finally:
        lab.run("lab-client1", "umount -f -l /mnt/nfs-tuner-enospc; rmdir /mnt/nfs-tuner-enospc", check=False)
        lab.run("lab-server", f"exportfs -u 10.213.7.0/24:{path}; umount -l {path}; rmdir {path}", check=False)


def test_full_export_ends_the_run_with_enospc(lab: LabHandle, tmp_path: Path, tiny_export: str) -> None:
    async def scenario() -> None:
        async with HostPool(_settings(lab, tmp_path)) as pool:
            runner = WorkloadRunner(pool, EventBus())
            result = await runner.run(1, SeqWrite(file_size=64 * MIB, duration_s=20.0), [ClientWork("lab-client1", tiny_export)])
            assert result.error is not None and result.error.host == "lab-client1"
            assert result.error.errno == 28
            assert "the export is full (" in result.error.message and " MiB free)" in result.error.message, result.error.message
            assert result.samples and sum(s.bytes_written for s in result.samples) > 0  # what came first is kept

    asyncio.run(scenario())


ALIAS = "10.213.7.99"


@pytest.fixture
def alias_mount(lab: LabHandle) -> Iterator[str]:
    """The export mounted (NFSv3: no trunking onto the lab's v4 connection) through a second
    server address whose route the test can take away: only this mount loses its server."""
    mp = "/mnt/nfs-tuner-silent"
    lab.run("lab-server", f"ip addr add {ALIAS}/32 dev lan0")
    lab.run("lab-client1", f"mkdir -p {mp} && mount -t nfs -o vers=3,soft,timeo=20,retrans=1 {ALIAS}:/srv/nfs {mp}")
    try:
        yield mp
    finally:
        lab.run("lab-client1", f"ip route del blackhole {ALIAS}/32", check=False)
        lab.run("lab-client1", f"umount -f -l {mp}; rmdir {mp}", check=False)
        lab.run("lab-server", f"ip addr del {ALIAS}/32 dev lan0", check=False)


def test_server_that_stops_answering_ends_the_run_keeping_samples(lab: LabHandle, tmp_path: Path, alias_mount: str) -> None:
    pulled = threading.Event()

    def pull_the_plug(total: Sample) -> bool:
        if total.t >= 1.0 and not pulled.is_set():
            pulled.set()
            threading.Thread(target=lab.run, args=("lab-client1", f"ip route add blackhole {ALIAS}/32"), daemon=True).start()
        return False

    async def scenario() -> None:
        async with HostPool(_settings(lab, tmp_path)) as pool:
            runner = WorkloadRunner(pool, EventBus())
            result = await runner.run(
                1, SeqRead(file_size=16 * MIB, loop=True, duration_s=60.0), [ClientWork("lab-client1", alias_mount)],
                monitor=pull_the_plug, stall_timeout=3.0, max_s=50.0,
            )
            assert pulled.is_set()
            assert result.error is not None and result.error.host == "lab-client1", result.ended
            assert "stopped answering" in result.error.message
            assert sum(s.bytes_read for s in result.samples) > 0

    asyncio.run(scenario())
