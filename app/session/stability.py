"""The sweep's steady-state rule in words, and where a trial stands by it: what the Run
page's live plot names (its band, the rule) and shows (its readout), for any face.

The rule is the engine's (``SweepSpec.criteria``, judged by ``experiments.stability``):
after the warm-up, a trial counts as stable once the sum of its clients over the last
window drifts (least-squares slope across the window) and spreads (max − min, or the
standard deviation) by no more than set fractions of the window's mean. The plot's band
is the sum's mean ± one standard deviation over that same window, so what the admin sees
settle is what the engine judges.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from app.sweep.spec import SweepSpec
from app.vocabulary import figure_text, percent_text
from experiments.stability import Spread, SteadyCriteria, check_window

SPREAD_WORDS = {Spread.RANGE: ("range (max − min)", "range"), Spread.STDDEV: ("standard deviation", "sd")}  # long, short


@dataclass(frozen=True, slots=True)
class StabilityRule:
    criteria: SteadyCriteria = field(default_factory=SteadyCriteria)
    interval_s: float = 0.25
    warmup_s: float = 0.0

    @classmethod
    def of(cls, spec: SweepSpec) -> StabilityRule:
        return cls(spec.criteria(), spec.interval_s, spec.plan.timing.warmup_s)

    @property
    def window(self) -> int:
        """Samples in the window (the band's and the check's)."""
        return self.criteria.window

    @property
    def window_s(self) -> float:
        return self.criteria.window * self.interval_s

    def mean_name(self) -> str:
        return f"rolling mean ({self.window_s:g} s)"

    def band_name(self) -> str:
        return f"band: mean ± 1 sd ({self.window_s:g} s)"

    def rule_text(self) -> str:
        c = self.criteria
        warmup = f"after {self.warmup_s:g} s of warm-up, " if self.warmup_s > 0 else ""
        return (f"Band: the sum's mean ± one standard deviation over the last {self.window_s:g} s. "
                f"Stable once, {warmup}the sum over the last {self.window_s:g} s drifts by at most "
                f"{percent_text(c.max_slope)} and its {SPREAD_WORDS[c.spread][0]} is at most {percent_text(c.max_spread)} "
                "of its mean.")

    def readout(self, t: NDArray[np.float64], total: NDArray[np.float64]) -> str:
        """Where the trial stands by the rule: warming up, filling the window, settling or stable."""
        if not len(t):
            return "waiting for samples…"
        if t[-1] <= self.warmup_s:
            return f"warming up: measuring starts after {self.warmup_s:g} s"
        measured = total[int(np.searchsorted(t, self.warmup_s, side="right")) :]  # t is sorted: no mask of all of it
        if len(measured) < self.window:
            return f"measuring: {len(measured) * self.interval_s:g} of {self.window_s:g} s for the stability check"
        check = check_window(measured[-self.window :], self.criteria)
        if not np.isfinite(check.slope):
            return f"settling: no throughput over the last {self.window_s:g} s"
        c = self.criteria
        state = "stable" if check.steady else "settling"
        return (f"{state}: {figure_text(float(measured[-self.window :].mean()))}; over {self.window_s:g} s "
                f"drift {percent_text(check.slope)} (≤ {percent_text(c.max_slope)}), "
                f"{SPREAD_WORDS[c.spread][1]} {percent_text(check.spread)} (≤ {percent_text(c.max_spread)})")
