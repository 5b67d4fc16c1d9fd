"""nfs-tuner load agent: one stdlib-only file that runs on the target's python3 (>= 3.6).

It is sent over the SSH channel's stdin (see ``experiments.agent_launch``), so nothing is
left on the host. Protocol on stdin: one JSON config line, then optional control lines
(``stop`` or ``{"go": <epoch>}``); EOF, SIGTERM, SIGINT or SIGHUP mean stop. On stdout
it writes one JSON object per line, flushed at once: ``sample`` (or ``telemetry``) lines
at a fixed cadence, ``progress`` during preparation, then ``summary`` and ``cleanup``;
on failure one ``error`` line and a non-zero exit.

It works only inside its own fresh subdirectory of the configured directory and removes
that subdirectory on every way out (done, stop, error, crash). With ``hold_files`` it
keeps the files after the summary (a ``holding`` line) until EOF, a signal, or a stop
line sent while holding, so a test can inspect them on the server first.

Keep this file importable and runnable on Python 3.6: no walrus, no dataclasses, no
``from __future__ import annotations``, no f-string ``=``, no 3.7+ APIs (os.preadv,
time.*_ns, socket.create_server, subprocess capture_output).
"""

import errno
import json
import math
import mmap
import os
import random
import resource
import signal
import socket
import stat
import sys
import threading
import time
import traceback
import zlib

AGENT_VERSION = 1
MIB = 1024 * 1024
FILL_CHUNK = MIB  # block size used to lay out data sets during preparation
STOP_GRACE_S = 5.0  # how long a stop may wait for an I/O call before the file system is probed
SLOW_STOP_MAX_S = 120.0  # how long a stop waits for a call on a file system that still answers (a full export)
PROBE_S = 2.0  # a statvfs slower than this: the file system does not answer
# a stop gives up on a file system that for this long neither answered a probe, late or not, nor took any of the
# host's dirty pages: a dead server. A saturated one answers a statvfs seconds late, or not before the client's
# dirty pages have gone, behind the writes queued on its connection (the lab's contention profile: random writes
# of two clients, 8 of 20 trials broken at a stop given up after one unanswered probe, then 3 of 17 whose stop
# waited 28 s on a flush, the server answering all along)
HANG_S = 20.0
_last_answer = [0.0]  # when a probe last returned (monotonic), in time or late
WORK_PREFIX = ".nfs-tuner-agent-"
# A read's data set kept on the export from one trial to the next (config keep_data names the directory, beside
# the agent's own): laid out once, reused while its size holds; the controller removes it at the end of the run.
KEPT_PREFIX = ".nfs-tuner-kept-"

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_CRASH = 2


# --------------------------------------------------------------------------- errors


class Stopped(Exception):
    """Raised inside a workload when it must end now; args[0] is the reason."""


class PhaseCut(Stopped):
    """A phase reached its time limit: the workload goes on with its next phase (see timed_phase)."""


class AgentFailure(Exception):
    """A failure with a message the admin can act on."""

    def __init__(self, err_no, message):
        Exception.__init__(self, message)
        self.err_no = err_no
        self.message = message


FULL = "the export is full (ENOSPC)"  # said with the free space instead when the agent can read it (with_free_space)
_ADVICE = {
    errno.ENOSPC: FULL + " while {what}: free space on the export "
    "or choose a smaller file size or file count",
    errno.EDQUOT: "the disk quota is exceeded (EDQUOT) while {what}: raise the quota of "
    "this user on the server or choose a smaller data set",
    errno.EACCES: "permission denied while {what}: the test directory must be writable by "
    "the SSH user (check its owner and export options such as root_squash)",
    errno.EPERM: "operation not permitted while {what}: check the test directory's owner "
    "and the export options (root_squash, all_squash)",
    errno.EROFS: "the file system is read-only (EROFS) while {what}: export it rw and "
    "mount it rw",
    errno.EIO: "I/O error (EIO) while {what}: the server stopped answering (a soft mount "
    "timed out) or its disk failed; check the server and the network",
    errno.ETIMEDOUT: "timed out (ETIMEDOUT) while {what}: the server or the network stopped "
    "answering; check both",
    errno.ESTALE: "stale file handle (ESTALE) while {what}: the export changed on the "
    "server during the test; remount the test mount and retry",
    errno.ENOENT: "not found (ENOENT) while {what}: the test directory vanished or is not "
    "mounted; check the mount point",
    errno.EMFILE: "too many open files (EMFILE) while {what}: lower the number of jobs or "
    "raise the open files limit (ulimit -n)",
    errno.ECONNREFUSED: "connection refused while {what}: nothing listens on that port; "
    "start the sink first and open the port in the firewall",
    errno.EHOSTUNREACH: "no route to host while {what}: check the address and the network",
    errno.ENETUNREACH: "network unreachable while {what}: check the address and the routes",
    errno.ECONNRESET: "the peer reset the connection while {what}: the other side stopped",
    errno.EPIPE: "the peer closed the connection while {what}: the other side stopped",
}


def explain(exc, what):
    """Turn an OSError into an AgentFailure whose message says what to do."""
    err_no = getattr(exc, "errno", None)
    advice = _ADVICE.get(err_no)
    if advice is not None:
        return AgentFailure(err_no, advice.format(what=what))
    reason = getattr(exc, "strerror", None) or str(exc) or exc.__class__.__name__
    return AgentFailure(err_no, "%s while %s" % (reason, what))


# --------------------------------------------------------------------------- output


class Out(object):
    """Writes JSON lines to stdout; a closed stdout means the controller is gone."""

    def __init__(self, stream, on_broken):
        self.stream = stream
        self.lock = threading.Lock()
        self.on_broken = on_broken
        self.broken = False

    def emit(self, obj):
        data = (json.dumps(obj, separators=(",", ":"), sort_keys=False) + "\n").encode("utf-8")
        with self.lock:
            if self.broken:
                return
            try:
                self.stream.write(data)
                self.stream.flush()
            except (OSError, ValueError):
                self.broken = True
                self.on_broken("stdout closed")


class Control(object):
    """Stop and go signals from stdin and from POSIX signals."""

    def __init__(self):
        self.stop = threading.Event()
        self.release = threading.Event()  # ends hold_files: EOF, a signal, or a stop while holding
        self.holding = False
        self.go = threading.Event()
        self.go_at = None
        self.reason = None
        self.stop_at = None  # monotonic time of the first stop

    def request_stop(self, reason, final=False):
        """final: the channel or the process ends (EOF, signal), not just the workload."""
        if not self.stop.is_set():
            self.reason = reason
            self.stop_at = time.monotonic()
            self.stop.set()
        if final or self.holding:
            self.release.set()

    def read_stdin(self, stdin):
        """Runs in a daemon thread: stdin EOF is the channel closing."""
        try:
            while True:
                line = stdin.readline()
                if not line:
                    self.request_stop("stdin closed", True)
                    return
                text = line.strip()
                if text == b"stop":
                    self.request_stop("stop command")
                elif text.startswith(b"{"):
                    msg = json.loads(text.decode("utf-8"))
                    if "go" in msg:
                        self.go_at = float(msg["go"])
                        self.go.set()
        except Exception:  # a broken control channel must still stop us
            self.request_stop("stdin error", True)


# --------------------------------------------------------------------------- statistics


def percentile(sorted_values, q):
    """Nearest-rank percentile of an ascending list (q in 0..1)."""
    if not sorted_values:
        return 0.0
    rank = int(math.ceil(q * len(sorted_values))) - 1
    return sorted_values[min(max(rank, 0), len(sorted_values) - 1)]


_HIST_BASE = math.log(1.02)  # 2 % wide buckets for run-long latency percentiles (experiments/latency.py)
_HIST_MAX_KEY = 2047  # the last bucket (~4e11 s) takes anything longer: the summary stays bounded


