"""Host-supplied text made safe for a terminal: one filter on everything the CLI prints.

A host name, an OS string or an error message from a host can hold escape sequences
(set the window title, clear the screen, fake a prompt), a carriage return that
overwrites the line, or bidi and zero-width characters that make text read other than
it is. Every write of the headless CLI goes through ``SafeStream``, which shows those
characters as visible escapes (``\\x1b``, ``\\u202e``, ``\\u200b``) instead of letting
the terminal act on them. Kept: newline and tab. The sweep's own progress line redraw
(a carriage return, "erase to end of line") is the CLI's alone: it goes through
``redraw``, never through text.
"""

from __future__ import annotations

import contextlib
import re
import sys
import unicodedata
from collections.abc import Iterator
from typing import TextIO

CARRIAGE_RETURN = "\r"
ERASE = "\x1b[K"  # erase to the end of the line
_CONTROLS = frozenset((CARRIAGE_RETURN, ERASE, CARRIAGE_RETURN + ERASE))
_MAYBE = re.compile("[^\t\n\x20-\x7e]")  # everything but tab, newline and printable ASCII is looked at
# Control (Cc), format (Cf: bidi marks and overrides, zero-width spaces and joiners, the BOM, tags),
# line and paragraph separators, surrogates and unassigned code points.
_UNSAFE_CATEGORIES = frozenset(("Cc", "Cf", "Zl", "Zp", "Cs", "Cn"))


def _escape(match: re.Match[str]) -> str:
    c = match.group(0)
    if unicodedata.category(c) not in _UNSAFE_CATEGORIES:
        return c
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def safe_text(text: str) -> str:
    """``text`` with every control, format (bidi, zero-width) and separator character shown as an escape."""
    return _MAYBE.sub(_escape, text)


class SafeStream:
    """A text stream that passes every write through safe_text; ``control`` writes the CLI's own redraw."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        self._inner.write(safe_text(text))
        return len(text)

    def control(self, sequence: str) -> None:
        """One of the CLI's own line controls (a carriage return, erase to the end of the line), as is."""
        if sequence not in _CONTROLS:
            raise ValueError(f"not a line control: {sequence!r}")
        self._inner.write(sequence)

    def __getattr__(self, name: str) -> object:  # flush, isatty, fileno, encoding …
        return getattr(self._inner, name)


def redraw(stream: TextIO | SafeStream, text: str, *, before: str = "", after: str = "") -> None:
    """``text`` (filtered) between two of the CLI's own line controls: the progress line rewritten in place."""
    for sequence in (before, after):
        if sequence and sequence not in _CONTROLS:
            raise ValueError(f"not a line control: {sequence!r}")
    if isinstance(stream, SafeStream):
        if before:
            stream.control(before)
        stream.write(text)
        if after:
            stream.control(after)
    else:
        stream.write(before + safe_text(text) + after)


@contextlib.contextmanager
def terminal_safe_streams() -> Iterator[None]:
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(out), SafeStream(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
