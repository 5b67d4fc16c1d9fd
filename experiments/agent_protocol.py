"""Reading the load agent's JSON lines: samples, telemetry, summary, errors.

``AgentStream`` turns raw stdout bytes (in any chunking) into typed events; a line that
is not what the agent writes is kept in ``garbage`` rather than raised, because a stray
line from a login script must not end a trial. ``IntervalAggregator`` sums the samples of
several clients per aligned interval.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from experiments.latency import read_histogram
from experiments.record_fields import BadRecord, count, finite, flag, items, loads, mapping, text
from experiments.samples import HostTelemetry, Sample

REMOVING_PHASES = ("delete", "remove")  # small files and directory scaling; tree
MAX_GARBAGE = 100  # keep the first lines only; a flood of noise must not grow memory


class AgentError(Exception):
    """The agent's own account of why it stopped, in words for the admin."""

    def __init__(self, message: str, errno: int | None = None, client: str = "", traceback: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.errno = errno
        self.client = client
        self.traceback = traceback

    def __str__(self) -> str:
        return f"{self.client}: {self.message}" if self.client else self.message


@dataclass(frozen=True, slots=True)
class AgentSummary:
    client: str
    mode: str
    end: str  # "done", "duration" or "stopped"
    duration: float
    bytes_read: int
    bytes_written: int
    ops: int
    errors: int
    lat_p50_ms: float
    lat_p99_ms: float
    lat_max_ms: float
    cache_mode: str
    caches_dropped: bool
    direct: bool
    prepare_s: float
    cpu_s: float
    phases: dict[str, dict[str, float]] = field(default_factory=dict)
    python: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # workload-specific fields
    # bucket -> operations of the measured window (experiments.latency); None: the host sent none
    lat_hist: dict[int, int] | None = None
    # Phased workloads (older agents sent none of these): the seconds their phases were given in all
    # (None: no limit), the phases that ended at their share of it, the entries the cleanup removes.
    time_limit_s: float | None = None
    cut: tuple[str, ...] = ()
    left: int = 0
    kept: int = 0  # bytes of its data set an earlier trial laid out and this one read as they were (config keep_data)

    @property
    def throughput_bps(self) -> float:
        return (self.bytes_read + self.bytes_written) / self.duration if self.duration > 0 else 0.0

    @property
    def removal_s(self) -> float:
        """About how long the agent's cleanup takes to remove the ``left`` entries: at the rate of the phase
        that removes them, else of its slowest phase (0 when nothing is left or no phase has a rate)."""
        rates = {name: p.get("ops", 0.0) / p["seconds"] for name, p in self.phases.items()
                 if p.get("seconds", 0.0) > 0 and p.get("ops", 0.0) > 0}  # fmt: skip
        rate = next((rates[n] for n in REMOVING_PHASES if n in rates), min(rates.values(), default=0.0))
        return self.left / rate if self.left and rate > 0 else 0.0


@dataclass(frozen=True, slots=True)
class AgentNotice:
    """Every other line: hello, progress, ready, start, listening, holding, cleanup, warning."""

    client: str
    type: str
    data: dict[str, Any]


AgentEvent = Sample | HostTelemetry | AgentSummary | AgentError | AgentNotice

_SUMMARY_COUNTS = ("bytes_read", "bytes_written", "ops", "errors")
_SUMMARY_FLOATS = ("duration", "lat_p50_ms", "lat_p99_ms", "lat_max_ms", "prepare_s", "cpu_s")
_SUMMARY_READ = ("type", "phases", "python", "lat_hist", "time_limit_s", "cut", "left", "data_kept")  # read apart, not extra
_SAMPLE_INTS = ("bytes_read", "bytes_written", "ops", "errors")
_SAMPLE_FLOATS = ("lat_p50_ms", "lat_p99_ms", "lat_max_ms")
_TELEMETRY_FLOATS = ("disk_read_bps", "disk_write_bps", "net_rx_bps", "net_tx_bps", "cpu_busy")
MAX_LINE = 1 << 20  # bytes; the agent's longest line (a summary with phases) is a few KiB
MAX_INTERVAL_S = 600.0  # a sample longer than this is not one the agent sends; bounds split_sample's work
MAX_T = 1e12  # seconds: monotonic clocks and offsets from a trial's start, with room to spare
MAX_EXTRA = 256  # telemetry extras and summary phases per record
_MS = 1e9  # latencies, ms: a bound that only refuses the absurd
MAX_RATE = 1e12  # operations per second in a curve point: refuses only the absurd
MAX_QUEUE = 1e6  # a disk's average requests in flight: far beyond any device's queues, refuses only the absurd


def _time(obj: dict[str, Any]) -> tuple[float, float]:
    interval = finite(obj["interval"], "interval", 0.0, MAX_INTERVAL_S)
    if interval <= 0:
        raise BadRecord("interval is not above 0")
    return finite(obj["t"], "t", -MAX_T, MAX_T), interval


def _extra(name: str, value: Any) -> float | None:
    """One telemetry extra: a finite number. A counter that went backwards (nfsd restarted
    mid-interval) says nothing: None, dropped. A disk's queue the agent never sends below 0
    (it skips a reset counter), so one outside [0, MAX_QUEUE] is garbage."""
    if name.startswith("disk.") and name.endswith(".queue"):
        return finite(value, name, 0.0, MAX_QUEUE)
    x = finite(value, name)
    return x if x >= 0 else None


def _extras(extra: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in extra.items():
        name = str(key)[:128]
        if (x := _extra(name, value)) is not None:
            out[name] = x
    return out


def _phases(value: Any) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for name, figures in mapping(value, "phases").items():
        fig = mapping(figures, f"phase {name}")
        if len(out) >= MAX_EXTRA or len(fig) > MAX_EXTRA:
            raise BadRecord("summary phases are too many")
        out[text(name, "phase name", 64)] = {str(k)[:64]: finite(v, f"phase {name} {k}") for k, v in fig.items()}
    return out


def _notice_data(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """The fields the controller reads from a notice, checked; the rest is shown as is."""
    if kind == "start":
        data["epoch"] = finite(data.get("epoch", 0.0), "epoch", 0.0, MAX_T)
    elif kind == "listening":
        data["port"] = count(data.get("port"), "port")
        if not 0 < data["port"] < 65536:
            raise BadRecord(f"port out of range: {data['port']}")
    elif kind == "warning":
        data["message"] = text(data.get("message", ""), "message")
    elif kind == "hello" and data.get("dir") is not None:  # a telemetry agent has no directory: null
        data["dir"] = text(data["dir"], "dir")
    elif kind == "point":  # dir_scaling's rate-vs-entries curve: one point per bucket of files
        data["layout"] = text(data.get("layout", "flat"), "layout", 16)
        data["entries"] = count(data.get("entries"), "entries")
        data["rate"] = finite(data.get("rate"), "rate", 0.0, MAX_RATE)
        data["seconds"] = finite(data.get("seconds", 0.0), "seconds", 0.0, MAX_T)
    elif kind == "cleanup":
        data["problems"] = [text(p, "problem") for p in items(data.get("problems", []), "problems", MAX_EXTRA)]
    return data


def parse_record(obj: dict[str, Any], client: str) -> AgentEvent:
    """One decoded JSON object to an event; raises BadRecord (or KeyError for a missing field)."""
    kind = obj["type"]
    if kind == "sample":
        t, interval = _time(obj)
        raw_count = obj.get("count")
        return Sample(
            client=client,
            t=t,
            interval=interval,
            **{k: count(obj.get(k, 0), k) for k in _SAMPLE_INTS},
            **{k: finite(obj.get(k, 0.0), k, 0.0, _MS) for k in _SAMPLE_FLOATS},  # type: ignore[arg-type]  # ints and floats by name
            phase=text(obj.get("phase", ""), "phase", 64),
            count=None if raw_count is None else count(raw_count, "count"),
        )
    if kind == "telemetry":
        t, interval = _time(obj)
        extra = mapping(obj.get("extra") or {}, "telemetry extra")
        if len(extra) > MAX_EXTRA:
            raise BadRecord(f"telemetry has {len(extra)} extra figures, more than {MAX_EXTRA}")
        return HostTelemetry(
            host=client,
            t=t,
            interval=interval,
            **{k: finite(obj.get(k, 0.0), k, 0.0) for k in _TELEMETRY_FLOATS},
            extra=_extras(extra),
        )
    if kind == "summary":
        known: dict[str, Any] = {k: count(obj[k], k) for k in _SUMMARY_COUNTS}
        known |= {k: finite(obj[k], k, 0.0, MAX_T) for k in _SUMMARY_FLOATS}
        known |= {k: text(obj[k], k, 64) for k in ("mode", "end", "cache_mode")}
        known |= {k: flag(obj[k], k) for k in ("caches_dropped", "direct")}
        rest = {k: v for k, v in obj.items() if k not in known and k not in _SUMMARY_READ}
        hist = None if obj.get("lat_hist") is None else read_histogram(obj["lat_hist"], "lat_hist")
        phases = _phases(obj.get("phases") or {})
        limit = obj.get("time_limit_s")
        cut = tuple(dict.fromkeys(text(p, "cut phase", 64) for p in items(obj.get("cut") or [], "cut", MAX_EXTRA)))
        if unknown := [p for p in cut if p not in phases]:
            raise BadRecord(f"cut names a phase the summary has not: {unknown[0]!r:.60}")
        return AgentSummary(client=client, phases=phases, python=text(obj.get("python", ""), "python", 256),
                            extra=rest, lat_hist=hist, time_limit_s=None if limit is None else
                            finite(limit, "time_limit_s", 0.0, MAX_T), cut=cut,
                            left=count(obj.get("left", 0), "left"), kept=count(obj.get("data_kept", 0), "data_kept"),
                            **known)  # fmt: skip
    if kind == "error":
        err = obj.get("errno")
        return AgentError(text(obj["message"], "message"), None if err is None else count(err, "errno"), client,
                          text(obj.get("traceback", ""), "traceback", 16384))
    if isinstance(kind, str) and kind and len(kind) <= 64:
        return AgentNotice(client, kind, _notice_data(kind, {k: v for k, v in obj.items() if k != "type"}))
    raise BadRecord(f"bad record type {kind!r:.60}")


class AgentStream:
    """Incremental parser of one agent's stdout."""

    def __init__(self, client: str) -> None:
        self.client = client
        self._buf = b""
        self._skipping = False  # inside a line already refused as too long
        self.garbage: list[str] = []
        self.garbage_count = 0
        self.summary: AgentSummary | None = None
        self.error: AgentError | None = None
        self.samples = 0

    def feed(self, data: bytes) -> list[AgentEvent]:
        """Events of the complete lines in data (plus what was buffered before)."""
        self._buf += data
        *lines, self._buf = self._buf.split(b"\n")
        if self._skipping and lines:  # the end of the refused line: drop it, go on
            lines, self._skipping = lines[1:], False
        if len(self._buf) > MAX_LINE:  # no newline in sight: keep memory bounded
            if not self._skipping:
                self._refuse(self._buf[:200].decode("utf-8", "replace"), f"a line longer than {MAX_LINE} bytes")
            self._buf, self._skipping = b"", True
        return [e for line in lines if (e := self.parse_line(line)) is not None]

    def close(self) -> list[AgentEvent]:
        """End of stream: a last line without newline is still parsed."""
        rest, self._buf = self._buf, b""
        if self._skipping:
            return []
        return [e for e in [self.parse_line(rest)] if e is not None] if rest.strip() else []

    def parse_line(self, line: bytes | str) -> AgentEvent | None:
        raw = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        raw = raw.strip()
        if not raw:
            return None
        if len(raw) > MAX_LINE:
            self._refuse(raw[:200], f"a line longer than {MAX_LINE} bytes")
            return None
        try:
            event = parse_record(mapping(loads(raw), "the line"), self.client)
        except BadRecord as exc:
            self._refuse(raw[:200], str(exc))
            return None
        except KeyError as exc:
            self._refuse(raw[:200], f"no field {exc}")
            return None
        if isinstance(event, Sample):
            self.samples += 1
        elif isinstance(event, AgentSummary):
            self.summary = event
        elif isinstance(event, AgentError):
            self.error = event
        return event

    def _refuse(self, shown: str, why: str) -> None:
        self.garbage_count += 1
        if len(self.garbage) < MAX_GARBAGE:
            self.garbage.append(f"{shown} ({why})")


def parse_lines(lines: Iterable[bytes | str], client: str) -> tuple[list[AgentEvent], AgentStream]:
    """Parse a whole captured output; the stream holds summary, error and garbage."""
    stream = AgentStream(client)
    events = [e for line in lines if (e := stream.parse_line(line)) is not None]
    return events, stream


def _bucket(t: float, interval: float) -> int:
    return int(round(t / interval))


def split_sample(sample: Sample, parts: int) -> list[Sample]:
    """One long sample as ``parts`` consecutive equal intervals at its average rate.

    A host that did not schedule the agent's sampler for seconds (a busy single-CPU
    guest) reports those seconds in one sample; summed into one nominal interval, it
    would read as many times the real rate. Counts are shared out whole, the remainder
    to the last parts; errors stay with the last one, where they were seen.
    """
    if parts <= 1:
        return [sample]
    interval = sample.interval / parts

    def share(total: int, i: int) -> int:
        return total // parts + (1 if i >= parts - total % parts else 0)

    return [
        replace(sample, t=sample.t - (parts - 1 - i) * interval, interval=interval,
                bytes_read=share(sample.bytes_read, i), bytes_written=share(sample.bytes_written, i),
                ops=share(sample.ops, i), errors=sample.errors if i == parts - 1 else 0)
        for i in range(parts)
    ]  # fmt: skip


def sum_samples(samples: Iterable[Sample], t: float, interval: float, client: str = "all") -> Sample:
    """Several samples of one aligned interval as one.

    Bytes, ops and errors add up. Percentiles cannot be merged exactly without the raw
    latencies: p50 is the ops-weighted mean of the clients' p50s, p99 the worst client's
    p99 (an upper bound), max the maximum.
    """
    group = list(samples)
    ops = sum(s.ops for s in group)
    p50 = sum(s.lat_p50_ms * s.ops for s in group) / ops if ops else 0.0
    phases = {s.phase for s in group}
    return Sample(
        client=client,
        t=t,
        interval=interval,
        bytes_read=sum(s.bytes_read for s in group),
        bytes_written=sum(s.bytes_written for s in group),
        ops=ops,
        lat_p50_ms=p50,
        lat_p99_ms=max((s.lat_p99_ms for s in group), default=0.0),
        lat_max_ms=max((s.lat_max_ms for s in group), default=0.0),
        errors=sum(s.errors for s in group),
        phase=phases.pop() if len(phases) == 1 else "",
    )


class IntervalAggregator:
    """Sums the samples of several clients per aligned interval, as soon as all have reported.

    A sample belongs to the interval whose end is nearest its own end, so clients whose
    starts differ by less than half an interval line up. An interval is released once
    every client has sent a sample for it or a later one; ``flush`` releases the rest.
    """

    def __init__(self, clients: Iterable[str], interval: float = 0.25) -> None:
        self.clients = frozenset(clients)
        if not self.clients:
            raise ValueError("IntervalAggregator needs at least one client")
        if interval <= 0:
            raise ValueError(f"interval must be positive, got {interval}")
        self.interval = interval
        self._pending: dict[int, list[Sample]] = {}
        self._latest: dict[str, int] = {}
        self._released = -(2**62)

    def add(self, sample: Sample) -> list[Sample]:
        if sample.client not in self.clients:
            raise ValueError(f"sample from unknown client {sample.client!r}")
        for part in split_sample(sample, round(sample.interval / self.interval)):
            k = max(_bucket(part.t, self.interval), self._released + 1)  # late: next open one
            self._pending.setdefault(k, []).append(part)
            self._latest[sample.client] = max(self._latest.get(sample.client, k), k)
        if len(self._latest) < len(self.clients):
            return []
        return self._release(min(self._latest.values()))

    def flush(self) -> list[Sample]:
        return self._release(max(self._pending, default=self._released))

    def _release(self, upto: int) -> list[Sample]:
        out = []
        for k in sorted(b for b in self._pending if b <= upto):
            out.append(sum_samples(self._pending.pop(k), k * self.interval, self.interval))
            self._released = k
        return out
