"""Pure functions inside the agent: /proc parsers, the synthetic tree, error advice, launch."""

from __future__ import annotations

import errno
import os
import json
import subprocess
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from experiments import agent
from experiments.agent_launch import BOOTSTRAP, bootstrap_argv, exit_message, payload
from tests.unit.experiments.test_agent_harness import PYTHONS, python_params

MOUNTSTATS = """\
device proc mounted on /proc with fstype proc
device srv:/export mounted on /mnt/test with fstype nfs4 statvers=1.1
\topts:\trw,vers=4.2,rsize=1048576,wsize=1048576
\txprt:\ttcp 0 0 1 0 0 100 100 0 100 0 2 0 0
\tper-op statistics
\t        NULL: 1 1 0 44 24 0 0 0 0
\t        READ: {r} {rt} 0 15200 104872000 50 {rrtt} {rexe} 0
\t       WRITE: 50 53 1 52435200 8000 20 1500 1600 0
device other:/x mounted on /mnt/other with fstype nfs statvers=1.1
\tper-op statistics
\t        READ: 7 7 0 1 1 1 1 1
"""


def test_mountstats_gives_rtt_and_retransmissions_per_interval() -> None:
    a = agent.parse_mountstats(MOUNTSTATS.format(r=100, rt=100, rrtt=3000, rexe=3100))
    b = agent.parse_mountstats(MOUNTSTATS.format(r=300, rt=305, rrtt=5000, rexe=5400))
    assert set(b) == {"/mnt/test", "/mnt/other"}  # proc is not NFS
    d = agent.mount_deltas("/mnt/test", a["/mnt/test"]["ops"], b["/mnt/test"]["ops"], 0.5)
    assert d["mount./mnt/test.read_ops_per_s"] == 400.0
    assert d["mount./mnt/test.read_rtt_ms"] == 10.0  # 2000 ms over 200 ops
    assert d["mount./mnt/test.read_exe_ms"] == 11.5
    assert d["mount./mnt/test.retrans"] == 5
    assert "mount./mnt/test.write_rtt_ms" not in d  # no writes in the interval


def test_proc_parsers() -> None:
    disk = agent.parse_diskstats("   8       0 sda 10 0 400 5 20 0 800 9 0 30 14 0 0 0 0\n 8 1 sda1 1 2\n")
    assert disk == {"sda": (400, 800, 30, 14)}  # field 14, weighted ms doing I/O, now read too
    net = agent.parse_net_dev("Inter-| hdr\n face |x\n  eth0: 1000 5 0 0 0 0 0 0 2000 6 0 0 0 0 0 0\n")
    assert net == {"eth0": (1000, 2000)}
    busy, total, iowait = agent.parse_cpu("cpu  10 0 10 70 10 0 0 0 0 0\ncpu0 1 1 1 1\n")
    assert (busy, total, iowait) == (20, 100, 10)
    pools = agent.parse_pool_stats("# pool packets-arrived sockets-enqueued threads-woken threads-timedout\n0 100 4 96 0\n1 50 1 49 0\n")
    assert pools == {"packets_arrived": 150, "sockets_enqueued": 5, "threads_woken": 145, "threads_timedout": 0}
    assert agent.parse_pool_stats("garbage") == {}


DISKSTATS = "   9       0 md0 {r} 0 {r}0 0 0 0 0 0 0 {io} {w} 0 0 0 0\n 253 2 dm-2 5 0 40 0 0 0 0 0 0 {io} {w}\n"
SHORT = "   8       0 sdz 1 0 8 0 0 0 0 0 0 {io}\n"  # a kernel that gives fewer fields: no weighted time


def _telemetry_delta(before: str, after: str, dt: float) -> dict[str, float]:
    """The extras of one telemetry line between two /proc/diskstats readings ``dt`` seconds apart."""
    tel = agent.Telemetry.__new__(agent.Telemetry)
    tel.devices, tel.nics, tel.mounts = ["md0", "dm-2", "sdz"], [], []
    snap = {"net": {}, "cpu": (0, 0, 0), "pool": {}, "threads": "", "mounts": {}}
    a = {**snap, "disk": agent.parse_diskstats(before), "t": 10.0}
    b = {**snap, "disk": agent.parse_diskstats(after), "t": 10.0 + dt}
    extra: dict[str, float] = agent.Telemetry.delta(tel, a, b, dt)["extra"]
    return extra