class Recorder(object):
    """Counts operations from any number of worker threads; the sampler takes intervals."""

    def __init__(self):
        self.lock = threading.Lock()
        self.fold_lock = threading.Lock()  # take() runs on the sampler and at phase cuts
        self.r = self.w = self.ops = self.errs = 0
        self.lats = []
        self.tot_r = self.tot_w = self.tot_ops = self.tot_errs = 0
        self.hist = {}
        self.lat_max = 0.0
        self.hist_from = None  # monotonic time the measured window opens; None: not yet (preparation)
        self.last_op = time.monotonic()

    def op(self, nread, nwritten, lat):
        with self.lock:
            self.r += nread
            self.w += nwritten
            self.ops += 1
            self.lats.append(lat)
            self.tot_r += nread
            self.tot_w += nwritten
            self.tot_ops += 1

    def error(self):
        with self.lock:
            self.errs += 1
            self.tot_errs += 1

    def take(self):
        """The counts since the last take; folds latencies into the run histogram."""
        with self.lock:
            data = (self.r, self.w, self.ops, self.lats, self.errs)
            self.r = self.w = self.ops = self.errs = 0
            self.lats = []
            if data[2]:
                self.last_op = time.monotonic()
        lats = data[3]
        lats.sort()
        with self.fold_lock:
            if self.hist_from is None or time.monotonic() < self.hist_from:
                return data  # preparation or warm-up: in the samples, not in the run's histogram
            hist = self.hist
            for lat in lats:
                key = min(int(math.log(max(lat, 1e-7) * 1e6 + 1.0) / _HIST_BASE), _HIST_MAX_KEY)
                hist[key] = hist.get(key, 0) + 1
            if lats and lats[-1] > self.lat_max:
                self.lat_max = lats[-1]
        return data

    def run_percentile_ms(self, q):
        total = sum(self.hist.values())
        if not total:
            return 0.0
        want = int(math.ceil(q * total))
        seen = 0
        for key in sorted(self.hist):
            seen += self.hist[key]
            if seen >= want:
                return min((math.exp((key + 1) * _HIST_BASE) - 1.0) / 1e3, self.lat_max * 1e3)
        return self.lat_max * 1e3


class Pacer(object):
    """Holds the operations of all jobs to at most ``rate`` per second (0: as fast as they go).

    Each operation takes the next free slot, ``1/rate`` after the last; a job that is
    behind (the file system was slower than the rate) starts at once and the slots
    restart from now, so a slow spell is never made up with a burst.
    """

    def __init__(self, rate):
        self.gap = 1.0 / rate if 0 < rate < float("inf") else 0.0  # nan fails the test too
        self.lock = threading.Lock()
        self.next = 0.0

    def wait(self, ctx):
        if not self.gap:
            return
        with self.lock:
            now = time.monotonic()
            slot = max(self.next, now)
            self.next = slot + self.gap
        if slot > now:
            ctx.sleep_until(slot)


# --------------------------------------------------------------------------- context


class Ctx(object):
    """Everything a workload needs: config, stop checks, the recorder, phases, cache state."""

    def __init__(self, cfg, out, ctl):
        self.cfg = cfg
        self.out = out
        self.ctl = ctl
        self.interval = float(cfg.get("interval", 0.25))
        self.duration = float(cfg.get("duration") or 0.0)
        self.stall_s = float(cfg.get("stall_timeout", 120.0))  # one fsync of much dirty data may take long
        self.rec = Recorder()
        self.pacer = Pacer(param(cfg, "rate_iops", 0.0, float, 0.0))  # operations per second on this client
        self.t_agent = time.monotonic()
        self.t0 = None  # monotonic start of the run phase
        self.t_end = None
        self.deadline = None
        self.done = threading.Event()
        self.started = False  # the workload thread runs
        self.wake = threading.Event()
        self.cut_lock = threading.Lock()
        self.cuts = []  # samples cut at phase changes, emitted by the sampler
        self.phase = "prepare"
        self.phase_t = None
        self.phase_tot = None
        self.phases = {}
        self.progress_done = 0
        self.progress_total = 0
        self.count = None  # dir_scaling: entries in the directory now
        self.end = "done"
        self.failure = None
        self.workdir = None
        self.kept_path = None  # the kept data directory (config keep_data), once lay_out made or checked it
        self.direct_used = False
        self.cache_modes = []
        self.drop_ok = None
        self.dataset_bytes = 0
        self.extra = {}  # workload-specific summary fields
        # Phased workloads: the seconds their phases may take in all (0: no limit), the current phase's
        # deadline, the phases that ended at theirs, and the entries they made that the cleanup removes.
        self.time_limit = param(cfg, "time_limit_s", 0.0, float, 0.0)
        self.phase_deadline = None
        self.phase_planned = None
        self.cut = []
        self.left = 0
        slow = cfg.get("debug_slow_phase") or {}  # test hook: {phase: seconds added to each of its operations}
        self.slow_phase = dict((str(k), float(v)) for k, v in slow.items()) if isinstance(slow, dict) else {}
        self.cpu0 = self.cpu1 = cpu_seconds()

    # stop checks: called once per operation, so cheap
    def check(self):
        if self.ctl.stop.is_set():
            raise Stopped("stopped")
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise Stopped("duration")
        # a phase ends at its limit once it completed one operation: every phase has a rate
        tot = self.phase_tot
        if self.phase_deadline is not None and time.monotonic() >= self.phase_deadline \
                and tot is not None and self.rec.tot_ops > tot[2]:
            raise PhaseCut("time limit")

    def sleep_until(self, when_monotonic):
        while True:
            left = when_monotonic - time.monotonic()
            if left <= 0:
                return
            if self.ctl.stop.wait(min(left, 0.1)):
                raise Stopped("stopped")

    def path(self, *parts):
        return os.path.join(self.workdir, *parts)

    def lay_out(self, name, size, buf):
        """The data file ``name`` of ``size`` bytes, laid out (not measured): in the agent's own directory, or in the
        kept directory (config keep_data), where a file of that size from an earlier trial is used as it is."""
        keep = self.cfg.get("keep_data")
        if not keep:
            path = self.path(name)
            fill_file(self, path, size, buf)
            return path
        if self.kept_path is None:  # made or checked once: a sequential read's jobs each lay out a file there
            self.kept_path = make_kept_dir(self.cfg, self.workdir)
        path = os.path.join(self.kept_path, name)
        try:
            st = os.lstat(path)
        except OSError:
            st = None
        if st is not None and stat.S_ISREG(st.st_mode) and st.st_size == size:
            self.progress_done += size
            self.dataset_bytes += size
            self.extra["data_kept"] = self.extra.get("data_kept", 0) + size
            return path
        part = path + ".part"  # renamed once whole: a layout cut short is never taken for a data set
        fill_file(self, part, size, buf)
        try:
            os.rename(part, path)
        except OSError as exc:
            raise explain(exc, "naming the data file %s" % path)
        return path

    def begin_run(self):
        """End of preparation: wait for the aligned start, then the clock starts."""
        self.out.emit({"type": "ready", "prepare_s": round(time.monotonic() - self.t_agent, 3)})
        if self.cfg.get("wait_go"):
            while not self.ctl.go.wait(0.1):
                self.check()
            go_at = self.ctl.go_at
        else:
            go_at = self.cfg.get("start_at")
        if go_at:
            self.sleep_until(time.monotonic() + (float(go_at) - time.time()))
        self.rec.take()  # preparation never counts
        self.cpu0 = cpu_seconds()
        self.t0 = time.monotonic()
        # the histogram covers what the controller measures: the intervals that end after its warm-up
        self.rec.hist_from = self.t0 + max(float(self.cfg.get("latency_from") or 0.0), 0.0)
        self.rec.last_op = self.t0
        self.phase_t = self.t0
        if self.duration > 0:
            self.deadline = self.t0 + self.duration
        self.out.emit({"type": "start", "epoch": time.time()})
        self.wake.set()

    def begin_phase(self, name, left=0, planned=None):
        """Switch the phase label; the sampler emits the old phase's tail as its own sample.

        ``left``: the phases left, this one included. Under a time limit this phase gets an even
        share of the time that is left, so a later phase always gets at least the time of an
        earlier one: the removing phase as long as the creating one. ``planned``: the operations
        it does without a limit (the summary's figure weighs a cut phase by them)."""
        if self.cfg.get("pause_before") == name:  # test hook: files of earlier phases stay for a look
            self.out.emit({"type": "paused", "before": name})
            self.ctl.stop.wait()  # the paused phase's time includes the pause
            raise Stopped("stopped")
        with self.cut_lock:  # the sampler labels intervals under the same lock
            now = time.monotonic()
            if self.t0 is not None and self.phase_t is not None and self.phase != "prepare":
                self.cuts.append((self.rec.take(), self.phase, now, self.count))
                self._close_phase(now)
            self.phase = name
            self.phase_t = now
            rec = self.rec
            self.phase_tot = (rec.tot_r, rec.tot_w, rec.tot_ops)
            self.phase_planned = planned
            self.phase_deadline = None
            if self.time_limit > 0 and left > 0 and self.t0 is not None:
                self.phase_deadline = now + max(self.t0 + self.time_limit - now, 0.0) / left
        self.wake.set()

    def _close_phase(self, now):
        if self.phase_tot is None:
            return
        rec = self.rec
        secs = max(now - self.phase_t, 1e-9)
        ops = rec.tot_ops - self.phase_tot[2]
        nbytes = rec.tot_r - self.phase_tot[0] + rec.tot_w - self.phase_tot[1]
        self.phases[self.phase] = {
            "ops": ops,
            "bytes": nbytes,
            "seconds": round(secs, 4),
            "ops_per_s": round(ops / secs, 2),
            "bytes_per_s": round(nbytes / secs, 1),
        }
        if self.phase_planned is not None:
            self.phases[self.phase]["planned"] = self.phase_planned
        self.phase_tot = None

    def finish_phases(self):
        if self.t0 is not None and self.phase != "prepare":
            self._close_phase(time.monotonic())

    # cache honesty
    def before_read(self, data_workload):
        """Drop what the client caches before a read phase; remember what worked.

        Called before the files are opened, so whether O_DIRECT took is decided later.
        """
        dropped = drop_caches()
        if self.drop_ok is None or not dropped:
            self.drop_ok = dropped
        if dropped:
            fallback = "dropped"
        elif data_workload and self.extra.get("fadvise_ok"):
            fallback = "fadvise"
        elif self.dataset_bytes > mem_total_bytes() > 0:
            fallback = "dataset>ram"
        else:
            fallback = "cached!"
        self.cache_modes.append((data_workload and bool(self.cfg.get("direct")), fallback))

    def cache_mode(self):
        if self.cfg.get("mode") == "dir_scaling":
            return "n/a"  # creates are synchronous on NFS; there is nothing to cache
        if not self.cache_modes:
            # write-only: honest if O_DIRECT or fsync forces the data out
            if self.direct_used:
                return "o_direct"
            return "fsync" if self.cfg.get("fsync", True) else "cached!"
        direct_ok = self.direct_used and not self.extra.get("o_direct_unsupported")
        modes = ["o_direct" if wanted and direct_ok else fallback for wanted, fallback in self.cache_modes]
        order = ["cached!", "dataset>ram", "fadvise", "dropped", "o_direct"]
        return min(modes, key=order.index)  # the weakest mode used


