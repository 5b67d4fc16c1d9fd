"""The real agent, started with the real bootstrap, under Python 3.12 and 3.6: I/O workloads."""

from __future__ import annotations

import errno
import os
import signal
from pathlib import Path

import pytest

from experiments.agent_protocol import AgentStream
from tests.unit.experiments.test_agent_harness import AgentRun, leftovers, python_params, run_to_end

MIB = 1 << 20
IS_ROOT = os.geteuid() == 0


@pytest.fixture(params=python_params())
def python(request: pytest.FixtureRequest) -> str:
    return request.param


def _sum(run: AgentRun, key: str) -> int:
    return sum(s[key] for s in run.of_type("sample"))


def test_samples_stream_while_running_and_add_up_to_the_summary(python: str, tmp_path: Path) -> None:
    cfg = {"mode": "seq_write", "dir": str(tmp_path), "file_size": 4 * MIB, "block_size": MIB,
           "loop": True, "duration": 0.6, "interval": 0.05}
    run = AgentRun(python, cfg)
    first = run.until("sample")
    assert run.proc.poll() is None, "the first sample must arrive while the agent still runs"
    assert first["phase"] == "write" and first["interval"] > 0
    run.until("summary")
    run.rest()
    assert run.wait() == 0
    samples = run.of_type("sample")
    summary = run.of_type("summary")[0]
    assert len(samples) >= 3
    assert _sum(run, "bytes_written") == summary["bytes_written"] > 0
    assert _sum(run, "ops") == summary["ops"]
    assert summary["end"] == "duration"
    assert [s["t"] for s in samples] == sorted(s["t"] for s in samples)
    assert run.of_type("cleanup")[0]["removed"] is True
    assert leftovers(tmp_path) == []


def test_seq_write_file_sizes_on_disk_match_the_totals(python: str, tmp_path: Path) -> None:
    cfg = {"mode": "seq_write", "dir": str(tmp_path), "file_size": 6 * MIB, "block_size": 512 * 1024,
           "jobs": 2, "hold_files": True}
    run = AgentRun(python, cfg)
    summary = run.until("summary")
    held = Path(run.until("holding")["dir"])
    sizes = sorted(p.stat().st_size for p in held.iterdir())
    assert sizes == [6 * MIB, 6 * MIB]
    assert summary["bytes_written"] == sum(sizes) == _sum(run, "bytes_written")
    assert summary["cache_mode"] == "fsync" and summary["python"]
    run.close_stdin()  # the controller releases the files
    assert run.until("cleanup")["removed"] is True
    assert run.wait() == 0
    assert leftovers(tmp_path) == []


def test_reported_bytes_never_exceed_what_is_on_disk_during_the_run(python: str, tmp_path: Path) -> None:
    cfg = {"mode": "seq_write", "dir": str(tmp_path), "file_size": 16 * 1024 * MIB, "block_size": MIB,
           "fsync": False, "interval": 0.05}
    run = AgentRun(python, cfg)
    workdir = Path(run.until("hello")["dir"])
    reported = 0
    for _ in range(4):
        reported += run.until("sample")["bytes_written"]
        data = workdir / "seqw.0"  # a first sample may come before the file is created
        on_disk = data.stat().st_size if data.exists() else 0
        assert reported <= on_disk
    run.close_stdin()
    summary = run.until("summary")
    assert summary["end"] == "stopped" and summary["stop_reason"] == "stdin closed"
    assert summary["bytes_written"] % MIB == 0 and summary["bytes_written"] >= reported
    run.rest()
    assert run.wait() == 0
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("how", ["close_stdin", "sigterm", "stop_line"])
def test_cancel_stops_and_leaves_no_file(python: str, tmp_path: Path, how: str) -> None:
    cfg = {"mode": "small_files", "dir": str(tmp_path), "count": 10_000_000, "file_size": 100, "interval": 0.05}
    run = AgentRun(python, cfg)
    run.until("sample")
    assert leftovers(tmp_path), "files exist while it runs"
    if how == "close_stdin":
        run.close_stdin()
    elif how == "sigterm":
        run.proc.send_signal(signal.SIGTERM)
    else:
        run.send(b"stop\n")
    summary = run.until("summary")
    run.rest()
    assert run.wait() == 0
    assert summary["end"] == "stopped"
    assert summary["stop_reason"] == {"close_stdin": "stdin closed", "sigterm": "signal 15", "stop_line": "stop command"}[how]
    assert summary["phases"]["create"]["ops"] < 10_000_000
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("where", ["main", "workload"])
def test_a_crash_gives_an_error_line_and_a_nonzero_exit(python: str, tmp_path: Path, where: str) -> None:
    run, code = run_to_end(python, {"mode": "seq_write", "dir": str(tmp_path), "file_size": MIB, "debug_crash": where})
    errors = run.of_type("error")
    assert code == 2
    assert len(errors) == 1 and "crashed" in errors[0]["message"] and "RuntimeError" in errors[0]["traceback"]
    assert not run.of_type("summary")
    assert leftovers(tmp_path) == []


