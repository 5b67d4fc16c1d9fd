"""fio as the load on one client, behind the same face as AgentHandle.

A small POSIX sh wrapper (fixed text; every value arrives as a positional argument,
quoted by shlex on the way) makes a private job directory with mktemp -d and a private
data directory on the test mount, lays out the files a read needs, says ``ready``, and
on ``go`` starts fio with live JSON status at the spec's interval (``json+``: with the
completion-latency bins, so the summary carries the measured window's histogram, the last
document's bins less those of the last one inside the warm-up). fio ignores its
stdin, so closing the channel would not stop it: the wrapper's watcher ends fio when
stdin closes (``stop()``), and an EXIT trap removes both directories whatever happened.

Like the agent's ``stall_timeout``, a watchdog stops fio and fails the run when fio's
cumulative counters stand still for ``stall_s`` (a dead server: fio's status thread
keeps printing while its I/O hangs in the kernel).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import time
from collections.abc import Callable
from errno import ETIMEDOUT
from dataclasses import replace
from typing import Any

from app.hosts import HostConnection, HostError, RemoteProcess
from app.runner.agent_handle import EXIT_WAIT_S, garbage_warning, wait_or_close
from app.runner.errors import RunError
from experiments.agent_protocol import AgentEvent, AgentNotice, AgentSummary
from experiments.fio import fio_histogram, parse_fio_json, to_fio_job
from experiments.latency import subtract
from experiments.record_fields import BadRecord
from experiments.fio_status import FioStatusSampler, FioStatusStream, job_errors
from experiments.workloads import CacheMode, WorkloadSpec
from app.vocabulary.hosts import host_detail

FioSink = Callable[["FioHandle", AgentEvent], None]
READY = "nfs-tuner-fio ready"
DATA_PREFIX = ".nfs-tuner-fio-"
_PREPARE_KINDS = ("seq_read", "rand_read", "mixed", "rewrite")  # fio would lay these out after go
_READ_KINDS = ("seq_read", "rand_read", "mixed")
STALL_TIMEOUT_S = 120.0  # the agent's default stall_timeout (experiments/agent.py, Ctx.stall_s); a test ties them
STARTUP_GRACE_S = 30.0  # before fio's first status the stall clock allows this much more: startup, layout
STALL_WORDS = "no operation completed for {:g} s: the NFS server or the network stopped answering; check both"

# $1 fio  $2 data dir (on the mount, made here)  $3 job text  $4 status interval (ms)  $5 prepare (0/1)
WRAPPER = r"""
fio=$1 data=$2 job=$3 ms=$4 prepare=$5
tmp= made= fio_pid=
cleanup() { [ -n "$made" ] && rm -rf -- "$data"; [ -n "$tmp" ] && rm -rf -- "$tmp"; }
on_signal() { if [ -n "$fio_pid" ]; then kill -TERM "$fio_pid" 2>/dev/null; else exit 130; fi; }
trap cleanup EXIT
trap on_signal INT TERM HUP
exec 3<&0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nfs-tuner-fio.XXXXXX") || exit 90
mkdir -m 700 -- "$data" || exit 91
made=1
printf '%s\n' "$job" >"$tmp/job.fio" && cd "$tmp" || exit 92
if [ "$prepare" = 1 ]; then
  printf '%s\ncreate_only=1\nunlink=0\n' "$job" >prepare.fio || exit 92
  "$fio" --output-format=json --output=prepare.json prepare.fio >prepare.out 2>&1 || { tail -n 5 prepare.out >&2; exit 93; }
fi
echo "nfs-tuner-fio ready"
IFS= read -r line || exit 0
[ "$line" = go ] || exit 0
"$fio" --output-format=json+ "--status-interval=${ms}ms" job.fio &
fio_pid=$!
{ cat >/dev/null 2>&1; kill -TERM "$fio_pid" 2>/dev/null; } <&3 >/dev/null 2>&1 &
watcher=$!
while :; do wait "$fio_pid"; rc=$?; kill -0 "$fio_pid" 2>/dev/null || break; done
kill "$watcher" 2>/dev/null
exit "$rc"
"""
_EXIT_WORDS = {
    90: "could not make a private directory with mktemp -d",
    91: "could not make fio's data directory on the test mount",
    92: "could not write fio's job file",
    93: "fio failed while laying out its files",
    127: "fio was not found",
}


async def find_fio(conn: HostConnection) -> str | None:
    """fio's path on the host (``command -v fio``), None when absent or unreachable."""
    try:
        result = await conn.run(["sh", "-c", "command -v fio"], timeout=30)
    except HostError:
        return None
    path = result.stdout.strip().splitlines()[-1:] if result.ok else []
    return path[0] if path and path[0].startswith("/") else None