def cpu_seconds():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def drop_caches():
    """sync, then drop page cache, dentries and inodes; works only as root."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except (OSError, IOError):
        return False


def mem_total_bytes():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, IOError, ValueError):
        pass
    return 0


def fadvise_dontneed(fd):
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        return True
    except (OSError, AttributeError):
        return False


# --------------------------------------------------------------------------- I/O helpers


def aligned_buffer(size, fill):
    """An anonymous mmap is page aligned, which O_DIRECT needs; random data defeats compression."""
    buf = mmap.mmap(-1, max(size, 1))
    if fill:
        buf.write(os.urandom(size))
        buf.seek(0)
    return buf


def open_file(ctx, path, flags, direct):
    """Open with O_DIRECT when asked and the file system allows it, else buffered."""
    if direct and hasattr(os, "O_DIRECT"):
        try:
            fd = os.open(path, flags | os.O_DIRECT, 0o644)
            ctx.direct_used = True
            return fd, True
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                raise explain(exc, "opening %s" % path)
            ctx.extra["o_direct_unsupported"] = True
    try:
        return os.open(path, flags, 0o644), False
    except OSError as exc:
        raise explain(exc, "opening %s" % path)


def write_all(fd, buf, n):
    done = os.write(fd, buf if n == len(buf) else memoryview(buf)[:n])
    while done < n:  # short writes are rare on files but legal
        done += os.write(fd, memoryview(buf)[done:n])
    return n


def kept_dir(cfg):
    """The kept data set's directory (config keep_data: a name of ours, beside the agent's own directory)."""
    name = cfg.get("keep_data")
    if not isinstance(name, str) or not name.startswith(KEPT_PREFIX) or len(name) > 80 \
            or not all(c.isalnum() or c in "-_." for c in name) or ".." in name:
        raise AgentFailure(errno.EINVAL, "config keep_data must be a name starting with %s, not %r" % (KEPT_PREFIX, name))
    return os.path.join(cfg["dir"], name)


def make_kept_dir(cfg, workdir):
    """Make the kept directory, or take the one an earlier trial made: a directory owned as the agent's own
    ``workdir`` is (the login's, or whom the export maps it to: root_squash makes both nobody's)."""
    path = kept_dir(cfg)
    try:
        os.mkdir(path, 0o700)
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            raise explain(exc, "creating the kept data directory %s" % path)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.lstat(workdir).st_uid:
        raise AgentFailure(errno.EPERM, "%s is not a directory this login made: remove it, it is not nfs-tuner's" % path)
    return path


def fill_file(ctx, path, size, buf):
    """Lay out a data file for read workloads (not measured), then push it out of the cache."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
        try:
            left = size
            while left > 0:
                ctx.check()
                n = min(left, len(buf))
                write_all(fd, buf, n)
                left -= n
                ctx.progress_done += n
            os.fsync(fd)
            ctx.extra["fadvise_ok"] = fadvise_dontneed(fd) and ctx.extra.get("fadvise_ok", True)
        finally:
            os.close(fd)
    except OSError as exc:
        raise explain(exc, "creating the data file %s" % path)
    ctx.dataset_bytes += size


def run_jobs(ctx, n, target, args_for):
    """Run target(ctx, j, *args_for(j)) in n threads; the first failure wins."""
    if n == 1:
        target(ctx, 0, *args_for(0))
        return
    errors = []

    def body(j):
        try:
            target(ctx, j, *args_for(j))
        except BaseException as exc:  # handed to the driver, which reports it
            errors.append(exc)
            if not isinstance(exc, Stopped):
                ctx.ctl.request_stop("a job failed")

    threads = [threading.Thread(target=body, args=(j,), name="job-%d" % j) for j in range(n)]
    for t in threads:
        t.daemon = True
        t.start()
    for t in threads:
        t.join()
    real = [e for e in errors if not isinstance(e, Stopped)]
    if real:
        raise real[0]
    if errors:  # a stop outranks a phase's time limit
        raise next((e for e in errors if not isinstance(e, PhaseCut)), errors[0])


def param(cfg, name, default, kind=int, minimum=None):
    """A config value of the right type, or a clear failure."""
    value = cfg.get(name, default)
    try:
        value = kind(value)
    except (TypeError, ValueError):
        raise AgentFailure(errno.EINVAL, "config %s=%r is not a valid %s" % (name, value, kind.__name__))
    if minimum is not None and value < minimum:
        raise AgentFailure(errno.EINVAL, "config %s=%r must be at least %r" % (name, value, minimum))
    return value


# --------------------------------------------------------------------------- sequential


def _seq_params(ctx):
    cfg = ctx.cfg
    bs = param(cfg, "block_size", MIB, int, 512)
    size = param(cfg, "file_size", 1024 * MIB, int, bs)
    if size % bs:
        raise AgentFailure(errno.EINVAL, "config file_size=%d must be a multiple of block_size=%d" % (size, bs))
    jobs = param(cfg, "jobs", 1, int, 1)
    return bs, size, jobs


def _write_pass(ctx, j, path, bs, size, truncate):
    direct = bool(ctx.cfg.get("direct", False))
    fsync = bool(ctx.cfg.get("fsync", True))
    buf = aligned_buffer(bs, True)
    flags = os.O_CREAT | os.O_WRONLY | (os.O_TRUNC if truncate else 0)
    fd, _ = open_file(ctx, path, flags, direct)
    rec = ctx.rec
    clock = time.perf_counter
    try:
        try:
            left = size
            while left > 0:
                ctx.pacer.wait(ctx)
                ctx.check()
                t = clock()
                write_all(fd, buf, bs)
                rec.op(0, bs, clock() - t)
                left -= bs
            if fsync:  # like iozone -e: the flush is part of the measured time
                t = clock()
                os.fsync(fd)
                rec.op(0, 0, clock() - t)
        except OSError as exc:
            rec.error()
            raise explain(exc, "writing %s" % path)
    finally:
        try:
            os.close(fd)  # NFS flushes on close; an error here is a write error
        except OSError as exc:
            raise explain(exc, "closing %s" % path)


def _read_pass(ctx, j, path, bs):
    direct = bool(ctx.cfg.get("direct", False))
    buf = aligned_buffer(bs, False)
    fd, _ = open_file(ctx, path, os.O_RDONLY, direct)
    if hasattr(os, "posix_fadvise"):
        # Say it is a sequential read, as cp and fio do: the kernel doubles the
        # readahead window for such files.
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_SEQUENTIAL)
        except OSError:
            pass
    rec = ctx.rec
    clock = time.perf_counter
    try:
        while True:
            ctx.pacer.wait(ctx)
            ctx.check()
            t = clock()
            n = os.readv(fd, [buf])
            if n <= 0:
                return
            rec.op(n, 0, clock() - t)
    except OSError as exc:
        rec.error()
        raise explain(exc, "reading %s" % path)
    finally:
        os.close(fd)


def _loop(ctx, body):
    body()
    while ctx.cfg.get("loop"):
        body()


