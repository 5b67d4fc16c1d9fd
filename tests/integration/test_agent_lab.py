"""The load agent on the lab's real NFS mount, started over SSH as the app starts it.

Every workload: samples arrive while it runs, totals match what the server holds (the
agent keeps its files with hold_files while we look at /srv/nfs), and a cancel (stdin
EOF or the stop line) ends it without a file left behind. Plus cache honesty, a host
without that python, an agent crash, and a full export (ENOSPC) on a scratch export.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from app.hosts import HostPool, SshSettings
from app.hosts.connection import HostConnection
from app.hosts.errors import ConnectionLost
from app.hosts.process import CommandResult, RemoteProcess
from experiments import workloads as w
from experiments.agent_launch import EXIT_CRASH, EXIT_ERROR, EXIT_NO_PYTHON, STOP_LINE, bootstrap_argv, exit_message, go_line, payload
from experiments.agent_protocol import AgentError, AgentEvent, AgentNotice, AgentStream, AgentSummary
from experiments.samples import HostTelemetry, Sample
from tests.conftest import LabHandle

pytestmark = pytest.mark.lab
T = TypeVar("T")

CLIENT, SERVER = "lab-client1", "lab-server"
MOUNT, EXPORT = "/mnt/lab", "/srv/nfs"
SERVER_IP = "10.213.7.10"
MIB = 1 << 20
IV = 0.1  # sample interval: several samples from runs of a second or two
SAFETY_S = 150  # a hung scenario fails instead of blocking the suite (not a timing assert)


def run(coro: Awaitable[T]) -> T:
    async def guarded() -> T:
        return await asyncio.wait_for(coro, SAFETY_S)

    return asyncio.run(guarded())


class Agent:
    """One agent over SSH: typed events in arrival order, the process's exit at the end."""

    def __init__(self, conn: HostConnection) -> None:
        self.conn = conn
        self.stream = AgentStream(conn.name)
        self.events: list[AgentEvent] = []
        self._pending: list[AgentEvent] = []
        self.proc: RemoteProcess | None = None
        self.result: CommandResult | None = None

    async def start(self, spec_or_cfg: w.WorkloadSpec | dict[str, Any], python: str = "python3", **control: Any) -> Agent:
        cfg = (spec_or_cfg.to_agent_config(None if spec_or_cfg.kind in ("tcp_sink", "tcp_source", "telemetry") else MOUNT, **control)
               if isinstance(spec_or_cfg, w.WorkloadSpec) else spec_or_cfg)
        self.proc = await self.conn.start(bootstrap_argv(python))
        try:
            await self.proc.write(payload(cfg).decode("utf-8"))
        except ConnectionLost:
            pass  # the command is already gone (no such python): its exit says why
        return self

    async def next(self) -> AgentEvent | None:
        """The next event, or None once stdout has ended."""
        assert self.proc is not None
        while not self._pending:
            line = await self.proc.readline()
            if not line:
                self._pending.extend(self.stream.close())
                if not self._pending:
                    return None
            else:
                self._pending.extend(self.stream.feed(line.encode("utf-8")))
        event = self._pending.pop(0)
        self.events.append(event)
        return event

    async def until(self, pred: Callable[[AgentEvent], bool]) -> AgentEvent:
        while (event := await self.next()) is not None:
            if pred(event):
                return event
            if isinstance(event, AgentError):
                pytest.fail(f"agent failed: {event} {event.traceback}")
        pytest.fail(f"agent output ended early; events: {self.events[-5:]}; garbage: {self.stream.garbage}")

    async def notice(self, kind: str) -> AgentNotice:
        event = await self.until(lambda e: isinstance(e, AgentNotice) and e.type == kind)
        assert isinstance(event, AgentNotice)
        return event

    async def finish(self) -> CommandResult:
        while await self.next() is not None:
            pass
        assert self.proc is not None
        self.result = await self.proc.wait()
        return self.result

    async def stop_line(self) -> None:
        assert self.proc is not None
        await self.proc.write(STOP_LINE.decode())

    def eof(self) -> None:
        assert self.proc is not None
        self.proc.write_eof()

    @property
    def samples(self) -> list[Sample]:
        return [e for e in self.events if isinstance(e, Sample)]

    @property
    def telemetry(self) -> list[HostTelemetry]:
        return [e for e in self.events if isinstance(e, HostTelemetry)]

    @property
    def summary(self) -> AgentSummary:
        assert self.stream.summary is not None, f"no summary; error: {self.stream.error}"
        return self.stream.summary

    @property
    def workdir(self) -> str:
        hello = next(e for e in self.events if isinstance(e, AgentNotice) and e.type == "hello")
        return str(hello.data["dir"])

    def samples_before_summary(self) -> list[Sample]:
        idx = next(i for i, e in enumerate(self.events) if isinstance(e, AgentSummary))
        return [e for e in self.events[:idx] if isinstance(e, Sample)]

    def cleanup(self) -> dict[str, Any]:
        return next(e.data for e in self.events if isinstance(e, AgentNotice) and e.type == "cleanup")