def test_telemetry_gives_each_disks_queue_beside_its_utilisation() -> None:
    # 500 ms of wall time: the device had a request in flight 485 ms of it (97 %) and 950 request-ms
    # of weighted time, so 1.9 requests in flight on average, which io_ticks' 97 % cannot tell apart from 30
    extra = _telemetry_delta(
        DISKSTATS.format(r=100, io=1000, w=5000) + SHORT.format(io=7),
        DISKSTATS.format(r=150, io=1485, w=5950) + SHORT.format(io=8),
        0.5,
    )
    assert extra["disk.md0.util"] == 0.97 and extra["disk.md0.queue"] == 1.9
    assert extra["disk.dm-2.queue"] == 1.9 and "disk.sdz.queue" not in extra and extra["disk.sdz.util"] == 0.002
    # the weighted counter went backwards (the device was removed and came back): no queue that interval
    reset = _telemetry_delta(DISKSTATS.format(r=100, io=1000, w=5000), DISKSTATS.format(r=150, io=1485, w=40), 0.5)
    assert "disk.md0.queue" not in reset and reset["disk.md0.util"] == 0.97


def test_the_disk_queue_is_the_same_under_python_36() -> None:
    code = ("import json,sys;sys.path.insert(0,'experiments');import agent;"
            "t=agent.Telemetry.__new__(agent.Telemetry);t.devices,t.nics,t.mounts=['md0'],[],[];"
            "s={'net':{},'cpu':(0,0,0),'pool':{},'threads':'','mounts':{}};"
            "a=dict(s,disk=agent.parse_diskstats(sys.argv[1]),t=1.0);b=dict(s,disk=agent.parse_diskstats(sys.argv[2]),t=1.5);"
            "print(json.dumps(t.delta(a,b,0.5)['extra']))")  # fmt: skip
    before, after = DISKSTATS.format(r=100, io=1000, w=5000), DISKSTATS.format(r=150, io=1485, w=5950)
    for py in PYTHONS:
        out = subprocess.run([py, "-c", code, before, after], capture_output=True, text=True, check=True, timeout=60)
        assert json.loads(out.stdout) == {"disk.md0.util": 0.97, "disk.md0.queue": 1.9}


