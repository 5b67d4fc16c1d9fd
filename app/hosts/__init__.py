"""The SSH host layer: connecting safely, running quoted commands, privilege."""

from app.hosts.connection import HostConnection
from app.hosts.errors import (
    AuthFailed,
    ChangedHostKey,
    ChannelsExhausted,
    CommandTimeout,
    ConnectionLost,
    ConnectionRefused,
    ConnectTimeout,
    HostError,
    HostKeyError,
    HostUnresolvable,
    NoPython3,
    NoSudo,
    NotAnNfsServer,
    OutputTooLarge,
    SshError,
    SudoPasswordRejected,
    UnknownHostKey,
    UnreadableReply,
)
from app.hosts.known_hosts import KnownHosts
from app.hosts.pool import HostPool
from app.hosts.privilege import Privilege, PrivilegeMode, sudoers_line
from app.hosts.process import CommandResult, RemoteProcess
from app.hosts.settings import SshSettings
from app.hosts.ssh_config import config_hosts

__all__ = [
    "AuthFailed",
    "ChangedHostKey",
    "ChannelsExhausted",
    "CommandResult",
    "CommandTimeout",
    "ConnectionLost",
    "ConnectionRefused",
    "ConnectTimeout",
    "HostConnection",
    "HostError",
    "HostKeyError",
    "HostPool",
    "HostUnresolvable",
    "KnownHosts",
    "NoPython3",
    "NoSudo",
    "NotAnNfsServer",
    "OutputTooLarge",
    "Privilege",
    "PrivilegeMode",
    "RemoteProcess",
    "SshError",
    "SshSettings",
    "SudoPasswordRejected",
    "UnknownHostKey",
    "UnreadableReply",
    "config_hosts",
    "sudoers_line",
]
