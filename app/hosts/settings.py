"""How nfs-tuner reaches hosts: which SSH config and known_hosts, which limits."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.paths import known_hosts_path

# sshd's MaxSessions defaults to 10; stay under it so an admin's own ssh still fits.
DEFAULT_MAX_CHANNELS = 8


@dataclass(frozen=True)
class SshSettings:
    """Connection settings shared by every host of a session.

    ``config_file`` None means ``~/.ssh/config``; ``user_known_hosts`` None means the
    config's UserKnownHostsFile, else ``~/.ssh/known_hosts``. Host-key checking itself
    has no setting: it is always strict.
    """

    config_file: Path | None = None
    app_known_hosts: Path | None = None
    user_known_hosts: tuple[Path, ...] | None = None
    connect_timeout: float = 15.0
    command_timeout: float = 120.0
    keepalive_interval: float = 15.0
    keepalive_count_max: int = 3
    max_channels: int = DEFAULT_MAX_CHANNELS
    use_agent: bool = True
    client_keys: tuple[Path, ...] | None = None  # None: the config's IdentityFile + defaults

    @property
    def app_known_hosts_file(self) -> Path:
        return self.app_known_hosts or known_hosts_path()
