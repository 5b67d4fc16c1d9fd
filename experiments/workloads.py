"""Typed workload specs: what the load agent (or fio) runs in one trial.

Every spec is a frozen dataclass whose values are checked on construction, so a bad
value fails where it was typed, with a message naming the field. ``to_agent_config``
gives the agent's JSON config; ``objective`` says which recommendation the workload
informs (None for baselines and telemetry).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from enum import StrEnum
from typing import Any, ClassVar

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
MAX_BLOCK = 64 * MIB  # the agent holds one block per job in memory


class Objective(StrEnum):
    SEQ_READ = "seq_read"
    SEQ_WRITE = "seq_write"
    SMALL_FILES = "small_files"
    TREE = "tree"  # untar, find, remove: judged by operations per second, with each phase's time
    DIR_SCALING = "dir_scaling"  # creates in one growing directory
    MIXED = "mixed"


# Objectives judged by file operations per second over whole phases, not bytes per second.
OPS_OBJECTIVES = frozenset({Objective.SMALL_FILES.value, Objective.TREE.value, Objective.DIR_SCALING.value})


class CacheMode(StrEnum):
    """What kept a measurement honest, as the agent reports it in its summary."""

    O_DIRECT = "o_direct"
    DROPPED = "dropped"  # echo 3 > drop_caches worked (root)
    FADVISE = "fadvise"  # the data files were evicted with POSIX_FADV_DONTNEED
    DATASET_GT_RAM = "dataset>ram"
    FSYNC = "fsync"  # write-only: every file was fsynced before the clock stopped
    CACHED = "cached!"  # nothing applied: the figure may come from the client's RAM
    NA = "n/a"


def _positive(name: str, value: float) -> None:
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value!r}")


def _at_least(name: str, value: int, minimum: int) -> None:
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value!r}")


def _block(name: str, value: int, direct: bool) -> None:
    _at_least(name, value, 512)
    if value > MAX_BLOCK:
        raise ValueError(f"{name} must be at most {MAX_BLOCK} bytes (64 MiB), got {value}")
    if direct and value % 4096:
        raise ValueError(f"{name} must be a multiple of 4096 with direct=True (O_DIRECT alignment), got {value}")


def _rate(value: float | None) -> None:
    if value is not None and not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise ValueError(f"rate_iops must be a finite number of operations per second above 0, got {value!r}")


def _without_rate(params: dict[str, Any]) -> dict[str, Any]:
    """The agent's config leaves out a rate that is not set (the agent reads none as unlimited)."""
    if params.get("rate_iops") is None:
        params.pop("rate_iops", None)
    return params


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadSpec:
    """Fields every workload shares. duration_s=None: run until the size is done."""

    kind: ClassVar[str] = ""
    objective: ClassVar[Objective | None] = None
    # The data files the agent lays out before measuring, by name ("" none): a run may keep them on the export for
    # the next trial (config keep_data), which then reads what is there; workloads of one name share those files.
    data_files: ClassVar[str] = ""

    interval_s: float = 0.25
    duration_s: float | None = None

    def __post_init__(self) -> None:
        _positive("interval_s", self.interval_s)
        if self.interval_s < 0.05:
            raise ValueError(f"interval_s must be at least 0.05 s, got {self.interval_s}")
        if self.duration_s is not None:
            _positive("duration_s", self.duration_s)

    def params(self) -> dict[str, Any]:
        """The workload's own fields (not interval/duration) as the agent names them."""
        shared = {"interval_s", "duration_s"}
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in shared}

    def to_agent_config(self, directory: str | None = None, **control: Any) -> dict[str, Any]:
        """The agent's config line. control: start_at, wait_go, hold_files, stall_timeout, pause_before,
        latency_from (seconds of warm-up whose latencies stay out of the summary's histogram), keep_data (the
        directory beside the agent's own where its laid-out data stays for the next trial: ``data_files``)."""
        allowed = {"start_at", "wait_go", "hold_files", "stall_timeout", "pause_before", "latency_from", "keep_data"}
        if unknown := set(control) - allowed:
            raise ValueError(f"unknown agent control options: {sorted(unknown)}")
        cfg: dict[str, Any] = {"mode": self.kind, "interval": self.interval_s}
        if self.duration_s is not None:
            cfg["duration"] = self.duration_s
        if directory is not None:
            cfg["dir"] = directory
        cfg.update(self.params())
        cfg.update(control)
        return cfg

    def to_dict(self) -> dict[str, Any]:
        """For the store: kind plus every field; workload_from_dict reads it back."""
        return {"kind": self.kind, **asdict(self)}

    def data_bytes(self) -> int:
        """What one client's run lays out on the export at most, in bytes (a file takes a block at least)."""
        return 0


