"""A sweep as stored with its session: the plan plus where and how it runs.

The session's plan column holds ``Plan.to_json()`` with one extra key, ``sweep``, so
the recommendation (which reads the plan's baseline) and a resumed sweep (which needs
the hosts and workload sizes) read the same record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from app.knobs.catalog import SPECS
from app.knobs.client_sysctls import CLIENT_SYSCTLS
from app.runner.run import ENGINES
from app.vocabulary import workload_id
from experiments.goals import Goal
from experiments.plan import Plan
from experiments.stability import SteadyCriteria
from experiments.workloads import MAX_CURVE_POINTS, MIB, WORKLOAD_TYPES, WorkloadSpec

LOOPING = {"seq_read", "seq_write", "rewrite", "rand_read", "rand_write", "mixed"}
# Judged by operations per second per phase, never stopped mid-phase by the monitor: each phase
# ends at its end or at its share of the plan's time (phased_limit_s), with the rate of what it did.
PHASED = {"small_files", "tree", "dir_scaling"}
SWEEPABLE = LOOPING | PHASED
PHASED_SIZES: dict[str, dict[str, int]] = {"dir_scaling": {"count": 10_000}}  # a trial's size, not a study's
STUDY_S_PER_ENTRY = 0.01  # a directory study's trial counts as stuck past this per entry (create + delete)
SERVER_KNOBS = ("nfsd_threads", "nfsd_min_threads", "max_block_size", "pool_mode", "stripe_cache_size", "export_sync", "export_wdelay")
RESTARTS = ("max_block_size", "pool_mode")  # a change restarts nfsd: an opt-in of its own (restart_opt_in)
EXPORT_KNOBS = ("export_sync", "export_wdelay")  # options of the one export: applied in this order
MOUNT_KNOBS = ("rsize", "wsize", "nfsvers", "nconnect", "nocto", "actimeo")
PINNED = ("mtu", "nconnect", "rpc_slots")  # a client's other mount of the server pins them to its connection
CLIENT_HOST_KNOBS = CLIENT_SYSCTLS  # host-wide on each client: held while unchanged, like the server's


def restart_changes(knobs: Mapping[str, Sequence[object]], baseline: Mapping[str, object]) -> list[str]:
    """The knobs of RESTARTS that ``knobs`` would set to a value other than ``baseline``'s (today's)."""
    return [k for k in RESTARTS if any(str(v) != str(baseline.get(k)) for v in knobs.get(k, ()))]


def workload_kind(name: str) -> str:
    kind = workload_id(name)
    if kind not in SWEEPABLE:
        raise ValueError(f"unknown workload {name!r}; choose from {', '.join(sorted(SWEEPABLE))}")
    return kind


@dataclass(frozen=True, slots=True)
class SweepSpec:
    server: str  # SSH name of the server
    clients: tuple[str, ...]
    export: str  # the export's path on the server
    plan: Plan
    server_address: str = ""  # as the clients mount it; default: the server's SSH name
    async_opt_in: bool = False  # the admin accepted that async may lose acknowledged writes
    restart_opt_in: bool = False  # the admin accepted that nfsd restarts (RESTARTS) for the sweep
    file_size: int = 256 * MIB  # per client data set
    block_size: int = 1 * MIB
    interval_s: float = 0.25
    mount_root: str = "/mnt/nfs-tuner"
    link_bps: float | None = None  # ceiling per client; faster trials were served by a cache
    measure_ceilings: bool = True  # TCP per client and server disk, once per session
    python: Mapping[str, str] = field(default_factory=dict)  # host -> interpreter
    engine: str = "agent"  # the load: "agent", "fio" or "auto" (fio where it runs the spec exactly)
    goal: Goal = field(default_factory=Goal)  # what the recommendation optimises (experiments.goals)
    # A study instead of a sweep (its one step: experiments.steps): a load ladder's streams per client at
    # each step (app.sweep.ladder), or a directory study's layouts, one trial each, of ``entries`` files.
    ladder: tuple[int, ...] = ()
    dirs: tuple[str, ...] = ()
    entries: int = 0  # the study's files per directory (0: PHASED_SIZES' trial size)
    host_wait_s: float = 120.0  # how long a host that stopped answering is waited for before the admin is asked
    # Per phased kind, fields that size its trial (e.g. {"tree": {"files": 2000}}); over PHASED_SIZES.
    phased_sizes: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.clients:
            raise ValueError("a sweep needs at least one client")
        if self.engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {self.engine!r}")
        for knob, values in self.plan.knobs.items():
            if knob not in SPECS:
                raise ValueError(f"unknown knob {knob!r}; known: {', '.join(SPECS)}")
            for v in values:
                if problem := SPECS[knob].validity.problem(v if isinstance(v, int | str) else str(v)):
                    raise ValueError(f"{knob}: {problem}")
        tried = [str(v) for v in self.plan.knobs.get("export_sync", ())]
        if "async" in tried and not self.async_opt_in and str(self.plan.baseline.get("export_sync")) != "async":
            raise ValueError("export_sync=async may lose acknowledged writes on a server crash: "
                             "sweep it only with --async-opt-in")
        if not self.restart_opt_in and (restarts := restart_changes(self.plan.knobs, self.plan.baseline)):
            raise ValueError(f"{', '.join(restarts)} restarts nfsd on {self.server} for each change, and NFSv4 "
                             "clients wait out its grace period: sweep it only with --restart-opt-in")
        for w in self.plan.workloads:
            workload_kind(w)
        for kind, sizes in self.phased_sizes.items():
            if kind not in PHASED:
                raise ValueError(f"phased_sizes: {kind!r} is not one of {', '.join(sorted(PHASED))}")
            if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in sizes.values()):
                raise ValueError(f"phased_sizes: {kind}'s sizes must be positive whole numbers, got {dict(sizes)}")
            try:
                self.workload(kind)
            except TypeError as exc:  # a field the workload does not have
                raise ValueError(f"phased_sizes: {kind}: {exc}") from exc

    @property
    def address(self) -> str:
        return self.server_address or self.server

    @property
    def kind(self) -> str:
        """"sweep", "ladder" or "dirs": the plan's kind, as sessions are noted."""
        return "ladder" if self.ladder else "dirs" if self.dirs else "sweep"

    def criteria(self) -> SteadyCriteria:
        t = self.plan.timing
        window = int(min(40, max(4, t.min_measure_s / self.interval_s)))
        return SteadyCriteria(window=window)

    def workload(self, name: str, variant: Mapping[str, Any] | None = None) -> WorkloadSpec:
        """The workload as one trial runs it: looping until the monitor or the cap stops it, or
        (small files, tree, directory scaling) through all of its phases. ``variant``: the fields a
        study's step sets (a ladder's ``jobs``, a directory study's ``layout``)."""
        kind = workload_kind(name)
        t = self.plan.timing
        duration = t.warmup_s + t.max_measure_s + 2.0  # the monitor stops first; this is the backstop
        cls = WORKLOAD_TYPES[kind]
        jobs = {"jobs": int(variant["jobs"])} if variant and "jobs" in variant else {}
        if kind in LOOPING:  # the goal's load, when it sets one, holds every configuration to the same rate
            return cls(file_size=self.file_size, block_size=self.block_size if kind.startswith(("seq", "rew")) else 4096,  # type: ignore[call-arg]
                       loop=True, duration_s=duration, interval_s=self.interval_s, rate_iops=self.goal.load_iops, **jobs)
        if kind == "dir_scaling" and variant and "layout" in variant:  # a study's trial: its size, layout, curve
            return cls(interval_s=self.interval_s, count=self.entries or PHASED_SIZES[kind]["count"],  # type: ignore[call-arg]
                       layout=str(variant["layout"]), points=MAX_CURVE_POINTS)
        return cls(interval_s=self.interval_s, **{"time_limit_s": self.phased_limit_s, **PHASED_SIZES.get(kind, {}),
                                                  **self.phased_sizes.get(kind, {})})  # fmt: skip

    @property
    def phased_limit_s(self) -> float:
        """The seconds a sweep's phased trial is given for all its phases, as a streaming one is for its
        warm-up and measuring: a phase that has not ended by its share reports the rate of what it did.
        (A directory study's trials run every entry: the study is the size.)"""
        return self.plan.timing.warmup_s + self.plan.timing.max_measure_s

    @property
    def phased_cap_s(self) -> float:
        """How long a phased trial may take before it counts as stuck: ten times the measuring cap, or
        for a directory study's trial (a million creates and deletes) 10 ms per entry. Its phases end
        by phased_limit_s and an operation in flight; the cleanup after them is waited for apart
        (app.runner.agent_handle: as long as removing what they left takes)."""
        return max(10.0 * self.plan.timing.max_measure_s, 300.0, self.entries * STUDY_S_PER_ENTRY if self.dirs else 0.0)

    def to_json(self) -> dict[str, Any]:
        sweep = asdict(self)
        del sweep["plan"]
        sweep["clients"] = list(self.clients)
        sweep["python"] = dict(self.python)
        sweep["goal"] = self.goal.to_json()
        sweep["ladder"] = list(self.ladder)
        sweep["dirs"] = list(self.dirs)
        return {**self.plan.to_json(), "sweep": sweep}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SweepSpec:
        sweep = dict(data["sweep"])
        for gone in ("jobs", "layout"):  # older sessions' study steps, set on the spec by the engine of the time
            sweep.pop(gone, None)
        sweep["clients"] = tuple(sweep["clients"])
        sweep["goal"] = Goal.from_json(sweep.get("goal"))  # older sessions: the throughput goal
        sweep["ladder"] = tuple(int(n) for n in sweep.get("ladder", ()))
        sweep["dirs"] = tuple(str(x) for x in sweep.get("dirs", ()))
        return cls(plan=Plan.from_json(data), **sweep)
