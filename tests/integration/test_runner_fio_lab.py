"""fio as the runner's engine against the lab: live samples, exact totals, nothing left behind,
and "auto" choosing between fio and the agent."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.events import EventBus, SamplesBatch
from app.hosts import HostPool, SshSettings
from app.runner import ClientWork, RunResult, WorkloadRunner
from experiments.workloads import MIB, SeqRead, SeqWrite, SmallFiles, WorkloadSpec
from tests.conftest import LabHandle

pytestmark = pytest.mark.lab
CLIENT = "lab-client1"


def _run(lab: LabHandle, tmp_path: Path, spec: WorkloadSpec, engine: str, **kw: object) -> tuple[RunResult, list[SamplesBatch]]:
    bus = EventBus()
    batches: list[SamplesBatch] = []
    bus.subscribe(batches.append, SamplesBatch)

    async def scenario() -> RunResult:
        settings = SshSettings(config_file=lab.ssh_config, app_known_hosts=tmp_path / "app_known_hosts")
        async with HostPool(settings) as pool:
            return await WorkloadRunner(pool, bus).run(3, spec, [ClientWork(CLIENT, "/mnt/lab")], engine=engine, **kw)  # type: ignore[arg-type]

    return asyncio.run(scenario()), batches


def _left_on_server(lab: LabHandle, workdir: str) -> bool:
    name = workdir.rsplit("/", 1)[-1]
    return lab.run("lab-server", f"test -e /srv/nfs/{name}", check=False).returncode == 0


# rate-capped so that even a fast lab link gives several live intervals before the end
@pytest.mark.parametrize("spec", [SeqWrite(file_size=24 * MIB), SeqRead(file_size=24 * MIB)], ids=lambda s: s.kind)
def test_fio_engine_streams_samples_and_leaves_nothing(lab: LabHandle, tmp_path: Path, spec: WorkloadSpec,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import app.runner.fio_handle as fh

    real = fh.to_fio_job
    monkeypatch.setattr(fh, "to_fio_job", lambda *a, **k: real(*a, **k) + "rate=12m\n")
    result, batches = _run(lab, tmp_path, spec, "fio", drop_caches_on=[CLIENT])
    assert result.ok, result.error
    assert result.engine == "fio" and result.ended == "done"
    summary = result.summaries[CLIENT]
    assert summary.mode.startswith("fio:") and summary.extra["engine"] == "fio"
    moved = sum(s.bytes_read + s.bytes_written for s in result.samples)
    assert moved == 24 * MIB == summary.bytes_read + summary.bytes_written
    assert sum(t.bytes_read + t.bytes_written for t in result.totals) == moved
    assert summary.cache_mode == ("dropped" if spec.kind == "seq_read" else "fsync")
    # live: several batches were published before the last one
    streamed = [s for b in batches for s in b.samples]
    assert len(streamed) == len(result.samples) and len(batches) >= 3
    assert sum(s.bytes_read + s.bytes_written for b in batches[:-1] for s in b.samples) > 0
    workdir = result.workdirs[CLIENT]
    assert workdir.startswith("/mnt/lab/.nfs-tuner-fio-")
    assert not _left_on_server(lab, workdir)


def test_fio_engine_stops_on_cancel_and_cleans_up(lab: LabHandle, tmp_path: Path) -> None:
    def stop_after_a_second(total: object) -> bool:
        return getattr(total, "t", 0.0) >= 1.0

    result, _ = _run(lab, tmp_path, SeqRead(file_size=16 * MIB, loop=True, duration_s=30.0), "fio",
                     monitor=stop_after_a_second)
    assert result.ok, result.error
    assert result.ended == "monitor" and result.summaries[CLIENT].end == "stopped"
    assert result.stop_s is not None and result.stop_s < 5.0  # a bound on a hang, not a timing check
    assert result.samples and not _left_on_server(lab, result.workdirs[CLIENT])


def test_auto_takes_fio_when_exact_and_the_agent_otherwise(lab: LabHandle, tmp_path: Path) -> None:
    result, _ = _run(lab, tmp_path, SeqWrite(file_size=8 * MIB), "auto")
    assert result.ok, result.error
    assert result.engine == "fio" and result.summaries[CLIENT].extra["engine"] == "fio"
    result, _ = _run(lab, tmp_path, SmallFiles(count=50), "auto")
    assert result.ok, result.error
    assert result.engine == "agent" and "engine" not in result.summaries[CLIENT].extra
    assert result.workdirs[CLIENT].startswith("/mnt/lab/.nfs-tuner-agent-")