@dataclass(frozen=True, slots=True, kw_only=True)
class _Sequential(WorkloadSpec):
    block_size: int = 1 * MIB
    file_size: int = 1 * GIB
    jobs: int = 1
    direct: bool = False
    loop: bool = False  # repeat until duration_s or a stop
    rate_iops: float | None = None  # at most this many operations per second on the client; None: as fast as it goes

    def __post_init__(self) -> None:
        WorkloadSpec.__post_init__(self)
        _block("block_size", self.block_size, self.direct)
        _at_least("file_size", self.file_size, self.block_size)
        if self.file_size % self.block_size:
            raise ValueError(f"file_size ({self.file_size}) must be a multiple of block_size ({self.block_size})")
        _at_least("jobs", self.jobs, 1)
        if self.loop and self.duration_s is None:
            raise ValueError("loop=True needs duration_s, or the workload never ends on its own")
        _rate(self.rate_iops)

    def params(self) -> dict[str, Any]:
        return _without_rate(WorkloadSpec.params(self))

    def data_bytes(self) -> int:
        return self.file_size * self.jobs


@dataclass(frozen=True, slots=True, kw_only=True)
class SeqWrite(_Sequential):
    kind: ClassVar[str] = "seq_write"
    objective: ClassVar[Objective | None] = Objective.SEQ_WRITE
    fsync: bool = True  # fsync before close, like iozone -e


@dataclass(frozen=True, slots=True, kw_only=True)
class SeqRead(_Sequential):
    kind: ClassVar[str] = "seq_read"
    data_files: ClassVar[str] = "seqr"
    objective: ClassVar[Objective | None] = Objective.SEQ_READ


@dataclass(frozen=True, slots=True, kw_only=True)
class Rewrite(_Sequential):
    kind: ClassVar[str] = "rewrite"
    data_files: ClassVar[str] = "seqr"
    objective: ClassVar[Objective | None] = Objective.SEQ_WRITE
    fsync: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class _Random(WorkloadSpec):
    data_files: ClassVar[str] = "rand"
    block_size: int = 4 * KIB
    file_size: int = 1 * GIB
    io_size: int | None = None  # bytes moved per pass; None: file_size
    jobs: int = 4
    direct: bool = False
    fsync: bool = False
    seed: int = 42
    loop: bool = False
    rate_iops: float | None = None  # at most this many operations per second on the client; None: as fast as it goes

    def __post_init__(self) -> None:
        WorkloadSpec.__post_init__(self)
        _block("block_size", self.block_size, self.direct)
        _at_least("file_size", self.file_size, self.block_size)
        _at_least("jobs", self.jobs, 1)
        if self.jobs > 256:
            raise ValueError(f"jobs must be at most 256, got {self.jobs}")
        if self.io_size is not None:
            _at_least("io_size", self.io_size, self.block_size * self.jobs)
        if self.loop and self.duration_s is None:
            raise ValueError("loop=True needs duration_s, or the workload never ends on its own")
        _rate(self.rate_iops)

    def params(self) -> dict[str, Any]:
        p = _without_rate(WorkloadSpec.params(self))
        if p["io_size"] is None:
            del p["io_size"]
        return p

    def data_bytes(self) -> int:
        return self.file_size * self.jobs


@dataclass(frozen=True, slots=True, kw_only=True)
class RandRead(_Random):
    kind: ClassVar[str] = "rand_read"
    objective: ClassVar[Objective | None] = Objective.MIXED


@dataclass(frozen=True, slots=True, kw_only=True)
class RandWrite(_Random):
    kind: ClassVar[str] = "rand_write"
    objective: ClassVar[Objective | None] = Objective.MIXED


