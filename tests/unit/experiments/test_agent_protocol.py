"""Parsing the agent's lines and summing several clients per interval."""

from __future__ import annotations

import json

import pytest

from experiments.agent_protocol import (
    AgentError, AgentNotice, AgentStream, AgentSummary, IntervalAggregator, parse_lines, split_sample, sum_samples,
)
from experiments.samples import HostTelemetry, Sample

SAMPLE = {"type": "sample", "t": 0.25, "interval": 0.25, "bytes_read": 0, "bytes_written": 1048576, "ops": 1,
          "lat_p50_ms": 2.0, "lat_p99_ms": 3.0, "lat_max_ms": 3.0, "errors": 0, "phase": "write"}
SUMMARY = {"type": "summary", "mode": "seq_write", "end": "done", "stop_reason": None, "duration": 2.0,
           "bytes_read": 0, "bytes_written": 4 << 20, "ops": 4, "errors": 0, "lat_p50_ms": 1.0, "lat_p99_ms": 2.0,
           "lat_max_ms": 2.5, "cache_mode": "fsync", "caches_dropped": False, "direct": False, "prepare_s": 0.0,
           "cpu_s": 0.1, "phases": {"write": {"ops": 4}}, "python": "3.6.15", "agent_version": 1, "tree_files": 3}


def _line(obj: dict) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def test_events_survive_any_chunking() -> None:
    data = _line({"type": "hello", "pid": 1}) + _line(SAMPLE) + _line(SUMMARY)
    stream = AgentStream("c1")
    events = [e for i in range(len(data)) for e in stream.feed(data[i : i + 1])]
    assert [type(e) for e in events] == [AgentNotice, Sample, AgentSummary]
    sample = events[1]
    assert isinstance(sample, Sample)
    assert sample.client == "c1" and sample.bytes_written == 1 << 20 and sample.phase == "write" and sample.count is None
    summary = stream.summary
    assert summary is not None and summary.python == "3.6.15"
    assert summary.throughput_bps == 2 << 20 and summary.extra["tree_files"] == 3 and "stop_reason" in summary.extra


def test_garbage_lines_are_recorded_not_raised() -> None:
    lines = [b"Welcome to lab-client1!", b"{broken json", b"[1,2]", _line({"type": "sample", "t": "x"}),
             _line({"no_type": 1}), b"\xff\xfe", _line({**SAMPLE, "t": float("nan")}), b"", _line(SAMPLE)]
    events, stream = parse_lines(lines, "c1")
    assert len(events) == 1 and isinstance(events[0], Sample)
    assert stream.garbage_count == 7 and len(stream.garbage) == 7
    assert "Welcome" in stream.garbage[0]


def test_error_and_telemetry_lines() -> None:
    stream = AgentStream("srv")
    events = stream.feed(
        _line({"type": "error", "errno": 28, "message": "the export is full (ENOSPC) while writing x"})
        + _line({"type": "telemetry", "t": 0.5, "interval": 0.25, "disk_read_bps": 1e6, "cpu_busy": 0.5,
                 "extra": {"nfsd.threads": 8}})
    )
    err, tel = events
    assert isinstance(err, AgentError) and err.errno == 28 and str(err) == "srv: the export is full (ENOSPC) while writing x"
    assert stream.error is err
    assert isinstance(tel, HostTelemetry) and tel.host == "srv" and tel.disk_read_bps == 1e6 and tel.extra == {"nfsd.threads": 8.0}


def test_a_last_line_without_newline_is_parsed_on_close() -> None:
    stream = AgentStream("c")
    assert stream.feed(json.dumps(SAMPLE).encode()) == []
    assert len(stream.close()) == 1


def _s(client: str, t: float, nbytes: int, ops: int = 1, p50: float = 1.0, p99: float = 2.0) -> Sample:
    return Sample(client, t, 0.25, bytes_written=nbytes, ops=ops, lat_p50_ms=p50, lat_p99_ms=p99, lat_max_ms=p99)


def test_sum_samples_adds_bytes_and_keeps_the_worst_tail() -> None:
    total = sum_samples([_s("a", 0.25, 100, ops=1, p50=1.0, p99=5.0), _s("b", 0.27, 300, ops=3, p50=3.0, p99=4.0)], 0.25, 0.25)
    assert total.bytes_written == 400 and total.ops == 4
    assert total.lat_p50_ms == pytest.approx(2.5)  # ops-weighted
    assert total.lat_p99_ms == 5.0 and total.lat_max_ms == 5.0 and total.client == "all"


def test_aggregator_releases_an_interval_once_every_client_reported() -> None:
    agg = IntervalAggregator(["a", "b"], 0.25)
    assert agg.add(_s("a", 0.25, 10)) == []
    assert agg.add(_s("a", 0.50, 20)) == []  # b has not reported yet
    out = agg.add(_s("b", 0.29, 5))  # 40 ms late: same aligned interval
    assert [(x.t, x.bytes_written) for x in out] == [(0.25, 15)]
    out = agg.add(_s("b", 0.52, 7))
    assert [(x.t, x.bytes_written) for x in out] == [(0.5, 27)]
    agg.add(_s("a", 0.75, 1))
    assert [(x.t, x.bytes_written) for x in agg.flush()] == [(0.75, 1)]


def test_aggregator_never_drops_a_late_sample() -> None:
    agg = IntervalAggregator(["a", "b"], 0.25)
    agg.add(_s("a", 0.25, 1))
    agg.add(_s("b", 0.25, 1))
    late = agg.add(_s("a", 0.26, 50)) + agg.add(_s("b", 0.5, 2)) + agg.flush()
    assert sum(x.bytes_written for x in late) == 52
    with pytest.raises(ValueError, match="unknown client"):
        agg.add(_s("zz", 1.0, 1))


def test_a_long_sample_is_spread_over_the_intervals_it_covers() -> None:
    # Seen in the lab: a busy guest did not run the agent's sampler for 5 s, which then
    # reported 5 s in one sample; summed into one 250 ms interval it read as 2449 MB/s.
    agg = IntervalAggregator(["a"], 0.25)
    assert [x.t for x in agg.add(_s("a", 1.0, 30_500_000))] == [1.0]
    long = Sample("a", t=6.0, interval=5.0, bytes_read=610_000_003, ops=583, errors=1)
    out = agg.add(long)
    assert [round(x.t, 2) for x in out] == [round(1.25 + 0.25 * i, 2) for i in range(20)]
    assert sum(x.bytes_read for x in out) == 610_000_003 and sum(x.ops for x in out) == 583
    assert max(x.throughput_bps for x in out) < 123e6 and min(x.throughput_bps for x in out) > 121e6
    assert [x.errors for x in out] == [0] * 19 + [1]
    assert split_sample(long, 1) == [long]
