"""Host-supplied text never drives the admin's terminal: every CLI write is filtered."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from app.cli import main
from app.store.store import Store
from app.terminal_text import CARRIAGE_RETURN, ERASE, SafeStream, redraw, safe_text

HOSTILE = [
    ("\x1b]0;owned\x07", "\\x1b]0;owned\\x07"),  # set the window title
    ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),  # clear the screen
    ("a\rfake prompt$ ", "a\\x0dfake prompt$ "),  # overwrite the line
    ("\u202etxt.exe", "\\u202etxt.exe"),  # read backwards
    ("\x9b31m", "\\x9b31m"),  # C1 CSI
    ("line\u2028split", "line\\u2028split"),
    ("bell\x07del\x7f", "bell\\x07del\\x7f"),
    ("nul\x00", "nul\\x00"),
    ("\rfake prompt$ ", "\\x0dfake prompt$ "),  # a leading carriage return is text too (issue 28)
    ("\x1b[Kerased", "\\x1b[Kerased"),  # and so is erase-to-end-of-line
    ("admin\u200e", "admin\\u200e"), ("\u200fltr", "\\u200fltr"), ("\u061cx", "\\u061cx"),  # bidi marks
    ("lab\u200bserver", "lab\\u200bserver"), ("\ufeffbom", "\\ufeffbom"), ("wj\u2060", "wj\\u2060"),  # zero-width
    ("tag\U000e0041", "tag\\U000e0041"), ("\u2066iso\u2069", "\\u2066iso\\u2069"), ("un\U0010ffff", "un\\U0010ffff"),
]


@pytest.mark.parametrize(("raw", "shown"), HOSTILE)
def test_control_and_bidi_characters_are_shown_not_obeyed(raw: str, shown: str) -> None:
    assert safe_text(raw) == shown


@pytest.mark.parametrize("plain", ["lab-server", "Debian GNU/Linux 12 (bookworm)", "ünïcødé 服务器", "tab\tand\nnewline"])
def test_ordinary_text_is_unchanged(plain: str) -> None:
    assert safe_text(plain) == plain


def test_only_the_clis_own_redraw_moves_the_cursor() -> None:
    inner = io.StringIO()
    stream = SafeStream(inner)
    redraw(stream, "trial 3/8 rsize=65536", before=CARRIAGE_RETURN, after=ERASE)
    redraw(stream, "host \x1b]0;x\x07\rfake", before=CARRIAGE_RETURN + ERASE)
    stream.write("\r\x1b[Khost says")  # text that starts like a redraw is still text
    assert inner.getvalue() == ("\rtrial 3/8 rsize=65536\x1b[K" "\r\x1b[Khost \\x1b]0;x\\x07\\x0dfake"
                                "\\x0d\\x1b[Khost says")
    with pytest.raises(ValueError):
        stream.control("\x1b]0;title\x07")
    plain = io.StringIO()  # a stream that is not wrapped gets the filter all the same
    redraw(plain, "a\x1b[2J", before=CARRIAGE_RETURN)
    assert plain.getvalue() == "\ra\\x1b[2J"


def test_the_stream_reports_what_it_was_given_and_passes_the_rest_through() -> None:
    inner = io.StringIO()
    stream = SafeStream(inner)
    assert stream.write("x\x1b") == 2
    stream.flush()
    assert inner.getvalue() == "x\\x1b"


def test_a_host_name_with_an_escape_sequence_is_printed_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.db"
    evil = "srv\x1b]0;owned\x07\x1b[2J"
    with Store(db) as s:
        s.create_session([evil, "lab-client1"], plan={"knobs": {}, "baseline": {}})
    assert main(["--db", str(db), "sessions", "list"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "srv\\x1b]0;owned\\x07\\x1b[2J" in out
    # JSON is escaped by json itself and stays machine-readable.
    assert main(["--db", str(db), "sessions", "list", "--json"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and json.loads(out)["sessions"][0]["hosts"][0] == evil
