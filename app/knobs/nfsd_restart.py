"""nfsd's max_block_size: a value the kernel takes only while nfsd is stopped.

Writing /proc/fs/nfsd/max_block_size while nfsd runs fails (EBUSY), so a change is a
restart, made as the distribution's service makes it: threads to 0 (the service, its
listeners and its rpcbind registration go), the new size, then ``rpc.nfsd N`` with the
thread count it had. rpc.nfsd opens the listeners nfs.conf names, on both address
families, and registers them with rpcbind; listeners written to portlist by hand would not
be registered, and NFSv3 mounts would then fail. Should rpc.nfsd fail, writing the thread
count brings nfsd back on its kernel defaults, so the service never stays down. The
restore is the same restart with the old size. The thread count is read when the change
is made, so a sweep that also changes nfsd_threads puts this back before it and makes it
again after (app.sweep.held).

A restart ends every client's NFSv4 state: they reclaim it during the grace period,
and opens wait until it ends. ``grace_wait`` waits that out before a trial measures.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import ClassVar

from app.hosts import HostConnection
from app.knobs.catalog import SPECS
from app.knobs.model import KnobError, KnobSpec, Step, Value, as_int, write_file
from app.knobs.targets import NFSD_THREADS_FILE, read_text

NFSD = "/proc/fs/nfsd"
BLOCK_SIZE_FILE = f"{NFSD}/max_block_size"
THREADS_FILE = NFSD_THREADS_FILE
PORTLIST_FILE = f"{NFSD}/portlist"
VERSIONS_FILE = f"{NFSD}/versions"
END_GRACE_FILE = f"{NFSD}/v4_end_grace"
GRACE_TIME_FILE = f"{NFSD}/nfsv4gracetime"
TRANSPORTS = ("tcp", "udp", "rdma")
WILDCARD = ("*", "0.0.0.0", "[::]", "::")
POOL_MODE_FILE = "/sys/module/sunrpc/parameters/pool_mode"


def listeners(portlist: str) -> tuple[str, ...]:
    """portlist's lines once each ("tcp 2049"; it lists one per address family)."""
    out: list[str] = []
    for line in portlist.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] in TRANSPORTS and words[1].isdigit() and (text := " ".join(words)) not in out:
            out.append(text)
    return tuple(out)


def bound_addresses(ss_output: str, ports: tuple[str, ...]) -> list[str]:
    """Listening addresses on nfsd's TCP ports that are not wildcards (rpc.nfsd -H, nfs.conf host=)."""
    tcp_ports = {p.split()[1] for p in ports if p.startswith("tcp ")}
    out = []
    for line in ss_output.splitlines():
        words = line.split()
        local = next((w for w in words if ":" in w), "")  # 'LISTEN 0 64 10.0.0.1:2049 0.0.0.0:*'
        host, _, port = local.rpartition(":")
        if port in tcp_ports and host not in WILDCARD:
            out.append(local)
    return out


@dataclass
class NfsdBlockSizeTarget:
    """max_block_size, changed by restarting nfsd (rpc.nfsd) with the thread count it had."""

    spec: KnobSpec = SPECS["max_block_size"]
    threads: int = 0
    FILE: ClassVar[str] = BLOCK_SIZE_FILE  # the setting nfsd takes only while stopped

    @property
    def target(self) -> str:
        return self.FILE

    async def setting(self, conn: HostConnection) -> Value:
        return as_int(await read_text(conn, self.FILE), self.FILE)

    async def read(self, conn: HostConnection) -> Value:
        """The setting in force; also learns the thread count a restart brings back, and refuses an nfsd
        that is stopped or listens on one address only."""
        size = await self.setting(conn)
        self.threads = as_int(await read_text(conn, THREADS_FILE), THREADS_FILE)
        if self.threads < 1:
            raise KnobError(f"nfsd is not running on {conn.name} (0 threads): start the NFS server first")
        ports = listeners(await read_text(conn, PORTLIST_FILE))
        ss = await conn.run(["ss", "-Hltn"])
        if bound := bound_addresses(ss.stdout, ports) if ss.ok else []:
            raise KnobError(
                f"nfsd on {conn.name} listens on {', '.join(bound)} only (rpc.nfsd -H or nfs.conf host=): should "
                "its restart fall back to the kernel's defaults, it would listen on every address, so nfs-tuner "
                "leaves max_block_size alone. Set it in the service's start (the snippet) and restart nfs-server "
                "yourself."
            )
        return size

    def _restart(self, size: Value) -> list[Step]:
        if not self.threads:
            raise KnobError("read nfsd's thread count before restarting it")
        # rpc.nfsd's failure must not leave nfsd down: the thread count written after it
        # starts nfsd on the kernel's own listeners, and changes nothing when rpc.nfsd did.
        return [write_file(THREADS_FILE, 0), write_file(self.FILE, size),
                Step(("rpc.nfsd", str(self.threads)), check=False), write_file(THREADS_FILE, self.threads)]  # fmt: skip

    def set_steps(self, value: Value) -> list[Step]:
        return self._restart(value)

    def restore_steps(self, old: Value) -> list[Step]:
        return self._restart(old)


@dataclass
class NfsdPoolModeTarget(NfsdBlockSizeTarget):
    """sunrpc's pool_mode, taken only while no nfsd runs: the same restart. Refused on a host with one CPU
    and one NUMA node, where every mode makes the one pool (the lab's guests)."""

    spec: KnobSpec = SPECS["pool_mode"]
    FILE: ClassVar[str] = POOL_MODE_FILE

    async def setting(self, conn: HostConnection) -> Value:
        mode = (await read_text(conn, self.FILE)).strip()
        if mode not in self.spec.validity.choices:
            raise KnobError(f"could not read {self.FILE} on {conn.name}: got {mode[:40]!r}")
        online = (await conn.run(["cat", "--", "/sys/devices/system/cpu/online", "/sys/devices/system/node/online"])).stdout
        if max((span_count(w) for w in online.split()), default=1) <= 1:
            raise KnobError(f"{conn.name} has one CPU and one NUMA node: every pool mode makes one pool there")
        return mode


def span_count(spans: str) -> int:
    """How many CPUs (or nodes) a sysfs list names: '0-3,8' is 5; nothing readable is 1."""
    total = 0
    for part in spans.split(","):
        low, _, high = part.partition("-")
        if not (low.isascii() and low.isdigit() and (not high or (high.isascii() and high.isdigit()))):
            return 1
        total += int(high or low) - int(low) + 1
    return max(total, 1)


async def grace_wait(conn: HostConnection, limit_s: float | None = None, poll_s: float = 1.0) -> float:
    """Wait until nfsd's NFSv4 grace period has ended (v4_end_grace reads Y); the seconds waited.

    Never ends it early: clients that held state are reclaiming it meanwhile. Past ``limit_s``
    (default: the grace time plus 30 s) the trial goes on and the caller says so.
    """
    start = time.monotonic()
    if limit_s is None:
        try:
            limit_s = as_int(await read_text(conn, GRACE_TIME_FILE), GRACE_TIME_FILE) + 30.0
        except KnobError:
            limit_s = 120.0
    while True:
        try:
            ended = (await read_text(conn, END_GRACE_FILE)).strip().upper().startswith("Y")
        except KnobError:  # a kernel without the file (before 4.20): nothing to wait on
            return time.monotonic() - start
        waited = time.monotonic() - start
        if ended or waited >= limit_s:
            if not ended:
                raise KnobError(f"nfsd on {conn.name} was still in its NFSv4 grace period after {waited:.0f} s")
            return waited
        await asyncio.sleep(poll_s)
