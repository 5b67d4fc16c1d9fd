"""Host-key trust: the user's known_hosts files plus nfs-tuner's own, strictly checked.

Keys are looked up in every file; an unknown key may be trusted explicitly (it is then
appended to the app's file), a changed key never is.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh

from app.hosts.errors import ChangedHostKey, UnknownHostKey

DEFAULT_SSH_PORT = 22


def host_pattern(host: str, port: int) -> str:
    """The known_hosts spelling of a host, as OpenSSH writes it."""
    return host if port == DEFAULT_SSH_PORT else f"[{host}]:{port}"


def _match_port(port: int) -> int | None:
    # asyncssh matches the default port as None, other ports as "[host]:port".
    return None if port == DEFAULT_SSH_PORT else port


@dataclass
class KnownHosts:
    """The known_hosts files consulted for one connection.

    ``user_files`` are the user's (``~/.ssh/known_hosts`` or the config's
    UserKnownHostsFile); ``app_file`` is nfs-tuner's own, the only one written to.
    """

    app_file: Path
    user_files: tuple[Path, ...] = field(default_factory=tuple)

    @property
    def files(self) -> tuple[Path, ...]:
        return (*self.user_files, self.app_file)

    def _texts(self) -> list[tuple[Path, str]]:
        out: list[tuple[Path, str]] = []
        for path in self.files:
            try:
                out.append((path, path.read_text(encoding="utf-8", errors="replace")))
            except OSError:
                continue  # a missing file simply knows no hosts
        return out

    def load(self) -> asyncssh.SSHKnownHosts:
        """All trusted keys, for asyncssh's own check during key exchange."""
        known = asyncssh.SSHKnownHosts()
        for _path, text in self._texts():
            for line in text.splitlines():
                try:
                    known.load(line)
                except (ValueError, asyncssh.KeyImportError):
                    continue  # one bad line must not hide the others
        return known

    def find(self, host: str, addr: str, port: int) -> list[tuple[Path, int]]:
        """Every FILE:LINE whose entry names this host (any key type)."""
        found: list[tuple[Path, int]] = []
        for path, text in self._texts():
            for number, line in enumerate(text.splitlines(), start=1):
                stripped = line.strip()
                if not stripped or stripped.startswith("#"):
                    continue
                try:
                    one = asyncssh.import_known_hosts(stripped)
                    keys, ca_keys, *_ = asyncssh.match_known_hosts(
                        one, host, addr, _match_port(port)
                    )
                except (ValueError, asyncssh.KeyImportError):
                    continue
                if keys or ca_keys:
                    found.append((path, number))
        return found

    def verdict(self, host: str, addr: str, port: int, key: asyncssh.SSHKey) -> UnknownHostKey | ChangedHostKey:
        """Classify a key asyncssh did not find trusted: unknown host, or changed key."""
        key_type = key.get_algorithm()
        fingerprint = key.get_fingerprint("sha256")
        known_at = self.find(host, addr, port)
        if known_at:
            return ChangedHostKey(host, port, key_type, fingerprint, known_at)
        openssh = key.export_public_key("openssh").decode("ascii").split()
        line = f"{host_pattern(host, port)} {openssh[0]} {openssh[1]}"
        return UnknownHostKey(host, port, key_type, fingerprint, line)

    def trust(self, unknown: UnknownHostKey) -> Path:
        """Append an explicitly accepted key to the app's known_hosts (trust on first use)."""
        if not isinstance(unknown, UnknownHostKey):
            raise TypeError("only a first-seen (unknown) host key can be trusted, never a changed one")
        self.app_file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.app_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="ascii") as out:
            out.write(unknown.known_hosts_line + "\n")
        return self.app_file


def user_known_hosts_files(config_files: Sequence[str] | None) -> tuple[Path, ...]:
    """The user's files: the config's UserKnownHostsFile/GlobalKnownHostsFile, else the default."""
    if config_files:
        return tuple(Path(os.path.expanduser(name)) for name in config_files)
    return (Path("~/.ssh/known_hosts").expanduser(),)
