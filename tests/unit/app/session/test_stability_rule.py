"""The steady-state rule in words and the readout the Run page shows by it (app.session.stability)."""

from __future__ import annotations

import numpy as np

from app.session.stability import StabilityRule
from app.sweep.spec import SweepSpec
from experiments.plan import Plan, Timing
from experiments.stability import Spread, SteadyCriteria


def _series(values: list[float], interval: float = 0.25) -> tuple[np.ndarray, np.ndarray]:
    return np.arange(1, len(values) + 1) * interval, np.array(values, dtype=np.float64)


def test_the_rule_is_the_specs_own() -> None:
    timing = Timing(warmup_s=3.0, min_measure_s=4.0)
    spec = SweepSpec("srv", ("c1",), "/srv", Plan({"nfsd_threads": (8, 64)}, ("seq_read",), timing=timing))
    rule = StabilityRule.of(spec)
    assert rule.criteria == spec.criteria() and rule.window == 16 and rule.window_s == 4.0 and rule.warmup_s == 3.0
    assert rule.band_name() == "band: mean ± 1 sd (4 s)" and rule.mean_name() == "rolling mean (4 s)"
    assert rule.rule_text() == ("Band: the sum's mean ± one standard deviation over the last 4 s. Stable once, after 3 s "
                                "of warm-up, the sum over the last 4 s drifts by at most 5.0 % and its range (max − min) "
                                "is at most 20 % of its mean.")  # fmt: skip


def test_the_readout_goes_from_warm_up_to_stable() -> None:
    rule = StabilityRule(SteadyCriteria(window=8), 0.25, warmup_s=1.0)
    assert rule.readout(*_series([])) == "waiting for samples…"
    assert rule.readout(*_series([1e8] * 4)) == "warming up: measuring starts after 1 s"
    assert rule.readout(*_series([1e8] * 6)) == "measuring: 0.5 of 2 s for the stability check"
    steady = rule.readout(*_series([1e8] * 12))
    assert steady == "stable: 100.0 MB/s; over 2 s drift 0.0 % (≤ 5.0 %), range 0.0 % (≤ 20 %)"
    rising = rule.readout(*_series([1e8] * 4 + [1e8 * (1 + 0.1 * i) for i in range(8)]))
    assert rising.startswith("settling: ") and "drift 52 % (≤ 5.0 %), range 52 % (≤ 20 %)" in rising  # 0.1e8 × 7 / 1.35e8
    assert rule.readout(*_series([0.0] * 12)) == "settling: no throughput over the last 2 s"


def test_a_standard_deviation_rule_is_named_so() -> None:
    rule = StabilityRule(SteadyCriteria(window=8, spread=Spread.STDDEV, max_spread=0.1), 0.25)
    assert "its standard deviation is at most 10 %" in rule.rule_text()
    assert rule.readout(*_series([1e8] * 8)).endswith("sd 0.0 % (≤ 10 %)")
