"""Tooltips that show their text as it is.

Qt shows a tooltip as rich text when it looks like HTML (``Qt.mightBeRichText``): a host
name, an error a host sent or a session file's notes could otherwise draw an image, a link
or a fake warning in nfs-tuner's window. Every tooltip whose text comes from a host or a
session goes through ``plain_tip``: text that Qt would read as HTML is escaped inside a
paragraph that keeps its line breaks, so it reads exactly as it was written.
"""

from __future__ import annotations

import html

from PySide6.QtGui import Qt


def plain_tip(text: str) -> str:
    """``text`` as a tooltip shows it literally, whatever it holds."""
    if not Qt.mightBeRichText(text):
        return text
    return f"<p style='white-space:pre-wrap'>{html.escape(text)}</p>"
