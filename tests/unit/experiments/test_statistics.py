"""Student-t quantiles, confidence intervals, repeat decisions and comparisons."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from experiments.statistics import (
    RepeatPolicy,
    compare,
    estimate,
    incomplete_beta,
    repeat_decision,
    t_cdf,
    t_quantile,
)

# Two-sided 95 % critical values from any textbook table.
TABLE = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 9: 2.262, 10: 2.228, 20: 2.086, 30: 2.042, 120: 1.980}


@pytest.mark.parametrize(("df", "expected"), sorted(TABLE.items()))
def test_t_quantile_matches_the_table(df: int, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=1e-3)


def test_t_quantile_other_levels_and_limits() -> None:
    assert t_quantile(0.995, 5) == pytest.approx(4.032, abs=1e-3)
    assert t_quantile(0.95, 10) == pytest.approx(1.812, abs=1e-3)
    assert t_quantile(0.975, math.inf) == pytest.approx(1.95996, abs=1e-4)
    assert t_quantile(0.5, 3) == 0.0
    assert incomplete_beta(2, 3, 0.0) == 0.0 and incomplete_beta(2, 3, 1.0) == 1.0
    with pytest.raises(ValueError):
        t_quantile(1.0, 3)


@given(p=st.floats(0.001, 0.999), df=st.floats(0.5, 500))
@settings(max_examples=150, deadline=None)
def test_quantile_inverts_cdf_and_is_symmetric(p: float, df: float) -> None:
    q = t_quantile(p, df)
    assert t_cdf(q, df) == pytest.approx(p, abs=1e-9)
    assert t_quantile(1 - p, df) == pytest.approx(-q, rel=1e-7, abs=1e-9)


@given(df=st.integers(1, 200))
def test_quantile_shrinks_towards_normal_as_df_grows(df: int) -> None:
    assert t_quantile(0.975, df) > t_quantile(0.975, df + 1) > 1.959


values_st = st.lists(st.floats(1.0, 1e9, allow_nan=False), min_size=2, max_size=30)


@given(values=values_st, scale=st.floats(0.001, 1000))
@settings(deadline=None)
def test_interval_contains_the_mean_and_scales(values: list[float], scale: float) -> None:
    e = estimate(values)
    assert e.low <= e.mean <= e.high
    s = estimate([v * scale for v in values])
    assert s.mean == pytest.approx(e.mean * scale, rel=1e-9)
    assert s.rel_stddev == pytest.approx(e.rel_stddev, rel=1e-6, abs=1e-12)


def test_one_run_has_no_interval() -> None:
    e = estimate([5.0])
    assert e.half_width == math.inf and e.stddev == 0.0


def test_interval_coverage_is_about_95_percent() -> None:
    rng = np.random.default_rng(42)
    covered = 0
    trials = 4000
    for _ in range(trials):
        e = estimate(list(rng.normal(100, 5, 4)))
        covered += e.low <= 100 <= e.high
    assert 0.93 < covered / trials < 0.97


def test_repeat_until_quiet_or_capped() -> None:
    policy = RepeatPolicy(max_rel_stddev=0.035, min_runs=3, max_runs=6)
    assert repeat_decision([100, 100], policy).more
    assert not repeat_decision([100, 101, 99], policy).more
    noisy = [100, 120, 80]
    assert repeat_decision(noisy, policy).more
    capped = repeat_decision(noisy * 2, policy)
    assert not capped.more and "cap" in capped.reason
    with pytest.raises(ValueError):
        RepeatPolicy(min_runs=5, max_runs=3)


@given(a=values_st)
@settings(deadline=None)
def test_a_config_is_never_beyond_noise_of_itself(a: list[float]) -> None:
    c = compare(a, a)
    assert c.diff == 0.0 and not c.beyond_noise


@given(a=values_st, b=values_st)
@settings(deadline=None)
def test_comparison_is_antisymmetric(a: list[float], b: list[float]) -> None:
    ab, ba = compare(a, b), compare(b, a)
    assert ab.diff == pytest.approx(-ba.diff, rel=1e-9, abs=1e-6)
    assert ab.beyond_noise == ba.beyond_noise


def test_clear_gain_is_beyond_noise_and_overlap_is_not() -> None:
    c = compare([100, 101, 99, 100], [118, 119, 117, 118])
    assert c.beyond_noise and c.rel_diff == pytest.approx(0.18, abs=1e-9)
    assert 0.15 < c.rel_low < 0.18 < c.rel_high < 0.21
    assert not compare([100, 110, 90], [102, 112, 92]).beyond_noise
    assert not compare([100], [200]).beyond_noise  # one run each says nothing about noise
