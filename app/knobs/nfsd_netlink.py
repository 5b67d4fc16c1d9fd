"""nfsd's threads through its netlink interface, where the host has it (nfsdctl, nfs-utils 2.7+).

``nfsdctl threads`` answers when the kernel has nfsd's generic netlink family and nfs-utils
has nfsdctl; then the thread knobs act through it, as the distribution's nfs-server service
does (``nfsdctl autostart``), and read back through it. Elsewhere /proc/fs/nfsd/threads
stays (app.knobs.targets.KernelFileTarget). Probed on the host, never guessed from versions.

On a kernel whose threads scale themselves (Linux 7.0) nfsdctl also reports ``min-threads``:
the floor each pool keeps, while ``threads`` becomes the most nfsd may start (idle threads
above the floor exit after 5 s). nfsdctl sets the floor only together with the thread count
(``nfsdctl threads -m MIN N``), and the kernel keeps it across nfsd restarts, so the floor's
target reads the count it sets with. ``nfsdctl threads N`` leaves the floor alone, and one
count is spread over the pools as /proc/fs/nfsd/threads spreads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.facts.parse_nfsdctl import parse_threads
from app.hosts import HostConnection
from app.knobs.catalog import SPECS
from app.knobs.model import KnobError, KnobSpec, Step, Value
from app.knobs.targets import KernelFileTarget, nfsd_threads

NFSDCTL_THREADS = "nfsdctl threads"  # the journal's target of nfsd_threads set through nfsdctl
NFSDCTL_FLOOR = "nfsdctl threads -m"  # and of nfsd_min_threads
SBIN_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class NetlinkThreads:
    pools: tuple[int, ...]  # threads per pool
    floor: int | None  # min-threads; None: this kernel (or this nfsdctl) has no floor

    @property
    def total(self) -> int:
        return sum(self.pools)


async def read_netlink_threads(conn: HostConnection) -> NetlinkThreads | None:
    """``nfsdctl threads`` on the host, or None where it does not answer (no nfsdctl, or a kernel
    without nfsd's netlink family). Any login may read it; nfsd must be loaded (nfsdctl loads it
    otherwise), which a server being tuned has."""
    result = await conn.run(["env", f"PATH={SBIN_PATH}", "nfsdctl", "threads"])  # a login's PATH may lack sbin
    pools, floor = parse_threads(result.stdout if result.ok else "").value
    return NetlinkThreads(pools, floor) if pools else None


async def threads_target(conn: HostConnection) -> KernelFileTarget | NfsdctlThreadsTarget:
    """nfsd_threads through the interface the host has: nfsdctl where it answers, else /proc."""
    return NfsdctlThreadsTarget() if await read_netlink_threads(conn) else nfsd_threads()


async def _required(conn: HostConnection) -> NetlinkThreads:
    found = await read_netlink_threads(conn)
    if found is None:
        raise KnobError(f"`nfsdctl threads` does not answer on {conn.name}: nfsd is not running, or the host has no "
                        "nfsdctl or no nfsd netlink interface")  # fmt: skip
    return found


def _count(value: Value) -> str:
    return str(int(value))


@dataclass
class NfsdctlThreadsTarget:
    """nfsd_threads through nfsdctl: every pool's threads together; on a self-scaling nfsd, the most."""

    spec: KnobSpec = field(default_factory=lambda: SPECS["nfsd_threads"])

    @property
    def target(self) -> str:
        return NFSDCTL_THREADS

    async def read(self, conn: HostConnection) -> Value:
        return (await _required(conn)).total

    def set_steps(self, value: Value) -> list[Step]:
        return [Step(("nfsdctl", "threads", _count(value)))]

    def restore_steps(self, old: Value) -> list[Step]:
        return self.set_steps(old)


@dataclass
class NfsdMinThreadsTarget:
    """nfsd_min_threads: the floor of a self-scaling nfsd, set with the thread count it reads."""

    spec: KnobSpec = field(default_factory=lambda: SPECS["nfsd_min_threads"])
    threads: int = 0

    @property
    def target(self) -> str:
        return NFSDCTL_FLOOR

    async def read(self, conn: HostConnection) -> Value:
        found = await _required(conn)
        if found.floor is None:
            raise KnobError(f"nfsd on {conn.name} has no min-threads (its threads do not scale themselves: Linux 7.0 "
                            "and an nfsdctl with `threads -m`)")  # fmt: skip
        if found.total < 1:
            raise KnobError(f"nfsd is not running on {conn.name} (0 threads): start the NFS server first")
        self.threads = found.total
        return found.floor

    def set_steps(self, value: Value) -> list[Step]:
        if not self.threads:
            raise KnobError("read nfsd's thread count before setting its floor")
        return [Step(("nfsdctl", "threads", "-m", _count(value), str(self.threads)))]

    def restore_steps(self, old: Value) -> list[Step]:
        return self.set_steps(old)