@dataclass(frozen=True, slots=True, kw_only=True)
class Mixed(_Random):
    kind: ClassVar[str] = "mixed"
    objective: ClassVar[Objective | None] = Objective.MIXED
    read_share: float = 0.75

    def __post_init__(self) -> None:
        _Random.__post_init__(self)
        if not 0.0 <= self.read_share <= 1.0:
            raise ValueError(f"read_share must be between 0 and 1, got {self.read_share}")


@dataclass(frozen=True, slots=True, kw_only=True)
class _Phased(WorkloadSpec):
    """A workload of phases judged by operations per second (OPS_OBJECTIVES).

    time_limit_s: the seconds its phases may take in all. Each phase then gets an even share of
    the time left, ends at it once it has completed an operation, and reports the rate of what
    it completed; the next phase works on what the earlier ones made (the agent's timed_phase).
    None: every phase runs to its end.
    """

    time_limit_s: float | None = None

    def __post_init__(self) -> None:
        WorkloadSpec.__post_init__(self)
        t = self.time_limit_s
        if t is not None and not (isinstance(t, int | float) and not isinstance(t, bool) and math.isfinite(t) and t > 0):
            raise ValueError(f"time_limit_s must be a finite number of seconds above 0, got {t!r}")

    def params(self) -> dict[str, Any]:
        p = WorkloadSpec.params(self)
        if p.get("time_limit_s") is None:
            p.pop("time_limit_s", None)
        return p


@dataclass(frozen=True, slots=True, kw_only=True)
class SmallFiles(_Phased):
    """Create, stat, read, delete `count` files; layout 'tree' spreads them over fanout² dirs."""

    kind: ClassVar[str] = "small_files"
    objective: ClassVar[Objective | None] = Objective.SMALL_FILES
    count: int = 2000
    file_size: int = 4 * KIB
    layout: str = "flat"
    fanout: int = 32
    fsync: bool = False  # fsync each created file, like the seed's create-and-sync loop
    jobs: int = 1

    def __post_init__(self) -> None:
        _Phased.__post_init__(self)
        _at_least("count", self.count, 1)
        _at_least("file_size", self.file_size, 0)
        if self.file_size > MAX_BLOCK:
            raise ValueError(f"file_size must be at most 64 MiB for small files, got {self.file_size}")
        if self.layout not in ("flat", "tree"):
            raise ValueError(f"layout must be 'flat' or 'tree', got {self.layout!r}")
        _at_least("fanout", self.fanout, 2)
        _at_least("jobs", self.jobs, 1)

    def data_bytes(self) -> int:
        return self.count * max(self.file_size, FS_BLOCK) * self.jobs


@dataclass(frozen=True, slots=True, kw_only=True)
class Tree(_Phased):
    """Extract a synthetic kernel-like tree, find/stat it, remove it; each phase timed."""

    kind: ClassVar[str] = "tree"
    objective: ClassVar[Objective | None] = Objective.TREE
    files: int = 10000
    seed: int = 1

    def __post_init__(self) -> None:
        _Phased.__post_init__(self)
        _at_least("files", self.files, 1)

    def data_bytes(self) -> int:
        return self.files * TREE_FILE_BYTES


FS_BLOCK = 4 * KIB  # the least a file with data takes on the export
TREE_FILE_BYTES = 16 * KIB  # a synthetic tree's file on the export, with its block rounding: above the agent's mean
MAX_CURVE_POINTS = 200  # the agent sends at most this many rate-vs-entries points (experiments/agent.py)


