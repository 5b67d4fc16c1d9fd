"""Knob values as an admin types them: the one parser and validator for the CLI and the wizard.

``parse_value("read_ahead_kb", "4M")`` gives 4096 (KiB); every refusal is a
``BadValue`` whose text names the knob and says what to write instead, the same on
the command line (``--knob NAME=V1,V2``) and on the Plan page. The rules:

- A whole number is written in decimal (ASCII digits), optionally signed. Hex, exponents,
  fractions, ``nan`` and ``inf`` are refused, and so is anything longer than MAX_TEXT.
- Knobs measured in bytes or KiB also take a size with a binary suffix — K, M, G (or
  KB/KiB, MB/MiB, GB/GiB, any case) — converted to the knob's unit: ``4M`` of readahead
  is 4096 KiB, ``32K`` of rsize is 32768 bytes. A bare number is in the knob's unit.
- Choice knobs take one of their choices (case does not matter).
- Then the catalog's Validity decides (ranges, allowed sizes), with its reason.

Values are printed back (``app.vocabulary.knob_value_text``) as plain decimals in the
knob's unit (memory limits of 16 MiB and more as 64M, 1G), which this parser reads back
to the same value.
"""

from __future__ import annotations

import re

from app.knobs.catalog import SPECS
from app.knobs.model import KnobSpec, Value

MAX_TEXT = 24  # characters in one value; more is refused before any parsing
UNIT_BYTES = {"bytes": 1, "KiB": 1024}  # knobs whose values are amounts of memory
_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
_NUMBER = re.compile(r"([+-]?)([0-9]+)\s*(?:([KMG])(?:I?B)?)?", re.ASCII | re.IGNORECASE)
_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)


class BadValue(ValueError):
    """A value the knob does not take; the text names the knob and what to write."""

    def __init__(self, knob: str, problem: str) -> None:
        super().__init__(f"{knob}: {problem}")
        self.knob = knob
        self.problem = problem


def knob_spec(knob: str) -> KnobSpec:
    spec = SPECS.get(knob)
    if spec is None:
        raise BadValue(knob, f"not a knob nfs-tuner knows; known: {', '.join(SPECS)}")
    return spec


def parse_size(text: str, unit_bytes: int = 1) -> int | None:
    """'64', '512K', '1MiB', '-1' → a whole number of units of ``unit_bytes``; None if not one."""
    m = _NUMBER.fullmatch(text.strip())
    if m is None:
        return None
    sign, digits, suffix = m.groups()
    scale = _SUFFIX[(suffix or "").upper()]
    if scale == 1:
        number = int(digits)
    elif scale % unit_bytes == 0:
        number = int(digits) * (scale // unit_bytes)
    else:
        return None  # "4K" of a knob counted in MiB would not be whole
    return -number if sign == "-" else number


def _example(spec: KnobSpec) -> str:
    return ", ".join(str(v) for v in spec.default_sweep[:2]) or "a value"


def parse_value(knob: str, text: str) -> Value:
    """The value ``text`` names for ``knob``, checked against the catalog; BadValue if none."""
    spec = knob_spec(knob)
    t = text.strip()
    if not t:
        raise BadValue(knob, f"an empty value; give one, e.g. {_example(spec)}")
    if len(t) > MAX_TEXT:
        raise BadValue(knob, f"{t[:MAX_TEXT]!r}… is too long to be a value of this knob")
    validity = spec.validity
    native = t.replace("-", "–").replace(" ", "")  # "3-60", "20 %": the host's own form as typed
    if validity.is_native(native):
        return native
    if validity.choices and all(isinstance(c, str) for c in validity.choices):
        choice = next((c for c in validity.choices if str(c).lower() == t.lower()), None)
        if choice is None:
            raise BadValue(knob, validity.problem(t) or f"{t!r} is not a choice")
        return choice
    unit = UNIT_BYTES.get(spec.unit)
    number = parse_size(t, unit) if unit else int(t) if _INTEGER.fullmatch(t) else None
    if number is None:
        what = f"a whole number of {spec.unit} or a size like 64K or 1M" if unit else "a whole number"
        raise BadValue(knob, f"{t!r} is not {what}: {validity.reason}")
    problem = validity.problem(number)
    if problem:
        raise BadValue(knob, problem)
    return number


def parse_values(knob: str, text: str) -> tuple[Value, ...]:
    """Comma-separated values ("8, 16, 64"), each as parse_value reads it; no empties, no repeats."""
    items = text.split(",")
    if not text.strip():
        raise BadValue(knob, f"give at least one value, e.g. {_example(knob_spec(knob))}")
    values: list[Value] = []
    for item in items:
        if not item.strip():
            raise BadValue(knob, "an empty value between commas (or a comma at the end); remove it")
        value = parse_value(knob, item)
        if value in values:
            raise BadValue(knob, f"{value} is listed twice")
        values.append(value)
    return tuple(values)

