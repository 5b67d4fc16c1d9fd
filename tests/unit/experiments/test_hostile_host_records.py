"""Whatever a host sends, the controller's readers stay up, bounded and truthful.

Issue 12, class 4: every record a host sends (the agent's lines, fio's status and
result documents, discovery outputs, telemetry) goes through total readers that turn
anything malformed into a counted "garbage" line, with bounded work. Each case here
asserts: no exception escapes the reader, nothing malformed becomes a figure, and the
reader goes on reading the next good record.
"""

from __future__ import annotations

import json
import math
import tracemalloc
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.discovery import Discovery, discover_many
from app.facts import build_host_facts
from app.facts.script import MARKER
from app.hosts import UnreadableReply
from app.recommend.telemetry import ARRIVED, WOKEN, digest_mapping
from experiments.agent_protocol import (
    MAX_INTERVAL_S,
    MAX_LINE,
    MAX_QUEUE,
    AgentNotice,
    AgentStream,
    AgentSummary,
    IntervalAggregator,
)
from experiments.fio import parse_fio_json
from experiments.fio_status import MAX_GAP_S, FioStatusSampler, FioStatusStream, job_errors
from experiments.record_fields import BadRecord, count, finite, loads
from experiments.samples import HostTelemetry, Sample

GOOD_SAMPLE = {"type": "sample", "t": 1.0, "interval": 0.25, "bytes_read": 4096, "ops": 1}
SUMMARY = {
    "type": "summary", "mode": "seq_read", "end": "done", "duration": 1.0, "bytes_read": 1, "bytes_written": 0,
    "ops": 1, "errors": 0, "lat_p50_ms": 0.1, "lat_p99_ms": 0.2, "lat_max_ms": 0.3, "cache_mode": "drop",
    "caches_dropped": True, "direct": False, "prepare_s": 0.0, "cpu_s": 0.1,
}
BAD_NUMBERS: list[Any] = [1e400, -1e400, "NaN", float("nan"), -5, True, False, "12", [1], {"a": 1}, None, 2**70, 1.5]


def _line(obj: Any) -> bytes:
    return json.dumps(obj, allow_nan=True).encode() + b"\n"


def _still_reads(stream: AgentStream) -> None:
    (event,) = stream.feed(_line(GOOD_SAMPLE))
    assert isinstance(event, Sample) and event.bytes_read == 4096


# ------------------------------------------------------------------ agent lines
@pytest.mark.parametrize("field", ["bytes_read", "bytes_written", "ops", "errors", "count"])
@pytest.mark.parametrize("value", BAD_NUMBERS, ids=repr)
def test_a_sample_counter_that_is_not_a_count_is_garbage(field: str, value: Any) -> None:
    stream = AgentStream("c1")
    if field == "count" and value is None:  # how a workload without a count says so
        (sample,) = stream.feed(_line({**GOOD_SAMPLE, field: value}))
        assert isinstance(sample, Sample) and sample.count is None
        return
    assert stream.feed(_line({**GOOD_SAMPLE, field: value})) == []
    assert stream.garbage_count == 1 and field in stream.garbage[0]
    _still_reads(stream)


@pytest.mark.parametrize("field", ["t", "interval", "lat_p50_ms", "lat_p99_ms", "lat_max_ms"])
@pytest.mark.parametrize("value", [1e400, -1e400, float("nan"), "1", None, [0.1], True], ids=repr)
def test_a_sample_time_or_latency_that_is_not_a_finite_number_is_garbage(field: str, value: Any) -> None:
    stream = AgentStream("c1")
    assert stream.feed(_line({**GOOD_SAMPLE, field: value})) == []
    assert stream.garbage_count == 1
    _still_reads(stream)


@pytest.mark.parametrize("interval", [0.0, -0.25, MAX_INTERVAL_S * 1.01, 2.5e6])
def test_an_interval_no_agent_sends_is_refused_before_it_is_split(interval: float) -> None:
    stream = AgentStream("c1")
    assert stream.feed(_line({**GOOD_SAMPLE, "interval": interval})) == []
    assert stream.garbage_count == 1