def _settings(lab: LabHandle, tmp_path: Path) -> SshSettings:
    return SshSettings(config_file=lab.ssh_config, app_known_hosts=tmp_path / "app_known_hosts")


def on_server(workdir: str) -> str:
    """The agent's directory on the client as the server sees it under the export."""
    assert workdir.startswith(MOUNT + "/")
    return EXPORT + workdir[len(MOUNT):]


def server_files(lab: LabHandle, directory: str) -> dict[str, int]:
    """Relative path -> size of every regular file below directory on the server."""
    out = lab.run(SERVER, f"cd {shlex.quote(directory)} && find . -type f -printf '%P %s\\n'").stdout
    return {p: int(s) for p, s in (line.rsplit(" ", 1) for line in out.splitlines())}


def assert_gone(lab: LabHandle, agent: Agent) -> None:
    """The agent's directory is gone on the server, and no agent directory is left at all."""
    path = on_server(agent.workdir)
    assert lab.run(SERVER, f"test -e {shlex.quote(path)}", check=False).returncode == 1, f"{path} left behind"
    cleanup = agent.cleanup()
    assert cleanup["removed"] is True, cleanup


def assert_live_samples(agent: Agent, minimum: int = 3) -> None:
    before = agent.samples_before_summary()
    assert len(before) >= minimum, f"only {len(before)} samples before the summary"
    assert all(s.t > 0 and s.interval > 0 for s in before)
    assert [s.t for s in before] == sorted(s.t for s in before)


def mount_bytes(lab: LabHandle) -> list[int]:
    """The NFS client's byte counters of the lab mount (mountstats 'bytes:' line)."""
    text = lab.run(CLIENT, "cat /proc/self/mountstats").stdout
    section = re.search(rf"mounted on {re.escape(MOUNT)} with fstype nfs.*?\n(.*?)(?=\ndevice |\Z)", text, re.S)
    assert section, "the lab mount is not in mountstats"
    line = re.search(r"^\s*bytes:\s+(.*)$", section.group(1), re.M)
    assert line
    return [int(x) for x in line.group(1).split()]  # normal r/w, direct r/w, server r/w, pages r/w


# --------------------------------------------------------------------------- totals


# name -> the workload, its check against the server's files, and the live samples it gives before its summary
DATA_CASES: dict[str, tuple[w.WorkloadSpec, Callable[[AgentSummary, dict[str, int]], None], int]] = {}


def _case(name: str, spec: w.WorkloadSpec, samples: int = 3):  # type: ignore[no-untyped-def]
    def deco(check: Callable[[AgentSummary, dict[str, int]], None]) -> Callable[[AgentSummary, dict[str, int]], None]:
        DATA_CASES[name] = (spec, check, samples)
        return check

    return deco