def test_synthetic_tree_is_deterministic_and_nested() -> None:
    dirs, files = agent.synthetic_tree(2000, seed=7)
    again = agent.synthetic_tree(2000, seed=7)
    assert (dirs, files) == again
    assert agent.synthetic_tree(2000, seed=8) != again
    assert len(files) == 2000 and len({p for p, _ in files}) == 2000
    assert max(d.count("/") for d in dirs) >= 3  # nested like a source tree
    sizes = sorted(s for _, s in files)
    assert 2000 < sizes[len(sizes) // 2] < 20000 and sizes[-1] <= 512 * 1024
    assert {p.rsplit("/", 1)[0] for p, _ in files if "/" in p} <= set(dirs)


def test_tree_is_the_same_under_python_36() -> None:
    code = "import json,sys;sys.path.insert(0,'experiments');import agent;print(json.dumps(agent.synthetic_tree(300,3)))"
    for py in PYTHONS:
        out = subprocess.run([py, "-c", code], capture_output=True, text=True, check=True, timeout=60)
        dirs, files = json.loads(out.stdout)
        assert (dirs, [tuple(f) for f in files]) == agent.synthetic_tree(300, 3)


def test_enospc_and_unknown_errors_are_explained() -> None:
    full = agent.explain(OSError(errno.ENOSPC, "No space left on device"), "writing /mnt/x")
    assert full.err_no == errno.ENOSPC and full.message.startswith("the export is full") and "/mnt/x" in full.message
    other = agent.explain(OSError(errno.EXDEV, "Invalid cross-device link"), "renaming a")
    assert other.message == "Invalid cross-device link while renaming a"


def test_percentile_is_nearest_rank() -> None:
    values = [float(i) for i in range(1, 101)]
    assert agent.percentile(values, 0.5) == 50.0
    assert agent.percentile(values, 0.99) == 99.0
    assert agent.percentile([], 0.99) == 0.0


def test_payload_layout_and_bootstrap() -> None:
    data = payload({"mode": "seq_write", "dir": "/x"})
    length, rest = data.split(b"\n", 1)
    src = rest[: int(length)]
    assert src == agent.__loader__.get_data(agent.__file__)  # the file itself, unchanged
    assert json.loads(rest[int(length) :]) == {"mode": "seq_write", "dir": "/x"}
    assert bootstrap_argv("/usr/bin/python3") == ["/usr/bin/python3", "-u", "-I", "-S", "-c", BOOTSTRAP]
    assert "\n" not in BOOTSTRAP and '"' not in BOOTSTRAP
    with pytest.raises(ValueError):
        payload({"x": float("nan")})


def test_exit_messages_name_the_cause() -> None:
    assert "not found" in (exit_message(127, "python3") or "")
    assert exit_message(1) is None and exit_message(0) is None
    assert "signal 9" in (exit_message(-9) or "")


@pytest.mark.parametrize("python", python_params())
def test_missing_or_garbage_config_gives_an_error_line(python: str) -> None:
    src = agent.__loader__.get_data(agent.__file__)
    for tail in (b"", b"not json\n", b"[1,2]\n"):
        out = subprocess.run(bootstrap_argv(python), input=b"%d\n" % len(src) + src + tail,
                             capture_output=True, timeout=60)
        lines = [json.loads(x) for x in out.stdout.splitlines()]
        assert out.returncode == 1, out.stderr
        assert lines[-1]["type"] == "error" and lines[-1]["message"]


def _stuck_ctx(workdir: str | None) -> SimpleNamespace:
    """What sample_loop reads of a workload whose call never returns (done never set), told to stop."""
    ctl = agent.Control()
    ctl.request_stop("stop command")
    out = SimpleNamespace(emit=lambda rec: None)
    return SimpleNamespace(interval=0.05, wake=threading.Event(), t0=None, cut_lock=threading.Lock(), cuts=[],
                           done=threading.Event(), ctl=ctl, out=out, progress_done=0, progress_total=0, stall_s=0,
                           workdir=workdir)  # fmt: skip


def test_a_stop_waits_on_a_slow_call_while_the_file_system_answers_and_not_on_a_dead_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(agent, "STOP_GRACE_S", 0.2)
    monkeypatch.setattr(agent, "SLOW_STOP_MAX_S", 1.5)
    monkeypatch.setattr(agent, "PROBE_S", 0.5)
    monkeypatch.setattr(agent, "HANG_S", 0.4)
    monkeypatch.setattr(agent, "unwritten_kb", lambda: 1000)  # no dirty pages drain (this machine's own may)
    answering, dead = _stuck_ctx(str(tmp_path)), _stuck_ctx(None)  # no directory: nothing to probe
    started = time.monotonic()
    assert agent.sample_loop(answering, False) is False
    waited = time.monotonic() - started
    started = time.monotonic()
    assert agent.sample_loop(dead, False) is False
    gave_up = time.monotonic() - started
    assert waited >= 1.5 > gave_up  # the answering export was waited on to the cap; the other given up at the grace
    assert "although the export answers" in agent.stop_failure(answering)
    assert "a file system call hangs" in agent.stop_failure(dead)
    assert agent.fs_answers(str(tmp_path)) and not agent.fs_answers(None)


def test_a_stop_waits_on_a_file_system_that_answers_late_and_gives_up_on_one_that_never_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A saturated server answers a statvfs after the probe's wait, behind the writes queued on its connection: late
    answers keep the stop waiting (to the slow cap), as a hung file system's none do not (given up after HANG_S)."""
    monkeypatch.setattr(agent, "STOP_GRACE_S", 0.2)
    monkeypatch.setattr(agent, "SLOW_STOP_MAX_S", 2.5)
    monkeypatch.setattr(agent, "PROBE_S", 0.3)
    monkeypatch.setattr(agent, "HANG_S", 0.8)
    monkeypatch.setattr(agent, "unwritten_kb", lambda: 1000)
    real_statvfs = os.statvfs
    late = threading.Event()  # set: the file system hangs (its statvfs never returns while the test runs)

    def statvfs(path: str) -> os.statvfs_result:
        if late.is_set():
            threading.Event().wait(30)
        time.sleep(0.45)  # answers, but after the probe stopped waiting
        return real_statvfs(path)

    monkeypatch.setattr(agent.os, "statvfs", statvfs)
    started = time.monotonic()
    assert agent.sample_loop(_stuck_ctx(str(tmp_path)), False) is False
    slow = time.monotonic() - started
    late.set()
    started = time.monotonic()
    assert agent.sample_loop(_stuck_ctx(str(tmp_path)), False) is False
    hung = time.monotonic() - started
    assert slow >= 2.5 > hung  # waited on to the cap while late answers came; given up on the silent one


def test_a_stop_waits_on_a_client_whose_dirty_pages_drain_though_no_probe_answers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A flush at the end of random writes to a saturated server: every statvfs waits behind it, but the host's
    dirty pages shrink, so the server is taking writes; when they stop shrinking and nothing answers, it is not."""
    monkeypatch.setattr(agent, "STOP_GRACE_S", 0.2)
    monkeypatch.setattr(agent, "SLOW_STOP_MAX_S", 2.0)
    monkeypatch.setattr(agent, "PROBE_S", 0.1)
    monkeypatch.setattr(agent, "HANG_S", 0.6)
    monkeypatch.setattr(agent, "fs_answers", lambda path: False)
    left = iter(range(10**6, 0, -1000))
    monkeypatch.setattr(agent, "unwritten_kb", lambda: next(left))
    started = time.monotonic()
    assert agent.sample_loop(_stuck_ctx(str(tmp_path)), False) is False
    draining = time.monotonic() - started
    monkeypatch.setattr(agent, "unwritten_kb", lambda: 5000)
    started = time.monotonic()
    assert agent.sample_loop(_stuck_ctx(str(tmp_path)), False) is False
    stuck = time.monotonic() - started
    assert draining >= 2.0 > stuck  # waited on to the cap while pages drained; given up on a standstill
    assert agent.unwritten_kb() is not None  # this host's /proc/meminfo reads