def test_the_longest_interval_accepted_splits_into_a_bounded_number_of_samples() -> None:
    (sample,) = AgentStream("c1").feed(_line({**GOOD_SAMPLE, "t": MAX_INTERVAL_S, "interval": MAX_INTERVAL_S}))
    released = IntervalAggregator(["c1"]).add(sample)
    assert len(released) <= MAX_INTERVAL_S / 0.25 + 1
    assert sum(s.bytes_read for s in released) == 4096


@pytest.mark.parametrize("raw", [
    b"[" * 200_000, b'{"a":' * 200_000, b"{" * 10, b"null", b"[]", b"42", b'"sample"', b"\xff\xfe\x00",
    b'{"type": 7}', b'{"type": ""}', b'{"type": null}', b'{"type": "' + b"x" * 100 + b'"}', b'{"no_type": 1}',
    b'{"type": "sample"}', b'{"type": "sample", "t": 1}', b'{"type": "error"}', b'{"type": "summary", "mode": "x"}',
    b'{"type":"sample","t":1,"interval":0.25,"phase":["x"]}',
], ids=lambda r: repr(r[:24]))
def test_lines_that_are_not_agent_records_are_counted_and_the_stream_goes_on(raw: bytes) -> None:
    stream = AgentStream("c1")
    assert stream.feed(raw + b"\n") == []
    assert stream.garbage_count == 1 and len(stream.garbage[0]) < 400
    _still_reads(stream)


@pytest.mark.parametrize(("field", "value"), [
    ("duration", float("nan")), ("duration", -1), ("ops", 1e400), ("bytes_read", -1), ("caches_dropped", "no"),
    ("direct", 1), ("mode", 5), ("end", None), ("cpu_s", float("inf")), ("phases", "x"), ("phases", {"a": "b"}),
    ("phases", {"a": {"ops_per_s": float("nan")}}), ("python", ["3"]),
])
def test_a_summary_with_a_field_of_the_wrong_kind_is_garbage_not_a_result(field: str, value: Any) -> None:
    stream = AgentStream("c1")
    assert stream.feed(_line({**SUMMARY, field: value})) == []
    assert stream.summary is None and stream.garbage_count == 1
    (ok,) = stream.feed(_line(SUMMARY))
    assert isinstance(ok, AgentSummary) and stream.summary is ok


@pytest.mark.parametrize(("record", "field"), [
    ({"type": "start", "epoch": "soon"}, "epoch"), ({"type": "start", "epoch": 1e400}, "epoch"),
    ({"type": "listening", "port": 70000}, "port"), ({"type": "listening", "port": "22"}, "port"),
    ({"type": "listening"}, "port"), ({"type": "warning", "message": {"x": 1}}, "message"),
    ({"type": "hello", "dir": 5}, "dir"), ({"type": "cleanup", "problems": "rm -rf"}, "problems"),
    ({"type": "cleanup", "problems": [1, 2]}, "problem"), ({"type": "error", "message": "x", "errno": 1e400}, "errno"),
    ({"type": "error", "message": ["x"]}, "message"),
])
def test_a_notice_field_the_controller_reads_is_checked_where_it_is_parsed(record: dict[str, Any], field: str) -> None:
    stream = AgentStream("c1")
    assert stream.feed(_line(record)) == []
    assert stream.garbage_count == 1 and field in stream.garbage[0]


def test_good_notices_keep_their_checked_fields() -> None:
    events = AgentStream("c1").feed(_line({"type": "start", "epoch": 12.5}) + _line({"type": "listening", "port": 5201}))
    assert [e.data for e in events if isinstance(e, AgentNotice)] == [{"epoch": 12.5}, {"port": 5201}]