@_case("seq_write", w.SeqWrite(file_size=24 * MIB, interval_s=IV))
def _seq_write(s: AgentSummary, files: dict[str, int]) -> None:
    assert s.bytes_written == 24 * MIB and s.bytes_read == 0
    assert files == {"seqw.0": 24 * MIB}
    assert s.cache_mode == "fsync" and not s.direct


@_case("seq_write_2jobs", w.SeqWrite(file_size=8 * MIB, jobs=2, block_size=256 * 1024, direct=True, interval_s=IV))
def _seq_write_jobs(s: AgentSummary, files: dict[str, int]) -> None:
    assert s.bytes_written == 16 * MIB
    assert files == {"seqw.0": 8 * MIB, "seqw.1": 8 * MIB}
    assert s.cache_mode == "o_direct" and s.direct


@_case("seq_read", w.SeqRead(file_size=24 * MIB, interval_s=IV))
def _seq_read(s: AgentSummary, files: dict[str, int]) -> None:
    assert s.bytes_read == 24 * MIB and s.bytes_written == 0
    assert files == {"seqr.0": 24 * MIB}
    assert s.cache_mode == "dropped" and s.caches_dropped  # the agent runs as root


# its 16 MiB can land in the page cache within one interval, then its fsync is one operation: two samples are all
# a quick run has (make test, 2026-11-28: 16 MiB in 0.22 s, then the fsync's 242 ms)
@_case("rewrite", w.Rewrite(file_size=16 * MIB, interval_s=IV), samples=2)
def _rewrite(s: AgentSummary, files: dict[str, int]) -> None:
    assert s.bytes_written == 16 * MIB and s.bytes_read == 0
    assert files == {"seqr.0": 16 * MIB}  # rewritten in place: same file, same size
    assert s.cache_mode == "fsync"


# random I/O is quick in the lab: 4 KiB operations and a shorter interval give several samples
RAND = {"file_size": 8 * MIB, "io_size": 4 * MIB, "block_size": 4096, "jobs": 2, "interval_s": 0.05}


@_case("rand_read", w.RandRead(**RAND))
def _rand_read(s: AgentSummary, files: dict[str, int]) -> None:
    assert s.bytes_read == 4 * MIB and s.ops == 1024 and s.bytes_written == 0
    assert files == {"rand.0": 8 * MIB}
    assert s.cache_mode == "dropped"


@_case("rand_write", w.RandWrite(**RAND, direct=True))
def _rand_write(s: AgentSummary, files: dict[str, int]) -> None:
    assert s.bytes_written == 4 * MIB and s.ops == 1024 and s.bytes_read == 0
    assert files == {"rand.0": 8 * MIB}  # random writes stay inside the file
    assert s.cache_mode == "o_direct"


@_case("mixed", w.Mixed(**RAND, direct=True))
def _mixed(s: AgentSummary, files: dict[str, int]) -> None:
    assert s.bytes_read + s.bytes_written == 4 * MIB and s.ops == 1024
    assert s.bytes_read > s.bytes_written > 0  # 75/25
    assert files == {"rand.0": 8 * MIB}
    assert s.cache_mode == "o_direct"


@_case("dir_scaling", w.DirScaling(count=600, timed_delete=False, interval_s=IV))
def _dir_scaling(s: AgentSummary, files: dict[str, int]) -> None:
    assert s.ops == 600 and s.phases["create"]["ops"] == 600
    assert len(files) == 600 and set(files.values()) == {0}
    assert all(p.startswith("scale/f") for p in files)
    assert s.cache_mode == "n/a"


