"""``nfs-tuner completion SHELL``: print the completion script for bash, zsh or fish.

The scripts are made from the parser (``app.shell.model``) each time, so they complete
exactly the commands and options this version has. Knob names and values and the
workloads are written into them; the hosts of the SSH config and the sessions of the
database change, so the scripts ask for them: ``nfs-tuner completion --values hosts|sessions``
(an internal interface, left out of --help).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app import __version__
from app.commands.common import UsageError, ssh_config_path
from app.discovery import hosts_from_ssh_config
from app.paths import resolve_db_path
from app.shell import bash, fish, model, zsh
from app.store import Store, StoreError

SCRIPTS: dict[str, Callable[[model.Command, str], str]] = {"bash": bash.script, "zsh": zsh.script, "fish": fish.script}
# Where each shell's own package loads a completion from (the .deb installs them there).
SYSTEM_PATHS = {
    "bash": "/usr/share/bash-completion/completions/nfs-tuner",
    "zsh": "/usr/share/zsh/vendor-completions/_nfs-tuner",
    "fish": "/usr/share/fish/vendor_completions.d/nfs-tuner.fish",
}
VALUES = ("hosts", "sessions")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "completion", help="print the shell completion script for bash, zsh or fish",
        description="Print a completion script for SHELL to stdout: subcommands, options, knob names and "
                    "values, workloads, the SSH config's hosts and the database's session ids. For this shell "
                    "only: eval \"$(nfs-tuner completion bash)\"; for good: save it where the shell loads "
                    "completions (the Debian package installs all three).",
    )  # fmt: skip
    p.add_argument("shell", nargs="?", choices=tuple(SCRIPTS), metavar="SHELL", help="bash, zsh or fish")
    # What the scripts ask for while completing; one value per line, a tab before its description.
    p.add_argument("--values", choices=VALUES, help=argparse.SUPPRESS)
    p.add_argument("--ssh-config", metavar="FILE", help=argparse.SUPPRESS)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    if args.values:
        lines = host_lines(args.ssh_config) if args.values == "hosts" else session_lines(args.db)
        sys.stdout.write("".join(f"{line}\n" for line in lines))
        return 0
    if not args.shell:
        print("nfs-tuner completion: name a SHELL: bash, zsh or fish", file=sys.stderr)
        return 2
    sys.stdout.write(script(args.shell))
    return 0


def script(shell: str) -> str:
    return SCRIPTS[shell](model.command_line(), __version__)


def host_lines(ssh_config: str | None) -> list[str]:
    """The Host names of the SSH config, as the wizard and ``discover --list-hosts`` list them."""
    try:
        return hosts_from_ssh_config(ssh_config_path(ssh_config))
    except (UsageError, OSError, RuntimeError):  # a half-typed path: nothing to offer, never an error in the middle of a line
        return []


def session_lines(db: str | None) -> list[str]:
    """``ID<tab>date state hosts``, newest first; nothing when there is no database yet (none is made)."""
    path = resolve_db_path(db)
    if not Path(path).is_file():
        return []
    try:
        with Store(path, readonly=True) as store:
            sessions = store.list_sessions()
    except (StoreError, OSError, ValueError):
        return []
    return [
        f"{s.id}\t{time.strftime('%Y-%m-%d %H:%M', time.localtime(s.created))} {s.state.value} {' '.join(s.hosts)}"
        for s in sessions
    ]
