"""The real agent's network ceiling test, telemetry and aligned start (3.12 and 3.6)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from experiments.agent_launch import STOP_LINE, go_line
from experiments.agent_protocol import AgentStream
from tests.unit.experiments.test_agent_harness import AgentRun, python_params

MIB = 1 << 20


@pytest.fixture(params=python_params())
def python(request: pytest.FixtureRequest) -> str:
    return request.param


def test_tcp_source_to_sink_moves_the_same_bytes(python: str) -> None:
    sink = AgentRun(python, {"mode": "tcp_sink", "bind": "127.0.0.1", "port": 0, "streams": 2, "interval": 0.05})
    port = sink.until("listening")["port"]
    assert port > 0
    source = AgentRun(python, {"mode": "tcp_source", "host": "127.0.0.1", "port": port, "streams": 2,
                               "size": 64 * MIB, "interval": 0.05})
    sent = source.until("summary")
    got = sink.until("summary")  # the sink ends once every stream has closed
    source.rest()
    sink.rest()
    assert source.wait() == 0 and sink.wait() == 0
    assert sent["bytes_written"] == 64 * MIB == got["bytes_read"]
    assert sum(s["bytes_read"] for s in sink.of_type("sample")) == 64 * MIB
    assert sent["cache_mode"] == "n/a"


def test_tcp_source_without_a_listener_says_so(python: str) -> None:
    sink = AgentRun(python, {"mode": "tcp_sink", "bind": "127.0.0.1", "port": 0})
    port = sink.until("listening")["port"]
    sink.send(STOP_LINE)
    sink.rest()
    sink.wait()  # the port is free again: nothing listens there now
    source = AgentRun(python, {"mode": "tcp_source", "host": "127.0.0.1", "port": port, "size": MIB})
    source.rest()
    assert source.wait() == 1
    assert "connection refused" in source.of_type("error")[0]["message"]


def test_telemetry_streams_host_counters_until_stopped(python: str) -> None:
    cfg = {"mode": "telemetry", "devices": ["vda", "no-such-disk"], "nics": ["lo"], "mounts": ["/no/such/mount"],
           "interval": 0.05}
    run = AgentRun(python, cfg)
    lines = [run.until("telemetry") for _ in range(4)]
    run.close_stdin()
    summary = run.until("summary")
    run.rest()
    assert run.wait() == 0
    warnings = " ".join(w["message"] for w in run.of_type("warning"))
    assert "no-such-disk" in warnings and "/no/such/mount" in warnings and "lo " not in warnings
    assert summary["end"] == "stopped" and summary["telemetry_samples"] >= 4
    for line in lines:
        assert 0.0 <= line["cpu_busy"] <= 1.0
        assert line["interval"] > 0 and line["net_rx_bps"] >= 0
    assert [x["t"] for x in lines] == sorted(x["t"] for x in lines)
    # the controller's reader takes every line it sent (its hello has no directory: null)
    stream = AgentStream("lo")
    list(stream.feed(b"".join(json.dumps(line).encode() + b"\n" for line in run.seen)))
    assert stream.garbage_count == 0, stream.garbage


def test_wait_go_holds_the_run_until_the_go_time(python: str, tmp_path: Path) -> None:
    cfg = {"mode": "seq_write", "dir": str(tmp_path), "file_size": MIB, "wait_go": True}
    run = AgentRun(python, cfg)
    run.until("ready")
    go_at = time.time() + 0.3
    run.send(go_line(go_at))
    start = run.until("start")
    run.until("summary")
    run.rest()
    assert run.wait() == 0
    assert start["epoch"] >= go_at  # never before the aligned start
    assert [s["type"] for s in run.seen].index("start") < [s["type"] for s in run.seen].index("sample")


def test_stop_while_waiting_for_go_ends_cleanly(python: str, tmp_path: Path) -> None:
    run = AgentRun(python, {"mode": "seq_read", "dir": str(tmp_path), "file_size": MIB, "wait_go": True})
    run.until("ready")
    run.close_stdin()
    summary = run.until("summary")
    run.rest()
    assert run.wait() == 0
    assert summary["end"] == "stopped" and summary["bytes_read"] == 0
    assert not list(tmp_path.iterdir())


def test_an_agent_waiting_to_start_sends_a_heartbeat_every_interval(python: str, tmp_path: Path) -> None:
    # The controller tells a host that is slow to prepare from one that died by these lines.
    run = AgentRun(python, {"mode": "small_files", "dir": str(tmp_path), "count": 10, "wait_go": True, "interval": 0.1})
    run.until("ready")
    time.sleep(0.6)
    run.close_stdin()
    run.until("summary")
    run.rest()
    assert run.wait() == 0
    beats = [s for s in run.seen if s["type"] == "progress"]
    assert len(beats) >= 4, [s["type"] for s in run.seen]
    assert all(b["phase"] == "prepare" and b["total"] == 0 for b in beats)