def cache_mode(spec: WorkloadSpec, dropped: bool) -> str:
    """What keeps fio's figure honest, in the agent's terms."""
    if getattr(spec, "direct", False):
        return CacheMode.O_DIRECT
    if spec.kind in _READ_KINDS:
        return CacheMode.DROPPED if dropped else CacheMode.FADVISE  # the job has invalidate=1
    return CacheMode.FSYNC if getattr(spec, "fsync", False) else CacheMode.CACHED


def wrapper_argv(fio: str, data_dir: str, job: str, interval_s: float, prepare: bool) -> list[str]:
    return ["sh", "-c", WRAPPER, "nfs-tuner-fio", fio, data_dir, job, str(max(1, round(interval_s * 1000))),
            "1" if prepare else "0"]


class FioHandle:
    """One fio run on one client; the attributes _Run reads are those of AgentHandle."""

    role = "workload"

    def __init__(self, conn: HostConnection, spec: WorkloadSpec, directory: str, on_event: FioSink, *,
                 fio: str = "fio", stall_s: float | None = None, latency_from_s: float = 0.0) -> None:
        self.conn = conn
        self.latency_from_s = latency_from_s  # the warm-up: its latencies stay out of the summary's histogram
        self._warm: dict[str, Any] | None = None  # fio's last status document inside the warm-up
        self.host = conn.name
        self.spec = spec
        self.fio = fio
        self.workdir = f"{directory.rstrip('/') or ''}/{DATA_PREFIX}{secrets.token_hex(6)}"
        self.job = to_fio_job(spec, self.workdir, log_prefix=None)  # ValueError: no fio equivalent
        self._on_event = on_event
        self.stream = FioStatusStream()
        self.sampler = FioStatusSampler(conn.name, spec.interval_s)
        self.proc: RemoteProcess | None = None
        self.ready = asyncio.Event()
        self.ended = asyncio.Event()
        self.started_epoch: float | None = None
        self.last_line = time.monotonic()
        self.exit_status: int | None = None
        self.stderr = ""
        self.error: RunError | None = None
        self.summary: AgentSummary | None = None
        self.notices: list[AgentNotice] = []
        self.caches_dropped = False  # set by the run when it dropped this client's caches
        self.stopping = False
        self.stall_s = STALL_TIMEOUT_S if stall_s is None else stall_s  # <= 0: never, as for the agent
        self._stall_deadline = float("inf")  # monotonic; set by go(), moved on by every advance
        self._counted: tuple[int, int, int] | None = None  # fio's counters when the stall clock last restarted
        self._reader: asyncio.Task[None] | None = None
        self._watch: asyncio.Task[None] | None = None

    async def start(self) -> None:
        argv = wrapper_argv(self.fio, self.workdir, self.job, self.spec.interval_s, self.spec.kind in _PREPARE_KINDS)
        try:
            self.proc = await self.conn.start(argv)
        except HostError as exc:
            self._fail(RunError(self.host, f"could not start fio: {host_detail(self.host, str(exc))}"))
            self.ended.set()
            self.ready.set()
            return
        self._reader = asyncio.create_task(self._read(), name=f"fio-{self.host}")

    def _fail(self, error: RunError) -> None:
        if self.error is None:
            self.error = error

    def _emit(self, event: AgentEvent) -> None:
        self._on_event(self, event)

    async def _read(self) -> None:
        assert self.proc is not None
        try:
            async for line in self.proc:
                self.last_line = time.monotonic()
                if line.strip() == READY and not self.ready.is_set():
                    self.ready.set()
                    self._emit(AgentNotice(self.host, "ready", {"engine": "fio"}))
                    continue
                if (doc := self.stream.feed(line)) is not None:
                    self._status(doc)
            for sample in self.sampler.finish():
                self._emit(sample)
            result = await self.proc.wait(timeout=EXIT_WAIT_S)
            self.exit_status, self.stderr = result.exit_status, result.stderr
        except HostError as exc:
            self._fail(RunError(self.host, f"lost the SSH connection during the fio run: {host_detail(self.host, str(exc))}",
                                lost=True))
        finally:
            self._conclude()
            self.ended.set()
            self.ready.set()  # nobody waits for a ready that will never come

    def _status(self, doc: dict[str, Any]) -> None:
        for sample in self.sampler.feed(doc):
            self._emit(sample)
        if self.sampler.last is not doc:
            return  # refused as malformed: counted in sampler.garbage, changes nothing
        if self.latency_from_s > 0 and self.sampler.elapsed <= self.latency_from_s:
            self._warm = doc
        self._note_progress()
        if self.started_epoch is None and self.sampler.start_epoch is not None:
            self.started_epoch = self.sampler.start_epoch
            self.notices.append(AgentNotice(self.host, "start", {"epoch": self.started_epoch}))
        for name, errno in job_errors(doc):
            words = "the export is full (ENOSPC)" if errno == 28 else os.strerror(errno)
            self._fail(RunError(self.host, f"fio job {name} failed: {words}", errno))

    def _note_progress(self) -> None:
        """The stall clock restarts at fio's first status and whenever its counters move."""
        counters = self.sampler.counters
        if counters != self._counted:
            self._counted = counters
            self._stall_deadline = time.monotonic() + self.stall_s

    async def _watch_stall(self) -> None:
        """Stop fio and fail as the agent does when nothing moved for stall_s."""
        while not self.ended.is_set() and not self.stopping:
            left = self._stall_deadline - time.monotonic()
            if left <= 0:
                self._fail(RunError(self.host, STALL_WORDS.format(self.stall_s), ETIMEDOUT))
                self.stop()
                await wait_or_close(self, "fio", EXIT_WAIT_S)  # a hung fio ignores TERM: close the channel
                return
            with contextlib.suppress(TimeoutError):  # at most stall_s: fio's first status brings the deadline nearer
                await asyncio.wait_for(self.ended.wait(), min(left, self.stall_s))

    def _conclude(self) -> None:
        """The summary from fio's last document, or an error saying why there is none."""
        last = self.sampler.last
        if last is not None and self.error is None:
            try:
                summary = parse_fio_json(json.dumps(last), self.host)
            except ValueError as exc:
                self._fail(RunError(self.host, str(exc)))
            else:
                self.summary = replace(
                    summary, end="stopped" if self.stopping else "done", lat_hist=self._measured(summary.lat_hist),
                    cache_mode=cache_mode(self.spec, self.caches_dropped), caches_dropped=self.caches_dropped,
                    extra={**summary.extra, "engine": "fio", "notes": self.stream.notes[-5:]},
                )
                self._emit(self.summary)
        if self.error is None and self.summary is None:
            detail = self.stderr.strip().splitlines()[-1:] if self.stderr.strip() else []
            words = _EXIT_WORDS.get(self.exit_status or 0, "fio ended without a result")
            if self.exit_status is None:
                words = "fio ended without a result (killed, or the channel closed)"
            elif self.exit_status == 0 and not self.ready.is_set():
                words = "fio's wrapper ended before it was ready"
            if self.exit_status == 0 and self.stopping and not self.sampler.last:
                return  # stopped before go: nothing ran, nothing to report
            self._fail(RunError(self.host, words + (f" ({detail[0]})" if detail else "")))

    def _measured(self, total: dict[int, int] | None) -> dict[int, int] | None:
        """The run's histogram less the warm-up's (both cumulative); None when either cannot be read."""
        if total is None or self._warm is None:
            return total
        try:
            warm = fio_histogram(self._warm)
        except BadRecord:
            return None
        return None if warm is None else subtract(total, warm)

    async def go(self, epoch: float = 0.0) -> None:
        """Release the wrapper; the epoch is ignored (fio starts at once, like go(0) for agents)."""
        if self.proc is None or self.ended.is_set():
            return
        with contextlib.suppress(HostError):
            await self.proc.write("go\n")
        if self.stall_s > 0:
            self._stall_deadline = time.monotonic() + self.stall_s + STARTUP_GRACE_S  # until fio's first status
            self._watch = asyncio.create_task(self._watch_stall(), name=f"fio-stall-{self.host}")

    def stop(self) -> None:
        self.stopping = True
        if self.proc is not None:
            self.proc.write_eof()

    async def wait(self, timeout: float = EXIT_WAIT_S) -> None:
        await wait_or_close(self, "fio", timeout)
        if self._watch is not None:
            await self._watch  # ends with fio; awaited so that no task outlives the run

    @property
    def warnings(self) -> list[str]:
        notes = [n for n in self.stream.notes if not (self.stopping and "terminating on signal" in n)]
        return [n if n.startswith("fio") else f"fio: {n}" for n in notes] + garbage_warning(
            "fio status", self.sampler.garbage_count, self.sampler.garbage)

    @property
    def cleanup_problems(self) -> list[str]:
        return []
