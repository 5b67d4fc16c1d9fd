"""The headless face of nfs-tuner: argument parsing and the subcommands.

Each subcommand lives in its own module under ``app.commands`` and exposes
``register(subparsers)``, which adds its parser and sets ``func``. The GUI entry
point (``ui.entry``) parses with the same parser, so both faces agree on flags.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from app import __version__
from app.commands.common import UsageError
from app.paths import DB_ENV
from app.terminal_text import terminal_safe_streams

# Modules that add a subcommand; imported when the parser is built.
COMMAND_MODULES: tuple[str, ...] = (
    "app.commands.discover",
    "app.commands.knobs",
    "app.commands.journal",
    "app.commands.report",
    "app.commands.sessions",
    "app.commands.sweep",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nfs-tuner",
        description=(
            "Tune an NFS server and its clients: discover them over SSH, sweep the "
            "tunables with real workloads, and get a recommendation with evidence. "
            "With no command, the desktop wizard opens."
        ),
    )
    parser.add_argument("--version", action="version", version=f"nfs-tuner {__version__}")
    parser.add_argument(
        "--db",
        metavar="PATH",
        help=f"session database (default: ${DB_ENV}, else the user data dir's nfs-tuner/sessions.db)",
    )
    parser.add_argument(
        "--review",
        nargs="?",
        const="",
        metavar="FILE",
        help="open the session browser (on FILE, or on the session database)",
    )
    parser.add_argument(
        "--ssh-config",
        dest="gui_ssh_config",  # the commands take their own --ssh-config after their name
        metavar="FILE",
        help="for the wizard: the SSH config to read hosts from (default: ~/.ssh/config)",
    )
    parser.add_argument(
        "--install-desktop-entry",
        action="store_true",
        help="install the .desktop file, AppStream metainfo and icons for this user",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def run(args: argparse.Namespace) -> int:
    """Run a headless subcommand; returns the process exit code."""
    func = getattr(args, "func", None)
    if func is None:
        build_parser().print_help()
        return 2
    try:
        with terminal_safe_streams():  # host-supplied text never drives the terminal
            return int(func(args) or 0)
    except UsageError as exc:  # bad input the parser could not see (a missing file, …)
        print(f"nfs-tuner: {exc}", file=sys.stderr)
        return 2


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m app``: the headless CLI only (never opens a window)."""
    args = parse(argv)
    if args.install_desktop_entry:
        from app.desktop_entry import install_desktop_entry

        return install_desktop_entry()
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
