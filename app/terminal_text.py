"""Host-supplied text made safe for a terminal: one filter on everything the CLI prints.

A host name, an OS string or an error message from a host can hold escape sequences
(set the window title, clear the screen, fake a prompt) or bidi overrides that make
text read backwards. Every write of the headless CLI goes through ``SafeStream``,
which shows those characters as visible escapes (``\\x1b``, ``\\u202e``) instead of
letting the terminal act on them. Kept: newline, tab, and the sweep's own progress
line redraw (a leading carriage return and "erase to end of line").
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from typing import TextIO

_ERASE = "\x1b[K"
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def _escape(match: re.Match[str]) -> str:
    c = match.group(0)
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def safe_text(text: str) -> str:
    """``text`` with every control, C1 and bidi-override character shown as an escape."""
    return _UNSAFE.sub(_escape, text)


def safe_write_text(text: str) -> str:
    """As safe_text, keeping the CLI's own redraw: a leading \\r and \\x1b[K."""
    lead = "\r" if text.startswith("\r") else ""
    body = text[len(lead):]
    return lead + _ERASE.join(safe_text(part) for part in body.split(_ERASE))


class SafeStream:
    """A text stream that passes every write through safe_write_text."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        self._inner.write(safe_write_text(text))
        return len(text)

    def __getattr__(self, name: str) -> object:  # flush, isatty, fileno, encoding …
        return getattr(self._inner, name)


@contextlib.contextmanager
def terminal_safe_streams() -> Iterator[None]:
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(out), SafeStream(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