class SeqWrite(object):
    def __init__(self, ctx):
        self.bs, self.size, self.jobs = _seq_params(ctx)

    def prepare(self, ctx):
        pass

    def run(self, ctx):
        ctx.begin_phase("write")
        paths = [ctx.path("seqw.%d" % j) for j in range(self.jobs)]
        _loop(ctx, lambda: run_jobs(ctx, self.jobs, _write_pass, lambda j: (paths[j], self.bs, self.size, True)))


class SeqRead(object):
    reads = True

    def __init__(self, ctx):
        self.bs, self.size, self.jobs = _seq_params(ctx)

    def prepare(self, ctx):
        ctx.progress_total = self.size * self.jobs
        buf = aligned_buffer(FILL_CHUNK, True)
        self.paths = [ctx.lay_out("seqr.%d" % j, self.size, buf) for j in range(self.jobs)]
        if self.reads:  # the first drop stays out of the measured time (fio drops before it starts too)
            ctx.before_read(True)

    def run(self, ctx):
        ctx.begin_phase("read")
        passes = [0]

        def one_pass():
            if passes[0]:
                ctx.before_read(True)
            passes[0] += 1
            run_jobs(ctx, self.jobs, _read_pass, lambda j: (self.paths[j], self.bs))

        _loop(ctx, one_pass)


class Rewrite(SeqRead):
    reads = False

    def run(self, ctx):
        ctx.begin_phase("rewrite")
        _loop(ctx, lambda: run_jobs(ctx, self.jobs, _write_pass, lambda j: (self.paths[j], self.bs, self.size, False)))


# --------------------------------------------------------------------------- random / mixed


class RandomIO(object):
    """rand_read, rand_write and mixed: N threads on one shared file, aligned random offsets."""

    def __init__(self, ctx, read_share):
        cfg = ctx.cfg
        self.bs = param(cfg, "block_size", 4096, int, 512)
        self.size = param(cfg, "file_size", 1024 * MIB, int, self.bs)
        self.jobs = param(cfg, "jobs", 4, int, 1)
        self.io_size = param(cfg, "io_size", self.size, int, self.bs)
        self.read_share = float(cfg.get("read_share", read_share))
        if not 0.0 <= self.read_share <= 1.0:
            raise AgentFailure(errno.EINVAL, "config read_share must be between 0 and 1")
        self.seed = param(cfg, "seed", 42, int)

    def prepare(self, ctx):
        ctx.progress_total = self.size
        self.path_ = ctx.lay_out("rand.0", self.size, aligned_buffer(FILL_CHUNK, True))
        if self.read_share > 0:  # outside the measured time
            ctx.before_read(True)

    def run(self, ctx):
        ctx.begin_phase("random")
        per_job = self.io_size // self.bs // self.jobs
        _loop(ctx, lambda: run_jobs(ctx, self.jobs, self._job, lambda j: (per_job,)))
        if self.read_share < 1 and ctx.cfg.get("fsync"):
            fd = os.open(self.path_, os.O_WRONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def _job(self, ctx, j, nops):
        rng = random.Random(self.seed * 1000 + j)
        blocks = self.size // self.bs
        bs = self.bs
        share = self.read_share
        buf = aligned_buffer(bs, share < 1.0)
        flags = os.O_RDWR if 0.0 < share < 1.0 else (os.O_RDONLY if share >= 1.0 else os.O_WRONLY)
        fd, _ = open_file(ctx, self.path_, flags, bool(ctx.cfg.get("direct", False)))
        rec = ctx.rec
        clock = time.perf_counter
        try:
            for _ in range(nops):
                ctx.pacer.wait(ctx)
                ctx.check()
                off = rng.randrange(blocks) * bs
                reading = share >= 1.0 or (share > 0.0 and rng.random() < share)
                t = clock()
                os.lseek(fd, off, os.SEEK_SET)
                if reading:
                    n = os.readv(fd, [buf])
                    rec.op(n, 0, clock() - t)
                else:
                    write_all(fd, buf, bs)
                    rec.op(0, bs, clock() - t)
        except OSError as exc:
            rec.error()
            raise explain(exc, "random I/O on %s" % self.path_)
        finally:
            os.close(fd)


# --------------------------------------------------------------------------- metadata


def _timed(ctx, fn, nread, nwritten, what):
    """One metadata operation: paced, checked, timed, recorded, errors explained."""
    ctx.pacer.wait(ctx)
    ctx.check()
    t = time.perf_counter()
    try:
        if ctx.slow_phase.get(ctx.phase):  # test hook: this phase's operations take as long as a slow disk's
            time.sleep(ctx.slow_phase[ctx.phase])
        fn()
    except OSError as exc:
        ctx.rec.error()
        raise explain(exc, what)
    ctx.rec.op(nread, nwritten, time.perf_counter() - t)


def _create_file(path, data, fsync):
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
    try:
        if data:
            write_all(fd, data, len(data))
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _read_file(path, size):
    fd = os.open(path, os.O_RDONLY)
    try:
        while os.read(fd, max(size, 4096)):
            pass
    finally:
        os.close(fd)


class SmallFiles(object):
    """bonnie++-style create/stat/read/delete of many small files, flat or in a tree."""

    def __init__(self, ctx):
        cfg = ctx.cfg
        self.count = param(cfg, "count", 2000, int, 1)
        self.size = param(cfg, "file_size", 4096, int, 0)
        self.jobs = param(cfg, "jobs", 1, int, 1)
        self.layout = cfg.get("layout", "flat")
        if self.layout not in ("flat", "tree"):
            raise AgentFailure(errno.EINVAL, "config layout must be 'flat' or 'tree'")
        self.fanout = param(cfg, "fanout", 32, int, 2)
        self.fsync = bool(cfg.get("fsync", False))

    def prepare(self, ctx):
        if self.layout == "flat":
            self.dirs = [ctx.path("sf")]
        else:  # two levels of fanout directories; files spread over the leaves
            self.dirs = [ctx.path("sf", "d%03d" % a, "d%03d" % b) for a in range(self.fanout) for b in range(self.fanout)]
        ctx.dataset_bytes = self.count * self.size

    def _file(self, i):
        return os.path.join(self.dirs[i % len(self.dirs)], "f%07d" % i)

    def _slice(self, j):
        # paths are computed per index: a list of millions of them would cost seconds and RAM
        return (range(j, self.count, self.jobs),)

    def run(self, ctx):
        data = os.urandom(self.size)
        fsync = self.fsync
        size = self.size
        name = self._file
        jobs = self.jobs
        # what each job created and removed: under a time limit a prefix of its slice, which the
        # later phases work on; the cleanup removes what the delete phase did not
        made = [0] * jobs
        gone = [0] * jobs
        dirs = [0]

        def create(ctx_, j, indices):
            for i in indices:
                p = name(i)
                _timed(ctx, lambda: _create_file(p, data, fsync), 0, size, "creating %s" % p)
                made[j] += 1

        def create_all():
            for d in self.dirs:  # one op per leaf directory, before the jobs race for them
                _timed(ctx, lambda: _makedirs(d), 0, 0, "creating directory %s" % d)
                dirs[0] += 1
            run_jobs(ctx, jobs, create, self._slice)

        def each(fn, nread, what, tally=None):
            def job(ctx_, j, indices):
                for i in indices:
                    p = name(i)
                    _timed(ctx, lambda: fn(p), nread, 0, what % p)
                    if tally is not None:
                        tally[j] += 1
            return lambda: run_jobs(ctx, jobs, job, lambda j: (range(j, j + made[j] * jobs, jobs),))

        timed_phase(ctx, "create", 4, self.count + len(self.dirs), create_all)
        ctx.before_read(False)
        timed_phase(ctx, "stat", 3, self.count, each(os.stat, 0, "stat of %s"))
        ctx.before_read(False)
        timed_phase(ctx, "read", 2, self.count, each(lambda p: _read_file(p, size), size, "reading %s"))
        timed_phase(ctx, "delete", 1, self.count, each(os.unlink, 0, "deleting %s", gone))
        ctx.left = sum(made) - sum(gone) + dirs[0]


def timed_phase(ctx, name, left, planned, body):
    """One phase of a phased workload. Under a time limit it ends at its share of the time left
    (Ctx.begin_phase) with the rate of what it completed, and the next phase works on that."""
    ctx.begin_phase(name, left, planned)
    try:
        body()
    except PhaseCut:
        if ctx.ctl.stop.is_set():
            raise Stopped("stopped")
        ctx.cut.append(name)


def _makedirs(path):
    try:
        os.makedirs(path)
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            raise


# --------------------------------------------------------------------------- tree


def synthetic_tree(files, seed):
    """A tree shaped like a kernel source tarball: (dirs, [(relpath, size)]), deterministic.

    About 15 files per directory, nesting up to 6 levels, log-normal sizes around 6 KiB
    (median) with a long tail capped at 512 KiB; random.Random(int) is stable across
    Python versions, so every host builds the same tree.
    """
    rng = random.Random(seed)
    dirs = [""]
    out = []
    frontier = [("", 0)]
    while len(out) < files:
        if not frontier:
            frontier = [(d, 0) for d in dirs]
        parent, depth = frontier.pop(rng.randrange(len(frontier)))
        nfiles = min(files - len(out), rng.randint(5, 25))
        for i in range(nfiles):
            size = int(min(rng.lognormvariate(math.log(6000), 1.2), 512 * 1024))
            out.append((os.path.join(parent, "f%04d_%d.c" % (len(out), i)), size))
        if depth < 6:
            for k in range(rng.randint(1, 4)):
                d = os.path.join(parent, "d%05d" % len(dirs))
                dirs.append(d)
                frontier.append((d, depth + 1))
    used = set([""])
    for rel, _ in out:
        d = os.path.dirname(rel)
        while d not in used:
            used.add(d)
            d = os.path.dirname(d)
    return [d for d in dirs if d in used and d], out


class Tree(object):
    def __init__(self, ctx):
        self.files = param(ctx.cfg, "files", 10000, int, 1)
        self.seed = param(ctx.cfg, "seed", 1, int)

    def prepare(self, ctx):
        self.dirs, self.entries = synthetic_tree(self.files, self.seed)
        ctx.dataset_bytes = sum(s for _, s in self.entries)
        ctx.extra["tree_files"] = len(self.entries)
        ctx.extra["tree_dirs"] = len(self.dirs)
        ctx.extra["tree_bytes"] = ctx.dataset_bytes

    def run(self, ctx):
        root = ctx.path("tree")
        blob = os.urandom(512 * 1024)
        made = [0, 0]  # directories, files: under a time limit prefixes of self.dirs and self.entries
        gone = [0]
        entries = len(self.dirs) + len(self.entries)

        def extract():
            _timed(ctx, lambda: os.mkdir(root), 0, 0, "creating %s" % root)
            for d in self.dirs:  # parents before children
                p = os.path.join(root, d)
                _timed(ctx, lambda: os.mkdir(p), 0, 0, "creating directory %s" % p)
                made[0] += 1
            for rel, size in self.entries:
                p = os.path.join(root, rel)
                _timed(ctx, lambda: _create_file(p, memoryview(blob)[:size], False), 0, size, "extracting %s" % p)
                made[1] += 1

        def find():
            stack = [root]
            while stack:  # find(1) with a stat of every entry
                d = stack.pop()
                try:
                    found = list(os.scandir(d))
                except OSError as exc:
                    raise explain(exc, "listing %s" % d)
                for e in found:
                    _timed(ctx, lambda: e.stat(follow_symlinks=False), 0, 0, "stat of %s" % e.path)
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)

        def remove():
            for rel, _ in self.entries[:made[1]]:
                p = os.path.join(root, rel)
                _timed(ctx, lambda: os.unlink(p), 0, 0, "removing %s" % p)
                gone[0] += 1
            for d in sorted(self.dirs[:made[0]], key=len, reverse=True):
                p = os.path.join(root, d)
                _timed(ctx, lambda: os.rmdir(p), 0, 0, "removing directory %s" % p)
                gone[0] += 1

        timed_phase(ctx, "extract", 3, entries + 1, extract)
        ctx.before_read(False)
        timed_phase(ctx, "find", 2, entries, find)
        timed_phase(ctx, "remove", 1, entries, remove)
        ctx.left = made[0] + made[1] - gone[0]


