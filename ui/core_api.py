"""What the wizard needs from the core, as plain data and one Protocol.

The UI is built against this file only, so it can run on the in-process fake core
(``ui.fake_core``) in tests and demos, and on the real core once it is wired in.
Nothing here imports Qt: the lead can move these types into ``app/`` unchanged
(the run events are the sweep engine's, ``app.sweep.events``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Protocol, runtime_checkable

from app.events import EventBus
from app.store.records import JournalEntry as JournalEntry
from app.sweep.events import JournalChanged as JournalChanged
from app.sweep.events import Progress as Progress
from app.sweep.events import SweepFinished as SweepFinished
from app.sweep.events import SweepStarted as SweepStarted
from app.sweep.events import TrialFinished as TrialFinished
from app.sweep.events import TrialStarted as TrialStarted

# --- hosts -----------------------------------------------------------------------------


class HostRole(Enum):
    SERVER = "server"
    CLIENT = "client"


class HostState(Enum):
    NEW = "not tested"
    CONNECTING = "connecting…"
    OK = "connected"
    FAILED = "failed"
    REJECTED = "key not trusted"


@dataclass(frozen=True, slots=True)
class HostKey:
    """A host key seen for the first time, for the trust-on-first-use question."""

    host: str
    address: str
    key_type: str  # e.g. "ssh-ed25519"
    fingerprint_sha256: str  # "SHA256:…" as ssh-keygen -l prints it


@dataclass(frozen=True, slots=True)
class NicFacts:
    name: str
    mtu: int
    speed_mbps: int | None  # None when the driver does not say
    address: str = ""


@dataclass(frozen=True, slots=True)
class HostFacts:
    host: str
    role: HostRole
    kernel: str
    distro: str = ""
    cpus: int = 0
    mem_bytes: int = 0
    nics: tuple[NicFacts, ...] = ()
    md_arrays: tuple[str, ...] = ()  # one line each, e.g. "md0 raid6, 8 disks, chunk 512K"
    exports: tuple[str, ...] = ()  # server: /etc/exports lines in effect
    mounts: tuple[str, ...] = ()  # client: NFS mounts with their negotiated options
    privilege: str = ""  # "root", "sudo without password", "no root: read-only"


class HostError(Exception):
    """A host problem in words the admin can act on (the core logs the details)."""


ConfirmKey = Callable[[HostKey], Awaitable[bool]]

# --- the plan --------------------------------------------------------------------------


class SafetyClass(Enum):
    """How risky changing a knob is; shown next to every knob."""

    SAFE = "safe at run time"
    REMOUNT = "needs a remount"
    DISRUPTIVE = "may cut the connection"  # e.g. MTU
    DATA_RISK = "may lose data on a crash"  # e.g. async exports


@dataclass(frozen=True, slots=True)
class KnobSpec:
    name: str  # stable id, e.g. "nfsd.threads"
    label: str  # "nfsd threads"
    scope: str  # "server" or "client"
    current: str  # value found on the hosts
    suggested: tuple[str, ...]  # values offered by default
    safety: SafetyClass
    minimum: int | None = None  # integer knobs: inclusive range
    maximum: int | None = None
    choices: tuple[str, ...] = ()  # choice knobs: the allowed values
    unit: str = ""
    help: str = ""
    needs_opt_in: bool = False  # only swept when the admin opted in (async)

    def check(self, value: str) -> str | None:
        """None if ``value`` is allowed, else why not (in words)."""
        if self.choices:
            return None if value in self.choices else f"{value!r} is not one of {', '.join(self.choices)}"
        try:
            number = parse_size(value)
        except ValueError:
            return f"{value!r} is not a number"
        if self.minimum is not None and number < self.minimum:
            return f"{value} is below the minimum {self.minimum}"
        if self.maximum is not None and number > self.maximum:
            return f"{value} is above the maximum {self.maximum}"
        return None


def parse_size(text: str) -> int:
    """'64', '512K', '1M' → an integer (K/M/G are powers of 1024)."""
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    digits = text[:-1] if scale != 1 else text
    if not digits.isdigit():
        raise ValueError(text)
    return int(digits) * scale


@dataclass(frozen=True, slots=True)
class WorkloadSpec:
    name: str
    label: str
    description: str = ""


class Strategy(Enum):
    ONE_AT_A_TIME = "one knob at a time"
    COORDINATE = "coordinate descent (keeps each winner)"
    GRID = "full grid"


@dataclass(frozen=True, slots=True)
class Plan:
    knob_values: Mapping[str, tuple[str, ...]]  # knob name → values to try
    workloads: tuple[str, ...]
    strategy: Strategy = Strategy.ONE_AT_A_TIME
    repetitions: int = 3
    allow_async: bool = False  # the admin read the warning and opted in


# --- baseline --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ceiling:
    what: str  # "network nfs-server → client1", "server disk, sequential read"
    bps: float


@dataclass(frozen=True, slots=True)
class BaselineResult:
    ceilings: tuple[Ceiling, ...]
    current_bps: Mapping[str, float]  # workload name → throughput with today's config


# --- run events: the core's own (app.sweep.events), re-exported for the pages ----------

RUN_EVENTS = (SweepStarted, TrialStarted, TrialFinished, Progress, JournalChanged, SweepFinished)


class RunOutcome(Enum):
    COMPLETED = "completed"
    CANCELLED = "cancelled and reverted"
    FAILED = "failed"

    @classmethod
    def of(cls, finished: SweepFinished) -> RunOutcome:
        """A SweepFinished's state (complete / cancelled / interrupted) as the outcome shown."""
        return {"complete": cls.COMPLETED, "cancelled": cls.CANCELLED}.get(finished.state, cls.FAILED)