@dataclass(frozen=True, slots=True, kw_only=True)
class DirScaling(_Phased):
    """Create files in one directory up to `count`; samples carry the count (rate vs size).

    layout "hashed" spreads the files over `fanout` subdirectories by a hash of the name;
    `points` > 0 asks for that many rate-vs-entries "point" records (the agent caps them at 200).
    """

    kind: ClassVar[str] = "dir_scaling"
    objective: ClassVar[Objective | None] = Objective.DIR_SCALING
    count: int = 100_000
    file_size: int = 0
    fsync: bool = False
    timed_delete: bool = True
    layout: str = "flat"
    fanout: int = 256
    points: int = 0

    def __post_init__(self) -> None:
        _Phased.__post_init__(self)
        _at_least("count", self.count, 1)
        if self.count > 50_000_000:
            raise ValueError(f"count must be at most 50 million, got {self.count}")
        _at_least("file_size", self.file_size, 0)
        if self.layout not in ("flat", "hashed"):
            raise ValueError(f"layout must be flat or hashed, got {self.layout!r}")
        if not 1 <= self.fanout <= 4096:
            raise ValueError(f"fanout must be 1 to 4096, got {self.fanout}")
        if not 0 <= self.points <= MAX_CURVE_POINTS:
            raise ValueError(f"points must be 0 to {MAX_CURVE_POINTS}, got {self.points}")

    def data_bytes(self) -> int:
        return self.count * -(-self.file_size // FS_BLOCK) * FS_BLOCK  # empty files take an inode, no block


def _port(value: int, allow_zero: bool) -> None:
    if not (0 if allow_zero else 1) <= value <= 65535:
        raise ValueError(f"port must be in {'0' if allow_zero else '1'}..65535, got {value}")


@dataclass(frozen=True, slots=True, kw_only=True)
class TcpSink(WorkloadSpec):
    """Network ceiling, server side: port 0 picks a free port (reported as 'listening')."""

    kind: ClassVar[str] = "tcp_sink"
    port: int = 0
    bind: str = "0.0.0.0"
    streams: int = 1
    block_size: int = 128 * KIB
    socket_buffer: int = 0

    def __post_init__(self) -> None:
        WorkloadSpec.__post_init__(self)
        _port(self.port, True)
        _at_least("streams", self.streams, 1)
        _at_least("block_size", self.block_size, 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class TcpSource(WorkloadSpec):
    """Network ceiling, client side: sends `size` bytes (0: until duration_s) over streams."""

    kind: ClassVar[str] = "tcp_source"
    host: str
    port: int
    streams: int = 1
    block_size: int = 128 * KIB
    size: int = 0
    socket_buffer: int = 0

    def __post_init__(self) -> None:
        WorkloadSpec.__post_init__(self)
        if not self.host or any(c.isspace() for c in self.host):
            raise ValueError(f"host must be a host name or address, got {self.host!r}")
        _port(self.port, False)
        _at_least("streams", self.streams, 1)
        _at_least("block_size", self.block_size, 1)
        _at_least("size", self.size, 0)
        if self.size == 0 and self.duration_s is None:
            raise ValueError("tcp_source needs size or duration_s")


@dataclass(frozen=True, slots=True, kw_only=True)
class Telemetry(WorkloadSpec):
    """Host counters at the same cadence: block devices, NICs, CPU, nfsd pools, NFS mounts."""

    kind: ClassVar[str] = "telemetry"
    devices: tuple[str, ...] = ()
    nics: tuple[str, ...] = ()
    mounts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        WorkloadSpec.__post_init__(self)
        for name in (*self.devices, *self.nics):
            if not name or "/" in name or any(c.isspace() for c in name):
                raise ValueError(f"device and NIC names must be plain names like 'sda' or 'eth0', got {name!r}")
        for mp in self.mounts:
            if not mp.startswith("/"):
                raise ValueError(f"mount points must be absolute paths, got {mp!r}")

    def params(self) -> dict[str, Any]:
        return {"devices": list(self.devices), "nics": list(self.nics), "mounts": list(self.mounts)}


WORKLOAD_TYPES: dict[str, type[WorkloadSpec]] = {
    cls.kind: cls
    for cls in (SeqWrite, SeqRead, Rewrite, RandRead, RandWrite, Mixed, SmallFiles, Tree, DirScaling, TcpSink, TcpSource, Telemetry)
}


def workload_from_dict(data: dict[str, Any]) -> WorkloadSpec:
    """Inverse of WorkloadSpec.to_dict; unknown kinds and fields fail clearly."""
    values = dict(data)
    kind = values.pop("kind", None)
    cls = WORKLOAD_TYPES.get(str(kind))
    if cls is None:
        raise ValueError(f"unknown workload kind {kind!r}; known: {', '.join(sorted(WORKLOAD_TYPES))}")
    names = {f.name for f in fields(cls)}
    if unknown := set(values) - names:
        raise ValueError(f"{kind} has no fields {sorted(unknown)}")
    for key in ("devices", "nics", "mounts"):
        if key in values:
            values[key] = tuple(values[key])
    return cls(**values)
