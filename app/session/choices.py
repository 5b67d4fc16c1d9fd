"""What the faces offer to choose from: every knob with today's value, the workloads."""

from __future__ import annotations

from dataclasses import dataclass

from app.knobs.catalog import SPECS
from app.knobs.model import KnobSpec, Safety
from app.sweep.spec import EXPORT_KNOBS, SWEEPABLE
from app.vocabulary import WORKLOAD_WORDS, knob_value_text, knob_values_text, workload_label


# Safety classes swept only after their own opt-in: async exports may lose data; a restart pauses clients.
OPT_INS = {Safety.DATA_RISK: "async", Safety.RESTART: "restart"}
# Knobs a server has only on some kernels or hardware (app.knobs.listing lists them where found): never
# tried unasked, not even after their opt-in, since most servers would refuse them.
WHERE_FOUND = ("nfsd_min_threads", "pool_mode")


@dataclass(frozen=True, slots=True)
class KnobChoice:
    """A knob as the Plan page offers it: the catalog's spec and today's value."""

    spec: KnobSpec
    current: str  # today's value as parse_value reads it, or "unknown"
    suggested: str  # the values offered by default, as typed

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def opt_in(self) -> str | None:
        """The opt-in the admin gives before this knob is swept ("async", "restart"), or None."""
        return OPT_INS.get(self.spec.safety)

    @property
    def needs_opt_in(self) -> bool:
        return self.opt_in is not None

    @property
    def on_by_default(self) -> bool:
        """Safe-enough knobs; not those that risk data, the link or coherence or restart nfsd, nor the export's own options
        (changing one re-exports it for every client that mounts it)."""
        risky = (Safety.DATA_RISK, Safety.CONNECTIVITY, Safety.COHERENCE, Safety.RESTART)
        return self.spec.safety not in risky and self.spec.name not in (*EXPORT_KNOBS, *WHERE_FOUND)

    @property
    def tried_on_opt_in(self) -> bool:
        """Its opt-in's yes checks it on the Plan page (max_block_size), or only lets it be checked (pool_mode)."""
        return self.needs_opt_in and self.name not in WHERE_FOUND


@dataclass(frozen=True, slots=True)
class WorkloadChoice:
    kind: str
    label: str  # app.vocabulary.workload_label: 'seq_read (sequential read)'
    description: str


WORKLOADS: tuple[WorkloadChoice, ...] = tuple(
    WorkloadChoice(kind, workload_label(kind), words.description)
    for kind, words in WORKLOAD_WORDS.items() if kind in SWEEPABLE
)
DEFAULT_BASELINE_WORKLOADS = ("seq_write", "seq_read")


def knob_choices(current: dict[str, str]) -> list[KnobChoice]:
    """The catalog's knobs with today's values (text as discovered; "unknown" when not found)."""
    out = []
    for spec in SPECS.values():
        today = knob_value_text(spec.name, current.get(spec.name, "unknown"))  # as discovered if it does not parse
        out.append(KnobChoice(spec, today, knob_values_text(spec.name, spec.default_sweep)))
    return out
