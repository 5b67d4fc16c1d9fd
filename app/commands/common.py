"""Pieces every host-facing subcommand shares."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from app.commands import arguments
from app.paths import resolve_db_path
from app.store import Store


class UsageError(Exception):
    """Bad command-line input; the message tells the admin what to give instead."""


def add_ssh_options(p: Any) -> None:
    p.add_argument("--ssh-config", type=arguments.ssh_config, metavar="FILE", help="OpenSSH config (default ~/.ssh/config)")
    p.add_argument("--trust-new-keys", action="store_true", help="trust host keys seen for the first time")


def ssh_config_path(value: str | None) -> Path | None:
    """The --ssh-config file, checked; None means ~/.ssh/config."""
    if not value:
        return None
    config = Path(value).expanduser()
    if not config.is_file():
        raise UsageError(f"SSH config {config} does not exist or is not a file")
    return config


def open_store(args: argparse.Namespace, *, readonly: bool = False, create: bool = False) -> Store:
    """The session database (--db, $NFS_TUNER_DB, the default). Only a command that records something new
    (``create``) makes one where there was none; the others meet MissingDatabaseError, which says so."""
    return Store(resolve_db_path(getattr(args, "db", None)), readonly=readonly, create=create)


def force_argument(p: argparse.ArgumentParser, what: str) -> None:
    """--force: the same words wherever a command writes a file the admin names."""
    p.add_argument("--force", action="store_true", help=f"replace {what} if it exists (else an existing one is refused)")
