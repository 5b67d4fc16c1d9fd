"""fio as a second engine: export a workload spec as a job file, read fio's results back.

The job file lets an admin reproduce a number with a standard tool. fio's JSON output
becomes an ``AgentSummary`` and its per-interval logs (``write_bw_log`` with
``log_avg_msec``) become the same ``Sample`` stream the agent produces.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from experiments import workloads as w
from experiments.agent_protocol import AgentSummary
from experiments.latency import Histogram, merge, read_fio_bins
from experiments.record_fields import BadRecord, count, finite, items, mapping
from experiments.record_fields import text as text_field
from experiments.samples import Sample

LOG_PREFIX = "nfs-tuner"
_EXACT = "same I/O pattern as the nfs-tuner agent"
_NAME = re.compile(r"^[A-Za-z0-9_.:-]+$")


def fio_line(key: str, value: Any) -> str:
    """One ``key=value`` line of a job file, or a refusal: every value is data, never fio syntax.

    A job file is line-based (a newline would add an option such as exec_prerun=),
    fio expands ``$VAR`` and ``$(...)`` in values, and ';' or '#' start comments.
    """
    if not _NAME.match(key):
        raise ValueError(f"not a fio option name: {key!r}")
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"fio option {key} needs a number or a word, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"fio option {key} needs a finite number, got {value!r}")
    text = str(value)
    if any(ord(c) < 32 or ord(c) == 127 or c in "$;#\u2028\u2029\x85" for c in text):
        raise ValueError(f"fio option {key} cannot carry {text!r}: control characters, '$', ';' and '#' "
                         "would be read as fio syntax")
    return f"{key}={text}"


def _check_directory(directory: str) -> None:
    # fio reads ':' as a list separator in directory=, and a newline would end the option
    if not directory.startswith("/") or any(c in directory for c in "\n:"):
        raise ValueError(f"fio directory must be an absolute path without ':' or newlines, got {directory!r}")


def _job_options(spec: w.WorkloadSpec) -> tuple[dict[str, Any], str]:
    """fio options for one spec and a note on how faithful the translation is."""
    exact = _EXACT
    match spec:
        case w.SeqWrite() | w.Rewrite():
            opts: dict[str, Any] = {"rw": "write", "bs": spec.block_size, "size": spec.file_size, "numjobs": spec.jobs}
            if spec.fsync:
                opts["end_fsync"] = 1  # like iozone -e: the flush is inside the measured time
            if isinstance(spec, w.Rewrite):
                opts["overwrite"] = 1  # fio lays the file out first, then rewrites it
            # fio preallocates by default (NFS 4.2 ALLOCATE: the server reserves the blocks up
            # front); the agent, like cp and dd, allocates as it writes
            return opts | {"direct": int(spec.direct), "fallocate": "none"}, exact
        case w.SeqRead():
            return {"rw": "read", "bs": spec.block_size, "size": spec.file_size, "numjobs": spec.jobs,
                    "direct": int(spec.direct), "invalidate": 1}, exact
        case w.RandRead() | w.RandWrite() | w.Mixed():
            rw = {"rand_read": "randread", "rand_write": "randwrite", "mixed": "randrw"}[spec.kind]
            io_size = spec.io_size or spec.file_size
            opts = {"rw": rw, "bs": spec.block_size, "size": spec.file_size, "numjobs": spec.jobs,
                    "filename": "nfs-tuner.rand", "io_size": max(io_size // spec.jobs, spec.block_size),
                    "direct": int(spec.direct), "randseed": spec.seed, "invalidate": 1}
            if isinstance(spec, w.Mixed):
                opts["rwmixread"] = round(spec.read_share * 100)
            if spec.fsync and spec.kind != "rand_read":
                opts["end_fsync"] = 1
            return opts, exact
        case w.SmallFiles():
            size = max(spec.file_size, 512)
            opts = {"rw": "write", "bs": size, "filesize": size, "nrfiles": max(spec.count // spec.jobs, 1),
                    "numjobs": spec.jobs, "openfiles": 1, "create_on_open": 1, "file_service_type": "sequential"}
            if spec.fsync:
                opts["fsync_on_close"] = 1
            return opts, "approximation: fio creates and writes the files in one directory; no stat/read/delete phases"
        case w.Tree():
            return ({"rw": "write", "bs": "4k", "filesize": "1k-64k", "nrfiles": spec.files, "openfiles": 1,
                     "create_on_open": 1, "file_service_type": "sequential"},
                    "approximation: fio writes files of random sizes in one directory; no nesting, find or remove")
        case w.DirScaling():
            return ({"rw": "write", "bs": 512, "filesize": max(spec.file_size, 512), "nrfiles": spec.count,
                     "openfiles": 1, "create_on_open": 1, "file_service_type": "sequential"},
                    "approximation: fio cannot create empty files and reports no rate-versus-count curve"
                    + ("; it puts every file in one directory (no hashed layout)" if spec.layout == "hashed" else ""))
        case w.TcpSink():
            return {"ioengine": "net", "listen": 1, "port": spec.port or 8765, "protocol": "tcp", "rw": "read",
                    "bs": spec.block_size, "size": "100g", "numjobs": 1}, "fio's net engine, one stream"
        case w.TcpSource():
            _name = spec.host
            if not _NAME.match(_name):
                raise ValueError(f"host {spec.host!r} cannot go into a fio job file")
            return {"ioengine": "net", "hostname": spec.host, "port": spec.port, "protocol": "tcp", "rw": "write",
                    "bs": spec.block_size, "size": spec.size or "100g", "numjobs": 1}, "fio's net engine, one stream"
    raise ValueError(f"{spec.kind} has no fio equivalent")


def fio_exact(spec: w.WorkloadSpec) -> bool:
    """Whether fio runs the same I/O pattern as the agent (not an approximation)."""
    try:
        _, note = _job_options(spec)
    except ValueError:
        return False
    return note == _EXACT


def to_fio_job(spec: w.WorkloadSpec, directory: str, log_prefix: str | None = LOG_PREFIX) -> str:
    """A fio job file for spec, writing its files in directory (net jobs ignore it).

    With log_prefix, fio also writes per-interval bandwidth, IOPS and latency logs at the
    spec's interval, which ``parse_fio_logs`` reads back.
    """
    opts, note = _job_options(spec)
    if rate := getattr(spec, "rate_iops", None):  # fio caps each job: the client's rate shared out
        opts["rate_iops"] = max(1, math.ceil(rate / int(opts.get("numjobs", 1))))
    net = opts.get("ioengine") == "net"
    if not net:
        _check_directory(directory)
    # unlink=1: fresh files each run and nothing left behind, as the agent does
    glob: dict[str, Any] = {} if net else {"directory": directory, "ioengine": "psync", "unlink": 1}
    glob["group_reporting"] = 0
    if spec.duration_s is not None:
        glob |= {"runtime": f"{spec.duration_s:g}s"}
        if getattr(spec, "loop", False):
            glob["time_based"] = 1
    if log_prefix:
        if not _NAME.match(log_prefix):
            raise ValueError(f"log_prefix must be a plain name, got {log_prefix!r}")
        glob |= {"log_avg_msec": round(spec.interval_s * 1000), "write_bw_log": log_prefix,
                 "write_iops_log": log_prefix, "write_lat_log": log_prefix, "per_job_logs": 1}
    if not _NAME.match(str(spec.kind)):
        raise ValueError(f"not a workload kind: {spec.kind!r}")
    # The spec as JSON is a comment: json.dumps escapes every control character (ensure_ascii).
    lines = [f"# nfs-tuner workload {spec.kind}: {note}", f"# spec: {json.dumps(spec.to_dict(), sort_keys=True)}",
             "[global]", *(fio_line(k, v) for k, v in glob.items()), "", f"[{spec.kind}]",
             *(fio_line(k, v) for k, v in opts.items()), ""]
    return "\n".join(lines)


def fio_argv(job_file: str, json_output: str, fio: str = "fio") -> list[str]:
    """fio's command for a job file: ``json+`` output, whose completion-latency bins give the histogram."""
    return [fio, "--output-format=json+", f"--output={json_output}", job_file]


