"""Latency as a first-class result (issue 17): one bucket scheme, merged histograms, never averaged percentiles."""

from __future__ import annotations

import asyncio
import json
import math
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from experiments import agent
from experiments import workloads as w
from experiments.agent_protocol import AgentStream, AgentSummary
from experiments.fio import fio_argv, parse_fio_json, to_fio_job
from app.runner import RunResult
from experiments.latency import (
    BASE,
    MAX_KEY,
    Latency,
    bucket_of_us,
    clients_latency,
    merge,
    quantile_ms,
    read_histogram,
    subtract,
    upper_ms,
)
from tests.unit.experiments.test_agent_harness import AgentRun, python_params

MIB = 1 << 20


def _ops(ms: float, n: int) -> dict[int, int]:
    """``n`` operations of ``ms`` milliseconds each, as a client's histogram."""
    return {bucket_of_us(ms * 1e3): n}


def test_the_agent_and_the_controller_share_one_bucket_scheme() -> None:
    assert agent._HIST_BASE == BASE and agent._HIST_MAX_KEY == MAX_KEY
    rec = agent.Recorder()
    rec.hist_from = 0.0  # the measured window is open
    lats = [random.Random(3).lognormvariate(math.log(2e-3), 1.0) for _ in range(2000)]
    for lat in lats:
        rec.op(0, 4096, lat)
    rec.take()
    assert rec.hist == merge([{bucket_of_us(lat * 1e6): 1} for lat in lats])
    for q in (0.5, 0.99, 0.999):  # the agent's own percentile is the module's, read off the same histogram
        assert rec.run_percentile_ms(q) == pytest.approx(quantile_ms(rec.hist, q, rec.lat_max * 1e3))


def test_a_client_ten_times_slower_owns_the_tail_of_the_merged_p99() -> None:
    fast, slow = _ops(1.0, 9_800), _ops(10.0, 200)  # 2 % of the operations took 10 ms
    lat = clients_latency([fast, slow], [1.0, 10.0])
    assert lat is not None and lat.ops == 10_000
    assert lat.p99_ms == pytest.approx(10.0, rel=0.02)  # the slow client's latency, not the mean of two p99s (5.5)
    assert lat.p50_ms == pytest.approx(1.0, rel=0.02)
    few = clients_latency([_ops(1.0, 9_950), _ops(10.0, 50)], [1.0, 10.0])  # 0.5 % slow: inside the p99.9 only
    assert few is not None and few.p99_ms == pytest.approx(1.0, rel=0.02) and few.p999_ms == pytest.approx(10.0, rel=0.02)
    assert few.max_ms == 10.0


def test_a_percentile_is_its_buckets_upper_edge_capped_at_the_largest_latency_seen() -> None:
    key = bucket_of_us(4000.0)
    assert upper_ms(key - 1) <= 4.0 < upper_ms(key) <= 4.0 * 1.02 + 1e-9
    assert quantile_ms({key: 10}, 0.99) == upper_ms(key)
    assert quantile_ms({key: 10}, 0.99, max_ms=4.0) == 4.0
    assert quantile_ms({0: 1, key: 99}, 0.01) == upper_ms(0)  # nearest rank: the first operation


def test_nothing_measured_is_none_never_zero() -> None:
    assert Latency.of({}) is None and quantile_ms({}, 0.99) is None
    assert clients_latency([]) is None
    assert clients_latency([{}, {}]) is None
    assert clients_latency([_ops(1.0, 5), None]) is None  # a client sent none: no honest merge


def test_the_measured_window_of_a_cumulative_histogram() -> None:
    assert subtract({1: 5, 2: 7, 3: 1}, {1: 5, 2: 2, 9: 4}) == {2: 5, 3: 1}


def test_a_trials_latency_round_trips_through_its_summary_and_older_or_damaged_ones_read_as_none() -> None:
    lat = clients_latency([_ops(1.0, 90), _ops(3.0, 10)], [1.0, 3.0])
    assert lat is not None and Latency.from_json(lat.to_json()) == lat
    assert set(lat.figures()) == {"ops", "p50_ms", "p99_ms", "p999_ms", "max_ms"}
    assert Latency.from_json(None) is None  # a summary from before latency was kept
    for damaged in ({**lat.to_json(), "p99_ms": "fast"}, {**lat.to_json(), "hist": {"x": 1}}, "1 ms", [1]):
        assert Latency.from_json(damaged) is None


def test_read_histogram_keeps_the_buckets_and_drops_empty_ones() -> None:
    assert read_histogram({"0": 1, "17": 0, str(MAX_KEY): 2}, "h") == {0: 1, MAX_KEY: 2}


