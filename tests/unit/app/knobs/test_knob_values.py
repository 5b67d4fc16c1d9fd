"""One validator for every knob value an admin types: the CLI's --knob and the Plan page.

Over the whole catalog and the inputs that went wrong or could: sizes with suffixes,
hex, signs, empty, nan/inf/exponents, absurdly large numbers, long text. Every refusal
is a BadValue naming the knob; nothing else escapes.
"""

from __future__ import annotations

import pytest

from app.commands.sweep import check_choices, choices_from_args
from app.cli import parse
from app.knobs.catalog import SPECS
from app.knobs.model import Value
from app.knobs.values import MAX_TEXT, BadValue, parse_value, parse_values
from app.session.plan import PlanChoices, plan_problems
from app.vocabulary import knob_value_text

TEXTS = ("128", "4K", "1M", "1MiB", "32k", "0x1000", "-1", "+8", "", " ", "nan", "inf", "-inf", "1e400", "1e3",
         "4.2", "3", "sync", "ASYNC", "1" * 40, "9" * 23, "٣", "8 16", "8;rm -rf /", "1K1", "4KB", "2G", "NOCTO",
         "no_wdelay", "601")  # fmt: skip

# What each knob accepts among TEXTS; every other text is refused.
ACCEPTED: dict[str, dict[str, Value]] = {
    "nfsd_threads": {"128": 128, "+8": 8, "3": 3, "601": 601},
    "nfsd_min_threads": {"128": 128, "+8": 8, "3": 3, "601": 601},
    "pool_mode": {},
    "export_sync": {"sync": "sync", "ASYNC": "async"},
    "export_wdelay": {"no_wdelay": "no_wdelay"},
    "stripe_cache_size": {"128": 128, "601": 601},
    "rsize": {"4K": 4096, "1M": 1 << 20, "1MiB": 1 << 20, "32k": 32768, "4KB": 4096},
    "wsize": {"4K": 4096, "1M": 1 << 20, "1MiB": 1 << 20, "32k": 32768, "4KB": 4096},
    "max_block_size": {"4K": 4096, "1M": 1 << 20, "1MiB": 1 << 20, "32k": 32768, "4KB": 4096},
    "nfsvers": {"4.2": "4.2", "3": "3"},
    "nconnect": {"+8": 8, "3": 3},
    "nocto": {"NOCTO": "nocto"},
    "actimeo": {"128": 128, "+8": 8, "3": 3},
    "read_ahead_kb": {"128": 128, "4K": 4, "1M": 1024, "1MiB": 1024, "32k": 32, "+8": 8, "3": 3, "4KB": 4, "601": 601},
    "mtu": {"4K": 4096, "4KB": 4096},
    "dirty_bytes": {"1M": 1 << 20, "1MiB": 1 << 20, "2G": 2 << 30},
    "dirty_background": {"1M": 1 << 20, "1MiB": 1 << 20, "2G": 2 << 30},
    "rpc_slots": {"128": 128, "+8": 8, "3": 3, "601": 601},
}


def test_the_table_covers_the_whole_catalog() -> None:
    assert set(ACCEPTED) == set(SPECS)


@pytest.mark.parametrize("knob", sorted(SPECS))
@pytest.mark.parametrize("text", TEXTS)
def test_every_knob_takes_or_refuses_every_text_in_words(knob: str, text: str) -> None:
    expected = ACCEPTED[knob].get(text)
    if expected is not None:
        assert parse_value(knob, text) == expected
        assert parse_value(knob, knob_value_text(knob, expected)) == expected  # what the page shows reads back
        return
    with pytest.raises(BadValue) as refused:
        parse_value(knob, text)
    message = str(refused.value)
    assert message.startswith(f"{knob}: ") and len(message) < 400
    assert refused.value.knob == knob
    if len(text.strip()) > MAX_TEXT:
        assert "too long" in message


def test_the_readahead_seen_on_the_plan_page() -> None:
    """'128, 4K' for readahead: what the Plan page let through and the core then refused."""
    assert parse_values("read_ahead_kb", "128, 4K") == (128, 4)
    assert parse_values("read_ahead_kb", "128, 4M") == (128, 4096)
    with pytest.raises(BadValue, match="above 65536"):
        parse_values("read_ahead_kb", "128, 1G")


@pytest.mark.parametrize(("text", "words"), [
    ("", "give at least one value"), ("8,,16", "empty value between commas"), ("8, 16,", "empty value"),
    ("8, 008", "listed twice"), ("1M, 1048576", "listed twice"),
])  # fmt: skip
def test_lists_refuse_empties_and_repeats(text: str, words: str) -> None:
    knob = "rsize" if "M" in text else "nfsd_threads"
    with pytest.raises(BadValue, match=words):
        parse_values(knob, text)


def test_an_unknown_knob_is_refused_with_the_known_ones() -> None:
    with pytest.raises(BadValue, match="known: nfsd_threads"):
        parse_value("nfsd.threads", "8")


@pytest.mark.parametrize("knob", sorted(SPECS))
@pytest.mark.parametrize("text", ["128, 4K", "1M", "0x1000", "-1", "", "nan, 8", "1e400", "9" * 23])
def test_the_cli_and_the_plan_checks_agree(knob: str, text: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI's --knob and the Plan page's PlanChoices give the same verdict in the same words."""
    page = plan_problems(PlanChoices(knobs={knob: text}, allow_async=True, allow_restart=True))
    try:
        args = parse(["sweep", "--server", "s", "--client", "c", "--knob", f"{knob}={text}", "--async-opt-in",
                     "--restart-opt-in"])
    except SystemExit as exc:  # the --knob parser refuses it: argparse's usage error, in the page's words
        assert exc.code == 2 and page.get(knob)
        assert f"argument --knob: {page[knob]}" in capsys.readouterr().err
    else:
        check_choices(choices_from_args(args))
        assert page == {}
