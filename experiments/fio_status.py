"""fio's live status output (``--output-format=json --status-interval=…``) as samples.

fio prints one pretty-printed JSON document per status interval with *cumulative*
counters per job (io_bytes, total_ios, job_runtime) and a last one at exit. The
differences between documents are what moved in between. fio's status timer drifts
(250 ms asked, 250–330 ms seen), so the cumulative counters are interpolated linearly
onto the same aligned grid the agent uses (t = k × interval) before differencing:
every byte lands in exactly one sample and the samples add up to fio's totals.
Latency fields stay 0: cumulative percentiles cannot be split into intervals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from experiments.record_fields import BadRecord, count, finite, items, loads, mapping, text
from experiments.samples import Sample

MAX_DOC_BYTES = 32 << 20  # fio's status for hundreds of jobs is a few MiB
MAX_JOBS = 4096
MAX_GAP_S = 600.0  # between two status documents; fio sends one every interval
MAX_NOTES = 100


class FioStatusStream:
    """Cuts fio's stdout lines into JSON documents; other lines are kept as notes.

    fio's JSON documents open with a line "{" and close with a line "}" at column 0;
    everything nested is indented, so no brace counting is needed.
    """

    def __init__(self) -> None:
        self._lines: list[str] | None = None
        self._size = 0
        self.notes: list[str] = []  # fio's own messages outside the JSON, e.g. warnings

    def _note(self, note: str) -> None:
        if len(self.notes) < MAX_NOTES:
            self.notes.append(note[:500])

    def feed(self, line: str) -> dict[str, Any] | None:
        line = line.rstrip("\r\n")
        if self._lines is None:
            if line == "{":
                self._lines, self._size = [line], len(line)
            elif line.strip():
                self._note(line.strip())
            return None
        self._lines.append(line)
        self._size += len(line) + 1
        if self._size > MAX_DOC_BYTES:  # no closing brace in sight: keep memory bounded
            self._lines = None
            self._note(f"fio printed a status document larger than {MAX_DOC_BYTES >> 20} MiB; it was dropped")
            return None
        if line != "}":
            return None
        body, self._lines = "\n".join(self._lines), None
        try:
            doc = loads(body)
        except BadRecord as exc:
            self._note(f"fio printed a status document that could not be read: {exc}")
            return None
        return doc if isinstance(doc, dict) and isinstance(doc.get("jobs"), list) else None


@dataclass(frozen=True, slots=True)
class _Point:
    t: float  # seconds since the first job started
    read: int
    written: int
    ops: int


def _jobs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [mapping(j, "a fio job") for j in items(doc.get("jobs"), "fio's jobs", MAX_JOBS)]


def _direction(job: dict[str, Any], d: str, field: str) -> int:
    return count(mapping(job.get(d, {}), f"fio job {d}").get(field, 0), f"fio {d} {field}")


def _counters(jobs: list[dict[str, Any]]) -> tuple[int, int, int]:
    """Cumulative (read bytes, written bytes, ops) of every job; BadRecord if malformed."""
    read = sum(_direction(j, "read", "io_bytes") for j in jobs)
    written = sum(_direction(j, "write", "io_bytes") for j in jobs)
    ops = sum(_direction(j, d, "total_ios") for j in jobs for d in ("read", "write"))
    return read, written, ops


def job_errors(doc: dict[str, Any]) -> list[tuple[str, int]]:
    """(job name, errno) of every job that reports an error in this document."""
    return _job_errors(_jobs(doc))


def _job_errors(jobs: list[dict[str, Any]]) -> list[tuple[str, int]]:
    out = []
    for job in jobs:
        errno = count(job.get("error", 0) or 0, "fio job error")
        if errno:
            out.append((text(job.get("jobname", "?"), "fio job name", 64), errno))
    return out


class FioStatusSampler:
    """Turns a run's status documents, fed in order, into Samples on the aligned grid."""

    def __init__(self, client: str, interval_s: float = 0.25) -> None:
        if interval_s <= 0:
            raise ValueError(f"interval_s must be positive, got {interval_s}")
        self.client = client
        self.interval = interval_s
        self.start_ms: float | None = None  # the host's epoch (ms) when the first job started
        self.last: dict[str, Any] | None = None  # the latest document: fio's summary at the end
        self.counters: tuple[int, int, int] | None = None  # its cumulative (read, written, ops); None before any
        self._points: list[_Point] = [_Point(0.0, 0, 0, 0)]
        self._k = 0  # grid points emitted so far
        self._emitted = (0, 0, 0)  # cumulative counters already in samples
        self.garbage: list[str] = []  # documents refused, with why (the first ones)
        self.garbage_count = 0

    @property
    def elapsed(self) -> float:
        """Seconds since fio's first job started, as of the latest document (0 before)."""
        return self._points[-1].t

    @property
    def start_epoch(self) -> float | None:
        return None if self.start_ms is None else self.start_ms / 1000.0

    def feed(self, doc: dict[str, Any]) -> list[Sample]:
        """Samples for every grid point this document completes (none while fio lays out files).

        A document that is malformed, runs its counters backwards or jumps more than
        MAX_GAP_S ahead is counted in ``garbage`` and changes nothing.
        """
        try:
            jobs = _jobs(doc)
            read, written, ops = counters = _counters(jobs)
            running = [count(j.get("job_runtime", 0), "fio job_runtime") for j in jobs]
            stamp = finite(doc.get("timestamp_ms", 0), "fio timestamp_ms", 0.0, 1e15)
            _job_errors(jobs)
            if self.counters is not None and any(a < b for a, b in zip(counters, self.counters, strict=True)):
                raise BadRecord(f"fio's cumulative counters went backwards: {self.counters} then {counters}")
            start_ms = self.start_ms
            if start_ms is None and (ops or max(running, default=0)):
                start_ms = stamp - max(running, default=0)
            t = None if start_ms is None else max((stamp - start_ms) / 1000.0, self._points[-1].t)
            if t is not None and t - self._points[-1].t > MAX_GAP_S:
                raise BadRecord(f"fio's status jumped {t - self._points[-1].t:.0f} s ahead")
        except BadRecord as exc:
            self.garbage_count += 1
            if len(self.garbage) < MAX_NOTES:
                self.garbage.append(str(exc))
            return []
        self.last, self.counters, self.start_ms = doc, counters, start_ms
        if t is None:
            return []  # still setting up: the clock has not started
        if (read, written, ops) != (self._points[-1].read, self._points[-1].written, self._points[-1].ops) or t > self._points[-1].t:
            self._points.append(_Point(t, read, written, ops))
        out = []
        while (self._k + 1) * self.interval <= self._points[-1].t + 1e-9:
            self._k += 1
            out.append(self._sample_to(self._k * self.interval, self.interval))
        return out

    def finish(self) -> list[Sample]:
        """The last partial interval, from the last grid point to fio's end."""
        end = self._points[-1]
        done = self._k * self.interval
        if end.t - done <= 1e-6 and (end.read, end.written, end.ops) == self._emitted:
            return []
        span = max(end.t - done, 1e-3)
        return [self._sample_to(round(done + span, 6), span)]

    def _at(self, t: float) -> tuple[int, int, int]:
        pts = self._points
        if t >= pts[-1].t:
            p = pts[-1]
            return p.read, p.written, p.ops
        for a, b in zip(pts, pts[1:], strict=False):
            if a.t <= t <= b.t:
                f = (t - a.t) / (b.t - a.t) if b.t > a.t else 1.0
                return (round(a.read + f * (b.read - a.read)), round(a.written + f * (b.written - a.written)),
                        round(a.ops + f * (b.ops - a.ops)))
        return 0, 0, 0

    def _sample_to(self, t: float, span: float) -> Sample:
        read, written, ops = self._at(t)
        r0, w0, o0 = self._emitted
        self._emitted = (read, written, ops)
        return Sample(client=self.client, t=round(t, 6), interval=round(span, 6), bytes_read=read - r0,
                      bytes_written=written - w0, ops=ops - o0)
