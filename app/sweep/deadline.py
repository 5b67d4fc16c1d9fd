"""The admin's time budget held while a sweep runs: the search ends in time for the checks and the confirmation.

A plan is fitted to its budget before it starts (experiments.budget), but that fit is an estimate made
before any trial ran, and trials can cost far more than planned (on the lab's wan profile 40–67 s a trial
against the 32 s planned; one 30-minute session ran an hour without reaching its recommendation). So the
engine holds the budget too. Once two trials have set the pace, a plan that would overrun is fitted again
by knobs (experiments.budget.refit); and once the time left would no longer carry the put-back checks and
the confirmation at that pace, the search (screening, refinement, a chosen strategy's search) ends where it
is, and the candidate is chosen from what it measured. The checks and the confirmation are never cut: they
are what makes the number the admin sees one that was measured again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from experiments.board import Run
from experiments.estimate import checks_ahead
from experiments.plan import Plan


@dataclass
class Deadline:
    """The budget of one run of a sweep, from its start (minus what a resumed session had used already)."""

    budget_s: float | None  # None: no budget, the search runs to its end
    spent_before_s: float = 0.0  # trials of this session run before (a resumed session)
    clock: Callable[[], float] = time.monotonic  # the engine times its trials by it too
    started: float = field(default_factory=time.monotonic)

    def start(self) -> None:
        self.started = self.clock()

    def used_s(self) -> float:
        """This run's time so far."""
        return self.clock() - self.started

    def left_s(self) -> float:
        if self.budget_s is None:
            return float("inf")
        return self.budget_s - self.spent_before_s - self.used_s()

    def reserve_s(self, plan: Plan, workloads: Sequence[str], runs: Sequence[Run], trial_s: float,
                  p99_cap: float | None = None) -> float:  # fmt: skip
        """The time the checks and the confirmation would take from here, at ``trial_s`` a trial."""
        return checks_ahead(plan, workloads, runs, p99_cap=p99_cap) * trial_s

    def search_over(self, plan: Plan, workloads: Sequence[str], runs: Sequence[Run], trial_s: float,
                    p99_cap: float | None = None) -> bool:  # fmt: skip
        """Whether the search must end now to leave the checks and the confirmation their time."""
        left = self.left_s()
        return left != float("inf") and left < self.reserve_s(plan, workloads, runs, trial_s, p99_cap) + trial_s
