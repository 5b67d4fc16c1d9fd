"""nfsd's max_block_size: a value the kernel takes only while nfsd is stopped.

Writing /proc/fs/nfsd/max_block_size while nfsd runs fails (EBUSY), so a change is a
restart: threads to 0 (the service and its listeners go), the new size, the listeners
written back to portlist (both address families, as rpc.nfsd makes them; without this
the kernel would start on IPv4 only), then the threads as they were. The restore is
the same restart with the old size. The thread count and listeners are read when the
change is made, so a sweep that also changes nfsd_threads must put this back before it
and make it again after (app.sweep.held).

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
from app.knobs.targets import read_text

NFSD = "/proc/fs/nfsd"
BLOCK_SIZE_FILE = f"{NFSD}/max_block_size"
THREADS_FILE = f"{NFSD}/threads"
PORTLIST_FILE = f"{NFSD}/portlist"
END_GRACE_FILE = f"{NFSD}/v4_end_grace"
GRACE_TIME_FILE = f"{NFSD}/nfsv4gracetime"
TRANSPORTS = ("tcp", "udp", "rdma")
WILDCARD = ("*", "0.0.0.0", "[::]", "::")


def listeners(portlist: str) -> tuple[str, ...]:
    """portlist's lines once each ("tcp 2049"): one write of a line listens on IPv4 and IPv6."""
    out: list[str] = []
    for line in portlist.splitlines():
        words = line.split()
        if len(words) != 2 or words[0] not in TRANSPORTS or not words[1].isdigit() or not 0 < int(words[1]) < 65536:
            raise KnobError(f"nfsd's portlist has a line nfs-tuner cannot write back: {line.strip()!r}")
        if (text := f"{words[0]} {int(words[1])}") not in out:
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
    """max_block_size, changed by restarting nfsd with the threads and listeners it had."""

    spec: KnobSpec = SPECS["max_block_size"]
    threads: int = 0
    ports: tuple[str, ...] = ()

    @property
    def target(self) -> str:
        return BLOCK_SIZE_FILE

    async def read(self, conn: HostConnection) -> Value:
        """The size in force; also learns the threads and listeners a restart must bring back."""
        size = as_int(await read_text(conn, BLOCK_SIZE_FILE), BLOCK_SIZE_FILE)
        self.threads = as_int(await read_text(conn, THREADS_FILE), THREADS_FILE)
        if self.threads < 1:
            raise KnobError(f"nfsd is not running on {conn.name} (0 threads): start the NFS server first")
        self.ports = listeners(await read_text(conn, PORTLIST_FILE))
        ss = await conn.run(["ss", "-Hltn"])
        if bound := bound_addresses(ss.stdout, self.ports) if ss.ok else []:
            raise KnobError(
                f"nfsd on {conn.name} listens on {', '.join(bound)} only (rpc.nfsd -H or nfs.conf host=): a "
                "restart from /proc would listen on every address, so nfs-tuner leaves max_block_size alone. "
                "Set it in the service's start (the snippet) and restart nfs-server yourself."
            )
        return size

    def _restart(self, size: Value) -> list[Step]:
        if not self.threads:
            raise KnobError("read nfsd's threads and listeners before restarting it")
        # A listener already there (EADDRINUSE) must not stop the restart: threads start either way.
        ports = [Step(("tee", PORTLIST_FILE), f"{p}\n", check=False) for p in self.ports]
        return [write_file(THREADS_FILE, 0), write_file(BLOCK_SIZE_FILE, size), *ports,
                write_file(THREADS_FILE, self.threads)]  # fmt: skip

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
