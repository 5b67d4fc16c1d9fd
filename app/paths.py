"""Where nfs-tuner keeps its files on the admin's machine."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "nfs-tuner"
DB_ENV = "NFS_TUNER_DB"


def data_dir() -> Path:
    return platformdirs.user_data_path(APP_NAME, appauthor=False)


def default_db_path() -> Path:
    """The session database: $NFS_TUNER_DB if set, else the user data dir."""
    return chosen_db_path(None) or data_dir() / "sessions.db"


def resolve_db_path(cli_value: str | None) -> Path:
    """--db wins over the environment, which wins over the default."""
    return chosen_db_path(cli_value) or default_db_path()


def chosen_db_path(cli_value: str | None) -> Path | None:
    """The session database the admin named (--db, else $NFS_TUNER_DB); None when neither names one."""
    if cli_value:
        return Path(cli_value).expanduser()
    env = os.environ.get(DB_ENV, "").strip()
    return Path(env).expanduser() if env else None


def known_hosts_path() -> Path:
    """nfs-tuner's own known_hosts, where trust-on-first-use keys are added."""
    return data_dir() / "known_hosts"


def log_dir() -> Path:
    return platformdirs.user_log_path(APP_NAME, appauthor=False)
