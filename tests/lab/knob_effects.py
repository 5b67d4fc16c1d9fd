"""What the newer knobs do on the lab, measured without nfs-tuner (benchmarks/newer_knobs.py).

The same plain-tool approach as tests/lab/effects.py, for the knobs added after the
profiles were built: actimeo and nocto (attribute and open-time revalidation, one GETATTR
round trip each), the client's RPC slot table, nfsd's max_block_size, the export's
wdelay, and the client's dirty-page limits. Every measurement mounts the export at a
mount point of its own with the options it compares, and puts back what it set.

A fresh mount shares the NFS connection of any other mount of the server (the slot table
is sized when the connection is made): the benchmark takes the clients' standing mounts
down first (benchmarks/lab_hosts.without_standing_mounts).
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tests.lab.effects import BENCH, EXPORT, EXPORT_OPTIONS, SERVER, _float, drop_caches, host_setting, prepare_file
from tests.lab.lab import SUBNET_PREFIX, Lab

POINT = "/mnt/knob-bench"
SLOTS = "/proc/sys/sunrpc/tcp_max_slot_table_entries"
NFSD = "/proc/fs/nfsd"


def _mounted(options: str, body: str) -> str:
    """A client script: mount the export at POINT with ``options``, run ``body``; unmounted however it ends."""
    return (f"set -e; mkdir -p {POINT}; umount {POINT} 2>/dev/null || true; "
            f"mount -t nfs -o {options} {SERVER}:{EXPORT} {POINT}; trap 'umount {POINT}' EXIT; "
            f"mkdir -p {POINT}/{BENCH}; {body}")  # fmt: skip


def _at_once(commands: list[str]) -> str:
    """Shell that runs ``commands`` in parallel and fails (under set -e) when any of them failed."""
    return "pids=; " + " ".join(f"{c} & pids=\"$pids $!\";" for c in commands) + " for p in $pids; do wait $p; done;"


def prepare_small_files(lab: Lab, count: int = 200) -> str:
    """``count`` 4 KiB files in one directory under the export, made on the server once: its name."""
    name = f"small-{count}"
    d = shlex.quote(f"{EXPORT}/{BENCH}/{name}")
    lab.ssh(SERVER, f"mkdir -p {d} && chmod 1777 {EXPORT}/{BENCH} && [ -e {d}/f{count - 1:05d} ] || "
                    f"(cd {d} && for i in $(seq -f %05g 0 {count - 1}); do head -c 4096 /dev/urandom > f$i; done)",
            timeout=600)  # fmt: skip
    return name


def _second_pass(lab: Lab, client: str, options: str, name: str, op: str) -> float:
    """Operations per second of the second of two passes over the small files (the first fills the caches)."""
    code = (
        "import os,sys,time\n"
        f"d={POINT!r}+'/{BENCH}/{name}'; names=sorted(os.listdir(d))\n"
        "def one():\n"
        "    for n in names:\n"
        + ("        os.stat(os.path.join(d,n))\n" if op == "stat" else
           "        with open(os.path.join(d,n),'rb') as f: f.read()\n")
        + "one(); t=time.time(); one(); print(len(names)/(time.time()-t))\n"
    )  # fmt: skip
    return _float(lab.ssh(client, _mounted(options, f"python3 -c {shlex.quote(code)}"), timeout=900).stdout, op)


def stats_per_s(lab: Lab, client: str, *, actimeo: int) -> float:
    """stat() per second over 200 files already seen: every one a GETATTR round trip at actimeo=0."""
    return _second_pass(lab, client, f"vers=4.2,actimeo={actimeo}", prepare_small_files(lab), "stat")


def reopens_per_s(lab: Lab, client: str, *, cto: bool) -> float:
    """open+read+close per second over 200 cached files: close-to-open revalidates each open (a GETATTR)."""
    return _second_pass(lab, client, "vers=4.2" + ("" if cto else ",nocto"), prepare_small_files(lab), "open")


def cold_read(lab: Lab, client: str, options: str, *, read_ahead_kb: int = 16384, mib: int = 128,
              streams: int = 1) -> float:
    """MB/s of ``streams`` cold dd's at once, each of a ``mib`` MiB file of its own, through one fresh
    mount with ``options``."""
    names = [prepare_file(lab, f"seq-{mib}m" + (f"-{i}" if i else ""), mib).rsplit("/", 1)[1] for i in range(streams)]
    drop_caches(lab, SERVER)
    reads = _at_once([f"dd if={POINT}/{BENCH}/{n} of=/dev/null bs=1M status=none" for n in names])
    body = (f"echo {read_ahead_kb} > /sys/class/bdi/$(mountpoint -d {POINT})/read_ahead_kb; "
            f"sync; echo 3 > /proc/sys/vm/drop_caches; s=$(date +%s.%N); {reads} e=$(date +%s.%N); "
            f"echo \"{streams * mib} * 1.048576 / ($e - $s)\" | bc -l")  # fmt: skip
    return _float(lab.ssh(client, _mounted(options, body), timeout=900).stdout, f"{streams} cold read(s) on {client}")


def slots_read(lab: Lab, client: str, *, slots: int, streams: int = 1) -> float:
    """A cold read at rsize 64 KiB and 16 MiB readahead with the slot table capped: RPCs in flight per round trip.
    Several streams read 64 MiB each, one 128 MiB."""
    with host_setting(lab, client, SLOTS, slots):
        return cold_read(lab, client, "vers=4.2,rsize=65536", streams=streams, mib=128 if streams == 1 else 64)


def negotiated_rsize(lab: Lab, client: str) -> int:
    """The rsize a fresh mount asking for 1 MiB gets from the server now."""
    out = lab.ssh(client, _mounted("vers=4.2,rsize=1048576", f"grep ' {POINT} ' /proc/mounts")).stdout
    return int(next(o for o in out.split()[3].split(",") if o.startswith("rsize="))[6:])


@contextmanager
def max_block_size(lab: Lab, size: int) -> Iterator[None]:
    """nfsd restarted with this max_block_size for the block (the grace period waited out), then as it was.
    nfsd always comes back with the thread count it had, even when the size is refused."""
    threads = int(lab.ssh(SERVER, f"cat {NFSD}/threads").stdout.strip())
    if threads < 1:
        raise RuntimeError("nfsd is not running on the lab server")

    def restart(value: int) -> None:
        done = lab.ssh(SERVER, f"echo 0 > {NFSD}/threads; echo {int(value)} > {NFSD}/max_block_size; ok=$?; "
                               f"rpc.nfsd {threads}; exit $ok", check=False)  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"max_block_size {value} was refused: {done.stderr.strip()}")
        deadline = time.monotonic() + 120
        while lab.ssh(SERVER, f"cat {NFSD}/v4_end_grace").stdout.strip() != "Y":
            if time.monotonic() > deadline:
                raise RuntimeError("nfsd's grace period did not end within 120 s")
            time.sleep(1)

    old = int(lab.ssh(SERVER, f"cat {NFSD}/max_block_size").stdout.strip())
    try:
        restart(size)
        yield
    finally:
        restart(old)


@contextmanager
def export_options(lab: Lab, extra: str) -> Iterator[None]:
    """The export re-exported sync with ``extra`` options for the block; /etc/exports put back after."""
    opts = EXPORT_OPTIONS.format(mode="sync") + (f",{extra}" if extra else "")
    lab.ssh(SERVER, f"exportfs -o {opts} {SUBNET_PREFIX}.0/24:{EXPORT}")
    try:
        yield
    finally:
        lab.ssh(SERVER, "exportfs -ra")


def sync_writes_per_s(lab: Lab, client: str, *, count: int = 200, writers: int = 1) -> float:
    """4 KiB O_SYNC writes per second to one file, by ``writers`` processes at once (each its own region):
    each a stable WRITE the server commits before it answers, which wdelay may gather into one flush."""
    each = max(1, count // writers)
    writes = _at_once([f"dd if=/dev/zero of=$f bs=4k count={each} seek={i * each} oflag=sync conv=notrunc status=none"
                       for i in range(writers)])  # fmt: skip
    body = (f"f={POINT}/{BENCH}/sync-$$; : > $f; s=$(date +%s.%N); {writes} e=$(date +%s.%N); rm -f $f; "
            f"echo \"{each * writers} / ($e - $s)\" | bc -l")  # fmt: skip
    return _float(lab.ssh(client, _mounted("vers=4.2", body), timeout=900).stdout, "sync writes")


@contextmanager
def dirty_limits(lab: Lab, client: str, dirty_bytes: int, background_bytes: int) -> Iterator[None]:
    """The client's dirty-page limits in bytes for the block; the ratios in force before are written back after
    (writing either unit zeroes the other, and a byte count of 0 is refused)."""
    vm = "/proc/sys/vm"
    ratios = lab.ssh(client, f"cat {vm}/dirty_ratio {vm}/dirty_background_ratio {vm}/dirty_bytes "
                             f"{vm}/dirty_background_bytes").stdout.split()  # fmt: skip
    try:  # a background limit above the hard one is clamped by the kernel, so the order does not matter
        lab.ssh(client, f"echo {int(background_bytes)} > {vm}/dirty_background_bytes; "
                        f"echo {int(dirty_bytes)} > {vm}/dirty_bytes")  # fmt: skip
        yield
    finally:
        hard = f"{vm}/dirty_bytes" if ratios[2] != "0" else f"{vm}/dirty_ratio"
        soft = f"{vm}/dirty_background_bytes" if ratios[3] != "0" else f"{vm}/dirty_background_ratio"
        hard_value = ratios[2] if ratios[2] != "0" else ratios[0]
        soft_value = ratios[3] if ratios[3] != "0" else ratios[1]
        lab.ssh(client, f"echo {shlex.quote(hard_value)} > {hard}; echo {shlex.quote(soft_value)} > {soft}")


def dirty_write(lab: Lab, client: str, *, dirty_bytes: int, background_bytes: int, mib: int = 192) -> float:
    """MB/s of writing a file and closing it flushed (dd conv=fsync) under these dirty-page limits."""
    body = (f"f={POINT}/{BENCH}/dirty-$$; s=$(date +%s.%N); "
            f"dd if=/dev/zero of=$f bs=1M count={mib} conv=fsync status=none; e=$(date +%s.%N); rm -f $f; "
            f"echo \"{mib} * 1.048576 / ($e - $s)\" | bc -l")  # fmt: skip
    with dirty_limits(lab, client, dirty_bytes, background_bytes):
        return _float(lab.ssh(client, _mounted("vers=4.2", body), timeout=900).stdout, "dirty write")
