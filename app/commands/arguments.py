"""Typed values of the command line: every flag's parser, used as argparse ``type=``.

A refusal is an ``argparse.ArgumentTypeError`` whose text says what to give instead;
argparse prints it as ``nfs-tuner sweep: error: argument --duration: …`` and exits 2,
before any host is touched or any file opened. Host names, addresses and paths are
checked by the core's own rules (``app.hosts.remote_args``), which also guard what
hosts report, so the command line and the hosts are held to the same words.
"""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from app.hosts import remote_args
from app.hosts.remote_args import UnsafeValue, shown
from app.knobs.catalog import SPECS
from app.knobs.deadman import DEFAULT_TIMEOUT, MAX_TIMEOUT, MIN_TIMEOUT
from app.knobs.values import BadValue, parse_values
from app.output_files import is_stdout
from app.sweep.spec import SWEEPABLE, workload_kind
from app.vocabulary import parse_duration

SQLITE_MAX = 2**63 - 1  # the largest id or seed the session database stores
SYSTEM_TREES = (Path("/proc"), Path("/sys"), Path("/dev"))  # kernel files, never a database or a report
_WHOLE = re.compile(r"\+?[0-9]{1,19}", re.ASCII)


def _refuse(message: str) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(message)


def finite_positive_float(unit: str, maximum: float) -> Callable[[str], float]:
    """A finite number above 0 and at most ``maximum`` (nan, inf and 1e400 are refused)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value > 0):
            raise _refuse(f"must be a finite number of {unit} above 0, got {shown(text)}")
        if value > maximum:
            raise _refuse(f"must be at most {maximum:g} {unit}, got {shown(text)}")
        return value

    return parse


def whole_number(noun: str, minimum: int, maximum: int = SQLITE_MAX) -> Callable[[str], int]:
    """A whole number in decimal from ``minimum`` to ``maximum``; ``noun`` says what it counts."""
    bounds = f"from {minimum} to {maximum}" if maximum < SQLITE_MAX else f"from {minimum} up"

    def parse(text: str) -> int:
        t = text.strip()
        value = int(t) if _WHOLE.fullmatch(t) else None
        if value is None or not minimum <= value <= maximum:
            raise _refuse(f"must be {noun} {bounds}, got {shown(text)}")
        return value

    return parse


class KnobAssignment(NamedTuple):
    name: str
    values: str  # as typed; app.session.plan parses it again with the same rules


def knob_assignment(text: str) -> KnobAssignment:
    """``NAME=V1,V2``: a knob of the catalog and values it takes."""
    name, sep, values = text.partition("=")
    name = name.strip()
    if not sep or not name:
        raise _refuse(f"write NAME=V1,V2 (e.g. rsize=32K,1M), got {shown(text)}")
    if name not in SPECS:
        raise _refuse(f"unknown knob {shown(name)}; known knobs: {', '.join(SPECS)}")
    try:
        parse_values(name, values)
    except BadValue as exc:
        raise _refuse(str(exc)) from None
    return KnobAssignment(name, values)


WORKLOAD_NAMES = ", ".join(sorted(SWEEPABLE))  # every workload a sweep takes, as its help lists them
NO_BUDGET = "none"


def budget(text: str) -> float:
    """A time budget in seconds, '45m', '1h30m', '90s', '2h'; 'none' for no budget (infinite)."""
    if text.strip().lower() == NO_BUDGET:
        return math.inf
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise _refuse(f"{exc}; or {NO_BUDGET} for no budget") from None


def workload(text: str) -> str:
    try:
        workload_kind(text)
    except ValueError as exc:
        raise _refuse(str(exc)) from None
    return text


def _remote(check: Callable[[str, str], str], what: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        try:
            return check(text, what)
        except UnsafeValue as exc:
            raise _refuse(str(exc)) from None

    return parse


host_name = _remote(remote_args.host_name, "host name")
address = _remote(remote_args.address, "address")
export_path = _remote(remote_args.absolute_path, "export path")


def _local_path(text: str, what: str) -> Path:
    """``text`` as a path on this machine, refused if empty or inside /proc, /sys or /dev."""
    if not text.strip():
        raise _refuse(f"{what} is empty; give a path")
    path = Path(text).expanduser()
    real = path.resolve()  # a symlink into /proc is /proc
    for tree in SYSTEM_TREES:
        if real == tree or tree in real.parents:
            raise _refuse(f"{what} {shown(text)} is in {tree}, where the kernel's files live; "
                          "give a path on a disk, e.g. in your home directory")  # fmt: skip
    parent = real.parent
    if parent.exists() and not parent.is_dir():
        raise _refuse(f"{what} {shown(text)}: {parent} is not a directory")
    return path


def _checked(parse: Callable[[str], str], what: str) -> Callable[[str], str]:
    """``parse``, with the file system's own refusals (a name too long, …) said as a usage error."""

    def checked(text: str) -> str:
        if "\0" in text:
            raise _refuse(f"{what} {shown(text)} holds a NUL character")
        try:
            return parse(text)
        except (OSError, RuntimeError) as exc:  # RuntimeError: ~user that has no home, a symlink loop
            raise _refuse(f"{what} {shown(text)}: {getattr(exc, 'strerror', None) or exc}") from None

    return checked


