"""Every ``--json`` document, written one way: a ``format`` naming the document and its version first.

A version goes up when a key is removed, renamed or changes its meaning; keys may be
added without. docs/scripting.md describes each document with the exit statuses.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TextIO

FORMATS: dict[str, int] = {  # document -> its version
    "discover": 1,
    "knobs": 1,
    "sweep": 1,
    "study ladder": 1,
    "study dirs": 1,
    "sessions list": 1,
    "sessions show": 1,
}


def format_of(document: str) -> str:
    return f"nfs-tuner {document}/{FORMATS[document]}"


def write_json(document: str, body: Mapping[str, Any], out: TextIO) -> None:
    """``body`` as the JSON document ``document`` (a key of FORMATS), its format first, and a newline."""
    json.dump({"format": format_of(document), **body}, out, indent=2)
    out.write("\n")
