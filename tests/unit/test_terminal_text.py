"""Host-supplied text never drives the admin's terminal: every CLI write is filtered."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from app.cli import main
from app.store.store import Store
from app.terminal_text import SafeStream, safe_text, safe_write_text

HOSTILE = [
    ("\x1b]0;owned\x07", "\\x1b]0;owned\\x07"),  # set the window title
    ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),  # clear the screen
    ("a\rfake prompt$ ", "a\\x0dfake prompt$ "),  # overwrite the line
    ("\u202etxt.exe", "\\u202etxt.exe"),  # read backwards
    ("\x9b31m", "\\x9b31m"),  # C1 CSI
    ("line\u2028split", "line\\u2028split"),
    ("bell\x07del\x7f", "bell\\x07del\\x7f"),
    ("nul\x00", "nul\\x00"),
]


@pytest.mark.parametrize(("raw", "shown"), HOSTILE)
def test_control_and_bidi_characters_are_shown_not_obeyed(raw: str, shown: str) -> None:
    assert safe_text(raw) == shown


@pytest.mark.parametrize("plain", ["lab-server", "Debian GNU/Linux 12 (bookworm)", "ünïcødé 服务器", "tab\tand\nnewline"])
def test_ordinary_text_is_unchanged(plain: str) -> None:
    assert safe_text(plain) == plain


def test_the_progress_redraw_is_kept_but_hostile_text_inside_it_is_not() -> None:
    assert safe_write_text("\r\x1b[Ktrial 3/8 rsize=65536") == "\r\x1b[Ktrial 3/8 rsize=65536"
    assert safe_write_text("\r\x1b[Khost \x1b]0;x\x07") == "\r\x1b[Khost \\x1b]0;x\\x07"
    assert safe_write_text("mid\rline") == "mid\\x0dline"


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
