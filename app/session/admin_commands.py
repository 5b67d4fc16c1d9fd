"""Commands nfs-tuner prints for the admin to run: whole, so that each runs as printed.

A command names the session database when it is not the one a plain ``nfs-tuner`` opens
(``--db``), and the SSH config the hosts were reached through (``--ssh-config``), each
path quoted for the shell. ``tests/integration/test_printed_commands.py`` runs every command the
code prints, as printed.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from app.paths import resolve_db_path

PROGRAM = "nfs-tuner"


def command_line(*words: str, db: Path | None = None, ssh_config: Path | None = None) -> str:
    """``nfs-tuner [--db DB] WORDS… [--ssh-config FILE]``: ``db`` only when not the default one (--db goes
    before the command, --ssh-config after it, as the parser takes them)."""
    argv = [PROGRAM]
    if db is not None and db.expanduser().resolve() != resolve_db_path(None).expanduser().resolve():
        argv += ["--db", str(db)]
    argv += words
    if ssh_config is not None:
        argv += ["--ssh-config", str(ssh_config)]
    return shlex.join(argv)


def resume_command(session_id: int, *, db: Path | None = None, ssh_config: Path | None = None) -> str:
    """The command that goes on with an interrupted session (a sweep's or a study's)."""
    return command_line("sweep", "--resume", str(session_id), db=db, ssh_config=ssh_config)