@pytest.mark.parametrize("name", list(DATA_CASES))
def test_totals_match_the_server(lab: LabHandle, tmp_path: Path, name: str) -> None:
    spec, check, samples = DATA_CASES[name]

    async def scenario() -> Agent:
        async with HostPool(_settings(lab, tmp_path)) as pool:
            agent = await Agent(pool[CLIENT]).start(spec, hold_files=True)
            held = await agent.notice("holding")
            files = server_files(lab, on_server(str(held.data["dir"])))  # while the agent holds them
            check(agent.summary, files)
            agent.eof()
            assert (await agent.finish()).exit_status == 0
            return agent

    agent = run(scenario())
    s = agent.summary
    assert s.end == "done" and s.errors == 0
    assert_live_samples(agent, samples)
    samples = agent.samples
    assert sum(x.bytes_read for x in samples) == s.bytes_read
    assert sum(x.bytes_written for x in samples) == s.bytes_written
    assert sum(x.ops for x in samples) == s.ops
    if name == "dir_scaling":  # the rate-versus-count curve: counts rise to N
        counts = [x.count for x in samples]
        assert None not in counts and counts == sorted(counts) and counts[-1] == 600  # type: ignore[type-var]
        assert len(set(counts)) >= 3
    assert_gone(lab, agent)


@pytest.mark.parametrize(
    ("spec", "pause"),
    [
        (w.SmallFiles(count=300, file_size=3000, interval_s=IV), "delete"),
        (w.SmallFiles(count=300, file_size=1000, layout="tree", fanout=3, jobs=2, interval_s=IV), "delete"),
        (w.Tree(files=250, seed=3, interval_s=IV), "remove"),
    ],
    ids=["small_files", "small_files_tree", "tree"],
)
def test_metadata_workloads_leave_what_they_made(lab: LabHandle, tmp_path: Path, spec: w.WorkloadSpec, pause: str) -> None:
    """Paused before its delete phase and stopped there, the agent holds its files for a look."""

    async def scenario() -> tuple[Agent, dict[str, int]]:
        async with HostPool(_settings(lab, tmp_path)) as pool:
            agent = await Agent(pool[CLIENT]).start(spec, hold_files=True, pause_before=pause)
            await agent.notice("paused")
            await agent.stop_line()  # ends the workload; the hold keeps the files
            held = await agent.notice("holding")
            files = server_files(lab, on_server(str(held.data["dir"])))
            await agent.stop_line()  # a stop while holding releases the hold
            assert (await agent.finish()).exit_status == 0
            return agent, files

    agent, files = run(scenario())
    s = agent.summary
    assert s.end == "stopped" and s.errors == 0
    assert_live_samples(agent)
    created = s.phases["create" if isinstance(spec, w.SmallFiles) else "extract"]
    if isinstance(spec, w.SmallFiles):
        assert len(files) == spec.count and set(files.values()) == {spec.file_size}
        assert created["bytes"] == s.bytes_written == spec.count * spec.file_size
        assert {p.count("/") for p in files} == ({1} if spec.layout == "flat" else {3})
    else:
        assert len(files) == s.extra["tree_files"] == 250
        assert sum(files.values()) == s.extra["tree_bytes"] == s.bytes_written == created["bytes"]
        assert max(p.count("/") for p in files) >= 3  # nested like a source tree
    assert s.cache_mode == "dropped"  # stat/find ran after a drop
    assert_gone(lab, agent)


def test_small_files_full_cycle_rates(lab: LabHandle, tmp_path: Path) -> None:
    """All four bonnie++ phases run to the end; every file made is deleted by the workload."""
    spec = w.SmallFiles(count=120, file_size=512, fsync=True, interval_s=IV)

    async def scenario() -> tuple[Agent, dict[str, int]]:
        async with HostPool(_settings(lab, tmp_path)) as pool:
            agent = await Agent(pool[CLIENT]).start(spec, hold_files=True)
            held = await agent.notice("holding")
            files = server_files(lab, on_server(str(held.data["dir"])))
            agent.eof()
            await agent.finish()
            return agent, files

    agent, files = run(scenario())
    s = agent.summary
    assert files == {}  # the delete phase removed them
    assert [p for p in ("create", "stat", "read", "delete")] == list(s.phases)
    assert s.phases["create"]["ops"] == 121  # + the directory
    assert all(s.phases[p]["ops"] == 120 and s.phases[p]["ops_per_s"] > 0 for p in ("stat", "read", "delete"))
    assert s.bytes_written == s.bytes_read == 120 * 512
    assert {x.phase for x in agent.samples} == {"create", "stat", "read", "delete"}
    assert_gone(lab, agent)