# --------------------------------------------------------------------------- dir scaling


MAX_CURVE_POINTS = 200  # dir_scaling: rate-vs-entries points per run, whatever the count


class DirScaling(object):
    """Create files in one directory up to N; samples carry the count for a rate-vs-size curve.

    ``layout`` "flat" puts every file in one directory; "hashed" spreads them over
    ``fanout`` subdirectories by a hash of the name (the usual fix for a huge directory).
    ``points`` > 0: a "point" record (entries so far, create rate over the bucket) every
    count/points files, at most MAX_CURVE_POINTS, so a million files send a bounded curve.
    """

    def __init__(self, ctx):
        self.count = param(ctx.cfg, "count", 100000, int, 1)
        self.size = param(ctx.cfg, "file_size", 0, int, 0)
        self.fsync = bool(ctx.cfg.get("fsync", False))
        self.layout = ctx.cfg.get("layout", "flat")
        if self.layout not in ("flat", "hashed"):
            raise AgentFailure(errno.EINVAL, "layout must be flat or hashed, not %r" % (self.layout,))
        self.fanout = param(ctx.cfg, "fanout", 256, int, 1) if self.layout == "hashed" else 1
        points = min(param(ctx.cfg, "points", 0, int, 0), MAX_CURVE_POINTS, self.count)
        self.bucket = -(-self.count // points) if points else 0  # files per point, rounded up
        self.curve = []

    def prepare(self, ctx):
        self.dir = ctx.path("scale")
        self._check_inodes(os.path.dirname(self.dir))
        try:
            os.mkdir(self.dir)
            for d in range(self.fanout if self.layout == "hashed" else 0):
                os.mkdir(os.path.join(self.dir, "%02x" % d))
        except OSError as exc:
            raise explain(exc, "creating %s" % self.dir)
        ctx.count = 0

    def _check_inodes(self, where):
        """Fail before the first create when the export cannot hold every entry (ext4 fixes its inode
        count at mkfs): an hour of creates that ends in ENOSPC tells the admin nothing."""
        try:
            st = os.statvfs(where)
        except OSError:
            return  # the creates will say what is wrong
        need = self.count + self.fanout + 1
        if st.f_files and st.f_favail < need:  # f_files 0: the server does not count inodes
            raise AgentFailure(errno.ENOSPC, "the export has %d free inodes (files) and this study needs %d: "
                               "ask for fewer entries, or use an export with more inodes (ext4 fixes them "
                               "at mkfs: -N or -i; XFS makes them as needed)" % (st.f_favail, need))

    def _path(self, i):
        name = "f%09d" % i
        if self.layout == "flat":
            return os.path.join(self.dir, name)
        return os.path.join(self.dir, "%02x" % (zlib.crc32(name.encode("ascii")) % self.fanout), name)

    def run(self, ctx):
        data = os.urandom(self.size)
        timed_delete = ctx.cfg.get("timed_delete", True)
        marks = [time.monotonic()]

        def create():
            for i in range(self.count):
                p = self._path(i)
                _timed(ctx, lambda: _create_file(p, data, self.fsync), 0, self.size, "creating %s" % p)
                ctx.count = i + 1
                if self.bucket and (ctx.count % self.bucket == 0 or ctx.count == self.count):
                    now = time.monotonic()
                    done = ctx.count - (ctx.count - 1) // self.bucket * self.bucket
                    ctx.out.emit({"type": "point", "layout": self.layout, "entries": ctx.count,
                                  "rate": round(done / max(now - marks[0], 1e-9), 3), "seconds": round(now - marks[0], 6)})
                    marks[0] = now

        def delete():
            for i in range(ctx.count - 1, -1, -1):  # what the create phase made
                p = self._path(i)
                _timed(ctx, lambda: os.unlink(p), 0, 0, "deleting %s" % p)
                ctx.count = i

        timed_phase(ctx, "create", 2 if timed_delete else 1, self.count, create)
        if timed_delete:
            timed_phase(ctx, "delete", 1, self.count, delete)
        ctx.left = ctx.count


# --------------------------------------------------------------------------- network


def _sock_opts(s, cfg):
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = int(cfg.get("socket_buffer", 0))
    if buf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, buf)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, buf)


class TcpSink(object):
    """Accepts `streams` connections and discards what arrives; ends when all have closed."""

    needs_dir = False

    def __init__(self, ctx):
        self.port = param(ctx.cfg, "port", 0, int, 0)
        self.bind = str(ctx.cfg.get("bind", "0.0.0.0"))
        self.streams = param(ctx.cfg, "streams", 1, int, 1)
        self.bs = param(ctx.cfg, "block_size", 128 * 1024, int, 1)

    def prepare(self, ctx):
        family = socket.AF_INET6 if ":" in self.bind else socket.AF_INET
        self.srv = socket.socket(family, socket.SOCK_STREAM)
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.srv.bind((self.bind, self.port))
            self.srv.listen(self.streams)
        except OSError as exc:
            raise explain(exc, "listening on %s port %d" % (self.bind, self.port))
        self.srv.settimeout(0.2)
        ctx.out.emit({"type": "listening", "port": self.srv.getsockname()[1]})

    def run(self, ctx):
        ctx.begin_phase("receive")
        try:
            run_jobs(ctx, self.streams, self._stream, lambda j: ())
        finally:
            self.srv.close()

    def _stream(self, ctx, j):
        while True:  # accept, polling for stop
            ctx.check()
            try:
                conn, _ = self.srv.accept()
                break
            except socket.timeout:
                continue
        conn.settimeout(0.2)
        _sock_opts(conn, ctx.cfg)
        buf = bytearray(self.bs)
        rec = ctx.rec
        clock = time.perf_counter
        try:
            while True:
                ctx.check()
                t = clock()
                try:
                    n = conn.recv_into(buf)
                except socket.timeout:
                    continue
                if not n:
                    return
                rec.op(n, 0, clock() - t)
        except OSError as exc:
            rec.error()
            raise explain(exc, "receiving stream %d" % j)
        finally:
            conn.close()


