"""What the faces offer to choose from: every knob with today's value, the workloads."""

from __future__ import annotations

from dataclasses import dataclass

from app.knobs.catalog import SPECS
from app.knobs.model import KnobSpec, Safety
from app.knobs.values import BadValue, format_value, format_values, parse_value
from app.sweep.spec import MOUNT_KNOBS, SWEEPABLE


@dataclass(frozen=True, slots=True)
class KnobChoice:
    """A knob as the Plan page offers it: the catalog's spec and today's value."""

    spec: KnobSpec
    current: str  # today's value as parse_value reads it, or "unknown"
    suggested: str  # the values offered by default, as typed
    on_test_mount: bool  # applied on nfs-tuner's own test mount (a fresh mount per trial)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def needs_opt_in(self) -> bool:
        """Swept only when the admin opted in (async exports may lose data)."""
        return self.spec.safety is Safety.DATA_RISK

    @property
    def on_by_default(self) -> bool:
        return self.spec.safety not in (Safety.DATA_RISK, Safety.CONNECTIVITY)


@dataclass(frozen=True, slots=True)
class WorkloadChoice:
    kind: str
    label: str
    description: str


WORKLOADS: tuple[WorkloadChoice, ...] = tuple(w for w in (
    WorkloadChoice("seq_write", "sequential write", "1 MiB writes, one file per client"),
    WorkloadChoice("seq_read", "sequential read", "1 MiB reads, caches dropped first"),
    WorkloadChoice("rewrite", "rewrite", "1 MiB overwrites of an existing file"),
    WorkloadChoice("rand_read", "random 4 KiB read", "4 KiB reads at random offsets"),
    WorkloadChoice("rand_write", "random 4 KiB write", "4 KiB writes at random offsets"),
    WorkloadChoice("mixed", "random read/write mix", "4 KiB, 70 % reads"),
    WorkloadChoice("small_files", "small files", "create, write, fsync, stat small files"),
    WorkloadChoice("tree", "directory tree", "build and walk a tree of small files"),
    WorkloadChoice("dir_scaling", "large directories", "many entries in one directory"),
) if w.kind in SWEEPABLE)  # fmt: skip
DEFAULT_BASELINE_WORKLOADS = ("seq_write", "seq_read")


def knob_choices(current: dict[str, str]) -> list[KnobChoice]:
    """The catalog's knobs with today's values (text as discovered; "unknown" when not found)."""
    out = []
    for spec in SPECS.values():
        today = current.get(spec.name, "unknown")
        try:
            today = format_value(spec.name, parse_value(spec.name, today))
        except BadValue:
            pass
        out.append(KnobChoice(spec, today, format_values(spec.name, spec.default_sweep), spec.name in MOUNT_KNOBS))
    return out