def _load_json(text: str) -> dict[str, Any]:
    start = text.find("{")  # fio may print warnings before the JSON document
    if start < 0:
        raise BadRecord("no JSON object in fio's output")
    try:
        data, _ = json.JSONDecoder().raw_decode(text[start:])
    except RecursionError:
        raise BadRecord("fio's output is JSON nested too deeply") from None
    except ValueError as exc:
        raise BadRecord(f"fio's output is not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list):
        raise BadRecord("fio output has no 'jobs' list")
    return data


def _dir(job: dict[str, Any], d: str) -> dict[str, Any]:
    return mapping(job.get(d), f"fio job {d}")


def _pct_ms(clat: dict[str, Any], key: str) -> float:
    pct = mapping(clat.get("percentile", {}), "fio percentiles")
    return finite(pct.get(key, 0), f"fio p{key}", 0.0) / 1e6


def fio_histogram(doc: dict[str, Any]) -> Histogram | None:
    """Completion latencies of every job and direction in experiments.latency's buckets (fio's
    ``--output-format=json+`` bins, converted); None when a direction that did I/O has no bins
    (plain json): a partial histogram would misstate the tail. BadRecord for malformed bins."""
    parts = []
    for j in items(doc.get("jobs"), "fio's jobs", 4096):
        for d in ("read", "write"):
            direction = _dir(mapping(j, "a fio job"), d)
            if not direction.get("total_ios"):
                continue
            clat = mapping(direction.get("clat_ns", {}), "fio clat_ns")
            if "bins" not in clat:
                return None
            parts.append(read_fio_bins(clat["bins"], f"fio {d} clat bins"))
    return merge(parts)


def parse_fio_json(text: str, client: str, cache_mode: str = "fio") -> AgentSummary:
    """fio's --output-format=json as a run summary (all jobs added up).

    Raises ValueError (BadRecord) naming what is wrong: an error fio reports, or a
    document that is not fio's (missing fields, wrong types, non-finite numbers).
    """
    data = _load_json(text)
    jobs = [mapping(j, "a fio job") for j in items(data["jobs"], "fio's jobs", 4096)]
    if not jobs:
        raise BadRecord("fio output has no jobs")
    failed = [j for j in jobs if j.get("error")]
    if failed:
        name = text_field(failed[0].get("jobname", "?"), "fio job name", 64)
        raise BadRecord(f"fio job {name} failed with error {count(failed[0]['error'], 'fio job error')}")
    nread = sum(count(_dir(j, "read").get("io_bytes"), "fio read io_bytes") for j in jobs)
    nwritten = sum(count(_dir(j, "write").get("io_bytes"), "fio write io_bytes") for j in jobs)
    ops = sum(count(_dir(j, d).get("total_ios"), f"fio {d} total_ios") for j in jobs for d in ("read", "write"))
    duration = max(max(count(_dir(j, d).get("runtime"), f"fio {d} runtime") for d in ("read", "write"))
                   for j in jobs) / 1000.0
    # the busiest direction's percentiles stand for the run; the worst job counts
    dirs = [_dir(j, d) for j in jobs for d in ("read", "write") if _dir(j, d).get("total_ios")]
    clats = [mapping(d.get("clat_ns", {}), "fio clat_ns") for d in dirs]
    opts = mapping(data.get("global options", {}), "fio global options") | mapping(
        jobs[0].get("job options", {}), "fio job options")
    lat_max = max((finite(c.get("max", 0), "fio clat max", 0.0) / 1e6 for c in clats), default=0.0)
    cpu = sum(finite(j.get("usr_cpu", 0), "fio usr_cpu", 0.0) + finite(j.get("sys_cpu", 0), "fio sys_cpu", 0.0)
              for j in jobs)
    direct = str(opts.get("direct", "0")) == "1"
    return AgentSummary(
        client=client,
        mode="fio:" + text_field(str(opts.get("rw", "?")), "fio rw", 32),
        end="done",
        duration=duration,
        bytes_read=nread,
        bytes_written=nwritten,
        ops=ops,
        errors=0,
        # fio's percentiles are bucket edges and may overshoot the true max slightly
        lat_p50_ms=min(max((_pct_ms(c, "50.000000") for c in clats), default=0.0), lat_max),
        lat_p99_ms=min(max((_pct_ms(c, "99.000000") for c in clats), default=0.0), lat_max),
        lat_max_ms=lat_max,
        cache_mode="o_direct" if direct else cache_mode,
        caches_dropped=False,
        direct=direct,
        prepare_s=0.0,
        cpu_s=cpu / 100.0 * duration,
        python="",
        extra={"fio_version": text_field(str(data.get("fio version", "")), "fio version", 64)},
        lat_hist=fio_histogram(data),
    )


def _log_rows(path: Path) -> Iterable[tuple[int, float, int]]:
    """(time_ms, value, direction) rows of one fio log; bad rows are skipped."""
    for line in path.read_text(errors="replace").splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 3:
            continue
        try:
            yield int(parts[0]), float(parts[1]), int(parts[2])
        except ValueError:
            continue


def _spread(rows: Iterable[tuple[int, float, int]], step_s: float, scale: float,
            into: dict[int, dict[int, float]]) -> None:
    """Add one job's log rows to interval buckets keyed by direction.

    A row's value is the job's average rate since its previous row (fio writes rows
    at log_avg_msec at best, later under load), so each row covers [previous, time]
    and is spread over the buckets that span overlaps in proportion.
    """
    prev = 0.0
    for ms, rate, ddir in rows:
        end = ms / 1000.0
        start, prev = prev, end
        if end <= start:
            continue
        k = int(start / step_s) + 1
        while (k - 1) * step_s < end:
            overlap = min(end, k * step_s) - max(start, (k - 1) * step_s)
            if overlap > 0:
                bucket = into.setdefault(ddir, {})
                bucket[k] = bucket.get(k, 0.0) + rate * scale * overlap
            k += 1


def parse_fio_logs(directory: str | Path, client: str, interval_s: float = 0.25, prefix: str = LOG_PREFIX) -> list[Sample]:
    """fio's per-job logs as samples on an aligned grid: bytes from bw (KiB/s), ops from IOPS.

    fio's averaged logs carry no percentiles, so the latency fields stay 0; its JSON
    summary has them. Time in fio's logs starts at each job's start.
    """
    base = Path(directory)
    bw: dict[int, dict[int, float]] = {}
    iops: dict[int, dict[int, float]] = {}
    bw_logs = sorted(base.glob(f"{prefix}_bw*.log"))
    if not bw_logs:
        raise FileNotFoundError(f"no fio bandwidth log {prefix}_bw*.log in {base}")
    for path in bw_logs:
        _spread(_log_rows(path), interval_s, 1024.0, bw)
    for path in sorted(base.glob(f"{prefix}_iops*.log")):
        _spread(_log_rows(path), interval_s, 1.0, iops)
    keys = sorted({k for d in (*bw.values(), *iops.values()) for k in d})
    return [
        Sample(client=client, t=round(k * interval_s, 6), interval=interval_s,
               bytes_read=round(bw.get(0, {}).get(k, 0.0)), bytes_written=round(bw.get(1, {}).get(k, 0.0)),
               ops=round(sum(d.get(k, 0.0) for d in iops.values())))
        for k in keys
    ]
