"""The command line as plain data: commands, their options and positionals, what each value is.

Read from argparse's own objects (its private ``_actions`` and subparser maps, as shtab and
argparse-manpage do), so the completion scripts and the man page follow every change of
the parser without a second list to keep.
"""

from __future__ import annotations

import argparse
import enum
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from app.commands import arguments


class Kind(enum.Enum):
    """What a value is, which decides how a shell completes it."""

    NONE = "none"  # a flag: no value
    TEXT = "text"  # free text: nothing to offer
    CHOICE = "choice"  # one of ``choices``
    FILE = "file"  # a local file
    DIR = "dir"  # a local directory
    HOST = "host"  # an SSH host name (from the SSH config)
    SESSION = "session"  # a session id (from the session database)
    KNOB = "knob"  # NAME=V1,V2 of the knob catalog
    WORKLOAD = "workload"  # a workload name


# The parser's value types, by identity: a new option with one of these types completes at once.
_TYPE_KINDS: dict[Callable[[str], object], Kind] = {
    arguments.host_name: Kind.HOST,
    arguments.session_id: Kind.SESSION,
    arguments.knob_assignment: Kind.KNOB,
    arguments.workload: Kind.WORKLOAD,
    arguments.db_path: Kind.FILE,
    arguments.report_file: Kind.FILE,
    arguments.session_file: Kind.FILE,
    arguments.ssh_config: Kind.FILE,
    arguments.output_dir: Kind.DIR,
}
_METAVAR_KINDS = {"FILE": Kind.FILE, "DIR": Kind.DIR, "HOST": Kind.HOST}  # untyped values, by their name


@dataclass(frozen=True)
class Option:
    """An option (``flags`` set) or a positional (``flags`` empty)."""

    flags: tuple[str, ...]
    dest: str
    kind: Kind
    metavar: str
    help: str
    choices: tuple[str, ...] = ()
    required: bool = False
    repeats: bool = False  # may be given more than once (append, count) or takes several values
    optional_value: bool = False  # nargs="?": the value may be left out

    @property
    def takes_value(self) -> bool:
        return self.kind is not Kind.NONE

    @property
    def long(self) -> str:
        """The flag a script or a page names it by: the first long one."""
        return next((f for f in self.flags if f.startswith("--")), self.flags[0] if self.flags else self.metavar)


@dataclass(frozen=True)
class Command:
    """``nfs-tuner`` itself or one of its subcommands, at any depth."""

    path: tuple[str, ...]  # () for nfs-tuner, ("sessions", "show") for a sub-subcommand
    help: str  # the one line its parent lists
    description: str
    options: tuple[Option, ...]
    positionals: tuple[Option, ...]
    subcommands: tuple[Command, ...]
    subcommand_metavar: str = ""

    @property
    def name(self) -> str:
        return " ".join(("nfs-tuner", *self.path))

    def walk(self) -> Iterator[Command]:
        """This command and every one below it, parents first."""
        yield self
        for sub in self.subcommands:
            yield from sub.walk()

    def child(self, name: str) -> Command | None:
        return next((c for c in self.subcommands if c.path[-1] == name), None)

    def value_options(self) -> tuple[Option, ...]:
        return tuple(o for o in self.options if o.takes_value)


def _text(value: object) -> str:
    return "" if value is None or value == argparse.SUPPRESS else str(value)


def _help(action: argparse.Action, parser: argparse.ArgumentParser) -> str:
    """The help text as --help prints it (``%(default)s`` and the like filled in)."""
    text = _text(action.help)
    if "%" in text:
        params = {**vars(action), "prog": parser.prog}
        params = {k: getattr(v, "__name__", v) for k, v in params.items()}
        text = text % params
    return " ".join(text.split())


def _kind(action: argparse.Action) -> Kind:
    if action.nargs == 0:
        return Kind.NONE
    if action.choices is not None:
        return Kind.CHOICE
    kind = _TYPE_KINDS.get(action.type) if action.type is not None else None  # type: ignore[arg-type]
    if kind is not None:
        return kind
    return _METAVAR_KINDS.get(_text(action.metavar), Kind.TEXT)


def _option(action: argparse.Action, parser: argparse.ArgumentParser) -> Option:
    metavar = action.metavar if isinstance(action.metavar, str) else ""
    if not metavar and action.nargs != 0:
        metavar = action.dest.upper() if action.option_strings else action.dest
    return Option(
        flags=tuple(action.option_strings),
        dest=action.dest,
        kind=_kind(action),
        metavar=metavar,
        help=_help(action, parser),
        choices=tuple(str(c) for c in action.choices) if action.choices is not None else (),
        required=bool(action.required) and action.nargs not in ("?", "*"),
        repeats=isinstance(action, argparse._AppendAction | argparse._CountAction) or action.nargs in ("*", "+"),
        optional_value=action.nargs == "?",
    )


def read(parser: argparse.ArgumentParser, path: tuple[str, ...] = (), help: str = "") -> Command:
    """The tree under ``parser``; options whose help is suppressed are left out, as --help leaves them."""
    options: list[Option] = []
    positionals: list[Option] = []
    subcommands: list[Command] = []
    sub_metavar = ""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: _text(a.help) for a in action._choices_actions}
            sub_metavar = _text(action.metavar) or "COMMAND"
            for name, sub in action.choices.items():
                subcommands.append(read(sub, (*path, name), helps.get(name, "")))
        elif action.help != argparse.SUPPRESS:
            (options if action.option_strings else positionals).append(_option(action, parser))
    return Command(
        path=path, help=" ".join(help.split()), description=" ".join(_text(parser.description).split()),
        options=tuple(options), positionals=tuple(positionals), subcommands=tuple(subcommands),
        subcommand_metavar=sub_metavar,
    )


def command_line() -> Command:
    """nfs-tuner's whole command line, from the parser both faces use."""
    from app.cli import build_parser  # the parser lists this package's own command: import it when asked

    return read(build_parser())
