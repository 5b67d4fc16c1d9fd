"""The lab soak drives every knob the catalog has, with values the knob takes."""

from __future__ import annotations

from app.knobs.catalog import SPECS
from app.knobs.values import parse_value
from benchmarks.lab_soak import SPACE


def test_the_soak_covers_the_whole_catalog_with_two_valid_values_each() -> None:
    assert set(SPACE) == set(SPECS)
    for knob, (low, high) in SPACE.items():
        assert parse_value(knob, low) != parse_value(knob, high), knob
