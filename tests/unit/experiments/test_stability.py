"""Steady-state detection and trial summaries over throughput series."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.stability import (
    Spread,
    SteadyCriteria,
    SteadyStateDetector,
    check_window,
    count_dips,
    first_steady_index,
    steady_mask,
    summarize,
    total_throughput,
)

CRIT = SteadyCriteria(window=20, max_slope=0.05, max_spread=0.10)


def ramp_then_flat(n_ramp: int = 40, n_flat: int = 80, level: float = 100.0, noise: float = 0.01) -> np.ndarray:
    rng = np.random.default_rng(1)
    ramp = np.linspace(10, level, n_ramp, endpoint=False)
    flat = level * (1 + rng.normal(0, noise, n_flat))
    return np.concatenate([ramp, flat])


def test_flat_series_is_steady_and_a_ramp_is_not() -> None:
    assert check_window(np.full(20, 50.0), CRIT).steady
    ramp = check_window(np.linspace(50, 80, 20), CRIT)
    assert not ramp.steady and ramp.slope == pytest.approx(30 / 65, rel=1e-6)  # drift over the window's mean


def test_spread_kinds_differ() -> None:
    v = np.array([100.0] * 19 + [85.0])
    assert not check_window(v, CRIT).steady  # range 15 % > 10 %
    std = SteadyCriteria(window=20, max_slope=0.05, max_spread=0.10, spread=Spread.STDDEV)
    assert check_window(v, std).steady  # stddev ≈ 3.3 %


def test_steady_found_after_the_ramp() -> None:
    v = ramp_then_flat()
    idx = first_steady_index(v, CRIT)
    # steady once the window holds only the ramp's last few percent
    assert idx is not None and 40 <= idx < 40 + CRIT.window
    assert first_steady_index(np.linspace(1, 100, 200), CRIT) is None


def test_vectorised_mask_agrees_with_window_check() -> None:
    v = ramp_then_flat(noise=0.03)
    mask = steady_mask(v, CRIT)
    for end in range(CRIT.window - 1, len(v)):
        assert mask[end] == check_window(v[end - CRIT.window + 1:end + 1], CRIT).steady


def test_streaming_detector_matches_batch_and_honours_ramp() -> None:
    v = ramp_then_flat()
    t = np.arange(1, len(v) + 1) * 0.25
    det = SteadyStateDetector(CRIT)
    det.push_many(t, v)
    assert det.steady and det.steady_at == t[first_steady_index(v, CRIT)]
    ramped = SteadyCriteria(window=20, max_slope=0.05, max_spread=0.10, ramp=60)
    det2 = SteadyStateDetector(ramped)
    det2.push_many(t, v)
    assert det2.steady_at is not None and det2.steady_at >= t[60 + 19]
    assert first_steady_index(v, ramped) == 60 + 19


def test_summary_counts_dips_and_depth() -> None:
    v = np.full(100, 100.0)
    v[10:13] = 50.0  # one dip, three samples long
    v[40] = 70.0  # a second, shallower one
    v[60] = 90.0  # not below 80 % of the median
    s = summarize(np.arange(100) * 0.25, v, criteria=CRIT, dip_fraction=0.8)
    assert s.dips == 2
    assert s.deepest_dip == pytest.approx(0.5)
    assert s.median == 100.0 and s.p5 < 100.0 and s.cv > 0
    assert s.time_to_steady is not None
    assert set(s.to_dict()) >= {"mean", "median", "p5", "cv", "deepest_dip", "dips", "time_to_steady"}


def test_bursty_setting_sustains_less_than_its_mean_suggests() -> None:
    rng = np.random.default_rng(3)
    smooth = 100 + rng.normal(0, 1, 400)
    bursty = np.where(rng.random(400) < 0.1, 30.0, 110.0)
    a, b = summarize(np.arange(400), smooth), summarize(np.arange(400), bursty)
    assert b.median > a.median and b.p5 < a.p5 and b.dips > a.dips


def test_count_dips_edges() -> None:
    assert count_dips(np.array([1.0, 1.0]), 0.5) == 0
    assert count_dips(np.array([0.0, 1.0, 0.0, 0.0]), 0.5) == 2
    assert summarize(np.array([]), np.array([])).n == 0


def test_total_throughput_sums_clients_per_slot() -> None:
    t = np.array([0.25, 0.25, 0.5, 0.5001, 0.75])
    bps = np.array([10.0, 20.0, 10.0, 20.0, 5.0])
    slots, total = total_throughput(t, bps, 0.25)
    assert slots.tolist() == [0.25, 0.5, 0.75] and total.tolist() == [30.0, 30.0, 5.0]
