"""The one vocabulary (app.vocabulary): how a knob, a value, a workload and a figure read on every face.

Seen by a tester before it existed: "nfsd threads = 64" on one page and `nfsd_threads=32`
on another, "1M" beside 1048576, "sequential read" beside `seq_read`, MB/s with one
decimal here and none there, "3.2%" in the CLI and "3.2 %" in the wizard. Here the
formatter's rules, and that every value it prints is one the CLI's parser reads back.
"""

from __future__ import annotations

import math

import pytest

from app.commands import arguments
from app.knobs.catalog import SPECS
from app.knobs.model import Value
from app.knobs.values import parse_value, parse_values
from app.sweep.spec import SWEEPABLE, workload_kind
from app.vocabulary import (
    BYTES,
    OPS,
    WORKLOAD_WORDS,
    change_text,
    config_text,
    data_text,
    date_text,
    duration_text,
    figure_text,
    gain_text,
    interval_text,
    knob_label,
    knob_value_text,
    knob_values_text,
    memory_text,
    percent_text,
    setting_text,
    signed_figure_text,
    signed_percent_text,
    signed_range_text,
    transition_text,
    unit_of,
    workload_detail,
    workload_id,
    workload_label,
)

MINUS = "\u2212"
NOT_FINITE = (None, math.nan, math.inf, -math.inf)


def test_bytes_read_as_decimal_megabytes_and_ops_as_whole_operations() -> None:
    assert figure_text(112_345_678) == "112.3 MB/s"
    assert figure_text(1_234_567_890) == "1,234.6 MB/s"  # 10 GbE territory keeps its thousands apart
    assert figure_text(1234.4, OPS) == "1,234 ops/s"
    assert figure_text(1234.4, BYTES) == "0.0 MB/s"  # the unit decides, not the size of the number
    assert unit_of("seq_read") == BYTES and unit_of("small_files") == OPS and unit_of(None) == BYTES


@pytest.mark.parametrize("value", NOT_FINITE)
def test_a_missing_or_non_finite_figure_is_a_dash(value: float | None) -> None:
    for text in (figure_text(value), figure_text(value, OPS), interval_text(value, 1.0), percent_text(value),
                 signed_percent_text(value), signed_figure_text(value), gain_text(value, 0.1, 0.2),
                 signed_range_text(value, 1.0), duration_text(value), date_text(value), memory_text(value)):
        assert text == "—"


def test_an_interval_is_mean_plus_minus_half_width_in_one_unit() -> None:
    assert interval_text(112.3e6, 1.8e6) == "112.3 ± 1.8 MB/s"
    assert interval_text(1234, 56, OPS) == "1,234 ± 56 ops/s"
    assert interval_text(112.3e6, None) == "112.3 MB/s (one run)"
    assert interval_text(112.3e6, math.nan) == "112.3 MB/s (one run)"


def test_shares_and_changes_carry_a_real_minus_sign() -> None:
    assert percent_text(0.18) == "18 %" and percent_text(0.032) == "3.2 %" and percent_text(0.0949) == "9.5 %"
    assert percent_text(-0.2) == f"{MINUS}20 %" and "-" not in percent_text(-0.2)
    assert percent_text(-0.0001) == "0.0 %"  # rounds to nothing: no sign on a zero
    assert signed_percent_text(0.18) == "+18 %" and signed_percent_text(-0.04) == f"{MINUS}4.0 %"
    assert gain_text(0.18, 0.15, 0.21) == "+18 % ± 3.0 %"
    assert gain_text(-0.05, None, None) == f"{MINUS}5.0 % (too few runs for an interval)"
    assert signed_figure_text(-12.3e6) == f"{MINUS}12.3 MB/s" and signed_figure_text(12.3e6) == "+12.3 MB/s"
    assert signed_figure_text(-5, OPS) == f"{MINUS}5 ops/s"
    assert signed_range_text(-1.2e6, 3.4e6) == f"[{MINUS}1.2, +3.4] MB/s"
    assert figure_text(-5e6) == f"{MINUS}5.0 MB/s"


def test_durations_dates_and_memory() -> None:
    assert [duration_text(s) for s in (0, 42.9, 95, 3700, -3)] == ["0 s", "42 s", "1 min 35 s", "1 h 01 min", "0 s"]
    assert len(date_text(0.0)) == len("2025-03-14 09:26")
    assert memory_text(16 * 1024 * 1024) == "16.0 GiB" and memory_text(786_432) == "768 MiB"


