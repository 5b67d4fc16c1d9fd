"""Typed failures of the host layer, each with a message telling the admin what to do.

The UI and the CLI show ``str(error)`` as is, so every message names the host, what
went wrong and the next step; none of them ever contains a password.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path


class HostError(Exception):
    """Base of every failure talking to one host."""

    def __init__(self, host: str, message: str) -> None:
        super().__init__(message)
        self.host = host

    @property
    def message(self) -> str:
        return str(self)


class HostUnresolvable(HostError):
    def __init__(self, host: str, detail: str = "") -> None:
        super().__init__(
            host,
            f"{host}: the name does not resolve{f' ({detail})' if detail else ''}. "
            "Check the spelling, the HostName in your SSH config, and DNS or /etc/hosts.",
        )


class ConnectionRefused(HostError):
    def __init__(self, host: str, port: int) -> None:
        super().__init__(
            host,
            f"{host}: connection to port {port} was refused. Is sshd running there and "
            "listening on that port (check Port in your SSH config and the host's firewall)?",
        )
        self.port = port


class ConnectTimeout(HostError):
    def __init__(self, host: str, port: int, seconds: float) -> None:
        super().__init__(
            host,
            f"{host}: no SSH answer on port {port} within {seconds:g} s. Check that the host "
            "is up, the address and port are right, and no firewall drops the traffic.",
        )
        self.port = port
        self.seconds = seconds


class AuthFailed(HostError):
    def __init__(self, host: str, user: str, detail: str = "") -> None:
        super().__init__(
            host,
            f"{host}: the server refused to log in user {user!r}"
            f"{f' ({detail})' if detail else ''}. Check User and IdentityFile in your SSH "
            "config, that your key is loaded in ssh-agent, and that its public key is in "
            f"~{user}/.ssh/authorized_keys on the host.",
        )
        self.user = user


class HostKeyError(HostError):
    """The host key could not be accepted (revoked, undecodable, certificate problem)."""


class UnknownHostKey(HostKeyError):
    """First contact: the key is in no known_hosts file; the admin may trust it."""

    def __init__(
        self, host: str, port: int, key_type: str, fingerprint: str, known_hosts_line: str
    ) -> None:
        where = host if port == 22 else f"{host} port {port}"
        super().__init__(
            host,
            f"{where}: the host key is not known yet ({key_type} {fingerprint}). Compare the "
            "fingerprint with the one the host shows (ssh-keygen -lf "
            "/etc/ssh/ssh_host_*_key.pub on its console) before trusting it.",
        )
        self.port = port
        self.key_type = key_type
        self.fingerprint = fingerprint
        # What trusting appends to nfs-tuner's known_hosts file.
        self.known_hosts_line = known_hosts_line


class ChangedHostKey(HostKeyError):
    """The host offers a key other than the one recorded: refused, never overridable."""

    def __init__(
        self,
        host: str,
        port: int,
        key_type: str,
        fingerprint: str,
        known_at: Sequence[tuple[Path, int]],
    ) -> None:
        places = ", ".join(f"{path}:{line}" for path, line in known_at) or "a known_hosts file"
        super().__init__(
            host,
            f"{host}: THE HOST KEY HAS CHANGED (now {key_type} {fingerprint}). Someone may be "
            "intercepting the connection (man-in-the-middle), or the host was reinstalled. "
            "Refusing to connect. Check with the host's owner; if the change is expected, "
            f"remove the old line from {places} and connect again.",
        )
        self.port = port
        self.key_type = key_type
        self.fingerprint = fingerprint
        self.known_at = tuple(known_at)


class NoSudo(HostError):
    def __init__(self, host: str, user: str, sudoers_line: str, detail: str = "") -> None:
        super().__init__(
            host,
            f"{host}: user {user!r} is not root and cannot use sudo without a password"
            f"{f' ({detail})' if detail else ''}, so the tunables there are read-only. Log in "
            "as root, give nfs-tuner the sudo password, or ask the admin to install nfs-tuner's "
            "helper (`nfs-tuner helper` prints it and how) and add this line with visudo: "
            f"{sudoers_line}",
        )
        self.user = user
        self.sudoers_line = sudoers_line


class SudoPasswordRejected(HostError):
    def __init__(self, host: str, user: str) -> None:
        super().__init__(
            host,
            f"{host}: sudo rejected the password given for {user!r}. Enter it again, or "
            "set up passwordless sudo for the commands nfs-tuner needs.",
        )
        self.user = user


class ConnectionLost(HostError):
    def __init__(self, host: str, detail: str = "") -> None:
        super().__init__(
            host,
            f"{host}: the SSH connection was lost{f' ({detail})' if detail else ''}. Any "
            "command under way there may or may not have finished; check the host is up and "
            "reachable, then run the step again.",
        )


class CommandTimeout(HostError):
    def __init__(self, host: str, command: str, seconds: float) -> None:
        super().__init__(
            host,
            f"{host}: {command!r} did not finish within {seconds:g} s and was stopped. The "
            "host may be overloaded or the command stuck (e.g. on a hung NFS mount).",
        )
        self.command = command
        self.seconds = seconds


class OutputTooLarge(HostError):
    """A host answered with more than nfs-tuner reads of one command: it stopped reading and the command."""

    def __init__(self, host: str, command: str, limit: int) -> None:
        super().__init__(
            host,
            f"{host}: sent more than {limit // (1 << 20)} MiB in answer to {command!r}; nfs-tuner stopped reading "
            "and stopped the command. No answer it asks for is that long: check what the host runs for it.",
        )
        self.command = command
        self.limit = limit


class ChannelsExhausted(HostError):
    def __init__(self, host: str, detail: str = "") -> None:
        super().__init__(
            host,
            f"{host}: the SSH server refused a new session{f' ({detail})' if detail else ''}. "
            "Raise MaxSessions in the host's sshd_config or lower nfs-tuner's channel limit.",
        )


class NotAnNfsServer(HostError):
    def __init__(self, host: str, detail: str) -> None:
        super().__init__(
            host,
            f"{host}: this is not a running NFS server ({detail}). Install nfs-utils "
            "(nfs-kernel-server), export a directory in /etc/exports and start nfs-server, "
            "or pick the right host.",
        )


class NoPython3(HostError):
    def __init__(self, host: str, version: str = "") -> None:
        found = f"its python3 is {version}" if version else "python3 was not found"
        super().__init__(
            host,
            f"{host}: {found}, and the load agent needs Python 3.6 or newer "
            "on every client. Install it (package python3) and discover again.",
        )


class SshError(HostError):
    """Any other SSH-level failure, with asyncssh's reason."""

    def __init__(self, host: str, detail: str) -> None:
        super().__init__(host, f"{host}: SSH failed: {detail}")


class UnreadableReply(HostError):
    """The host answered, but with something nfs-tuner could not read."""

    def __init__(self, host: str, detail: str) -> None:
        super().__init__(
            host,
            f"{host}: its answer could not be read ({detail[:200]}); nothing was changed on it. "
            "The other hosts are not affected. Check the host's shell start-up files for output "
            "and run the discovery again.",
        )


# What a host that went away (or froze) looks like to a command: not an answer about what was asked.
HOST_GONE = (ConnectionLost, CommandTimeout, ConnectionRefused, ConnectTimeout)

LONG_ARG = 80  # characters of one argument an error shows; a script sent with -c is thousands


def command_text(argv: Sequence[str]) -> str:
    """A command as errors show it: shell-quoted, each long argument (an inline script) cut to its first
    line with its length, so the sentence around it stays readable."""
    shown = []
    for arg in argv:
        if len(arg) > LONG_ARG:
            first = arg.strip().splitlines()[0] if arg.strip() else ""
            arg = f"<{first[:48]}… ({len(arg):,} characters)>"
        shown.append(arg)
    return shlex.join(shown)
