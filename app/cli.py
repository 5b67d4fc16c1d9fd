"""The headless face of nfs-tuner: argument parsing and the subcommands.

Each subcommand lives in its own module under ``app.commands`` and exposes
``register(subparsers)``, which adds its parser and sets ``func``. The GUI entry
point (``ui.entry``) parses with the same parser, so both faces agree on flags.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sqlite3
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from app import __version__
from app.commands import arguments
from app.commands.common import UsageError
from app.output_files import OutputError, OutputExists
from app.paths import DB_ENV, log_dir, resolve_db_path
from app.store.errors import StoreError
from app.terminal_text import terminal_safe_streams

DEBUG_ENV = "NFS_TUNER_DEBUG"  # set: an unexpected exception shows its traceback (and tests see it raised)
LOG_NAME = "nfs-tuner.log"  # the GUI's log file too

# Modules that add a subcommand; imported when the parser is built.
COMMAND_MODULES: tuple[str, ...] = (
    "app.commands.discover",
    "app.commands.helper",
    "app.commands.knobs",
    "app.commands.journal",
    "app.commands.report",
    "app.commands.sessions",
    "app.commands.study",
    "app.commands.sweep",
    "app.shell.completion",
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
        type=arguments.db_path,
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
    """The parsed command line; a bad value exits 2 with argparse's one-line usage error."""
    with terminal_safe_streams():  # usage errors repeat what was typed
        return build_parser().parse_args(argv)


def run(args: argparse.Namespace) -> int:
    """Run a headless subcommand; returns the process exit code."""
    func = getattr(args, "func", None)
    if func is None:
        build_parser().print_help()
        return 2
    if not os.environ.get(DEBUG_ENV):
        _log_to_file()
    with terminal_safe_streams():  # host-supplied text never drives the terminal
        try:
            return int(func(args) or 0)
        except UsageError as exc:  # bad input the parser could not see (a missing file, …)
            print(f"nfs-tuner: {exc}", file=sys.stderr)
            return 2
        except OutputExists as exc:  # the face names its own way to replace it
            print(f"nfs-tuner: {exc} Or add --force to replace it.", file=sys.stderr)
            return 1
        except (StoreError, OutputError) as exc:  # its text names the file and what to do
            print(f"nfs-tuner: {exc}", file=sys.stderr)
            return 1
        except sqlite3.Error as exc:  # SQLite's own words name no file: say which ones it may be
            db = resolve_db_path(getattr(args, "db", None))
            print(f"nfs-tuner: {exc}; check that the session database ({db}, see --db and ${DB_ENV}) and any file "
                  "you asked to write are in directories you may write", file=sys.stderr)  # fmt: skip
            return 1
        except OSError as exc:  # a file the admin named: unwritable, missing, on a full disk
            where = f": {exc.filename}" if exc.filename else ""
            print(f"nfs-tuner: {exc.strerror or exc}{where}; check the path and its permissions", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("\nnfs-tuner: interrupted", file=sys.stderr)
            return 130
        except Exception as exc:
            if os.environ.get(DEBUG_ENV):
                raise
            return internal_error(exc)


def _log_to_file() -> None:
    """The core's warnings (with tracebacks) go to the log file, not over the commands' one-line messages."""
    root = logging.getLogger()
    if root.handlers:  # configured already: an earlier run, a test's log capture
        return
    try:
        path = log_dir() / LOG_NAME
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        return  # logging's last resort still says them on stderr
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)


def log_traceback(exc: BaseException) -> Path | None:
    """``exc``'s traceback appended to the log file the admin can send; its path, or None when it cannot be written."""
    text = "".join(traceback.format_exception(exc))
    try:
        log = log_dir() / LOG_NAME
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a", encoding="utf-8") as f:
            f.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} nfs-tuner {__version__}\n{text}")
    except OSError:
        return None
    return log


def internal_error(exc: Exception) -> int:
    """A bug: one line on the terminal, the traceback in the log file the admin can send."""
    log = log_traceback(exc)
    if log is not None:
        where = f"the traceback is in {log}"
    else:
        sys.stderr.write("".join(traceback.format_exception(exc)))
        where = "the traceback is above"
    print(f"nfs-tuner: internal error ({type(exc).__name__}: {exc}); please report it, {where} "
          f"(set {DEBUG_ENV}=1 to see it raised)", file=sys.stderr)  # fmt: skip
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m app``: the headless CLI only (never opens a window); returns the exit code."""
    try:
        args = parse(argv)
    except SystemExit as exc:  # --help, --version, or a usage error argparse has printed
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 2
    if args.install_desktop_entry:
        from app.desktop_entry import install_desktop_entry

        return install_desktop_entry()
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
