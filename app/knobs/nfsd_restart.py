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

    @property
    def target(self) -> str:
        return BLOCK_SIZE_FILE

    async def read(self, conn: HostConnection) -> Value:
        """The size in force; also learns the thread count a restart brings back, and refuses an nfsd
        that is stopped or listens on one address only."""
        size = as_int(await read_text(conn, BLOCK_SIZE_FILE), BLOCK_SIZE_FILE)
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
        return [write_file(THREADS_FILE, 0), write_file(BLOCK_SIZE_FILE, size),
                Step(("rpc.nfsd", str(self.threads)), check=False), write_file(THREADS_FILE, self.threads)]  # fmt: skip

    def set_steps(self, value: Value) -> list[Step]:
        return self._restart(value)

    def restore_steps(self, old: Value) -> list[Step]:
        return self._restart(old)


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