# --------------------------------------------------------------------------- network, telemetry


def test_tcp_source_to_sink(lab: LabHandle, tmp_path: Path) -> None:
    async def scenario() -> tuple[Agent, Agent]:
        async with HostPool(_settings(lab, tmp_path)) as pool:
            sink = await Agent(pool[SERVER]).start(w.TcpSink(streams=2, interval_s=IV))
            port = int((await sink.notice("listening")).data["port"])
            source = await Agent(pool[CLIENT]).start(w.TcpSource(host=SERVER_IP, port=port, streams=2, duration_s=1.5, interval_s=IV))
            r_src, r_sink = await asyncio.gather(source.finish(), sink.finish())
            assert r_src.exit_status == 0 and r_sink.exit_status == 0, (source.stream.error, sink.stream.error)
            return sink, source

    sink, source = run(scenario())
    assert source.summary.end == "duration" and sink.summary.end == "done"
    # every byte sent was read; a stream, not a trickle (its speed is benchmarks/' to say: 5.5 MB/s beside four labs)
    assert sink.summary.bytes_read == source.summary.bytes_written > MIB
    assert source.summary.cache_mode == sink.summary.cache_mode == "n/a"
    assert_live_samples(source)
    assert_live_samples(sink)


def test_telemetry_on_server_and_client_during_a_write(lab: LabHandle, tmp_path: Path) -> None:
    members = lab.run(SERVER, "ls /sys/block/md0/slaves").stdout.split()
    size = 16 * MIB

    async def until_telemetry(agents: tuple[Agent, ...], counts: list[int]) -> None:
        while any(len(a.telemetry) < n for a, n in zip(agents, counts, strict=True)):
            await asyncio.sleep(0.05)

    async def scenario() -> tuple[Agent, Agent, Agent, list[int]]:
        async with HostPool(_settings(lab, tmp_path)) as pool:
            srv = await Agent(pool[SERVER]).start(w.Telemetry(devices=("md0", *members), nics=("lan0",), interval_s=IV))
            cli = await Agent(pool["lab-client1"]).start(w.Telemetry(nics=("lan0",), mounts=(MOUNT,), interval_s=IV))
            readers = asyncio.gather(srv.finish(), cli.finish())  # read both until they exit
            await until_telemetry((srv, cli), [1, 1])
            marks = [len(srv.telemetry), len(cli.telemetry)]
            writer = await Agent(pool[CLIENT]).start(w.SeqWrite(file_size=size, interval_s=IV))
            await writer.finish()
            # three more intervals, so the server's writeback of the last data is counted
            await until_telemetry((srv,), [len(srv.telemetry) + 3])
            srv.eof()
            cli.eof()
            await readers
            return srv, cli, writer, marks

    srv, cli, writer, marks = run(scenario())
    assert writer.summary.bytes_written == size
    for agent in (srv, cli):
        assert agent.result is not None and agent.result.exit_status == 0
        assert len(agent.telemetry) >= 5 and agent.summary.end == "stopped" and agent.summary.cache_mode == "n/a"
        assert agent.summary.extra["telemetry_samples"] == len(agent.telemetry)
        assert not [e for e in agent.events if isinstance(e, AgentNotice) and e.type == "warning"]
    during = srv.telemetry[marks[0]:]
    rx = sum(t.net_rx_bps * t.interval for t in during)
    disk = sum(t.disk_write_bps * t.interval for t in during)
    assert rx >= size * 0.95  # every byte written crossed the server's NIC
    assert disk >= size  # and reached the RAID (plus parity on the members)
    assert any(t.extra.get("nfsd.packets_arrived_per_s", 0) > 0 for t in during)
    assert all(0.0 <= t.cpu_busy <= 1.0 for t in srv.telemetry + cli.telemetry)
    client_tx = sum(t.net_tx_bps * t.interval for t in cli.telemetry[marks[1]:])
    assert client_tx >= size * 0.95
    keys = {k for t in cli.telemetry for k in t.extra}
    assert f"mount.{MOUNT}.write_ops_per_s" in keys and f"mount.{MOUNT}.write_rtt_ms" in keys
    assert f"mount.{MOUNT}.retrans" in keys


