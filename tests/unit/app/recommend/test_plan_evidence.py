"""Every screened knob keeps a line in the plan's evidence, whatever the search then did with it."""

from __future__ import annotations

from collections.abc import Mapping

from app.recommend.plan_choice import plan_recommendation
from experiments.board import CONFIRM, Run
from experiments.plan import Config, Value
from experiments.statistics import RepeatPolicy

W = "seq_read"
TODAY = Config(a=1, b="x")


def _runs(step: str, config: Mapping[str, Value], values: list[float]) -> list[Run]:
    return [Run(step, Config(config), W, v) for v in values]


def test_a_knob_that_moved_in_screening_but_the_search_left_at_today_keeps_its_line() -> None:
    """On the lab, export_wdelay once 'moved' a read in screening (drift), the refinement kept today's wdelay,
    and the evidence then said nothing of it: it had no screening line (it moved) and no put-back line."""
    runs = (_runs("screen", {"a": 1, "b": "x"}, [100, 101, 99, 100]) + _runs("screen", {"a": 2, "b": "x"}, [200, 202, 198])
            + _runs("screen", {"a": 1, "b": "y"}, [110, 111, 109]) + _runs("refine", {"a": 2, "b": "y"}, [180, 181, 179])
            + _runs("attribute", {"a": 2, "b": "x"}, [201, 199, 200]) + _runs("attribute", {"a": 1, "b": "x"}, [100, 99, 101]))  # fmt: skip
    for _ in range(3):
        runs += _runs(CONFIRM, {"a": 1, "b": "x"}, [100]) + _runs(CONFIRM, {"a": 2, "b": "x"}, [200])
    plan = plan_recommendation(runs, TODAY, [W], RepeatPolicy(0.035, 2, 6), knobs={"a": [1, 2], "b": ["x", "y"]})
    assert plan.status == "confirmed" and plan.changes == {"a": (1, 2)}, plan
    said = [line for line in plan.evidence if line.startswith("Screening b ")]
    assert said == ["Screening b x → y: +10 % (+8.4 % … +12 %), moved the figure: tuned, and the search kept x"], plan.evidence
    assert not any(line.startswith("Screening a ") for line in plan.evidence)  # a has its put-back line instead
    assert any(line.startswith("a 1 → 2: ") and "beyond the noise: changed" in line for line in plan.evidence)


def test_a_change_that_gains_beyond_the_noise_but_under_the_one_per_cent_it_must_earn_is_put_back_saying_so() -> None:
    runs = (_runs("search", {"a": 2, "b": "x"}, [101.5, 101.6, 101.4]) + _runs("search", {"a": 1, "b": "x"}, [100, 100.1, 99.9])
            + _runs("attribute", {"a": 2, "b": "x"}, [100.8, 100.6, 100.7]) + _runs("attribute", {"a": 1, "b": "x"}, [100, 100.1, 99.9]))  # fmt: skip
    plan = plan_recommendation(runs, TODAY, [W], RepeatPolicy(0.035, 2, 6))
    assert plan.changes == {} and plan.status == "nothing earned", plan
    (line,) = [line for line in plan.evidence if line.startswith("a 1 → 2: ")]
    assert "+0.7 % (" in line and "under the 1 % a change must earn beyond the noise: left at 1" in line, line


def test_a_session_recorded_before_the_checks_ran_on_their_own_keeps_its_confirmed_verdict() -> None:
    """Its put-back twin was measured only by the search, its two runs apart: the rule it was checked by then."""
    runs = (_runs("search", {"a": 1, "b": "x"}, [100, 112]) + _runs("search", {"a": 2, "b": "x"}, [200, 201, 200.5])
            + _runs("attribute", {"a": 2, "b": "x"}, [200, 201]))  # fmt: skip
    for _ in range(3):
        runs += _runs(CONFIRM, {"a": 1, "b": "x"}, [105]) + _runs(CONFIRM, {"a": 2, "b": "x"}, [200])
    plan = plan_recommendation(runs, TODAY, [W], RepeatPolicy(0.2, 2, 6))
    assert plan.status == "confirmed" and plan.changes == {"a": (1, 2)}, plan.evidence
