"""Which objective a stored trial's workload informs."""

from __future__ import annotations

from typing import Any

from experiments.workloads import WORKLOAD_TYPES, Objective

OBJECTIVES: tuple[str, ...] = tuple(o.value for o in Objective)

# Short names older plans and the CLI use for workloads ("seqread" etc.).
_ALIASES: dict[str, str] = {
    "seqread": Objective.SEQ_READ.value,
    "seqwrite": Objective.SEQ_WRITE.value,
    "smallfiles": Objective.SMALL_FILES.value,
    "randrw": Objective.MIXED.value,
}


def objective_of(workload: Any) -> str | None:
    """The objective of a stored workload (spec dict, {"name": …} or a bare kind), or None.

    An explicit "objective" key wins; baselines and telemetry have none.
    """
    if isinstance(workload, dict):
        explicit = workload.get("objective")
        if isinstance(explicit, str) and explicit in OBJECTIVES:
            return explicit
        name = workload.get("kind") or workload.get("name")
    else:
        name = workload
    if not isinstance(name, str):
        return None
    cls = WORKLOAD_TYPES.get(name)
    if cls is not None:
        return cls.objective.value if cls.objective is not None else None
    if name in OBJECTIVES:
        return name
    return _ALIASES.get(name.replace("_", "").replace("-", "").lower())