class TcpSource(object):
    """Sends to a sink over `streams` connections until size or duration."""

    needs_dir = False

    def __init__(self, ctx):
        self.host = str(ctx.cfg.get("host", ""))
        if not self.host:
            raise AgentFailure(errno.EINVAL, "config host is required for tcp_source")
        self.port = param(ctx.cfg, "port", 0, int, 1)
        self.streams = param(ctx.cfg, "streams", 1, int, 1)
        self.bs = param(ctx.cfg, "block_size", 128 * 1024, int, 1)
        self.size = param(ctx.cfg, "size", 0, int, 0)  # 0: until duration or stop

    def prepare(self, ctx):
        self.socks = []
        for j in range(self.streams):
            try:
                s = socket.create_connection((self.host, self.port), timeout=5.0)
            except OSError as exc:
                for s in self.socks:
                    s.close()
                raise explain(exc, "connecting to %s port %d" % (self.host, self.port))
            s.settimeout(0.5)
            _sock_opts(s, ctx.cfg)
            self.socks.append(s)

    def run(self, ctx):
        ctx.begin_phase("send")
        per = self.size // self.streams if self.size else 0
        try:
            run_jobs(ctx, self.streams, self._stream, lambda j: (self.socks[j], per))
        finally:
            for s in self.socks:
                s.close()

    def _stream(self, ctx, j, sock, limit):
        view = memoryview(os.urandom(self.bs))
        rec = ctx.rec
        clock = time.perf_counter
        sent = 0
        try:
            while not limit or sent < limit:
                ctx.check()
                t = clock()
                try:
                    n = sock.send(view if not limit else view[: min(self.bs, limit - sent)])
                except socket.timeout:
                    continue
                sent += n
                rec.op(0, n, clock() - t)
            sock.shutdown(socket.SHUT_WR)
        except OSError as exc:
            rec.error()
            raise explain(exc, "sending stream %d to %s" % (j, self.host))


# --------------------------------------------------------------------------- telemetry


def parse_diskstats(text):
    """{device: (sectors_read, sectors_written, ms_doing_io, weighted_ms)}; sectors are 512 bytes.

    weighted_ms (field 14) grows by the requests in flight each millisecond, so its rate is the
    average queue; ms_doing_io only says one was in flight. None on a line too short to hold it."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 13:
            out[f[2]] = (int(f[5]), int(f[9]), int(f[12]), int(f[13]) if len(f) >= 14 else None)
    return out


def parse_net_dev(text):
    """{nic: (rx_bytes, tx_bytes)}."""
    out = {}
    for line in text.splitlines():
        if ":" not in line:
            continue
        name, rest = line.split(":", 1)
        f = rest.split()
        if len(f) >= 9 and f[0].isdigit():
            out[name.strip()] = (int(f[0]), int(f[8]))
    return out


def parse_cpu(text):
    """(busy_jiffies, total_jiffies, iowait_jiffies) of the aggregate cpu line."""
    for line in text.splitlines():
        if line.startswith("cpu "):
            v = [int(x) for x in line.split()[1:]]
            v += [0] * (8 - len(v))
            total = sum(v[:8])  # guest time is already inside user
            idle = v[3] + v[4]
            return total - idle, total, v[4]
    return 0, 0, 0


def parse_pool_stats(text):
    """Column sums over nfsd pools, keyed by the header's names."""
    lines = [l for l in text.splitlines() if l.strip()]
    if not lines or not lines[0].startswith("#"):
        return {}
    names = [n.replace("-", "_") for n in lines[0].lstrip("#").split()]
    sums = {}
    for line in lines[1:]:
        for name, value in zip(names[1:], line.split()[1:]):
            try:
                sums[name] = sums.get(name, 0) + int(value)
            except ValueError:
                pass
    return sums


def parse_mountstats(text):
    """{mount_point: {"ops": {OP: [ops, trans, timeouts, bytes_sent, bytes_recv, queue_ms, rtt_ms, exe_ms]}}} for NFS."""
    out = {}
    cur = None
    in_ops = False
    for line in text.splitlines():
        if line.startswith("device "):
            f = line.split()
            cur = None
            in_ops = False
            if "mounted" in f and "fstype" in f:
                mp = f[f.index("mounted") + 2]
                fstype = f[f.index("fstype") + 1]
                if fstype.startswith("nfs"):
                    cur = out.setdefault(mp, {"ops": {}})
            continue
        if cur is None:
            continue
        s = line.strip()
        if s.startswith("per-op statistics"):
            in_ops = True
        elif in_ops and ":" in s:
            name, rest = s.split(":", 1)
            try:
                vals = [int(x) for x in rest.split()]
            except ValueError:
                continue
            if len(vals) >= 8:
                cur["ops"][name.strip()] = vals[:8]
    return out


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except (OSError, IOError):
        return None


class Telemetry(object):
    """Samples host counters at the agent's cadence and emits them as telemetry lines."""

    needs_dir = False

    def __init__(self, ctx):
        self.devices = list(ctx.cfg.get("devices", []))
        self.nics = list(ctx.cfg.get("nics", []))
        self.mounts = list(ctx.cfg.get("mounts", []))

    def snapshot(self):
        return {
            "disk": parse_diskstats(_read("/proc/diskstats") or ""),
            "net": parse_net_dev(_read("/proc/net/dev") or ""),
            "cpu": parse_cpu(_read("/proc/stat") or ""),
            "pool": parse_pool_stats(_read("/proc/fs/nfsd/pool_stats") or ""),
            "threads": (_read("/proc/fs/nfsd/threads") or "").strip(),
            "mounts": parse_mountstats(_read("/proc/self/mountstats") or "") if self.mounts else {},
            "t": time.monotonic(),
        }

    def prepare(self, ctx):
        first = self.snapshot()
        for d in self.devices:
            if d not in first["disk"]:
                ctx.out.emit({"type": "warning", "message": "block device %s is not in /proc/diskstats; its throughput is not measured" % d})
        for n in self.nics:
            if n not in first["net"]:
                ctx.out.emit({"type": "warning", "message": "network interface %s is not in /proc/net/dev; its throughput is not measured" % n})
        for m in self.mounts:
            if m not in first["mounts"]:
                ctx.out.emit({"type": "warning", "message": "%s is not an NFS mount on this host; its RTT is not measured" % m})
        self.prev = first

    def run(self, ctx):
        ctx.begin_phase("telemetry")
        n = 0
        due = ctx.t0
        while True:
            due += ctx.interval
            try:
                ctx.sleep_until(due)
                ctx.check()
            except Stopped:
                ctx.extra["telemetry_samples"] = n
                raise
            cur = self.snapshot()
            ctx.out.emit(self.delta(self.prev, cur, cur["t"] - ctx.t0))
            self.prev = cur
            n += 1

    def delta(self, a, b, t):
        dt = max(b["t"] - a["t"], 1e-6)
        rec = {"type": "telemetry", "t": round(t, 4), "interval": round(dt, 4)}
        extra = {}
        dr = dw = 0
        for d in self.devices:
            if d in a["disk"] and d in b["disk"]:
                x, y = a["disk"][d], b["disk"][d]
                dr += y[0] - x[0]
                dw += y[1] - x[1]
                extra["disk.%s.util" % d] = round(min((y[2] - x[2]) / (dt * 1000.0), 1.0), 4)
                if x[3] is not None and y[3] is not None and y[3] >= x[3]:  # a reset counter says nothing
                    extra["disk.%s.queue" % d] = round((y[3] - x[3]) / (dt * 1000.0), 3)
        rec["disk_read_bps"] = dr * 512 / dt
        rec["disk_write_bps"] = dw * 512 / dt
        rx = tx = 0
        for n in self.nics:
            if n in a["net"] and n in b["net"]:
                rx += b["net"][n][0] - a["net"][n][0]
                tx += b["net"][n][1] - a["net"][n][1]
        rec["net_rx_bps"] = rx / dt
        rec["net_tx_bps"] = tx / dt
        busy = b["cpu"][0] - a["cpu"][0]
        total = b["cpu"][1] - a["cpu"][1]
        rec["cpu_busy"] = round(busy / total, 4) if total > 0 else 0.0
        if total > 0:
            extra["cpu.iowait"] = round((b["cpu"][2] - a["cpu"][2]) / float(total), 4)
        for name, value in b["pool"].items():
            if name in a["pool"]:
                extra["nfsd.%s_per_s" % name] = round((value - a["pool"][name]) / dt, 2)
        if b["threads"].isdigit():
            extra["nfsd.threads"] = int(b["threads"])
        for m in self.mounts:
            if m in a["mounts"] and m in b["mounts"]:
                extra.update(mount_deltas(m, a["mounts"][m]["ops"], b["mounts"][m]["ops"], dt))
        rec["extra"] = extra
        return rec


