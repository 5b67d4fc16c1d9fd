"""A plan fitted into the time the admin has: shorter trials and fewer runs first, then fewer knobs.

A plan's knobs are in priority order (the diagnosis's, or as the admin listed them), so
what a budget drops goes from the end. Each leaner plan is estimated as the engine will
run it (experiments.estimate), and the first that fits is the one to run:

1. the measuring of each trial capped at 30 s, then 20 s;
2. fewer runs per configuration (a guided plan needs two: its verdicts need the noise);
3. the measuring capped at 10 s, the shortest a steady-state window still fits in;
4. the lowest-priority knob left out, again and again, down to the first.

When even the leanest plan is over the budget, the fit says so and keeps that plan, so a
face can say what it would take. A plan under way is fitted again at the pace its trials
really run (``refit``), by knobs alone. A plan longer than ``LONGEST_PLAN_S`` fits no budget:
neither face starts it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from experiments.estimate import DurationEstimate, estimate_duration
from experiments.plan import Plan
from experiments.steps import GUIDED_MIN_RUNS

MEASURE_CAPS_S = (30.0, 20.0)  # tried before fewer runs
FLOOR_MEASURE_S = 10.0  # the shortest measuring a budget gives a trial
LONGEST_PLAN_S = 72 * 3600.0  # a long weekend: a plan beyond it is beyond any budget
# A plan under way keeps its knobs while its pace would overrun the budget by at most this share: the estimate
# plans a refinement and a confirmation a session often does not need (the lab's wan profile: 52 trials planned,
# 36 run), and the search's deadline (app.sweep.deadline) holds the budget within that.
PACE_SLACK = 1.25


@dataclass(frozen=True, slots=True)
class Fit:
    plan: Plan  # the plan that fits; when none does, the leanest tried
    estimate: DurationEstimate  # of ``plan``
    budget_s: float | None  # None: no budget given (only LONGEST_PLAN_S holds)
    measure_s: float | None = None  # the measuring cap set to fit; None: as chosen
    runs: tuple[int, int] | None = None  # (at least, at most) runs per configuration set to fit; None: as chosen
    dropped: tuple[str, ...] = ()  # knobs left out to fit, the lowest priority first

    @property
    def limit_s(self) -> float:
        return LONGEST_PLAN_S if self.budget_s is None else min(self.budget_s, LONGEST_PLAN_S)

    @property
    def fits(self) -> bool:
        return self.estimate.seconds <= self.limit_s

    @property
    def changed(self) -> bool:
        """Whether fitting changed the plan as chosen."""
        return self.measure_s is not None or self.runs is not None or bool(self.dropped)


def floor_runs(plan: Plan) -> int:
    """The fewest runs per configuration the plan's strategy takes."""
    return GUIDED_MIN_RUNS if plan.strategy == "guided" else 1


def _capped(plan: Plan, cap_s: float) -> Plan:
    return replace(plan, timing=plan.timing.measuring(cap_s))


def _leaner(fit: Fit) -> Iterator[Fit]:
    """Ever leaner plans than ``fit``'s, in the order a budget takes them (see the module's docstring)."""
    plan = fit.plan
    for cap in MEASURE_CAPS_S:
        if plan.timing.max_measure_s > cap:
            plan = _capped(plan, cap)
            fit = replace(fit, plan=plan, measure_s=cap)
            yield fit
    low = floor_runs(plan)
    runs = (low, max(low, min(plan.max_runs, 2 * low)))
    if (plan.min_runs, plan.max_runs) != runs and plan.min_runs >= low:
        plan = replace(plan, min_runs=runs[0], max_runs=runs[1])
        fit = replace(fit, plan=plan, runs=runs)
        yield fit
    if plan.timing.max_measure_s > FLOOR_MEASURE_S:
        plan = _capped(plan, FLOOR_MEASURE_S)
        fit = replace(fit, plan=plan, measure_s=FLOOR_MEASURE_S)
        yield fit
    while len(plan.knobs) > 1:
        last = list(plan.knobs)[-1]
        plan = replace(plan, knobs={k: v for k, v in plan.knobs.items() if k != last},
                       baseline={k: v for k, v in plan.baseline.items() if k != last})  # fmt: skip
        fit = replace(fit, plan=plan, dropped=(*fit.dropped, last))
        yield fit


def refit(plan: Plan, budget_s: float, trial_s: float) -> tuple[Plan, tuple[str, ...]]:
    """``plan`` under way, fitted again to ``budget_s`` at the pace its trials have really run (``trial_s`` a
    trial): when it would overrun by more than PACE_SLACK, its lowest-priority knobs held at today's values until
    it fits, its timing and runs as they are (the trials run so far stay comparable with the rest). Returns the
    plan and the knobs held, the lowest priority first."""
    t = plan.timing
    paced = replace(plan, time_budget_s=None, timing=replace(t, setup_s=max(0.0, trial_s - (t.expected_trial_s() - t.setup_s))))
    if estimate_duration(paced).seconds <= PACE_SLACK * budget_s:
        return plan, ()
    searched = plan.searched_knobs()
    held: list[str] = []
    while len(searched) > 1 and estimate_duration(paced).seconds > budget_s:
        held.append(searched.pop())
        paced = _held(paced, held)
    return (_held(plan, held), tuple(held)) if held else (plan, ())


def _held(plan: Plan, knobs: list[str]) -> Plan:
    """``plan`` with ``knobs`` held at today's value, not taken out: the runs so far keep matching the
    configurations to come (a held knob costs the estimate nothing)."""
    today = plan.start_config()
    return replace(plan, knobs={k: (today[k],) if k in knobs else v for k, v in plan.knobs.items()})


def fit(plan: Plan, budget_s: float | None) -> Fit:
    """``plan`` as it fits ``budget_s`` seconds (None: as it is, held only to ``LONGEST_PLAN_S``)."""
    first = Fit(plan, estimate_duration(plan), budget_s)
    if budget_s is None or first.fits:
        return first
    best = first
    for leaner in _leaner(first):
        best = replace(leaner, estimate=estimate_duration(leaner.plan))
        if best.fits:
            return best
    return best
