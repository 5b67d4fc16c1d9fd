"""fio's live JSON status documents turned into samples, on output captured from real fio 3.33.

The fixtures are the stdout of the runner's fio wrapper (app/runner/fio_handle.py)
with ``--output-format=json --status-interval=250ms``, rate-capped at 16 MiB/s:
seq_write_2jobs.txt ran to the end (2 jobs × 48 MiB); seq_read_stopped.txt was
stopped after about 1.3 s by closing the wrapper's stdin. The stall tests play the
wrapper in process (_FakeFio), printing documents in the same shape.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from errno import ETIMEDOUT
from pathlib import Path
from typing import Any

import pytest

import app.runner.fio_handle as fh
from app.events import EventBus
from app.hosts import CommandResult
from app.runner import ClientWork, RunResult, WorkloadRunner
from app.runner.fio_handle import READY, STALL_TIMEOUT_S, WRAPPER, FioHandle, cache_mode, wrapper_argv
from experiments import agent
from experiments import workloads as w
from experiments.fio import fio_exact, parse_fio_json
from experiments.fio_status import FioStatusSampler, FioStatusStream, job_errors
from experiments.samples import Sample

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fio"
MIB = 1 << 20


def _run(name: str, interval: float = 0.25) -> tuple[list[Sample], list[Sample], FioStatusSampler, FioStatusStream]:
    """(samples live, samples at the end, sampler, stream) for one captured run."""
    stream, sampler = FioStatusStream(), FioStatusSampler("c1", interval)
    live: list[Sample] = []
    for line in (FIXTURES / name).read_text().splitlines(keepends=True):
        if (doc := stream.feed(line)) is not None:
            live += sampler.feed(doc)
    return live, sampler.finish(), sampler, stream


def test_a_full_run_becomes_grid_samples_that_add_up_to_fio_s_totals() -> None:
    live, tail, sampler, stream = _run("seq_write_2jobs.txt")
    samples = live + tail
    assert len(live) >= 10  # one per 250 ms while it ran, not only at the end
    assert [s.t for s in live] == [round(0.25 * k, 6) for k in range(1, len(live) + 1)]
    assert all(s.interval == 0.25 and s.client == "c1" for s in live)
    assert len(tail) == 1 and 0 < tail[0].interval < 0.25 and tail[0].t > live[-1].t
    assert sum(s.bytes_written for s in samples) == 2 * 48 * MIB
    assert sum(s.bytes_read for s in samples) == 0
    assert sum(s.ops for s in samples) == 96  # 1 MiB blocks
    assert all(s.bytes_written >= 0 and s.ops >= 0 for s in samples)
    # the rate cap (16 MiB/s per job) shows in the steady part of the run
    steady = [s.throughput_bps for s in live[1:10]]
    assert all(24 * MIB < bps < 40 * MIB for bps in steady)
    assert stream.notes == []
    assert sampler.start_epoch is not None and sampler.start_epoch > 1.6e9
    summary = parse_fio_json(json.dumps(sampler.last), "c1")
    assert summary.bytes_written == sum(s.bytes_written for s in samples) and summary.mode == "fio:write"


def test_a_stopped_run_keeps_what_moved_and_fio_s_note() -> None:
    live, tail, sampler, stream = _run("seq_read_stopped.txt")
    samples = live + tail
    assert len(live) >= 4 and sum(s.bytes_written for s in samples) == 0
    assert sum(s.bytes_read for s in samples) == parse_fio_json(json.dumps(sampler.last), "c1").bytes_read > 0
    assert stream.notes == ["fio: terminating on signal 15"]
    assert job_errors(sampler.last or {"jobs": []}) == []


def test_a_coarser_grid_keeps_the_same_totals() -> None:
    fine = sum(s.bytes_written for s in sum(_run("seq_write_2jobs.txt")[:2], []))
    live, tail, _, _ = _run("seq_write_2jobs.txt", interval=1.0)
    assert [s.t for s in live] == [1.0, 2.0, 3.0]
    assert sum(s.bytes_written for s in live + tail) == fine


def _doc(ms: int, runtime: int, written: int, ios: int, error: int = 0) -> dict[str, object]:
    job = {"jobname": "j", "error": error, "job_runtime": runtime,
           "read": {"io_bytes": 0, "total_ios": 0, "runtime": 0},
           "write": {"io_bytes": written, "total_ios": ios, "runtime": runtime, "clat_ns": {"max": 1e6}}}
    return {"timestamp_ms": ms, "jobs": [job]}


def test_interpolation_onto_the_grid_and_setup_time_left_out() -> None:
    s = FioStatusSampler("c", 0.25)
    assert s.feed(_doc(1000, 0, 0, 0)) == []  # laying out: the clock has not started
    assert s.feed(_doc(1300, 100, 100, 1)) == []  # 0.1 s into the run
    out = s.feed(_doc(1500, 300, 300, 3))  # 0.3 s: the 0.25 grid point is inside
    assert [(x.t, x.bytes_written) for x in out] == [(0.25, 250)]
    out = s.feed(_doc(1800, 600, 600, 6))
    assert [(x.t, x.bytes_written) for x in out] == [(0.5, 250)]
    assert [(x.t, x.interval, x.bytes_written, x.ops) for x in s.finish()] == [(0.6, 0.1, 100, 1)]
    assert s.start_epoch == 1.2


def test_stream_cuts_documents_and_keeps_other_lines_as_notes() -> None:
    stream = FioStatusStream()
    lines = ["fio: a warning\n", "{\n", '  "jobs" : [\n', "  ]\n", "}\n", "{\n", "  broken\n", "}\n", "\n"]
    docs = [d for d in map(stream.feed, lines) if d is not None]
    assert docs == [{"jobs": []}]
    assert stream.notes[0] == "fio: a warning" and stream.notes[1].startswith("fio printed a status document that could not be read: not JSON")
    assert job_errors({"jobs": [{"jobname": "x", "error": 28}, {"jobname": "y", "error": 0}]}) == [("x", 28)]


def test_auto_engine_takes_fio_only_for_exact_translations() -> None:
    assert fio_exact(w.SeqWrite()) and fio_exact(w.SeqRead()) and fio_exact(w.Mixed())
    assert not fio_exact(w.SmallFiles()) and not fio_exact(w.Tree()) and not fio_exact(w.Telemetry())
    assert not fio_exact(w.TcpSink())


def test_cache_mode_names_what_kept_fio_honest() -> None:
    assert cache_mode(w.SeqRead(), dropped=True) == "dropped"
    assert cache_mode(w.SeqRead(), dropped=False) == "fadvise"  # the job's invalidate=1
    assert cache_mode(w.SeqRead(direct=True), dropped=True) == "o_direct"
    assert cache_mode(w.SeqWrite(), dropped=False) == "fsync"
    assert cache_mode(w.SeqWrite(fsync=False), dropped=True) == "cached!"


def test_wrapper_takes_every_value_as_an_argument() -> None:
    argv = wrapper_argv("/usr/bin/fio", "/mnt/x y/'d", "[j]\nrw=write\n", 0.25, True)
    assert argv[:4] == ["sh", "-c", WRAPPER, "nfs-tuner-fio"]
    assert argv[4:] == ["/usr/bin/fio", "/mnt/x y/'d", "[j]\nrw=write\n", "250", "1"]


@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_sampler_refuses_a_bad_interval(bad: float) -> None:
    with pytest.raises(ValueError):
        FioStatusSampler("c", bad)


def test_sweep_carries_the_engine_from_the_cli_to_the_stored_plan() -> None:
    from app.cli import parse
    from app.commands.sweep import spec_from_args
    from app.sweep import SweepSpec

    base = ["sweep", "--server", "srv", "--client", "c1", "--export", "/srv/nfs", "--knob", "rsize=32k,1M"]
    assert spec_from_args(parse(base)).engine == "agent"
    spec = spec_from_args(parse([*base, "--engine", "auto"]))
    assert spec.engine == "auto"
    stored = spec.to_json()
    assert stored["sweep"]["engine"] == "auto" and SweepSpec.from_json(stored) == spec
    del stored["sweep"]["engine"]  # a session stored before engines existed
    assert SweepSpec.from_json(stored).engine == "agent"
    with pytest.raises(ValueError, match="engine must be one of"):
        SweepSpec("s", ("c",), "/srv", spec.plan, engine="iozone")
    with pytest.raises(SystemExit):
        parse([*base, "--engine", "iozone"])


class _FakeFio:
    """The wrapper's end of the channel, in process: says ready, then prints what play() makes it."""

    def __init__(self, *, obeys_stop: bool = True) -> None:
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()
        self.lines.put_nowait(READY + "\n")
        self.went = asyncio.Event()
        self.went_at = 0.0
        self.obeys_stop = obeys_stop  # False: fio hangs in the kernel and ignores the wrapper's TERM
        self.eof = self.terminated = False
        self.exit_status: int | None = None

    async def write(self, data: str) -> None:
        if data == "go\n":
            self.went_at = time.monotonic()
            self.went.set()

    def write_eof(self) -> None:
        self.eof = True

    def terminate(self) -> None:
        self.terminated = True
        self.end(None)

    def end(self, status: int | None) -> None:
        self.exit_status = status
        self.lines.put_nowait(None)

    def status(self, doc: dict[str, object]) -> None:
        for line in json.dumps(doc, indent=1).splitlines():
            self.lines.put_nowait(line + "\n")

    async def __aiter__(self) -> AsyncIterator[str]:
        while (line := await self.lines.get()) is not None:
            yield line

    async def wait(self, timeout: float | None = None) -> CommandResult:
        return CommandResult(self.exit_status, "", "")

    async def play(self, written_at: Callable[[float], int], for_s: float, every: float = 0.05) -> None:
        """Status documents every ``every`` s with ``written_at(t)`` bytes, until done or stopped."""
        await self.went.wait()
        while True:
            t = time.monotonic() - self.went_at
            written = written_at(t)
            self.status(_doc(1000 + round(t * 1000), round(t * 1000), written, written // 4096))
            if t >= for_s or (self.eof and self.obeys_stop):
                self.end(0)
                return
            await asyncio.sleep(every)


class _FakeHost:
    def __init__(self, name: str, fio: _FakeFio) -> None:
        self.name = name
        self.fio = fio

    async def run(self, argv: list[str], timeout: float | None = None) -> CommandResult:
        return CommandResult(0, "/usr/bin/fio\n", "")  # find_fio: fio is installed

    async def start(self, argv: list[str]) -> _FakeFio:
        return self.fio


def _run_fake(fio: _FakeFio, written_at: Callable[[float], int], for_s: float, **kw: Any) -> tuple[RunResult, float]:
    """(result, seconds from go to the run's end) of a fio run on client c1 against the fake."""
    async def scenario() -> RunResult:
        player = asyncio.create_task(fio.play(written_at, for_s))
        pool: Any = {"c1": _FakeHost("c1", fio)}
        result = await WorkloadRunner(pool, EventBus()).run(
            1, w.SeqWrite(interval_s=0.1), [ClientWork("c1", "/mnt/t")], engine="fio", max_s=5.0, **kw)
        await player
        return result

    result = asyncio.run(scenario())
    return result, time.monotonic() - fio.went_at


def test_fio_that_stops_moving_fails_like_the_agent_and_keeps_its_samples() -> None:
    fio = _FakeFio()
    result, took = _run_fake(fio, lambda t: round(min(t, 0.3) * 1e6), for_s=4.0, stall_timeout=0.5)
    assert result.engine == "fio" and result.ended == "error"
    assert result.error is not None and result.error.host == "c1" and result.error.errno == ETIMEDOUT
    assert str(result.error) == ("c1: no operation completed for 0.5 s: the NFS server or the network "
                                 "stopped answering; check both")
    assert 0.3 + 0.5 <= took < 1.6  # counted from the last advance, not from go; well before max_s
    assert fio.eof and not fio.terminated  # stopped as cancel stops it, and fio obeyed
    assert len(result.samples) >= 3 and sum(s.bytes_written for s in result.samples) == 300_000
    assert result.summaries == {}


def test_fio_that_moves_slowly_is_not_a_stall() -> None:
    fio = _FakeFio()
    slow = 4096 * 100
    result, took = _run_fake(fio, lambda t: slow * int(t / 0.3), for_s=1.3, stall_timeout=0.5)
    assert result.ok, result.error
    assert result.ended == "done" and took >= 1.3
    assert sum(s.bytes_written for s in result.samples) == 4 * slow == result.summaries["c1"].bytes_written


def test_fio_silent_from_go_gets_the_startup_grace_then_its_channel_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fh, "STARTUP_GRACE_S", 0.3)
    monkeypatch.setattr(fh, "EXIT_WAIT_S", 0.2)
    fio = _FakeFio(obeys_stop=False)  # prints no status at all, and ignores the stop

    async def scenario() -> tuple[FioHandle, float]:
        handle = FioHandle(_FakeHost("c1", fio), w.SeqWrite(), "/mnt/t", lambda h, e: None, stall_s=0.2)  # type: ignore[arg-type]
        await handle.start()
        await handle.ready.wait()
        await handle.go()
        await asyncio.wait_for(handle.ended.wait(), 2.0)
        took = time.monotonic() - fio.went_at
        await handle.wait()
        return handle, took

    handle, took = asyncio.run(scenario())
    assert 0.69 <= took < 1.5  # the grace before a first status (0.3) + the stall (0.2), then EXIT_WAIT_S (0.2)
    assert fio.eof and fio.terminated
    assert handle.error is not None and handle.error.errno == ETIMEDOUT  # not "did not stop": the cause is kept
    assert handle.error.message.startswith("no operation completed for 0.2 s")


def test_fio_stall_default_is_the_agent_s() -> None:
    handle = FioHandle(_FakeHost("c1", _FakeFio()), w.SeqWrite(), "/mnt/t", lambda h, e: None)  # type: ignore[arg-type]
    assert handle.stall_s == STALL_TIMEOUT_S == agent.Ctx({}, None, None).stall_s
