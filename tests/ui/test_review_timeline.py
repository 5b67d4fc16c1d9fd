"""The review's timeline levels: what the Samples plot gets for a view, against every sample."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ui.review.timeline import COARSEST, ClientStream, Decimated


def _stream(lengths: list[int], seed: int) -> ClientStream:
    rng = np.random.default_rng(seed)
    parts, start = [], 0.0
    for n in lengths:
        x = start + np.arange(1, n + 1) * 0.25
        parts.append((x, rng.normal(50e6, 5e6, n)))
        start = float(x[-1]) + 2.0
    return ClientStream("c", parts)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 30_000), min_size=1, max_size=5), st.integers(0, 2**16),
       st.floats(0, 1), st.floats(0, 1), st.sampled_from([50, 2000]))
def test_a_view_holds_every_sample_in_it_or_their_envelope(lengths: list[int], seed: int, f0: float, f1: float,
                                                            limit: int) -> None:
    s = _stream(lengths, seed)
    d = Decimated.of(s)
    lo, hi = sorted((f0, f1))
    x0, x1 = s.x[0] + lo * (s.x[-1] - s.x[0]), s.x[0] + hi * (s.x[-1] - s.x[0])
    x, y, connect = d.view(x0, x1, limit)
    inside = (s.x >= x0) & (s.x <= x1)
    assert len(x) == len(y) == len(connect) and np.all(np.diff(x) >= 0)
    if inside.sum() + 2 <= limit:  # few enough: every sample, one beyond each end, unjoined between trials
        i = np.flatnonzero(inside)
        a, b = (max(0, i[0] - 1), min(len(s.x), i[-1] + 2)) if len(i) else (len(x), len(x))
        if len(i):
            assert np.array_equal(x, s.x[a:b]) and np.array_equal(y, s.y[a:b])
            assert np.array_equal(connect[:-1], s.connect[a : b - 1])
    elif len(d.x):  # buckets: bounded, and never narrower than the samples they stand for
        assert len(x) <= 2 * max(limit, COARSEST)  # the coarsest level has at most COARSEST buckets
        assert y.max() >= s.y[inside].max() and y.min() <= s.y[inside].min()
    y0, y1 = d.data_bounds(1, (x0, x1))
    if inside.any():
        assert y0 <= s.y[inside].min() and y1 >= s.y[inside].max()
    assert d.data_bounds(0) == (s.x[0], s.x[-1]) and d.data_bounds(1) == (s.y.min(), s.y.max())


def test_levels_stop_at_the_coarsest_and_keep_trials_apart() -> None:
    s = _stream([100_000, 50_000], seed=1)
    d = Decimated.of(s)
    assert len(d.x[-1]) <= COARSEST < len(d.x[-2])
    assert int((~d.joined[0]).sum()) == 2  # a bucket of level 1 never holds two trials' samples
    assert len(s) == 150_000 and int((~s.connect).sum()) == 2