# --------------------------------------------------------------------------- cancel


# Each workload is cancelled one way (closing the channel or the stop line), alternating.
CANCEL_CASES: list[tuple[str, w.WorkloadSpec, str]] = [
    ("seq_write", w.SeqWrite(file_size=1024 * MIB, interval_s=IV), "eof"),
    ("seq_read", w.SeqRead(file_size=4 * MIB, loop=True, duration_s=120, interval_s=IV), "stop_line"),
    ("seq_read_in_prepare", w.SeqRead(file_size=1024 * MIB, interval_s=IV), "eof"),
    ("rewrite", w.Rewrite(file_size=4 * MIB, loop=True, duration_s=120, interval_s=IV), "stop_line"),
    ("rand_read", w.RandRead(file_size=4 * MIB, jobs=2, loop=True, duration_s=120, interval_s=IV), "eof"),
    ("rand_write", w.RandWrite(file_size=4 * MIB, jobs=2, loop=True, duration_s=120, interval_s=IV), "stop_line"),
    ("mixed", w.Mixed(file_size=4 * MIB, jobs=2, loop=True, duration_s=120, interval_s=IV), "eof"),
    ("small_files", w.SmallFiles(count=100_000, interval_s=IV), "stop_line"),
    ("tree", w.Tree(files=5000, interval_s=IV), "eof"),
    ("dir_scaling", w.DirScaling(count=1_000_000, interval_s=IV), "stop_line"),
]


@pytest.mark.parametrize(("name", "spec", "how"), CANCEL_CASES, ids=[f"{c[0]}-{c[2]}" for c in CANCEL_CASES])
def test_cancel_leaves_no_file_behind(lab: LabHandle, tmp_path: Path, name: str, spec: w.WorkloadSpec, how: str) -> None:
    in_prepare = name.endswith("_in_prepare")

    async def scenario() -> Agent:
        async with HostPool(_settings(lab, tmp_path)) as pool:
            agent = await Agent(pool[CLIENT]).start(spec)
            if in_prepare:  # the data file is being laid out
                await agent.until(lambda e: isinstance(e, AgentNotice) and e.type == "progress" and e.data["done"] > 0)
            else:
                await agent.until(lambda e: isinstance(e, Sample) and len(agent.samples) >= 3)
            path = on_server(agent.workdir)
            assert lab.run(SERVER, f"test -d {shlex.quote(path)}", check=False).returncode == 0  # it made files
            if how == "eof":
                agent.eof()
            else:
                await agent.stop_line()
            assert (await agent.finish()).exit_status == 0
            return agent

    agent = run(scenario())
    s = agent.summary
    assert s.end == "stopped"
    assert s.extra["stop_reason"] == ("stdin closed" if how == "eof" else "stop command")
    if not in_prepare:
        assert len(agent.samples_before_summary()) >= 3
    assert_gone(lab, agent)


