"""A phased trial's figures: operations per second over whole phases, from the agents' summaries.

Small files, tree and directory scaling are judged as bonnie++ reports them: each
phase's operations over its time (creates, stats, reads, deletes; extract, find,
remove), summed over the clients. A client's figure is the rate at which it would do
all its phases' planned operations at each phase's measured rate: the operations of
all phases over their time when every phase ran to its end. Under the plan's time
limit a phase may end early (the agent's timed_phase) and count the rate of what it
completed; weighing it by what it planned keeps a cut slow phase from counting less
than it would have. The summaries come from the hosts: a field that is not a finite,
non-negative number counts as missing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from experiments.agent_protocol import AgentSummary

MIN_PHASED_S = 1.0  # a trial whose phases took less cannot be timed honestly
OPS_UNIT = "ops/s"


def _count(value: Any) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    return float(value) if ok else 0.0


def _client_rate(s: AgentSummary) -> float:
    """Planned operations over the time they take at each phase's rate (an older agent plans none: its ops)."""
    planned = took = 0.0
    for p in s.phases.values():
        ops, secs = _count(p.get("ops")), _count(p.get("seconds"))
        if ops > 0 and secs > 0:  # a phase that completed nothing has no rate to weigh
            weight = max(_count(p.get("planned")), ops)
            planned, took = planned + weight, took + weight * secs / ops
    return planned / took if took > 0 else 0.0


def phase_figures(summaries: Mapping[str, AgentSummary]) -> dict[str, Any]:
    """The trial summary's figures for a phased workload (unit ops/s). ``time_limited``: the phases that
    ended at their time limit on some client (their rate is that of what they completed)."""
    phases: dict[str, dict[str, float]] = {}
    rate, ops_total, longest = 0.0, 0.0, 0.0
    limits: list[float] = []
    cut: dict[str, None] = {}
    for s in summaries.values():
        secs = 0.0
        for name, p in s.phases.items():
            p_ops, p_secs = _count(p.get("ops")), _count(p.get("seconds"))
            ops_total, secs = ops_total + p_ops, secs + p_secs
            agg = phases.setdefault(str(name), {"ops": 0.0, "seconds": 0.0, "ops_per_s": 0.0})
            agg["ops"] += p_ops
            agg["seconds"] = max(agg["seconds"], p_secs)  # the phase ends when its slowest client does
            agg["ops_per_s"] += p_ops / p_secs if p_secs > 0 else 0.0
        rate += _client_rate(s)
        longest = max(longest, secs)
        cut.update(dict.fromkeys(s.cut))
        if s.time_limit_s:
            limits.append(s.time_limit_s)
    figures: dict[str, Any] = {
        "unit": OPS_UNIT, "n": len(phases), "mean": rate, "median": rate, "p5": rate, "cv": 0.0,
        "deepest_dip": 0.0, "dips": 0, "steady": True, "measured_s": longest, "ops": ops_total,
        "phases": phases,
    }  # fmt: skip
    if limits:
        figures["time_limit_s"] = max(limits)
        figures["time_limited"] = [p for p in phases if p in cut]
    return figures


def phased_problem(figures: Mapping[str, Any]) -> str | None:
    """Why a phased trial's figure cannot stand, or None."""
    if not figures.get("ops"):
        return "no file operation completed: nothing to time"
    if _count(figures.get("measured_s")) < MIN_PHASED_S:
        return (f"its phases took {_count(figures.get('measured_s')):.2f} s, too short to time honestly "
                f"(at least {MIN_PHASED_S:.0f} s): give the workload more files")
    return None