def mount_deltas(mp, a, b, dt):
    """Per-interval NFS client figures of one mount: op rates, average RTT, retransmissions."""
    out = {}
    retrans = timeouts = 0
    for op, y in b.items():
        x = a.get(op, [0] * 8)
        d = [y[i] - x[i] for i in range(8)]
        retrans += max(d[1] - d[0], 0)
        timeouts += d[2]
        if op in ("READ", "WRITE", "GETATTR", "LOOKUP", "ACCESS", "COMMIT") and d[0] > 0:
            key = "mount.%s.%s" % (mp, op.lower())
            out[key + "_ops_per_s"] = round(d[0] / dt, 2)
            out[key + "_rtt_ms"] = round(d[6] / float(d[0]), 3)
            out[key + "_exe_ms"] = round(d[7] / float(d[0]), 3)
    out["mount.%s.retrans" % mp] = retrans
    out["mount.%s.timeouts" % mp] = timeouts
    return out


WORKLOADS = {
    "seq_write": SeqWrite,
    "seq_read": SeqRead,
    "rewrite": Rewrite,
    "rand_read": lambda ctx: RandomIO(ctx, 1.0),
    "rand_write": lambda ctx: RandomIO(ctx, 0.0),
    "mixed": lambda ctx: RandomIO(ctx, 0.75),
    "small_files": SmallFiles,
    "tree": Tree,
    "dir_scaling": DirScaling,
    "tcp_sink": TcpSink,
    "tcp_source": TcpSource,
    "telemetry": Telemetry,
}
NO_DIR = ("tcp_sink", "tcp_source", "telemetry")
PHASED_MODES = ("small_files", "tree", "dir_scaling")


# --------------------------------------------------------------------------- driver


def _sample(ctx, data, phase, start, end, count):
    r, w, ops, lats, errs = data
    rec = {
        "type": "sample",
        "t": round(end - ctx.t0, 4),
        "interval": round(end - start, 4),
        "bytes_read": r,
        "bytes_written": w,
        "ops": ops,
        "lat_p50_ms": round(percentile(lats, 0.50) * 1e3, 4),
        "lat_p99_ms": round(percentile(lats, 0.99) * 1e3, 4),
        "lat_max_ms": round((lats[-1] if lats else 0.0) * 1e3, 4),
        "errors": errs,
        "phase": phase,
    }
    if count is not None:
        rec["count"] = count
    ctx.out.emit(rec)


def sample_loop(ctx, telemetry):
    """Main thread: emit a sample per interval until the workload is done."""
    next_due = time.monotonic() + ctx.interval
    last = None  # end of the last sample; None until the run starts
    stop_seen = None
    grace = STOP_GRACE_S
    unanswered = None  # since when the file system's probes have gone unanswered
    pending = None  # the host's dirty and writeback memory at the last probe
    while True:
        left = next_due - time.monotonic()
        if left > 0:
            ctx.wake.wait(left)
        ctx.wake.clear()
        now = time.monotonic()
        if last is None and ctx.t0 is not None:
            last = ctx.t0
            next_due = ctx.t0 + ctx.interval
        with ctx.cut_lock:
            cuts, ctx.cuts = ctx.cuts, []
            for data, phase, end, count in cuts:
                if not telemetry and (data[2] or end - last > 1e-3):
                    _sample(ctx, data, phase, last, end, count)
                last = end
            if ctx.done.is_set():
                if last is not None and not telemetry:
                    data = ctx.rec.take()
                    end = max(ctx.t_end or now, last)
                    if data[2] or data[4] or end - last > 1e-3:
                        _sample(ctx, data, ctx.phase, last, end, ctx.count)
                return True
        if ctx.ctl.stop.is_set():
            stop_seen = stop_seen or now
            if now - stop_seen > grace:
                # a call outlived the grace: wait on while the file system answers (writes failing one by
                # one on a full export, a saturated disk or server), give up when it has not for HANG_S (dead)
                if now - stop_seen > SLOW_STOP_MAX_S:
                    return False
                was, pending = pending, unwritten_kb()
                draining = None not in (was, pending) and pending < was
                if fs_answers(ctx.workdir) or draining or _last_answer[0] > (unanswered or now):
                    unanswered = None
                else:
                    unanswered = unanswered or now
                    if time.monotonic() - unanswered > HANG_S:
                        return False
                grace = time.monotonic() - stop_seen + STOP_GRACE_S
        if now >= next_due:
            if last is None:  # also a heartbeat: the controller tells a slow layout from a dead host
                ctx.out.emit({"type": "progress", "phase": "prepare", "done": ctx.progress_done, "total": ctx.progress_total})
            elif not telemetry:
                with ctx.cut_lock:
                    if not ctx.cuts:  # else the next round emits the cut first
                        now = max(time.monotonic(), last)
                        _sample(ctx, ctx.rec.take(), ctx.phase, last, now, ctx.count)
                        last = now
                if ctx.stall_s > 0 and now - ctx.rec.last_op > ctx.stall_s:
                    ctx.failure = AgentFailure(errno.ETIMEDOUT, "no operation completed for %d s: the NFS server or the network stopped answering; check both" % ctx.stall_s)
                    ctx.ctl.request_stop("stall")
                    return False
            next_due += ctx.interval
            if next_due <= now:
                next_due = now + ctx.interval


def unwritten_kb():
    """This host's dirty and writeback memory in KiB (/proc/meminfo; None where unreadable): while it shrinks,
    a server is taking the client's writes."""
    try:
        with open("/proc/meminfo") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return sum(int(fields[k].split()[0]) for k in ("Dirty", "Writeback") if k in fields)
    except (OSError, ValueError, IndexError):
        return None


def fs_answers(path):
    """True when a statvfs of ``path`` returns within PROBE_S; the probe is left behind if it hangs."""
    if not path:
        return False
    answered = threading.Event()

    def probe():
        try:
            os.statvfs(path)
        except OSError:
            pass  # an error is an answer too
        _last_answer[0] = time.monotonic()
        answered.set()

    t = threading.Thread(target=probe, name="probe")
    t.daemon = True
    t.start()
    return answered.wait(PROBE_S)


def drive(ctx, workload):
    """Worker thread: prepare, align, run; any exception is kept for the main thread."""
    try:
        try:
            workload.prepare(ctx)
            ctx.begin_run()
            if ctx.cfg.get("debug_crash") == "workload":  # tests: a bug inside a running workload
                raise RuntimeError("debug_crash requested by the config")
            workload.run(ctx)
            ctx.end = "done"
        except Stopped as s:
            ctx.end = s.args[0]
    except BaseException as exc:
        ctx.failure = exc
    finally:
        ctx.t_end = time.monotonic()
        ctx.cpu1 = cpu_seconds()
        ctx.finish_phases()
        ctx.done.set()
        ctx.wake.set()


SILLY_RENAME_WAIT_S = 10.0


def _outwait_silly_renames(workdir, deadline, beat):
    """Remove what is left once the NFS client's .nfsXXXX files go. An unlinked file that some
    handle still held (a reader thread, a close in flight over nconnect) is renamed so, and the
    client removes it when the last close reaches the server. True when the directory is gone;
    False at once if anything but such files is left."""
    while True:
        files, dirs = [], []
        for top, subdirs, names in os.walk(workdir, topdown=False):
            files += [os.path.join(top, n) for n in names]
            dirs += [os.path.join(top, d) for d in subdirs]
        if any(not os.path.basename(f).startswith(".nfs") for f in files):
            return False
        for path in files:
            try:
                os.unlink(path)  # gone already, or still held (EBUSY): try again next round
            except OSError:
                pass
        for path in dirs + [workdir]:
            try:
                os.rmdir(path)
            except OSError:
                pass
        if not os.path.exists(workdir):
            return True
        if time.monotonic() > deadline:
            return False
        beat()  # says it is alive: the controller closes an agent silent for 5 s
        time.sleep(0.1)


