"""Stored JSON values (host facts, journal entries) as short text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.vocabulary.figures import MISSING


def data_text(value: Any) -> str:
    """'rw, sync' for a list, 'a=1, b=2' for a mapping, '—' for nothing; anything else as it is."""
    if value is None:
        return MISSING
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={data_text(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(data_text(v) for v in value)
    return str(value)
