"""Pieces every host-facing subcommand shares."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.commands import arguments


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