@pytest.fixture(params=python_params())
def python(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _summary(run: AgentRun) -> AgentSummary:
    raw = run.until("summary")
    run.rest()
    assert run.wait() == 0
    summary = AgentStream("c1").parse_line(json.dumps(raw))  # as the controller reads it
    assert isinstance(summary, AgentSummary)
    return summary


def test_the_agent_run_locally_sends_a_histogram_whose_merged_p99_is_its_own(python: str, tmp_path: Path) -> None:
    cfg = {"mode": "rand_read", "dir": str(tmp_path), "file_size": 4 * MIB, "block_size": 4096, "jobs": 2,
           "loop": True, "duration": 0.6, "interval": 0.05}
    summary = _summary(AgentRun(python, cfg))
    assert summary.lat_hist and sum(summary.lat_hist.values()) == summary.ops  # no warm-up asked: every operation
    merged = clients_latency([summary.lat_hist], [summary.lat_max_ms])
    assert merged is not None
    assert merged.p99_ms == pytest.approx(summary.lat_p99_ms, abs=1e-4)  # the agent rounds to 4 decimals
    assert merged.p50_ms == pytest.approx(summary.lat_p50_ms, abs=1e-4)
    two = clients_latency([summary.lat_hist, summary.lat_hist], [summary.lat_max_ms] * 2)  # two equal clients
    assert two is not None and two.ops == 2 * merged.ops and two.p99_ms == merged.p99_ms


def test_the_agents_histogram_leaves_the_warm_up_out(python: str, tmp_path: Path) -> None:
    cfg = {"mode": "seq_write", "dir": str(tmp_path), "file_size": 2 * MIB, "block_size": 64 * 1024, "loop": True,
           "duration": 0.6, "interval": 0.05, "latency_from": 0.3, "fsync": False}
    summary = _summary(AgentRun(python, cfg))
    assert summary.lat_hist is not None and 0 < sum(summary.lat_hist.values()) < summary.ops
    cfg |= {"latency_from": 30.0}  # a warm-up longer than the run: nothing measured
    assert _summary(AgentRun(python, cfg)).lat_hist == {}


def test_the_agent_holds_a_client_to_its_rate(python: str, tmp_path: Path) -> None:
    cfg = {"mode": "rand_write", "dir": str(tmp_path), "file_size": 1 * MIB, "block_size": 4096, "jobs": 3,
           "loop": True, "duration": 1.0, "interval": 0.1, "rate_iops": 50}
    summary = _summary(AgentRun(python, cfg))
    assert 30 <= summary.ops <= 55  # 50 a second over one second, whatever the three jobs could do
    assert AgentRun(python, {**cfg, "rate_iops": "fast"}).until("error")["message"].startswith("config rate_iops")


FIO = shutil.which("fio")


def test_fio_shares_a_clients_rate_out_over_its_jobs() -> None:
    spec = w.RandRead(file_size=8 * MIB, jobs=3, duration_s=1.0, loop=True, rate_iops=200)
    assert "rate_iops=67" in to_fio_job(spec, "/mnt/t", log_prefix=None).splitlines()
    assert not any(line.startswith("rate_iops=") for line in to_fio_job(w.RandRead(), "/mnt/t", log_prefix=None).splitlines())


@pytest.mark.skipif(FIO is None, reason="fio is not installed")
def test_a_real_fio_run_gives_the_same_buckets_and_holds_the_rate(tmp_path: Path) -> None:
    spec = w.RandRead(file_size=8 * MIB, jobs=1, duration_s=1.0, loop=True, interval_s=0.1, rate_iops=2000)
    (tmp_path / "job.fio").write_text(to_fio_job(spec, str(tmp_path), log_prefix=None))
    out = subprocess.run(fio_argv(str(tmp_path / "job.fio"), str(tmp_path / "out.json"), str(FIO)),
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    summary = parse_fio_json((tmp_path / "out.json").read_text(), "c1")
    assert 1200 <= summary.ops <= 2100 and summary.lat_hist and sum(summary.lat_hist.values()) == summary.ops
    merged = clients_latency([summary.lat_hist], [summary.lat_max_ms])
    # one job: fio's own percentiles come off the same operations, in its own 1.5 % bins
    assert merged is not None and merged.p50_ms == pytest.approx(summary.lat_p50_ms, rel=0.05)
    assert merged.p99_ms == pytest.approx(summary.lat_p99_ms, rel=0.1)


def test_fios_histogram_leaves_the_warm_up_out() -> None:
    from app.events import EventBus
    from app.runner import ClientWork, WorkloadRunner
    from tests.unit.experiments.test_fio_status import _FakeFio, _FakeHost

    fio = _FakeFio()

    async def play() -> None:  # a status every 0.1 s of fio's clock: 10 operations of 0.1 ms, from 0.5 s of 10 ms
        await fio.went.wait()
        for k in range(1, 11):
            fast, slow = 10 * min(k, 5), 10 * max(k - 5, 0)
            bins = {"100000": fast} | ({"10000000": slow} if slow else {})
            write = {"io_bytes": 4096 * (fast + slow), "total_ios": fast + slow, "runtime": 100 * k,
                     "clat_ns": {"max": 1e7, "bins": bins}}
            fio.status({"timestamp_ms": 1000 + 100 * k, "jobs": [{
                "jobname": "j", "error": 0, "job_runtime": 100 * k, "write": write,
                "read": {"io_bytes": 0, "total_ios": 0, "runtime": 0}}]})  # fmt: skip
            await asyncio.sleep(0.01)
        fio.end(0)

    async def scenario() -> RunResult:
        player = asyncio.create_task(play())
        pool: Any = {"c1": _FakeHost("c1", fio)}
        result = await WorkloadRunner(pool, EventBus()).run(
            1, w.SeqWrite(interval_s=0.1), [ClientWork("c1", "/mnt/t")], engine="fio", max_s=5.0, latency_from_s=0.5)
        await player
        return result

    result = asyncio.run(scenario())
    assert result.ok, result.error
    assert result.summaries["c1"].lat_hist == {bucket_of_us(10_000.0): 50}  # the warm-up's fast 50 left out