# --- results ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RankedConfig:
    config: Mapping[str, str]
    mean_bps: float
    ci_low_bps: float  # 95 % confidence interval of the mean
    ci_high_bps: float
    cv: float
    runs: int


@dataclass(frozen=True, slots=True)
class KnobEffect:
    """Throughput and stability against a knob's values (the chart per knob)."""

    knob: str
    values: tuple[str, ...]
    mean_bps: tuple[float, ...]
    cv: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Snippet:
    title: str  # "fstab"
    filename: str  # suggested file name when saved
    text: str


@dataclass(frozen=True, slots=True)
class Recommendation:
    config: Mapping[str, str]
    gain_pct: float  # against today's configuration
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Results:
    ranked: Mapping[str, tuple[RankedConfig, ...]]  # objective → best first
    recommendation: Recommendation
    effects: tuple[KnobEffect, ...] = ()
    snippets: tuple[Snippet, ...] = ()
    safety_notes: tuple[str, ...] = ()


# --- crash leftovers --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Leftover:
    """A change an earlier run made and never journaled as put back (it crashed or was killed)."""

    entry_id: int
    host: str
    what: str
    old: str
    new: str
    status: str  # what a look at the host found, e.g. "still changed?", "switch armed: …"


# --- the core as the UI sees it ----------------------------------------------------------


@runtime_checkable
class CoreApi(Protocol):
    """Everything the wizard calls. Long operations are coroutines on the one loop;
    what happens meanwhile arrives on ``bus`` (samples, telemetry, run events, messages)."""

    bus: EventBus
    log_path: Path  # shown with every error, so the admin can send it

    @property
    def running(self) -> bool:
        """True from ``run`` until every change of the run is reverted or kept."""
        ...

    def ssh_config_hosts(self) -> Sequence[str]: ...

    async def connect(self, host: str, role: HostRole, confirm_key: ConfirmKey) -> HostFacts:
        """Connect (asking ``confirm_key`` for unknown keys) and gather facts; HostError on failure."""
        ...

    async def nfs_clients_of(self, server: str) -> Sequence[str]:
        """Clients the server sees mounting it now (offered on the Hosts page)."""
        ...

    def knobs(self) -> Sequence[KnobSpec]: ...

    def workloads(self) -> Sequence[WorkloadSpec]: ...

    def estimate_duration(self, plan: Plan) -> tuple[int, float]:
        """(number of trials, seconds) the plan would take."""
        ...

    async def run_baseline(self, workloads: Sequence[str]) -> BaselineResult: ...

    async def run(self, plan: Plan) -> RunOutcome:
        """Sweep the plan, publishing run events; returns when done or cancelled."""
        ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...

    def skip_trial(self) -> None: ...

    async def cancel_and_revert(self) -> None:
        """Stop the run and put back every journaled change."""
        ...

    async def revert_all(self) -> None:
        """Put back every journaled change; idempotent, safe to call from a crash path."""
        ...

    def results(self) -> Results: ...

    async def leftovers(self) -> Sequence[Leftover]:
        """Changes of earlier runs that may still be on the hosts (checked there; slow)."""
        ...

    async def revert_leftover(self, entry_id: int) -> None: ...

    def dismiss_leftover(self, entry_id: int) -> None: ...


@dataclass(slots=True)
class SessionState:
    """What the pages learn and hand on to each other."""

    facts: dict[str, HostFacts] = field(default_factory=dict)
    server: str | None = None
    clients: list[str] = field(default_factory=list)
    baseline: BaselineResult | None = None
    plan: Plan | None = None
    outcome: RunOutcome | None = None
    results: Results | None = None