def test_a_line_without_end_is_dropped_at_the_bound_and_memory_stays_small() -> None:
    stream = AgentStream("c1")
    tracemalloc.start()
    try:
        for _ in range(64):  # 64 MiB without a newline
            stream.feed(b"x" * (1 << 20))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * MAX_LINE
    assert stream.garbage_count == 1  # one refused line, however long
    assert stream.feed(b"tail of the long line\n") == []  # its end is dropped with it
    _still_reads(stream)
    assert stream.close() == []


def test_telemetry_extras_must_be_finite_and_a_counter_that_went_back_is_dropped() -> None:
    stream = AgentStream("srv")
    base = {"type": "telemetry", "t": 5.0, "interval": 1.0, "cpu_busy": 0.5}
    assert stream.feed(_line({**base, "extra": {ARRIVED: float("inf")}})) == []
    assert stream.feed(_line({**base, "extra": [1]})) == []
    assert stream.feed(_line({**base, "extra": {str(i): 1 for i in range(1000)}})) == []
    assert stream.feed(_line({**base, "cpu_busy": -0.1})) == []
    (tel,) = stream.feed(_line({**base, "extra": {ARRIVED: 100.0, WOKEN: -400.0}}))
    assert isinstance(tel, HostTelemetry) and tel.extra == {ARRIVED: 100.0}
    assert stream.garbage_count == 4


@pytest.mark.parametrize("value", [*(v for v in BAD_NUMBERS if v != 1.5), -0.5, MAX_QUEUE * 1.01], ids=repr)  # 1.5: a queue
def test_a_disk_queue_that_is_not_a_bounded_non_negative_number_is_garbage(value: Any) -> None:
    # the agent sends a disk's queue as requests in flight, never below 0 (it skips a reset counter):
    # anything else is not its figure, and the whole line is counted as garbage, not half-read
    stream = AgentStream("srv")
    base = {"type": "telemetry", "t": 5.0, "interval": 1.0, "cpu_busy": 0.5}
    assert stream.feed(_line({**base, "extra": {"disk.md0.util": 0.97, "disk.md0.queue": value}})) == []
    assert stream.garbage_count == 1 and "disk.md0.queue" in stream.garbage[0]
    (tel,) = stream.feed(_line({**base, "extra": {"disk.md0.util": 0.97, "disk.md0.queue": 1.9, "disk.sda.queue": 0}}))
    assert isinstance(tel, HostTelemetry) and tel.extra == {"disk.md0.util": 0.97, "disk.md0.queue": 1.9, "disk.sda.queue": 0.0}
    _still_reads(stream)


@pytest.mark.parametrize("value", [float("inf"), float("nan"), -3.0, True, "12", None], ids=repr)
def test_a_stored_disk_queue_that_is_not_a_count_of_requests_is_not_evidence(value: Any) -> None:
    digest = digest_mapping({"extra": {"disk.md0.util": 0.97, "disk.md0.queue": value}})
    assert digest.disk_util == 0.97 and digest.disk_queue is None


@settings(max_examples=300, deadline=None)
@given(value=st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
), field=st.sampled_from(["t", "interval", "bytes_read", "ops", "lat_p99_ms", "phase", "count", "type"]))
def test_any_json_in_any_sample_field_gives_a_sound_sample_or_garbage(value: Any, field: str) -> None:
    stream = AgentStream("c1")
    events = stream.feed(_line({**GOOD_SAMPLE, field: value}))
    for e in events:
        if isinstance(e, Sample):
            assert all(isinstance(getattr(e, k), int) and getattr(e, k) >= 0 for k in ("bytes_read", "ops", "errors"))
            assert math.isfinite(e.t) and 0 < e.interval <= MAX_INTERVAL_S
    assert len(events) + stream.garbage_count == 1


# ------------------------------------------------------------------ fio status
def _doc(read: Any = 4096, ops: Any = 1, runtime: Any = 250, stamp: Any = 1_000_250, **job: Any) -> dict[str, Any]:
    return {"timestamp_ms": stamp, "jobs": [{"jobname": "j", "read": {"io_bytes": read, "total_ios": ops},
                                             "write": {"io_bytes": 0, "total_ios": 0}, "job_runtime": runtime, **job}]}


