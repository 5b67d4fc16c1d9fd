"""Host-key verdicts, privilege probe, sudoers lines, SSH config hosts: no network."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from pathlib import Path

import asyncssh
import pytest

from app.hosts import ChangedHostKey, KnownHosts, PrivilegeMode, UnknownHostKey, config_hosts
from app.hosts.privilege import HELPER_PATH, parse_probe, sudoers_line


def _line(pattern: str, key: asyncssh.SSHKey) -> str:
    kind, data = key.export_public_key("openssh").decode().split()[:2]
    return f"{pattern} {kind} {data}\n"


def _hashed(host: str) -> str:
    salt = os.urandom(20)
    digest = hmac.new(salt, host.encode(), hashlib.sha1).digest()
    return f"|1|{base64.b64encode(salt).decode()}|{base64.b64encode(digest).decode()}"


@pytest.fixture(scope="module")
def keys() -> tuple[asyncssh.SSHKey, asyncssh.SSHKey]:
    return asyncssh.generate_private_key("ssh-ed25519"), asyncssh.generate_private_key("ssh-ed25519")


def test_unknown_then_trusted(tmp_path: Path, keys: tuple[asyncssh.SSHKey, asyncssh.SSHKey]) -> None:
    key = keys[0]
    kh = KnownHosts(tmp_path / "app" / "known_hosts", (tmp_path / "missing",))
    verdict = kh.verdict("server1", "10.0.0.1", 2222, key)
    assert isinstance(verdict, UnknownHostKey)
    assert verdict.fingerprint == key.get_fingerprint("sha256")
    assert verdict.known_hosts_line.startswith("[server1]:2222 ssh-ed25519 ")
    kh.trust(verdict)
    assert (kh.app_file.stat().st_mode & 0o777) == 0o600
    assert key.convert_to_public() in asyncssh.match_known_hosts(kh.load(), "server1", "10.0.0.1", 2222)[0]
    assert kh.find("server1", "10.0.0.1", 2222) == [(kh.app_file, 1)]
    assert kh.find("server1", "10.0.0.1", 22) == []  # another port is another host


def test_changed_key_found_through_hashed_entry(tmp_path: Path, keys: tuple[asyncssh.SSHKey, asyncssh.SSHKey]) -> None:
    old, new = keys
    user = tmp_path / "known_hosts"
    user.write_text("garbage line that is not a key\n" + _line(_hashed("server1"), old))
    kh = KnownHosts(tmp_path / "app_known_hosts", (user,))
    verdict = kh.verdict("server1", "10.0.0.1", 22, new)
    assert isinstance(verdict, ChangedHostKey)
    assert verdict.known_at == ((user, 2),)
    assert f"{user}:2" in str(verdict)
    with pytest.raises(TypeError):
        kh.trust(verdict)  # type: ignore[arg-type]  # a changed key cannot be trusted


def test_probe_parsing_and_modes() -> None:
    assert parse_probe("root\n0\nsudo:0\n").mode is PrivilegeMode.ROOT
    assert parse_probe("ann\n1000\nsudo:0\n").mode is PrivilegeMode.SUDO
    ro = parse_probe("ann\n1000\nsudo:1\n")
    assert ro.mode is PrivilegeMode.READ_ONLY and ro.sudo_installed and not ro.can_change
    assert not parse_probe("ann\n1000\nsudo:absent\n").sudo_installed
    assert parse_probe("").mode is PrivilegeMode.READ_ONLY  # unreadable: assume nothing
    assert "visudo" in ro.describe()


def test_the_sudoers_line_grants_the_helper_alone() -> None:
    assert sudoers_line("ann") == f"ann ALL=(root) NOPASSWD: {HELPER_PATH}"


@pytest.mark.parametrize("user", ["ALL", "ann ALL=(ALL) NOPASSWD: ALL\nx", "root,ann", "%wheel", "-o", "", "a b", "Ann",
                                  "ann\x1b[2J", "a" * 40, "ann:x"])
def test_a_user_name_that_is_not_plain_never_goes_into_the_rule(user: str) -> None:
    assert sudoers_line(user) == f"YOUR_LOGIN ALL=(root) NOPASSWD: {HELPER_PATH}"


def test_the_probe_finds_the_helper_and_its_digest() -> None:
    priv = parse_probe("ann\n1000\nsudo:1\nhelper:0123456789abcdef\n")
    assert priv.mode is PrivilegeMode.HELPER and priv.can_change and priv.via_helper
    assert parse_probe("ann\n1000\nsudo:0\nhelper:0123456789abcdef\n").mode is PrivilegeMode.SUDO  # full sudo first
    assert parse_probe("ann\n1000\nsudo:1\nhelper:$(reboot)\n").mode is PrivilegeMode.READ_ONLY


def test_config_hosts(tmp_path: Path) -> None:
    inc = tmp_path / "more.conf"
    inc.write_text("Host extra\n  HostName 10.0.0.9\n")
    cfg = tmp_path / "config"
    cfg.write_text(
        "# comment\nHost *\n  ServerAliveInterval 5\nHost web1 web2 !bad *.example\n"
        f"  User x\nInclude {inc}\nHost=db\nMatch host foo\n"
    )
    assert config_hosts(cfg) == ["web1", "web2", "extra", "db"]
    assert config_hosts(tmp_path / "none") == []
