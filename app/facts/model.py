"""What discovery knows about a host: plain dataclasses, JSON-ready via ``to_dict``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Parsed(Generic[T]):
    """A parser's result and what it could not read (it never raises)."""

    value: T
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class OsInfo:
    id: str = ""
    name: str = ""
    version_id: str = ""
    pretty_name: str = ""


@dataclass(frozen=True)
class Nic:
    name: str
    mtu: int | None = None
    speed_mbps: int | None = None  # None when the driver does not say (virtual links)
    state: str = ""
    mac: str = ""
    addresses: tuple[str, ...] = ()  # "10.0.0.1/24"


@dataclass(frozen=True)
class BlockDevice:
    name: str
    dev: str = ""  # "major:minor"
    size_bytes: int | None = None
    rotational: bool | None = None
    read_ahead_kb: int | None = None
    scheduler: str = ""  # the active one, from "[mq-deadline] none"


@dataclass(frozen=True)
class MdArray:
    name: str
    level: str = ""  # "raid5"
    state: str = ""  # "active" / "inactive" (mdstat), array_state from sysfs when known
    members: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    spares: tuple[str, ...] = ()
    raid_disks: int | None = None
    chunk_kb: int | None = None
    stripe_cache_size: int | None = None  # only raid4/5/6
    size_kb: int | None = None
    sync_action: str = ""  # idle / resync / recover / check


@dataclass(frozen=True)
class MountEntry:
    mount_id: int
    dev: str  # "major:minor" (field 3 of mountinfo), names the bdi
    root: str
    mount_point: str
    fstype: str
    source: str
    options: str  # per-mount options
    super_options: str  # filesystem options; for NFS the negotiated ones


@dataclass(frozen=True)
class ExportEntry:
    path: str
    client: str  # "10.0.0.0/24", "*", "host.example"
    options: tuple[str, ...] = ()

    @property
    def is_async(self) -> bool:
        return "async" in self.options


@dataclass(frozen=True)
class ExportFilesystem:
    export_path: str
    mount_point: str
    fstype: str
    source: str
    options: str
    md_array: str = ""  # "md0" when the export lives on an md array


@dataclass(frozen=True)
class PoolStats:
    pool: int
    values: dict[str, int] = field(default_factory=dict)  # header name -> counter


NETLINK = "netlink"  # NfsdState.interface: nfsd's generic netlink family, through nfsdctl
PROCFS = "procfs"  # /proc/fs/nfsd and /sys/module/sunrpc/parameters


@dataclass(frozen=True)
class NfsdState:
    """nfsd as its host reports it: through nfsd's netlink interface (``nfsdctl``) where the host's
    kernel and nfs-utils have it, else through /proc/fs/nfsd and sunrpc's module parameter."""

    running: bool = False  # /proc/fs/nfsd is there (module loaded)
    threads: int | None = None  # every pool's together; the most a self-scaling nfsd may run
    versions: dict[str, bool] = field(default_factory=dict)  # "4.2" -> enabled
    pools: tuple[PoolStats, ...] = ()
    max_block_size: int | None = None
    interface: str = PROCFS  # NETLINK when `nfsdctl threads` answered: the knobs then act through nfsdctl
    pool_threads: tuple[int, ...] = ()  # threads per pool
    min_threads: int | None = None  # a self-scaling nfsd's floor (0: a fixed pool); None: no such setting here
    pool_mode: str | None = None  # global, percpu, pernode or auto
    npools: int | None = None
    listeners: tuple[str, ...] = ()  # "tcp:0.0.0.0:2049" (netlink) or "tcp 2049" (portlist)

    @property
    def self_scaling(self) -> bool:
        """Threads start and stop between min_threads and threads (Linux 7.0's dynamic threads)."""
        return bool(self.min_threads)


@dataclass(frozen=True)
class TcpPeer:
    local: str  # "10.0.0.1:2049"
    remote: str
    remote_address: str  # without the port


@dataclass(frozen=True)
class Nfs4Client:
    address: str  # without the port
    name: str = ""  # "Linux NFSv4.2 client1"
    minor_version: int | None = None
    status: str = ""
    callback_state: str = ""


@dataclass(frozen=True)
class ClientCandidate:
    """A host connected to this server's nfsd, offered as a client to tune."""

    address: str
    nfs4_name: str = ""
    minor_version: int | None = None


@dataclass(frozen=True)
class NfsMount:
    mount_point: str
    source: str  # "server:/export"
    server: str
    export: str
    fstype: str  # nfs / nfs4
    dev: str  # major:minor of the mount, names its bdi
    version: str = ""
    rsize: int | None = None
    wsize: int | None = None
    proto: str = ""
    nconnect: int | None = None
    read_ahead_kb: int | None = None
    options: dict[str, str] = field(default_factory=dict)  # negotiated, "hard" -> ""
    age_seconds: int | None = None


@dataclass(frozen=True)
class Python3:
    path: str = ""
    version: str = ""

    @property
    def present(self) -> bool:
        return bool(self.path and self.version)

    @property
    def usable_for_agent(self) -> bool:
        """The load agent needs Python 3.6 or newer."""
        try:
            major, minor = (int(p) for p in self.version.split(".")[:2])
        except ValueError:
            return False
        return (major, minor) >= (3, 6)


@dataclass(frozen=True)
class HostFacts:
    host: str  # the name the admin gave (SSH config alias)
    hostname: str = ""
    os: OsInfo = field(default_factory=OsInfo)
    kernel: str = ""
    arch: str = ""
    nfs_utils_version: str = ""
    cpu_count: int | None = None
    mem_total_kb: int | None = None
    page_size: int | None = None
    sysctls: dict[str, int] = field(default_factory=dict)  # the tunables' /proc/sys values: "vm.dirty_bytes" -> 0
    nics: tuple[Nic, ...] = ()
    block_devices: tuple[BlockDevice, ...] = ()
    md_arrays: tuple[MdArray, ...] = ()
    exports: tuple[ExportEntry, ...] = ()
    export_filesystems: tuple[ExportFilesystem, ...] = ()
    nfsd: NfsdState = field(default_factory=NfsdState)
    nfs_peers: tuple[TcpPeer, ...] = ()  # established TCP connections to our :2049
    nfs4_clients: tuple[Nfs4Client, ...] = ()
    client_candidates: tuple[ClientCandidate, ...] = ()
    nfs_mounts: tuple[NfsMount, ...] = ()
    python3: Python3 = field(default_factory=Python3)
    tools: dict[str, str] = field(default_factory=dict)  # command -> path ("" if absent)
    user: str = ""
    privilege: str = ""  # PrivilegeMode value
    helper: str = ""  # the digest of the nfs-tuner-helper the login may run through sudo ("" if none)
    sudoers_line: str = ""  # what the admin could add, when read-only
    problems: tuple[str, ...] = ()

    @property
    def is_nfs_server(self) -> bool:
        return bool(self.nfsd.running and (self.nfsd.threads or 0) > 0) or bool(self.exports)

    @property
    def is_nfs_client(self) -> bool:
        return bool(self.nfs_mounts)

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(
            r for r, yes in (("server", self.is_nfs_server), ("client", self.is_nfs_client)) if yes
        )

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["roles"] = list(self.roles)
        out["python3"]["present"] = self.python3.present
        return out
