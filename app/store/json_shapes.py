"""The JSON a session file's columns may hold, as small shapes a received file is checked against.

The readers (listing, report, review window) trust the shapes the writers give these
columns: hosts are a list of names, a configuration maps knobs to plain values, a
summary's figures are numbers. A received file is another program's word for that, so
its JSON is parsed strictly and held to these shapes before any of it is imported.
Keys a shape does not name may hold any JSON (newer writers add keys).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

MAX_DEPTH = 32  # nesting of arrays and objects: the writers' deepest is 5


class ShapeError(ValueError):
    """A JSON value that is not what its column holds; the message says where and what."""


class Shape(Protocol):
    def check(self, value: Any, where: str) -> None: ...


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


@dataclass(frozen=True, slots=True)
class AnyJson:
    def check(self, value: Any, where: str) -> None:
        return None


@dataclass(frozen=True, slots=True)
class Str:
    max_len: int = 4096

    def check(self, value: Any, where: str) -> None:
        if not isinstance(value, str):
            raise ShapeError(f"{where} is {_kind(value)}; a string belongs there")
        if len(value) > self.max_len:
            raise ShapeError(f"{where} is a string of {len(value)} characters (at most {self.max_len})")


@dataclass(frozen=True, slots=True)
class Num:
    low: float | None = None
    high: float | None = None
    integer: bool = False

    def check(self, value: Any, where: str) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ShapeError(f"{where} is {_kind(value)}; a number belongs there")
        if self.integer and not isinstance(value, int):
            raise ShapeError(f"{where} is {value!r}; a whole number belongs there")
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            raise ShapeError(f"{where} is {value!r}, outside [{self.low}, {self.high}]")


@dataclass(frozen=True, slots=True)
class Scalar:
    """A plain value: a string, number, boolean, or null when ``null`` (never a list: readers group by it)."""

    null: bool = True
    max_len: int = 4096

    def check(self, value: Any, where: str) -> None:
        if isinstance(value, list | dict) or (value is None and not self.null):
            raise ShapeError(f"{where} is {_kind(value)}; a plain value belongs there")
        if isinstance(value, str):
            Str(self.max_len).check(value, where)


@dataclass(frozen=True, slots=True)
class Nullable:
    inner: Shape

    def check(self, value: Any, where: str) -> None:
        if value is not None:
            self.inner.check(value, where)


@dataclass(frozen=True, slots=True)
class ListOf:
    item: Shape

    def check(self, value: Any, where: str) -> None:
        if not isinstance(value, list):
            raise ShapeError(f"{where} is {_kind(value)}; a list belongs there")
        for i, v in enumerate(value):
            self.item.check(v, f"{where}[{i}]")


@dataclass(frozen=True, slots=True)
class Obj:
    """An object; ``fields`` are checked when present, every other value against ``values``.

    ``loose``: anything but an object passes too (readers skip what is not one).
    """

    fields: Mapping[str, Shape] = field(default_factory=dict)
    values: Shape = AnyJson()
    loose: bool = False

    def check(self, value: Any, where: str) -> None:
        if not isinstance(value, dict):
            if self.loose:
                return
            raise ShapeError(f"{where} is {_kind(value)}; an object belongs there")
        for key, v in value.items():
            self.fields.get(key, self.values).check(v, f"{where}.{key}")


def _refuse_constant(name: str) -> float:
    raise ShapeError(f"{name} is not a number JSON allows")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ShapeError(f"{text[:40]} is beyond any finite number")
    return value


def _depth(value: Any) -> int:
    """Deepest nesting of lists and objects, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict | list):
            deepest = max(deepest, d)
            if d > MAX_DEPTH:
                break
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


def parse(text: str, shape: Shape, where: str) -> Any:
    """``text`` as strict JSON (no NaN, no infinity, bounded depth) that fits ``shape``; ShapeError if not."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite)
    except ShapeError as e:
        raise ShapeError(f"{where}: {e}") from e
    except RecursionError as e:
        raise ShapeError(f"{where} nests deeper than {MAX_DEPTH} levels") from e
    except ValueError as e:  # json.JSONDecodeError, and integers of more digits than Python converts
        raise ShapeError(f"{where} is not valid JSON ({str(e)[:120]})") from e
    if _depth(value) > MAX_DEPTH:
        raise ShapeError(f"{where} nests deeper than {MAX_DEPTH} levels")
    shape.check(value, where)
    return value