def test_bad_config_and_missing_directory_are_explained(python: str, tmp_path: Path) -> None:
    run, code = run_to_end(python, {"mode": "nonsense", "dir": str(tmp_path)})
    assert code == 1 and "unknown workload mode" in run.of_type("error")[0]["message"]
    run, code = run_to_end(python, {"mode": "seq_write", "dir": str(tmp_path / "absent")})
    err = run.of_type("error")[0]
    assert code == 1 and err["errno"] == 2 and "mount the export" in err["message"]
    run, code = run_to_end(python, {"mode": "seq_write", "dir": str(tmp_path), "file_size": 1000, "block_size": 4096})
    assert code == 1 and "file_size" in run.of_type("error")[0]["message"]


@pytest.fixture
def small_tmpfs(tmp_path: Path):
    if not IS_ROOT:
        pytest.skip("mounting a small tmpfs to provoke ENOSPC needs root")
    mnt = tmp_path / "full"
    mnt.mkdir()
    if os.system(f"mount -t tmpfs -o size=2m nfs-tuner-test {mnt} 2>/dev/null") != 0:
        pytest.skip("cannot mount tmpfs here (no CAP_SYS_ADMIN in this container)")
    yield mnt
    os.system(f"umount {mnt}")


def test_a_full_export_ends_with_the_enospc_message(python: str, small_tmpfs: Path) -> None:
    run, code = run_to_end(python, {"mode": "seq_write", "dir": str(small_tmpfs), "file_size": 16 * MIB,
                                    "block_size": 256 * 1024, "interval": 0.05})
    errors = run.of_type("error")
    assert code == 1
    free = errors[0]["free_bytes"]  # read when the write failed, before the files went
    assert 0 <= free < 2 * MIB
    assert errors[0]["errno"] == 28 and errors[0]["message"].startswith(f"the export is full ({free // MIB} MiB free) while")
    assert sum(s["errors"] for s in run.of_type("sample")) == 1  # the failing write is counted and kept
    assert run.of_type("cleanup")[0]["removed"] is True
    assert leftovers(small_tmpfs) == []


def test_seq_read_reads_the_whole_data_set_with_honest_caching(python: str, tmp_path: Path) -> None:
    run, code = run_to_end(python, {"mode": "seq_read", "dir": str(tmp_path), "file_size": 8 * MIB, "jobs": 2})
    summary = run.of_type("summary")[0]
    assert code == 0
    assert summary["bytes_read"] == 16 * MIB == _sum(run, "bytes_read")
    assert summary["bytes_written"] == 0
    assert run.of_type("ready") and summary["prepare_s"] > 0
    assert summary["cache_mode"] == ("dropped" if IS_ROOT else "fadvise")
    assert leftovers(tmp_path) == []


def test_o_direct_reads_report_o_direct(python: str, tmp_path: Path) -> None:
    run, code = run_to_end(python, {"mode": "seq_read", "dir": str(tmp_path), "file_size": 4 * MIB, "direct": True})
    summary = run.of_type("summary")[0]
    assert code == 0 and summary["bytes_read"] == 4 * MIB
    if summary.get("o_direct_unsupported"):
        pytest.skip("this file system refuses O_DIRECT")
    assert summary["direct"] is True and summary["cache_mode"] == "o_direct"


def test_rewrite_overwrites_in_place(python: str, tmp_path: Path) -> None:
    run, code = run_to_end(python, {"mode": "rewrite", "dir": str(tmp_path), "file_size": 4 * MIB, "hold_files": False})
    summary = run.of_type("summary")[0]
    assert code == 0 and summary["bytes_written"] == 4 * MIB and summary["phases"]["rewrite"]["bytes"] == 4 * MIB