def _file(what: str, example: str, *, stdout: bool = False) -> Callable[[str], str]:
    """A file to open or create: never in /proc, /sys or /dev, never a directory or a device;
    ``stdout``: ``-`` means standard output (app.output_files.STDOUT)."""

    def parse(text: str) -> str:
        if stdout and is_stdout(text):
            return text
        path = _local_path(text, what)
        if path.is_dir():
            raise _refuse(f"{what} {shown(text)} is a directory; give a file in it, e.g. {path / example}")
        if path.exists() and not path.is_file():
            raise _refuse(f"{what} {shown(text)} is not a regular file")
        return str(path)

    return _checked(parse, what)


db_path = _file("the session database", "sessions.db")
report_file = _file("the report", "report.html", stdout=True)
session_file = _file("the session file", "session.db", stdout=True)


def _output_dir(text: str) -> str:
    path = _local_path(text, "the directory to write")
    if path.exists() and not path.is_dir():
        raise _refuse(f"the directory to write {shown(text)} exists and is not a directory")
    return str(path)


def _ssh_config(text: str) -> str:
    """An OpenSSH config: a regular file that exists, or /dev/null (no config at all, as ``ssh -F``)."""
    if not text.strip():
        raise _refuse("the SSH config is empty; give a file, e.g. ~/.ssh/config")
    path = Path(text).expanduser()
    if path == Path(os.devnull):
        return str(path)
    if not path.exists():
        raise _refuse(f"no such file: {shown(text)}; give the OpenSSH config your hosts are in, e.g. ~/.ssh/config")
    if not path.is_file():
        raise _refuse(f"the SSH config {shown(text)} is not a regular file")
    return str(path)


output_dir = _checked(_output_dir, "the directory to write")
ssh_config = _checked(_ssh_config, "the SSH config")

session_id = whole_number("a session id, a whole number", 1)
journal_id = whole_number("a journal entry id, a whole number", 1)


def deadman_argument(p: argparse.ArgumentParser) -> None:
    """How long the hosts wait for a silent nfs-tuner before they put its changes back themselves."""
    p.add_argument("--deadman-timeout", type=whole_number("a whole number of seconds", MIN_TIMEOUT, MAX_TIMEOUT),
                   default=int(DEFAULT_TIMEOUT), metavar="S",
                   help=f"a host puts every change back once nfs-tuner has been silent this long, e.g. killed or "
                        f"cut off ({MIN_TIMEOUT}–{MAX_TIMEOUT}, default {DEFAULT_TIMEOUT:g})")


def host_wait_argument(p: argparse.ArgumentParser) -> None:
    """How long a run waits for a host that stopped answering before it stops (resumable)."""
    p.add_argument("--host-wait", type=whole_number("a whole number of seconds", 0, 3600), default=120, metavar="S",
                   help="a host that stops answering mid-run (a cable pulled, a reboot) is waited for this long, and "
                        "its trial run again when it answers; past it the run stops, resumable (0–3600, default 120)")


# The opt-ins (app.session.choices.OPT_INS) as the command line names them: its flags, and the words of a refusal.
OPT_IN_FLAGS = {"async": "--async-opt-in", "restart": "--restart-opt-in"}


def opt_in_arguments(p: argparse.ArgumentParser) -> None:
    """The two opt-ins a run's riskier knobs need, the same on every command that changes hosts."""
    p.add_argument(OPT_IN_FLAGS["async"], action="store_true", help="allow export_sync=async (may lose acknowledged writes)")
    p.add_argument(OPT_IN_FLAGS["restart"], action="store_true",
                   help="allow max_block_size, which restarts nfsd for each change (NFSv4 clients wait out its "
                        "grace period)")
