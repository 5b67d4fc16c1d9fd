"""The words a completion offers that are known when the script is written."""

from __future__ import annotations

from app.knobs.catalog import SPECS
from app.shell.model import Kind, Option
from app.sweep.spec import SWEEPABLE
from app.vocabulary import knob_value_text


def knob_names() -> list[str]:
    """``NAME=`` for every knob: what ``--knob`` completes first."""
    return [f"{name}=" for name in SPECS]


def knob_values() -> list[str]:
    """``NAME=V1,V2`` (the values a sweep tries by default), then ``NAME=V`` for each value a knob takes."""
    words: list[str] = []
    for name, spec in SPECS.items():
        tried = ",".join(knob_value_text(name, v) for v in spec.default_sweep)
        words.append(f"{name}={tried}")
        words += [f"{name}={knob_value_text(name, c)}" for c in spec.validity.choices if str(c) != tried]
    return list(dict.fromkeys(words))


def workload_words() -> list[str]:
    return sorted(SWEEPABLE)


def static_words(option: Option) -> list[str] | None:
    """The words written into a script for this value (a choice, a workload), else None."""
    if option.kind is Kind.CHOICE:
        return list(option.choices)
    if option.kind is Kind.WORKLOAD:
        return workload_words()
    return None
