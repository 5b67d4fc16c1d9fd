"""The directory-scaling collapse rule (experiments.knee.find_collapse) and its sentence."""

from __future__ import annotations

import random

from app.vocabulary.dirs import collapse_sentence
from experiments.knee import COLLAPSE_RULE, CurvePoint, find_collapse


def _curve(rates: list[float], step: int = 10_000) -> list[CurvePoint]:
    return [CurvePoint((i + 1) * step, r) for i, r in enumerate(rates)]


def test_a_flat_curve_has_no_collapse_and_holds_its_rate() -> None:
    c = find_collapse(_curve([1000.0] * 100))
    assert c.index is None and c.last_entries == 1_000_000
    assert c.end_share is not None and abs(c.end_share - 1.0) < 1e-9


def test_the_collapse_is_the_first_point_of_a_sustained_fall() -> None:
    rates = [1000.0] * 70 + [800.0, 380.0, 300.0, 250.0] + [200.0] * 26
    c = find_collapse(_curve(rates))
    assert c.index == 71 and c.entries == 720_000
    assert c.share is not None and abs(c.share - 0.38) < 1e-9
    assert c.early_rate == 1000.0 and c.end_share is not None and c.end_share < 0.25


def test_noise_and_one_slow_bucket_are_not_a_collapse() -> None:
    rng = random.Random(7)
    rates = [1000.0 * rng.uniform(0.7, 1.3) for _ in range(100)]
    rates[40] = 100.0  # one slow bucket (a commit, a GC pause)
    rates[60] = rates[61] = 200.0  # two, followed by a recovery
    assert find_collapse(_curve(rates)).index is None


def test_a_fall_at_the_very_end_counts_when_it_lasts_to_the_end() -> None:
    c = find_collapse(_curve([1000.0] * 10 + [300.0, 300.0]))
    assert c.index == 10 and c.entries == 110_000
    assert find_collapse(_curve([1000.0] * 10 + [300.0])).index is None  # one point is not sustained


def test_short_and_hostile_curves_are_too_short_to_judge() -> None:
    assert find_collapse([]).last_entries is None
    assert find_collapse(_curve([1000.0, 10.0, 10.0])).last_entries is None
    hostile = [CurvePoint(5, float("nan")), CurvePoint(0, 1.0), CurvePoint(10, float("inf")),
               CurvePoint(3, -1.0), *_curve([5.0] * 3)]  # fmt: skip
    assert find_collapse(hostile).last_entries is None  # the garbage is dropped, 3 points left
    backwards = _curve([1000.0] * 5) + [CurvePoint(20_000, 1.0)] * 5  # entries going back: ignored
    assert find_collapse(backwards).index is None


def test_the_sentence_compares_the_layouts_and_states_the_rule() -> None:
    flat = find_collapse(_curve([1000.0] * 71 + [380.0] * 29))
    hashed = find_collapse(_curve([1000.0] * 90 + [910.0] * 10))
    text = collapse_sentence({"flat": flat, "hashed": hashed})
    assert text.startswith("flat fell to 38 % of its early rate at 720,000 entries; "
                           "hashed held 91 % of its early rate up to 1,000,000 entries")  # fmt: skip
    assert COLLAPSE_RULE in text
    assert "too few points" in collapse_sentence({"flat": find_collapse([])})