def test_a_controller_killed_mid_run_leaves_no_file_behind(lab: LabHandle) -> None:
    """SIGKILL of the controller's side: the connection drops, the agent sees EOF and cleans up."""
    spec = w.SeqWrite(file_size=64 * MIB, loop=True, duration_s=120, interval_s=IV)
    ssh = ["ssh", "-F", str(lab.ssh_config), "-o", "BatchMode=yes", CLIENT, shlex.join(bootstrap_argv())]
    proc = subprocess.Popen(ssh, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(payload(spec.to_agent_config(MOUNT)))
        proc.stdin.flush()
        stream, events = AgentStream(CLIENT), []
        while sum(isinstance(e, Sample) for e in events) < 3:
            line = proc.stdout.readline()
            assert line, "the agent ended before three samples"
            events += stream.feed(line)
        hello = next(e for e in events if isinstance(e, AgentNotice) and e.type == "hello")
        path = on_server(str(hello.data["dir"]))
        assert lab.run(SERVER, f"test -d {shlex.quote(path)}", check=False).returncode == 0
        proc.kill()  # no goodbye: the TCP connection just goes away
    finally:
        proc.kill()
        proc.wait(10)
    deadline = time.monotonic() + 30

    def left() -> list[str]:
        what = []
        if lab.run(SERVER, f"test -e {shlex.quote(path)}", check=False).returncode == 0:
            what.append(path)
        if lab.run(CLIENT, "pgrep -f 'python[3] -u -c'", check=False).returncode == 0:  # [3]: not this shell
            what.append("the agent process")
        return what

    while left():
        assert time.monotonic() < deadline, f"{left()} still there 30 s after the controller died"
        time.sleep(0.5)


# --------------------------------------------------------------------------- cache honesty


@pytest.mark.parametrize("direct", [False, True], ids=["dropped", "o_direct"])
def test_read_cache_mode_is_honest(lab: LabHandle, tmp_path: Path, direct: bool) -> None:
    """What the summary claims is what the NFS client did: every byte came from the server."""
    size = 16 * MIB
    spec = w.SeqRead(file_size=size, direct=direct, interval_s=IV)

    async def scenario() -> tuple[Agent, list[int], list[int]]:
        async with HostPool(_settings(lab, tmp_path)) as pool:
            agent = await Agent(pool[CLIENT]).start(spec, wait_go=True)
            await agent.notice("ready")  # the file is laid out and the caches dropped; it waits for go
            before = mount_bytes(lab)
            assert agent.proc is not None
            await agent.proc.write(go_line(time.time()).decode())
            await agent.until(lambda e: isinstance(e, AgentSummary))
            after = mount_bytes(lab)
            await agent.finish()
            return agent, before, after

    agent, before, after = run(scenario())
    s = agent.summary
    assert s.bytes_read == size
    delta = [b - a for a, b in zip(before, after, strict=True)]
    if direct:
        assert s.cache_mode == "o_direct" and s.direct
        assert delta[2] >= size  # direct read bytes
    else:
        assert s.cache_mode == "dropped" and s.caches_dropped and not s.direct
        assert delta[4] >= size  # read from the server, not from the page cache
    assert_gone(lab, agent)


def test_unsynced_write_says_cached(lab: LabHandle, tmp_path: Path) -> None:
    spec = w.SeqWrite(file_size=4 * MIB, fsync=False, interval_s=IV)

    async def scenario() -> Agent:
        async with HostPool(_settings(lab, tmp_path)) as pool:
            agent = Agent(pool[CLIENT])
            await agent.start(spec)
            await agent.finish()
            return agent

    agent = run(scenario())
    assert agent.summary.cache_mode == "cached!"  # the figure may be the client's RAM speed
    assert_gone(lab, agent)


# --------------------------------------------------------------------------- failures


def test_missing_python_is_a_clear_error(lab: LabHandle, tmp_path: Path) -> None:
    python = "/nonexistent/python3"

    async def scenario() -> Agent:
        async with HostPool(_settings(lab, tmp_path)) as pool:
            agent = await Agent(pool[CLIENT]).start(w.SeqWrite(file_size=MIB), python=python)
            await agent.finish()
            return agent

    agent = run(scenario())
    assert agent.result is not None and agent.result.exit_status == EXIT_NO_PYTHON
    message = exit_message(agent.result.exit_status, python)
    assert message and python in message and "not found" in message
    assert agent.events == [] and agent.stream.garbage == []
    assert "/nonexistent/python3" in agent.result.stderr


def test_agent_crash_is_reported_not_hung(lab: LabHandle, tmp_path: Path) -> None:
    cfg = w.SeqWrite(file_size=64 * MIB, interval_s=IV).to_agent_config(MOUNT) | {"debug_crash": "workload"}

    async def scenario() -> Agent:
        async with HostPool(_settings(lab, tmp_path)) as pool:
            agent = await Agent(pool[CLIENT]).start(cfg)
            await agent.finish()
            return agent

    agent = run(scenario())
    assert agent.result is not None and agent.result.exit_status == EXIT_CRASH
    err = agent.stream.error
    assert err is not None and "crashed" in err.message and "RuntimeError" in err.traceback
    assert exit_message(EXIT_CRASH) is None  # the agent explained it itself
    assert_gone(lab, agent)


ENOSPC_EXPORT = "/srv/nfs-tuner-full"
ENOSPC_MOUNT = "/mnt/nfs-tuner-full"


def test_full_export_is_a_clear_error_and_keeps_samples(lab: LabHandle, tmp_path: Path) -> None:
    """A 12 MiB tmpfs exported for this test only: a 64 MiB write must end in ENOSPC."""
    client = f"{SERVER_IP.rsplit('.', 1)[0]}.0/24"
    setup = (
        f"mkdir -p {ENOSPC_EXPORT} && mount -t tmpfs -o size=12m nfs-tuner-full {ENOSPC_EXPORT} && "
        f"exportfs -o rw,sync,no_root_squash,no_subtree_check,fsid=7301 {client}:{ENOSPC_EXPORT}"
    )
    try:
        lab.run(SERVER, setup)
        lab.run(CLIENT, f"mkdir -p {ENOSPC_MOUNT} && mount -t nfs -o vers=4.2,hard {SERVER}:{ENOSPC_EXPORT} {ENOSPC_MOUNT}")
        cfg = w.SeqWrite(file_size=64 * MIB, block_size=256 * 1024, interval_s=0.05).to_agent_config(ENOSPC_MOUNT)

        async def scenario() -> Agent:
            async with HostPool(_settings(lab, tmp_path)) as pool:
                agent = await Agent(pool[CLIENT]).start(cfg)
                await agent.finish()
                return agent

        agent = run(scenario())
        assert agent.result is not None and agent.result.exit_status == EXIT_ERROR
        err = agent.stream.error
        assert err is not None and err.errno == 28, err  # ENOSPC
        assert "export is full" in err.message
        assert agent.samples and sum(s.bytes_written for s in agent.samples) > 0  # kept up to the error
        assert agent.stream.summary is None
        assert agent.cleanup()["removed"] is True
        assert lab.run(SERVER, f"ls -A {ENOSPC_EXPORT}").stdout.strip() == ""
    finally:
        lab.run(CLIENT, f"umount {ENOSPC_MOUNT} || umount -l {ENOSPC_MOUNT}; rmdir {ENOSPC_MOUNT}", check=False)
        lab.run(SERVER, f"exportfs -u {client}:{ENOSPC_EXPORT}; umount {ENOSPC_EXPORT} || umount -l {ENOSPC_EXPORT}; "
                f"rmdir {ENOSPC_EXPORT}", check=False)
    assert ENOSPC_EXPORT not in lab.run(SERVER, "exportfs -v").stdout
    assert ENOSPC_MOUNT not in lab.run(CLIENT, "cat /proc/mounts").stdout