def test_a_knob_is_its_identifier_and_with_room_its_title() -> None:
    assert knob_label("nfsd_threads") == "nfsd_threads (nfsd threads)"
    assert knob_label("read_ahead_kb") == "read_ahead_kb (client readahead)"
    assert knob_label("rsize") == "rsize" and knob_label("mtu") == "mtu"  # the title would only repeat it
    assert knob_label("stripe_cache_size") == "stripe_cache_size"
    assert knob_label("not_a_knob") == "not_a_knob"
    for name in SPECS:
        assert knob_label(name).startswith(name)  # the identifier the CLI takes always comes first


def test_values_are_plain_decimals_in_the_knobs_unit_whatever_form_was_stored() -> None:
    assert knob_value_text("rsize", 1048576) == "1048576"
    assert knob_value_text("rsize", "1M") == "1048576"  # an older record's text reads like every other
    assert knob_value_text("rsize", 1048576.0) == "1048576"
    assert knob_value_text("read_ahead_kb", "4M") == "4096"
    assert knob_value_text("export_sync", "ASYNC") == "async"
    assert knob_value_text("nfsvers", "4.2") == "4.2"
    assert knob_value_text("rsize", "huge") == "huge"  # not a value of the knob: shown as stored, not hidden
    assert knob_value_text("rsize", None) == "—"
    assert knob_value_text("export_sync", ["rw", "sync"]) == "rw, sync"  # a journal's compound value
    assert knob_values_text("nfsd_threads", (8, 16, 64)) == "8, 16, 64"


def test_a_configuration_is_its_settings_sorted_by_knob() -> None:
    assert config_text({"rsize": 1048576, "nfsd_threads": 32}) == "nfsd_threads=32, rsize=1048576"
    assert config_text({}) == "(no knobs)"
    assert setting_text("wsize", "32K") == "wsize=32768"
    assert transition_text("rsize", 65536, "1M") == "65536 → 1048576"
    assert change_text("nfsd_threads", 8, 64) == "nfsd_threads 8 → 64"


def _catalog_values(name: str) -> list[Value]:
    """Every value of a knob worth printing: its choices, or its range's ends, defaults and sizes between."""
    v = SPECS[name].validity
    if v.choices:
        return list(v.choices)
    assert v.minimum is not None and v.maximum is not None
    inside = {v.minimum, v.maximum, (v.minimum + v.maximum) // 2, *(int(d) for d in SPECS[name].default_sweep)}
    inside |= {2**k for k in range(31) if v.minimum <= 2**k <= v.maximum}
    return sorted(inside)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_value_printed_is_read_back_the_same_by_the_clis_parser(name: str) -> None:
    values = _catalog_values(name)
    for value in values:
        text = knob_value_text(name, value)
        assert parse_value(name, text) == value
        # as a whole setting, the way it reads in a configuration, pasted into --knob NAME=V
        setting = setting_text(name, value)
        assignment = arguments.knob_assignment(setting)
        assert parse_values(assignment.name, assignment.values) == (value,)
    listed = knob_values_text(name, values)  # the Plan page's and the run confirmation's list
    assert parse_values(name, listed) == tuple(values)


def test_a_printed_configuration_pastes_setting_by_setting_into_the_cli() -> None:
    config = {"rsize": 1048576, "wsize": 32768, "nfsd_threads": 64, "read_ahead_kb": 16384, "nfsvers": "4.2",
              "export_sync": "sync", "nconnect": 4, "stripe_cache_size": 4096, "mtu": 9000}
    settings = config_text(config).split(", ")
    assert len(settings) == len(config)
    for setting in settings:
        parsed = arguments.knob_assignment(setting)
        assert parse_values(parsed.name, parsed.values) == (config[parsed.name],)


def test_a_workload_is_its_identifier_and_with_room_its_name() -> None:
    assert workload_label("seq_read") == "seq_read (sequential read)"
    assert workload_label("seqread") == workload_label("seq-read") == "seq_read (sequential read)"
    assert workload_id("seq-write") == "seq_write" and workload_id("randrw") == "mixed"
    assert workload_detail("seq_read") == "seq_read (sequential read: 1 MiB reads, caches dropped first)"
    assert workload_label("rewrite") == "rewrite"  # its name would only repeat it
    assert workload_label("mystery") == "mystery"
    assert set(WORKLOAD_WORDS) == SWEEPABLE  # every workload a sweep runs has its words
    for kind in WORKLOAD_WORDS:
        assert workload_kind(workload_label(kind).split(" ")[0]) == kind  # the CLI's --workload takes what is shown


def test_stored_json_reads_as_short_text() -> None:
    assert data_text(["rw", "sync"]) == "rw, sync"
    assert data_text({"a": 1, "b": None}) == "a=1, b=—"
    assert data_text(None) == "—" and data_text(3) == "3"


def test_a_journal_entry_with_nothing_before_reads_as_a_dash_not_as_blank() -> None:
    from app.vocabulary import transition_text

    assert transition_text("test_mount", "", "nconnect=1") == "— → nconnect=1"
