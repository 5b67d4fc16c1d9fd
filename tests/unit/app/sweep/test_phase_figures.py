"""Phased workloads (small files, tree, directory scaling) are judged by operations per second per phase."""

from __future__ import annotations

from typing import Any

import pytest

from app.sweep.figures import phase_figures, phased_problem
from app.sweep.spec import PHASED, SweepSpec
from experiments.agent_protocol import AgentSummary
from experiments.plan import Plan


def agent(host: str, phases: dict[str, Any]) -> AgentSummary:
    return AgentSummary(host, "small_files", "done", 3.0, 0, 2000 * 4096, 8000, 0, 1.0, 5.0, 9.0, "dropped", True,
                        False, 0.2, 0.5, phases=phases)  # fmt: skip


def test_the_reported_async_trial_reads_as_operations_not_zero_bytes() -> None:
    """Issue 14: async small files ran ~2,070 ops/s but a window of zero-byte samples stored 0.0 MB/s."""
    one = agent("c1", {"create": {"ops": 2000, "seconds": 1.2}, "stat": {"ops": 2000, "seconds": 0.3},
                       "read": {"ops": 2000, "seconds": 0.9}, "delete": {"ops": 2000, "seconds": 1.0}})
    two = agent("c2", {"create": {"ops": 2000, "seconds": 1.4}, "stat": {"ops": 2000, "seconds": 0.4},
                       "read": {"ops": 2000, "seconds": 1.0}, "delete": {"ops": 2000, "seconds": 1.1}})
    f = phase_figures({"c1": one, "c2": two})
    assert f["unit"] == "ops/s" and f["mean"] == pytest.approx(8000 / 3.4 + 8000 / 3.9)
    assert f["phases"]["create"]["ops"] == 4000 and f["phases"]["create"]["seconds"] == 1.4  # the slowest client
    assert f["phases"]["stat"]["ops_per_s"] == pytest.approx(2000 / 0.3 + 2000 / 0.4)
    assert phased_problem(f) is None


@pytest.mark.parametrize(
    ("phases", "words"),
    [
        ({}, "no file operation"),
        ({"create": {"ops": 10, "seconds": 0.2}}, "too short"),
        ({"create": {"ops": float("nan"), "seconds": float("inf")}}, "no file operation"),  # a host's garbage
        ({"create": {"ops": -5, "seconds": "x"}}, "no file operation"),
    ],
)
def test_a_trial_too_short_or_empty_is_not_ok(phases: dict[str, Any], words: str) -> None:
    problem = phased_problem(phase_figures({"c": agent("c", phases)}))
    assert problem is not None and words in problem


def test_phased_workloads_run_every_phase_within_the_plans_time_in_a_sweep() -> None:
    spec = SweepSpec("s", ("c",), "/srv", Plan(knobs={"nfsd_threads": (8,)}, workloads=tuple(PHASED)))
    for kind in PHASED:
        w = spec.workload(kind)
        assert w.duration_s is None  # no stop mid-phase: every phase runs, each to its end or its share of the time
        assert w.to_dict()["time_limit_s"] == spec.phased_limit_s
    assert spec.phased_cap_s >= max(300, 4 * spec.phased_limit_s)  # stuck only far beyond the phases' time


def test_a_streaming_trial_that_counted_nothing_is_broken_not_ok_at_zero(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Seen three times on a loaded lab: a rewrite whose whole window sat in write-back was ranked at 0 B/s."""
    from app.events import EventBus
    from app.simulated import SimulatedHosts
    from app.store import Store, TrialState
    from app.sweep import SweepEngine

    spec = SweepSpec("s", ("c",), "/srv", Plan(knobs={"nfsd_threads": (8,)}, workloads=("rewrite",)))
    with Store(tmp_path / "z.db") as store:
        engine = SweepEngine(store, SimulatedHosts(), EventBus(), spec)
        state, reason, value = engine._judge(None, {"n": 16, "mean": 0.0, "measured_s": 4.0})
        assert state == TrialState.BROKEN and value is None
        assert reason.startswith("nothing moved in its 4 s of measuring") and "--duration" in reason
        assert engine._judge(None, {"n": 16, "mean": 5e6, "measured_s": 4.0})[0] == TrialState.OK