def _started() -> FioStatusSampler:
    sampler = FioStatusSampler("c1")
    assert len(sampler.feed(_doc())) == 1
    return sampler


@pytest.mark.parametrize("doc", [
    _doc(stamp=float("inf")), _doc(stamp=float("nan")), _doc(stamp="now"), _doc(stamp=1e300),
    _doc(stamp=1_000_250 + (MAX_GAP_S + 1) * 1000), _doc(read=float("inf")), _doc(read=-1), _doc(read="8192"),
    _doc(read=1), _doc(ops=True), _doc(runtime=[1]), _doc(runtime=-5), _doc(error="EIO"), _doc(error=1e400),
    {"timestamp_ms": 1_000_500, "jobs": ["x"]}, {"timestamp_ms": 1_000_500, "jobs": [{"read": "x"}]},
    {"timestamp_ms": 1_000_500, "jobs": "x"}, {"timestamp_ms": 1_000_500, "jobs": [None]},
    {"timestamp_ms": 1_000_500, "jobs": [{}] * 5000},
], ids=lambda d: json.dumps(d, allow_nan=True, default=str)[:60])
def test_a_fio_status_document_that_is_not_fios_changes_nothing_and_returns(doc: dict[str, Any]) -> None:
    sampler = _started()
    before = sampler.counters
    assert sampler.feed(doc) == []
    assert sampler.counters == before and sampler.garbage_count == 1 and sampler.last is not doc
    assert len(sampler.feed(_doc(read=8192, ops=2, stamp=1_000_500))) == 1  # the next good one counts


def test_a_fio_job_error_is_read_only_from_a_good_document() -> None:
    assert job_errors(_doc(error=28)) == [("j", 28)]
    with pytest.raises(BadRecord):
        job_errors(_doc(error="28"))


def test_a_fio_status_document_without_end_is_dropped_at_the_bound() -> None:
    stream = FioStatusStream()
    stream.feed("{")
    line = "  " + "x" * 4096
    for _ in range((32 << 20) // 4096 + 2):
        stream.feed(line)
    assert stream.feed("}") is None
    assert any("larger than" in n for n in stream.notes)
    assert stream.feed("{") is None and stream.feed('"jobs": []') is None and stream.feed("}") == {"jobs": []}


def test_fio_notes_are_bounded() -> None:
    stream = FioStatusStream()
    for i in range(10_000):
        stream.feed(f"fio: warning {i}")
    assert len(stream.notes) == 100


@pytest.mark.parametrize("text", [
    "", "fio: command not found", "[" * 100_000, '{"jobs": "x"}', '{"jobs": [1]}', '{"jobs": []}',
    '{"jobs": [{"read": {"bw": 1}}]}', '{"jobs": [{"error": 5, "jobname": "j"}]}',
    '{"jobs": [{"read": {"io_bytes": 1e400, "total_ios": 1, "runtime": 1}, "write": {"io_bytes": 0, "total_ios": 0, "runtime": 1}}]}',
    '{"jobs": [{"read": {"io_bytes": 1, "total_ios": 1, "runtime": 1, "clat_ns": {"percentile": {"50.000000": "x"}}},'
    ' "write": {"io_bytes": 0, "total_ios": 0, "runtime": 1}}]}',
    '{"jobs": [{"read": {"io_bytes": 1, "total_ios": 1, "runtime": 1}, "write": {"io_bytes": 0, "total_ios": 0, "runtime": 1},'
    ' "usr_cpu": "lots"}]}',
    '{"global options": [], "jobs": [{"read": {"io_bytes": 1, "total_ios": 1, "runtime": 1}, "write": {"io_bytes": 0, "total_ios": 0, "runtime": 1}}]}',
], ids=lambda t: t[:40])
def test_a_fio_result_that_is_not_fios_is_one_clear_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="fio"):
        parse_fio_json(text, "c1")


