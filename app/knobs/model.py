"""What a tunable is: where it lives, which values are valid and why, how risky it is."""

from __future__ import annotations

import re

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from app.hosts.remote_args import UnsafeValue, absolute_path

Value = int | str


class Scope(StrEnum):
    """Where a knob's change acts: what every sentence about it says (app.vocabulary.where_text)."""

    SERVER = "server"  # the NFS server: every client of it sees the change
    TEST_MOUNT = "test mount"  # nfs-tuner's own mount on each client: nothing else there works under it
    CLIENT = "whole client"  # host-wide on each client: every filesystem or NFS connection there, while set
    LINK = "link"  # both ends of the server–client path


class Safety(StrEnum):
    SAFE = "safe"
    DATA_RISK = "data-risk"  # may lose acknowledged writes: explicit opt-in
    CONNECTIVITY = "connectivity"  # may cut the network, the admin's SSH included
    MEMORY = "memory"  # costs RAM on the host
    SERVICE = "service"  # a wrong value stops or starves a service
    COHERENCE = "cache-coherence"  # a client may see stale files another client changed
    RESTART = "service-restart"  # restarts the service: every client waits out NFSv4's grace period; opt-in


@dataclass(frozen=True)
class Validity:
    """A range or a set of values, with the reason the admin is shown on refusal."""

    reason: str
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[Value, ...] = ()
    # The host's own form of the setting when the knob's values cannot express it, as discovery reads it and
    # the target sets it back: a dirty-page ratio ("20%"), the kernel's attribute-cache range ("3–60").
    native: str | None = None

    def is_native(self, value: Value) -> bool:
        return self.native is not None and isinstance(value, str) and re.fullmatch(self.native, value, re.ASCII) is not None

    def problem(self, value: Value) -> str | None:
        """None if ``value`` is valid, else a sentence saying what is allowed."""
        if self.is_native(value):
            return None
        if self.choices:
            if value in self.choices or str(value) in {str(c) for c in self.choices}:
                return None
            return f"{value!r} is not one of {', '.join(map(str, self.choices))}: {self.reason}"
        if not isinstance(value, int) or isinstance(value, bool):
            return f"{value!r} is not a whole number: {self.reason}"
        if self.minimum is not None and value < self.minimum:
            return f"{value} is below {self.minimum}: {self.reason}"
        if self.maximum is not None and value > self.maximum:
            return f"{value} is above {self.maximum}: {self.reason}"
        return None

    def describe(self) -> str:
        if self.choices:
            return ", ".join(map(str, self.choices))
        return f"{_short(self.minimum)}–{_short(self.maximum)}"


def _short(bound: int | None) -> str:
    """A bound of a million or more in whole MiB or GiB as the value parser takes it (1M–64G), else as is."""
    return (size_text(bound) if bound is not None and bound >= 1 << 20 else None) or str(bound)


def size_text(value: int) -> str | None:
    """'64M', '1G': a byte count in whole GiB or MiB as the value parser reads it; None when not whole."""
    for suffix, scale in (("G", 1 << 30), ("M", 1 << 20)):
        if value and value % scale == 0:
            return f"{value // scale}{suffix}"
    return None


@dataclass(frozen=True)
class KnobSpec:
    name: str
    title: str
    scope: Scope
    unit: str
    validity: Validity
    safety: Safety
    safety_note: str
    default_sweep: tuple[Value, ...] = ()


@dataclass(frozen=True)
class Step:
    """One root command on a host: argv (never a shell string) and its stdin."""

    argv: tuple[str, ...]
    input: str | None = None
    check: bool = True  # False: a failure is expected sometimes (e.g. umount of what is gone)
    # Only when the step before it failed (umount -l after a umount that could not): the controller skips it
    # otherwise; the dead-man switch, replaying blind, runs it anyway (it then finds its work done).
    fallback: bool = False

    def to_json(self) -> dict[str, object]:
        return {"argv": list(self.argv), "input": self.input, "check": self.check}


def write_file(path: str, value: Value) -> Step:
    # `tee PATH` rather than a shell redirect: the sudoers rule can name exactly
    # which files nfs-tuner may write.
    return Step(("tee", remote_value(absolute_path, path, "file to write")), f"{value}\n")


class KnobError(Exception):
    """A knob could not be read, applied or reverted; the message says what to do."""


class InvalidValue(KnobError):
    pass


def remote_value(check: Callable[[str, str], str], value: str, what: str) -> str:
    """``check(value, what)`` from app.hosts.remote_args, its refusal as a KnobError (a broken trial, said)."""
    try:
        return check(value, what)
    except UnsafeValue as exc:
        raise KnobError(str(exc)) from None


class ReadOnlyHost(KnobError):
    def __init__(self, host: str, knob: str, sudoers: str) -> None:
        super().__init__(
            f"{knob} is read-only on {host}: this login is neither root nor allowed passwordless sudo. "
            f"To let nfs-tuner change it, add with visudo: {sudoers}"
        )


@dataclass
class Applied:
    """What really took: the kernel may clamp or negotiate a value."""

    knob: str
    host: str
    target: str
    old: Value | None
    requested: Value
    effective: Value | None
    journal_id: int
    notes: list[str] = field(default_factory=list)

    @property
    def clamped(self) -> bool:
        return self.effective is not None and str(self.effective) != str(self.requested)


def as_int(text: str, what: str) -> int:
    try:
        return int(text.strip().split()[0])
    except (ValueError, IndexError):
        raise KnobError(f"could not read {what}: got {text.strip()[:80]!r}") from None


def first_line(outputs: Sequence[str]) -> str:
    return next((o.strip() for o in outputs if o.strip()), "")
