"""The concrete tunables on a host: how each is read, set and put back.

A target turns a value into root ``Step``s (argv + stdin, never shell strings). The
same steps serve the controller and the host's dead-man switch, which replays the
restore steps on its own if the controller goes silent.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Protocol

from app.facts.model import MountEntry
from app.facts.parse_nfs import parse_exportfs
from app.facts.parse_storage import parse_mountinfo
from app.hosts import HostConnection
from app.hosts.remote_args import absolute_path, address, mount_source, word
from app.knobs.catalog import SPECS
from app.knobs.model import KnobError, KnobSpec, Step, Value, as_int, remote_value, write_file

ABSENT = "absent"  # the old value of something nfs-tuner creates (its test mount)


class Target(Protocol):
    spec: KnobSpec

    @property
    def target(self) -> str: ...

    async def read(self, conn: HostConnection) -> Value: ...

    def set_steps(self, value: Value) -> list[Step]: ...

    def restore_steps(self, old: Value) -> list[Step]: ...


async def read_text(conn: HostConnection, path: str) -> str:
    result = await conn.run(["cat", "--", path])
    if not result.ok and "Permission denied" in result.stderr:
        # /proc/fs/nfsd is root's alone: a sudo login reads it as it writes it.
        priv = await conn.privilege()
        if not priv.is_root and priv.can_change:
            result = await conn.run(["cat", "--", path], sudo=True)
    if not result.ok:
        raise KnobError(f"cannot read {path} on {conn.name}: {result.stderr.strip() or 'no output'}")
    return result.stdout


@dataclass
class KernelFileTarget:
    """A value in /proc or /sys written with tee (threads, stripe cache, readahead)."""

    spec: KnobSpec
    path: str

    def __post_init__(self) -> None:
        remote_value(absolute_path, self.path, f"{self.spec.name}'s file")  # also rebuilt from the journal

    @property
    def target(self) -> str:
        return self.path

    async def read(self, conn: HostConnection) -> Value:
        return as_int(await read_text(conn, self.path), self.path)

    def set_steps(self, value: Value) -> list[Step]:
        return [write_file(self.path, value)]

    def restore_steps(self, old: Value) -> list[Step]:
        return self.set_steps(old)


NFSD_THREADS_FILE = "/proc/fs/nfsd/threads"  # also read and written by the max_block_size restart


def nfsd_threads() -> KernelFileTarget:
    return KernelFileTarget(SPECS["nfsd_threads"], NFSD_THREADS_FILE)


def stripe_cache(md: str) -> KernelFileTarget:
    if not md.startswith("md") or not md[2:].replace("_", "").isalnum():
        raise KnobError(f"{md!r} is not an md array name such as md0")
    return KernelFileTarget(SPECS["stripe_cache_size"], f"/sys/block/{md}/md/stripe_cache_size")


def readahead(bdi: str) -> KernelFileTarget:
    major, _, minor = bdi.partition(":")
    if not (major.isdigit() and minor.isdigit()):
        raise KnobError(f"{bdi!r} is not a bdi major:minor")
    return KernelFileTarget(SPECS["read_ahead_kb"], f"/sys/class/bdi/{bdi}/read_ahead_kb")


async def stripe_cache_cost(conn: HostConnection, md: str, value: int) -> tuple[int, int]:
    """(bytes the stripe cache would take, bytes of MemAvailable) on the server."""
    page = as_int((await conn.run(["getconf", "PAGESIZE"])).stdout, "PAGESIZE")
    disks = as_int(await read_text(conn, f"/sys/block/{md}/md/raid_disks"), "raid_disks")
    meminfo = await read_text(conn, "/proc/meminfo")
    avail_kb = next((as_int(ln.split(":", 1)[1], "MemAvailable") for ln in meminfo.splitlines()
                     if ln.startswith("MemAvailable:")), 0)  # fmt: skip
    return page * disks * value, avail_kb * 1024


@dataclass
class ExportOptionTarget:
    """One two-way option of one export (sync/async, wdelay/no_wdelay: the spec's two choices, the
    first Linux's default); re-exports that export only, keeping its other options."""

    path: str
    client: str
    spec: KnobSpec = field(default_factory=lambda: SPECS["export_sync"])
    _options: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # both come from `exportfs -v` or the journal; "client:path" is an argv word of exportfs
        remote_value(word, self.client, "export client")
        remote_value(absolute_path, self.path, "export path")

    @property
    def target(self) -> str:
        return f"{self.client}:{self.path}"

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(str(c) for c in self.spec.validity.choices)

    async def read(self, conn: HostConnection) -> Value:
        result = await conn.run(["exportfs", "-v"], sudo=True)
        entries = [e for e in parse_exportfs(result.stdout).value if e.path == self.path and e.client == self.client]
        if not entries:
            raise KnobError(
                f"{conn.name} does not export {self.path} to {self.client} (exportfs -v shows "
                f"{len(parse_exportfs(result.stdout).value)} exports): check the export path and client"
            )
        self._options = entries[0].options
        return self.mode_of(self._options)

    def mode_of(self, options: tuple[str, ...]) -> str:
        """The mode ``options`` name: the second (not the default) only when they name it."""
        return self.modes[1] if self.modes[1] in options else self.modes[0]

    def _with(self, mode: Value) -> str:
        if not self._options:
            raise KnobError(f"read the export {self.target} before changing it")
        opts = [o for o in self._options if o not in self.modes]
        return ",".join([str(mode), *opts])

    def set_steps(self, value: Value) -> list[Step]:
        return [Step(("exportfs", "-o", self._with(value), self.target))]

    def restore_steps(self, old: Value) -> list[Step]:
        return [Step(("exportfs", "-o", ",".join(self._options), self.target))]


ExportSyncTarget = ExportOptionTarget  # its first use; the spec picks the option


def export_wdelay(path: str, client: str) -> ExportOptionTarget:
    return ExportOptionTarget(path, client, SPECS["export_wdelay"])


ATTR_DEFAULTS = {"acregmin": 3, "acregmax": 60, "acdirmin": 30, "acdirmax": 60}  # the kernel shows only others


@dataclass(frozen=True)
class MountOptions:
    rsize: int | None = None
    wsize: int | None = None
    nfsvers: str | None = None
    nconnect: int | None = None
    nocto: bool = False  # cto is the default: only nocto is written
    actimeo: int | None = None

    def option_string(self) -> str:
        opts = []
        if self.nfsvers:
            opts.append(f"vers={self.nfsvers}")
        for name in ("rsize", "wsize", "nconnect", "actimeo"):
            if (v := getattr(self, name)) is not None:
                opts.append(f"{name}={int(v)}")
        if self.nocto:
            opts.append("nocto")
        return ",".join(opts or ["defaults"])

    @classmethod
    def from_values(cls, values: dict[str, Value]) -> MountOptions:
        def num(name: str) -> int | None:
            v = values.get(name)
            if v is None or SPECS[name].validity.is_native(v):  # the kernel's own range: no option at all
                return None
            return int(v)

        vers = values.get("nfsvers")
        return cls(num("rsize"), num("wsize"), str(vers) if vers is not None else None, num("nconnect"),
                   str(values.get("nocto", "cto")) == "nocto", num("actimeo"))  # fmt: skip

    @staticmethod
    def taken(knob: str, negotiated: dict[str, str]) -> Value | None:
        """A mount knob's value as the kernel took it, from the mount's options (``ScratchMount.taken_options``)."""
        if knob == "nocto":
            return "nocto" if "nocto" in negotiated else "cto"
        if knob == "actimeo":  # actimeo sets all four; a mixed set (the kernel's defaults) reads as its range
            texts = [negotiated.get(k, str(d)) for k, d in ATTR_DEFAULTS.items()]
            if not all(t.isascii() and t.isdigit() for t in texts):
                return None  # not what a kernel writes: unknown
            times = [int(t) for t in texts]
            return times[0] if len(set(times)) == 1 else f"{min(times)}–{max(times)}"
        if knob == "nconnect" and negotiated:  # the kernel shows nconnect only above 1
            return negotiated.get("nconnect", "1")
        return negotiated.get("vers" if knob == "nfsvers" else knob)


def with_nosuid_nodev(options: str) -> str:
    """A test mount's options, always nosuid,nodev: whatever the privilege, a hostile export must not
    bring a setuid-root binary or a device node to every local user of a client while it is mounted."""
    opts = [o for o in options.split(",") if o]
    return ",".join([*opts, *(o for o in ("nosuid", "nodev") if o not in opts)])


@dataclass
class ScratchMount:
    """nfs-tuner's own mount of the export, made for the trials and removed after.

    The admin's mounts are never touched: the mount point is a fresh directory named
    for this run, and nfs-tuner refuses to use one that is already a mount point.
    """

    server: str
    export: str
    mount_point: str
    spec: KnobSpec = field(
        default_factory=lambda: KnobSpec("test_mount", "test mount", SPECS["rsize"].scope, "",
                                         SPECS["rsize"].validity, SPECS["rsize"].safety,
                                         "nfs-tuner's own mount of the export for trials")
    )  # fmt: skip
    options: MountOptions = field(default_factory=MountOptions)
    last_seen: MountEntry | None = field(default=None, compare=False, repr=False)  # its entry at the last read

    def __post_init__(self) -> None:
        # "server:export" is mount's source word: '-oremount,bind' there would be an option.
        # Rebuilt from the journal with neither (only the mount point is put back).
        if self.server or self.export:
            remote_value(address, self.server, "server address")
            remote_value(absolute_path, self.export, "export path")
        remote_value(absolute_path, self.mount_point, "test mount point")

    @property
    def target(self) -> str:
        return self.mount_point

    async def read(self, conn: HostConnection) -> Value:
        entry = await self.entry(conn)
        return entry.super_options if entry else ABSENT

    async def entry(self, conn: HostConnection) -> MountEntry | None:
        mounts = parse_mountinfo(await read_text(conn, "/proc/self/mountinfo")).value
        self.last_seen = next((m for m in reversed(mounts) if m.mount_point == self.mount_point), None)
        return self.last_seen

    async def negotiated(self, conn: HostConnection) -> dict[str, str]:
        entry = await self.entry(conn)
        return self.taken_options(entry.super_options if entry else ABSENT)

    @staticmethod
    def taken_options(super_options: Value | None) -> dict[str, str]:
        """The mount's options as the kernel took them (what ``read`` returns), by name."""
        if super_options is None or super_options == ABSENT:
            return {}
        return dict(o.partition("=")[::2] for o in str(super_options).split(","))

    async def bdi(self, conn: HostConnection) -> str:
        """The mount's backing device, as the journal's read back of the mount just now saw it (one read fewer)."""
        entry = self.last_seen if self.last_seen is not None else await self.entry(conn)
        if entry is None:
            raise KnobError(f"{self.mount_point} is not mounted on {conn.name}")
        return str(entry.dev)

    def set_steps(self, value: Value) -> list[Step]:
        source = mount_source(self.server, self.export)
        return [
            Step(("mkdir", "-p", "-m", "0755", self.mount_point)),
            Step(("mount", "-t", "nfs", "-o", with_nosuid_nodev(str(value)), source, self.mount_point)),
        ]

    def restore_steps(self, old: Value) -> list[Step]:
        # Our own mount only: if a straggler keeps it busy, detach it lazily rather
        # than leave it behind. Each step may find its work already done.
        return [
            Step(("umount", self.mount_point), check=False),
            Step(("umount", "-l", self.mount_point), check=False, fallback=True),
            Step(("rmdir", self.mount_point), check=False),
        ]


def describe_step(step: Step) -> str:
    return shlex.join(step.argv) + (f" <<< {step.input.strip()!r}" if step.input else "")