def cleanup(ctx):
    """Remove our subdirectory; the only place we delete anything.

    Walks bottom-up rather than shutil.rmtree so that a long removal (a tree of
    thousands of files over NFS) says it is alive every interval: the controller waits
    for a busy agent and gives up only on a silent one.
    """
    if not ctx.workdir or not os.path.basename(ctx.workdir).startswith(WORK_PREFIX):
        return None
    t = time.monotonic()
    problems = []
    removed = [0]
    next_beat = [t + ctx.interval]

    def beat():
        removed[0] += 1
        now = time.monotonic()
        if now >= next_beat[0]:
            next_beat[0] = now + ctx.interval
            ctx.out.emit({"type": "progress", "phase": "cleanup", "done": removed[0], "total": None})

    def remove(fn, path):
        try:
            fn(path)
        except OSError as exc:
            problems.append("%s: %s" % (path, exc))
        beat()

    for top, dirs, files in os.walk(ctx.workdir, topdown=False, onerror=lambda exc: problems.append(str(exc))):
        for name in files:
            remove(os.unlink, os.path.join(top, name))
        for name in dirs:
            p = os.path.join(top, name)
            remove(os.unlink if os.path.islink(p) else os.rmdir, p)
    remove(os.rmdir, ctx.workdir)
    if os.path.exists(ctx.workdir) and _outwait_silly_renames(ctx.workdir, time.monotonic() + SILLY_RENAME_WAIT_S, beat):
        del problems[:]  # what failed was the client's .nfs files, gone since
    left = os.path.exists(ctx.workdir)
    msg = {"type": "cleanup", "seconds": round(time.monotonic() - t, 3), "removed": not left}
    if problems:
        msg["problems"] = problems[:5]
    return msg


def with_free_space(record, where):
    """A full export's error says how full: 'the export is full (3 MiB free)', read before the files go."""
    if record.get("errno") != errno.ENOSPC or FULL not in record.get("message", "") or not where:
        return record
    try:
        st = os.statvfs(where)
    except OSError:
        return record
    free = "%d MiB free" % (st.f_bavail * st.f_frsize // MIB)
    return dict(record, message=record["message"].replace(FULL, "the export is full (%s)" % free), free_bytes=st.f_bavail * st.f_frsize)


def stop_failure(ctx):
    """Why the workload did not stop: a file system that answers but a call that never ends, or one that hangs."""
    waited = time.monotonic() - ctx.ctl.stop_at if ctx.ctl.stop_at else STOP_GRACE_S
    if ctx.workdir and fs_answers(ctx.workdir):
        return "the workload did not stop within %d s of being told to although the export answers: one of its calls is that slow (a full export or a saturated disk?)" % waited
    return "the workload did not stop within %d s of being told to: a file system call hangs (the NFS server stopped answering?)" % waited


def error_record(exc):
    if isinstance(exc, AgentFailure):
        return {"type": "error", "errno": exc.err_no, "message": exc.message}
    if isinstance(exc, OSError):
        f = explain(exc, "running the workload")
        return {"type": "error", "errno": f.err_no, "message": f.message}
    return {
        "type": "error",
        "errno": None,
        "message": "the load agent crashed (%s: %s); this is a bug in nfs-tuner, please report it with the traceback" % (exc.__class__.__name__, exc),
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:],
    }


def summary(ctx, mode, workload):
    rec = ctx.rec
    start = ctx.t0 if ctx.t0 is not None else ctx.t_agent
    duration = max((ctx.t_end or time.monotonic()) - start, 0.0)
    out = {
        "type": "summary",
        "mode": mode,
        "end": ctx.end,
        "stop_reason": ctx.ctl.reason if ctx.end == "stopped" else None,
        "duration": round(duration, 4),
        "bytes_read": rec.tot_r,
        "bytes_written": rec.tot_w,
        "ops": rec.tot_ops,
        "errors": rec.tot_errs,
        "lat_p50_ms": round(rec.run_percentile_ms(0.50), 4),
        "lat_p99_ms": round(rec.run_percentile_ms(0.99), 4),
        "lat_max_ms": round(rec.lat_max * 1e3, 4),
        "lat_hist": dict(rec.hist),  # bucket -> operations of the measured window (experiments/latency.py)
        "cache_mode": ctx.cache_mode() if mode not in NO_DIR else "n/a",
        "caches_dropped": bool(ctx.drop_ok),
        "direct": ctx.direct_used,
        "prepare_s": round(start - ctx.t_agent, 4),
        "cpu_s": round(ctx.cpu1 - ctx.cpu0, 4),  # the run phase only, all threads
        "phases": ctx.phases,
        "python": "%d.%d.%d" % sys.version_info[:3],
        "agent_version": AGENT_VERSION,
    }
    if mode in PHASED_MODES:  # which phases ended at their time limit, and what the cleanup removes
        out.update(time_limit_s=ctx.time_limit or None, cut=ctx.cut, left=ctx.left)
    out.update(ctx.extra)
    return out


def main(stdin=None, stdout=None):
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    ctl = Control()
    out = Out(stdout, lambda reason: ctl.request_stop(reason, True))
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: ctl.request_stop("signal %d" % signum, True))
    code = EXIT_OK
    ctx = None
    try:
        line = stdin.readline()
        if not line.strip():
            raise AgentFailure(errno.EINVAL, "no config line on stdin: the controller sent nothing")
        try:
            cfg = json.loads(line.decode("utf-8"))
        except ValueError as exc:
            raise AgentFailure(errno.EINVAL, "the config line is not JSON (%s)" % exc)
        if not isinstance(cfg, dict):
            raise AgentFailure(errno.EINVAL, "the config line must be a JSON object")
        reader = threading.Thread(target=ctl.read_stdin, args=(stdin,), name="stdin")
        reader.daemon = True
        reader.start()
        mode = cfg.get("mode")
        if mode not in WORKLOADS:
            raise AgentFailure(errno.EINVAL, "unknown workload mode %r; known: %s" % (mode, ", ".join(sorted(WORKLOADS))))
        ctx = Ctx(cfg, out, ctl)
        if mode not in NO_DIR:
            base = cfg.get("dir")
            if not base or not os.path.isdir(base):
                raise AgentFailure(errno.ENOENT, "the test directory %r does not exist on this host: mount the export there first" % base)
            ctx.workdir = os.path.join(base, "%s%d-%s" % (WORK_PREFIX, os.getpid(), os.urandom(4).hex()))
            try:
                os.mkdir(ctx.workdir, 0o700)
            except OSError as exc:
                raise explain(exc, "creating the agent's directory in %s" % base)
            if cfg.get("keep_data"):
                kept_dir(cfg)  # a name not of ours is refused before the workload starts
        workload = WORKLOADS[mode](ctx)
        out.emit({"type": "hello", "agent_version": AGENT_VERSION, "pid": os.getpid(), "python": "%d.%d.%d" % sys.version_info[:3], "dir": ctx.workdir, "mode": mode})
        if cfg.get("debug_crash") == "main":
            raise RuntimeError("debug_crash requested by the config")
        worker = threading.Thread(target=drive, args=(ctx, workload), name="workload")
        worker.daemon = True
        ctx.started = True
        worker.start()
        finished = sample_loop(ctx, mode == "telemetry")
        if ctx.failure is not None:
            raise ctx.failure
        if not finished:
            raise AgentFailure(errno.ETIMEDOUT, stop_failure(ctx))
        out.emit(summary(ctx, mode, workload))
        if cfg.get("hold_files") and ctx.workdir:
            # a stop that ended the workload does not end the hold; a later one does
            ctl.holding = True
            out.emit({"type": "holding", "dir": ctx.workdir})
            ctl.release.wait()
    except BaseException as exc:
        code = EXIT_ERROR if isinstance(exc, (AgentFailure, OSError)) else EXIT_CRASH
        out.emit(with_free_space(error_record(exc), ctx.workdir if ctx is not None else None))
    if ctx is not None and ctx.workdir:
        hung = ctx.started and not ctx.done.is_set()
        if hung:  # removing files on a dead server would hang too; name what is left
            out.emit({"type": "cleanup", "seconds": 0.0, "removed": False, "problems": ["left %s in place: the file system does not answer" % ctx.workdir]})
        else:
            try:
                msg = cleanup(ctx)
            except BaseException as exc:
                msg = {"type": "cleanup", "seconds": 0.0, "removed": False, "problems": [str(exc)]}
            if msg:
                out.emit(msg)
                if not msg["removed"] and code == EXIT_OK:
                    code = EXIT_ERROR
    try:
        stdout.flush()
    except Exception:
        pass
    os._exit(code)  # never wait for threads stuck in I/O or on stdin


if __name__ == "__main__":
    main()