# ------------------------------------------------------------------ readers
@pytest.mark.parametrize("raw", ["[" * 100_000, '{"a":' * 100_000, "NaN-ish", "", "\x00"])
def test_loads_turns_every_failure_into_bad_record(raw: str) -> None:
    with pytest.raises(BadRecord):
        loads(raw)


@pytest.mark.parametrize("value", BAD_NUMBERS, ids=repr)
def test_count_takes_only_whole_non_negative_numbers(value: Any) -> None:
    with pytest.raises(BadRecord):
        count(value, "x")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 10**400, "1", None, True])
def test_finite_refuses_what_is_not_a_finite_number(value: Any) -> None:
    with pytest.raises(BadRecord):
        finite(value, "x")


@pytest.mark.parametrize("value", [float("inf"), float("nan"), -3.0, True, "12"])
def test_a_stored_telemetry_figure_that_is_not_a_rate_is_not_evidence(value: Any) -> None:
    assert digest_mapping({"extra": {ARRIVED: value, WOKEN: 5.0}}).arrived_per_s is None


# ------------------------------------------------------------------ discovery
def _facts_output(**sections: str) -> str:
    return "".join(f"{MARKER}{name}@@\n{body}\n" for name, body in {**sections, "end": ""}.items())


@pytest.mark.parametrize(("section", "body"), [
    ("ip_addr", "[" * 100_000), ("ip_addr", '[{"ifname": "e0", "mtu": 1e400, "addr_info": [{"local": "-oremount"}]}]'),
    ("ip_addr", '[{"ifname": ["e0"], "mtu": "9000"}]'), ("ip_addr", '{"ifname": "e0"}'),
    ("meminfo", "MemTotal: 1e400 kB"), ("meminfo", "MemTotal: -5 kB"), ("nfsd_threads", "-5"),
    ("nfsd_threads", "9" * 5000), ("cpu", "1e400"), ("page_size", "-4096"),
    ("md_sysfs", "md0|stripe_cache_size|-1\nmd0|chunk_size|1e400"), ("mdstat", "md0 : active raid5 " + "x[1] " * 10_000),
    ("nfsd_pool_stats", "# pool packets-arrived sockets-enqueued threads-woken threads-timedout\n0 -1 -5 1e400 NaN"),
    ("mountstats", "device x mounted on /m with fstype nfs statvers=1.1\n\tevents: " + "9" * 5000),
    ("os_release", 'PRETTY_NAME="\x1b]0;owned\x07"'), ("uname", "\x00" * 1000), ("tcp", "sl local\n" + "0: zz:zz" * 1000),
])
def test_discovery_output_never_raises_and_names_what_it_could_not_read(section: str, body: str) -> None:
    facts = build_host_facts("h", _facts_output(**{section: body}))
    assert facts.host == "h"
    assert all(m is None or m > 0 for m in (n.mtu for n in facts.nics))
    assert facts.mem_total_kb is None or facts.mem_total_kb >= 0


class _Names:
    def get(self, name: str) -> str:
        return name


def test_one_host_whose_answer_cannot_be_read_fails_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    import app.discovery as discovery

    good = build_host_facts("good", _facts_output(uname="Linux good 6.1 x86_64"))

    async def discover_host(conn: str) -> Any:
        if conn == "bad":
            raise ValueError("malformed ip -j addr")
        return good

    monkeypatch.setattr(discovery, "discover_host", discover_host)
    results: list[Discovery] = asyncio.run(discover_many(_Names(), ["bad", "good"]))  # type: ignore[arg-type]
    assert [r.ok for r in results] == [False, True]
    assert isinstance(results[0].error, UnreadableReply) and "bad: its answer could not be read" in str(results[0].error)
    assert "malformed ip -j addr" in str(results[0].error) and results[1].facts is good