@pytest.mark.parametrize(("mode", "share"), [("rand_read", 1.0), ("rand_write", 0.0), ("mixed", 0.75)])
def test_random_workloads_move_io_size_in_blocks(python: str, tmp_path: Path, mode: str, share: float) -> None:
    cfg = {"mode": mode, "dir": str(tmp_path), "file_size": 4 * MIB, "io_size": 2 * MIB, "block_size": 4096, "jobs": 4}
    run, code = run_to_end(python, cfg)
    summary = run.of_type("summary")[0]
    moved = summary["bytes_read"] + summary["bytes_written"]
    assert code == 0 and moved == 2 * MIB and summary["ops"] == 512
    if share == 1.0:
        assert summary["bytes_written"] == 0
    elif share == 0.0:
        assert summary["bytes_read"] == 0
    else:  # 512 draws at 75 %: far from both ends
        assert 0.6 < summary["bytes_read"] / moved < 0.9
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("layout", ["flat", "tree"])
def test_small_files_phases_each_touch_every_file(python: str, tmp_path: Path, layout: str) -> None:
    cfg = {"mode": "small_files", "dir": str(tmp_path), "count": 200, "file_size": 1000, "layout": layout,
           "fanout": 3, "jobs": 2, "fsync": True}
    run, code = run_to_end(python, cfg)
    phases = run.of_type("summary")[0]["phases"]
    assert code == 0
    assert list(phases) == ["create", "stat", "read", "delete"]
    dirs = 1 if layout == "flat" else 9
    assert phases["create"]["ops"] == 200 + dirs and phases["create"]["bytes"] == 200 * 1000
    assert phases["stat"]["ops"] == phases["read"]["ops"] == phases["delete"]["ops"] == 200
    assert phases["read"]["bytes"] == 200 * 1000
    assert {s["phase"] for s in run.of_type("sample")} <= set(phases)
    assert leftovers(tmp_path) == []


def test_tree_extracts_finds_and_removes_the_whole_tree(python: str, tmp_path: Path) -> None:
    run, code = run_to_end(python, {"mode": "tree", "dir": str(tmp_path), "files": 300})
    summary = run.of_type("summary")[0]
    phases = summary["phases"]
    entries = summary["tree_files"] + summary["tree_dirs"]
    assert code == 0 and summary["tree_files"] == 300 and summary["tree_dirs"] > 5
    assert phases["extract"]["ops"] == entries + 1  # + the tree's root
    assert phases["extract"]["bytes"] == summary["tree_bytes"]
    assert phases["find"]["ops"] == entries
    assert phases["remove"]["ops"] == entries
    assert leftovers(tmp_path) == []


def test_dir_scaling_samples_carry_the_directory_size(python: str, tmp_path: Path) -> None:
    run, code = run_to_end(python, {"mode": "dir_scaling", "dir": str(tmp_path), "count": 3000, "interval": 0.05})
    creates = [s for s in run.of_type("sample") if s["phase"] == "create"]
    deletes = [s for s in run.of_type("sample") if s["phase"] == "delete"]
    assert code == 0 and creates and deletes
    counts = [s["count"] for s in creates]
    assert counts == sorted(counts) and counts[-1] == 3000
    assert sum(s["ops"] for s in creates) == 3000
    assert deletes[-1]["count"] == 0
    assert run.of_type("summary")[0]["cache_mode"] == "n/a"


def test_the_stream_parses_into_typed_events(python: str, tmp_path: Path) -> None:
    run, code = run_to_end(python, {"mode": "seq_write", "dir": str(tmp_path), "file_size": 2 * MIB})
    stream = AgentStream("c1")
    import json

    events = stream.feed(b"".join(json.dumps(x).encode() + b"\n" for x in run.seen))
    assert code == 0 and stream.summary is not None and not stream.garbage
    assert stream.summary.bytes_written == 2 * MIB
    assert stream.samples == len(run.of_type("sample")) and len(events) == len(run.seen)


def test_dir_scaling_refuses_a_count_the_export_has_no_inodes_for_before_creating_anything(python: str, tmp_path: Path) -> None:
    free = os.statvfs(tmp_path).f_favail
    assert os.statvfs(tmp_path).f_files, f"{tmp_path}'s filesystem counts no inodes: this test needs one that does"
    run, code = run_to_end(python, {"mode": "dir_scaling", "dir": str(tmp_path), "count": free + 10})
    err = run.of_type("error")[0]
    assert code == 1 and err["errno"] == errno.ENOSPC
    assert "free inodes" in err["message"] and f"needs {free + 10 + 2}" in err["message"]
    assert not run.of_type("sample") and leftovers(tmp_path) == []
