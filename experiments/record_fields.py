"""Total readers for the fields of records a host sends: the agent's lines, fio's JSON.

A host is not trusted to send what its program should: a broken agent, another
program on the channel or a hostile login can send ``Infinity``, ``1e400``, ``true``
where a count belongs, negative counters, strings, lists, or JSON nested a hundred
thousand deep. Every reader here either returns a value of the promised type inside
its bounds or raises ``BadRecord`` (a ValueError) naming the field, so a caller has one
exception to turn into a counted "garbage" line and never dies on a record.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_COUNT = 2**62  # bytes or ops in one record: far beyond any real run, far below overflow
MAX_TEXT = 4096


class BadRecord(ValueError):
    """A record, or one of its fields, is not what the program on the host writes."""


def count(value: Any, name: str) -> int:
    """A non-negative integer counter (an integral float such as 12.0 is accepted)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadRecord(f"{name} is not a number: {_show(value)}")
    if isinstance(value, float):
        if not (math.isfinite(value) and value.is_integer()):
            raise BadRecord(f"{name} is not a whole number: {_show(value)}")
        value = int(value)
    if not 0 <= value <= MAX_COUNT:
        raise BadRecord(f"{name} is out of range: {_show(value)}")
    return int(value)


def finite(value: Any, name: str, lo: float = -math.inf, hi: float = math.inf) -> float:
    """A finite number within [lo, hi]."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadRecord(f"{name} is not a number: {_show(value)}")
    try:
        x = float(value)
    except OverflowError:  # an int too large for a float
        raise BadRecord(f"{name} is out of range: {_show(value)}") from None
    if not math.isfinite(x) or not lo <= x <= hi:
        raise BadRecord(f"{name} is out of range [{lo:g}, {hi:g}]: {_show(value)}")
    return x


def flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise BadRecord(f"{name} is not true or false: {_show(value)}")
    return value


def text(value: Any, name: str, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str):
        raise BadRecord(f"{name} is not text: {_show(value)}")
    return value[:limit]


def mapping(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadRecord(f"{name} is not an object: {_show(value)}")
    return value


def items(value: Any, name: str, limit: int) -> list[Any]:
    if not isinstance(value, list):
        raise BadRecord(f"{name} is not a list: {_show(value)}")
    if len(value) > limit:
        raise BadRecord(f"{name} has {len(value)} entries, more than {limit}")
    return value


def loads(raw: str) -> Any:
    """json.loads whose every failure, deep nesting included, is a BadRecord."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise BadRecord("JSON nested too deeply") from None
    except ValueError as exc:
        raise BadRecord(f"not JSON ({exc})") from None


def _show(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."