def test_garbage_is_said_once_in_the_runs_warnings_with_the_first_line() -> None:
    from app.runner.agent_handle import garbage_warning

    assert garbage_warning("agent", 0, []) == []
    (said,) = garbage_warning("agent", 3, ['{"type": 7} (bad record type 7)', "x"])
    assert said.startswith("3 line(s) from the agent could not be read") and "bad record type 7" in said


# ------------------------------------------------------------------ latency histograms (issue 17)
HOSTILE_HISTOGRAMS: list[Any] = [
    "x", [1, 2], 5, True, {"-1": 1}, {"2048": 1}, {"99999": 1}, {"1e3": 1}, {" 12": 1}, {"12 ": 1}, {"\u0663": 1},
    {"": 1}, {"12": -1}, {"12": 1.5}, {"12": True}, {"12": "3"}, {"12": None}, {"12": [1]}, {"12": 1e400},
    {"12": float("nan")}, {"12": 2**70}, {str(k): 1 for k in range(2049)},
]


@pytest.mark.parametrize("hist", HOSTILE_HISTOGRAMS, ids=lambda h: repr(h)[:30])
def test_a_summary_histogram_that_is_not_one_is_garbage_not_a_result(hist: Any) -> None:
    stream = AgentStream("c1")
    assert stream.feed(_line({**SUMMARY, "lat_hist": hist})) == []
    assert stream.summary is None and stream.garbage_count == 1 and "lat_hist" in stream.garbage[0]
    (ok,) = stream.feed(_line({**SUMMARY, "lat_hist": {"0": 3, "2047": 1, "400": 0}}))
    assert isinstance(ok, AgentSummary) and ok.lat_hist == {0: 3, 2047: 1}  # empty buckets dropped


def test_a_summary_without_a_histogram_reads_as_none_not_empty() -> None:
    (ok,) = AgentStream("c1").feed(_line(SUMMARY))
    assert isinstance(ok, AgentSummary) and ok.lat_hist is None


def test_the_largest_histogram_a_host_may_send_is_read_in_bounded_time_and_memory() -> None:
    every = {str(k): 2**62 for k in range(2048)}
    tracemalloc.start()
    (ok,) = AgentStream("c1").feed(_line({**SUMMARY, "lat_hist": every}))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert isinstance(ok, AgentSummary) and ok.lat_hist is not None and len(ok.lat_hist) == 2048
    assert peak < 8 << 20


def _fio_with_bins(bins: Any) -> str:
    read = {"io_bytes": 4096, "total_ios": 1, "runtime": 1, "clat_ns": {"max": 5e6, "bins": bins}}
    return json.dumps({"jobs": [{"read": read, "write": {"io_bytes": 0, "total_ios": 0, "runtime": 1}}]}, allow_nan=True)


@pytest.mark.parametrize("bins", [
    "x", [1], {"-5": 1}, {"1e6": 1}, {"5000": -1}, {"5000": 0.5}, {"5000": "1"}, {"5000": float("inf")},
    {"9" * 20: 1}, {str(k): 1 for k in range(4097)},
], ids=lambda b: repr(b)[:30])
def test_fio_bins_that_are_not_fios_make_the_result_one_clear_value_error(bins: Any) -> None:
    with pytest.raises(ValueError, match="fio"):
        parse_fio_json(_fio_with_bins(bins), "c1")


def test_fio_bins_become_the_agents_buckets_and_plain_json_gives_no_histogram() -> None:
    from experiments.latency import bucket_of_us

    summary = parse_fio_json(_fio_with_bins({"1000000": 7, "2000": 3}), "c1")  # 1 ms and 2 µs
    assert summary.lat_hist == {bucket_of_us(1000.0): 7, bucket_of_us(2.0): 3}
    plain = json.loads(_fio_with_bins({}))
    del plain["jobs"][0]["read"]["clat_ns"]["bins"]
    assert parse_fio_json(json.dumps(plain), "c1").lat_hist is None  # no bins: no honest histogram
