"""What a snippet is, and the context (hosts, paths, names) it is rendered for."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

Knobs = Mapping[str, Any]  # knob -> value, as in a recommendation


@dataclass(frozen=True, slots=True)
class Snippet:
    key: str  # stable id, e.g. "fstab", "mtu-networkd:lab-client1"
    title: str
    target: str  # where it goes: a path, or "shell" for commands to run
    text: str
    safety: str = ""  # a short warning when applying it carries a risk
    host_role: str = ""  # "server", "client", "admin" (runs on the admin's machine)
    risky: bool = False  # the safety note is a risk (data loss, a cut link, a refused file), not a routine step

    def to_json(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class SnippetContext:
    """Where the configuration goes. Defaults are placeholders an admin will recognise."""

    server: str = "nfs-server"  # the name or address clients mount from
    export_path: str = "/srv/nfs"
    export_clients: str = "*"  # the exports client spec, e.g. 10.213.7.0/24
    export_options: tuple[str, ...] = ("rw", "no_subtree_check")  # the others; sync/async comes from the config
    mount_point: str = "/mnt/nfs"
    mount_options: tuple[str, ...] = ("hard", "_netdev")  # kept beside the measured ones
    md_device: str | None = None  # e.g. "md0"
    server_host: str = "nfs-server"  # inventory / SSH name of the server
    client_hosts: tuple[str, ...] = ("nfs-client",)
    nics: Mapping[str, str] = field(default_factory=dict)  # host -> NIC carrying NFS
    session_id: int | None = None
    objective: str = "seq_read"
    workload: Mapping[str, Any] | None = None  # the key measurement's spec, for the fio job
    nfsd_netlink: bool = False  # the server's nfsd answered through nfsdctl: its service starts with `nfsdctl autostart`

    def nic_of(self, host: str) -> str:
        return self.nics.get(host, "eth0")
