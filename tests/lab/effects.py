"""What each lab profile was built to show, measured without nfs-tuner.

Plain tools run directly on the guests (dd, tar, find, rm, fio, a Python create
loop like bonnie++'s), so a figure here is a fact about the lab, not about the
product. ``benchmarks/lab_profiles.py`` runs them long and records the grids; the
profile lab tests (tests/lab/test_profiles.py) run them short, to check that each
effect is there.

Every function leaves the knob it sets as it found it.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tests.lab.lab import SUBNET_PREFIX, Lab

SERVER = "lab-server"
CLIENTS = ("lab-client1", "lab-client2")
EXPORT = "/srv/nfs"
BENCH = "bench"  # under the export
MOUNT = "/mnt/lab"
EXPORT_OPTIONS = "rw,{mode},no_subtree_check,no_root_squash"


def _float(text: str, what: str) -> float:
    try:
        return float(text.strip().split()[-1])
    except (ValueError, IndexError):
        raise RuntimeError(f"{what}: no figure in {text!r}") from None


def drop_caches(lab: Lab, *hosts: str) -> None:
    for host in hosts:
        lab.ssh(host, "sync; echo 3 > /proc/sys/vm/drop_caches", timeout=300)


def prepare_file(lab: Lab, name: str, mib: int) -> str:
    """A file of ``mib`` MiB under the export, written on the server once; its path there."""
    path = f"{EXPORT}/{BENCH}/{name}"
    q = shlex.quote(path)
    lab.ssh(SERVER, f"mkdir -p {EXPORT}/{BENCH} && chmod 1777 {EXPORT}/{BENCH} && "
                    f"[ \"$(stat -c %s {q} 2>/dev/null)\" = {mib * 1024 * 1024} ] || "
                    f"dd if=/dev/urandom of={q} bs=1M count={mib} status=none conv=fsync", timeout=600)  # fmt: skip
    return path


# ------------------------------------------------------------ wan: readahead, rsize
def cold_seq_read(lab: Lab, client: str, *, rsize: int, read_ahead_kb: int, mib: int = 128) -> float:
    """MB/s of one cold dd through a mount of its own with this rsize and readahead."""
    name = prepare_file(lab, f"seq-{mib}m", mib).rsplit("/", 1)[1]
    drop_caches(lab, SERVER)
    script = (
        "set -e; mkdir -p /mnt/bench; umount /mnt/bench 2>/dev/null || true; "
        f"mount -t nfs -o vers=4.2,rsize={rsize} {SERVER}:{EXPORT} /mnt/bench; "
        f"echo {read_ahead_kb} > /sys/class/bdi/$(mountpoint -d /mnt/bench)/read_ahead_kb; "
        "sync; echo 3 > /proc/sys/vm/drop_caches; "
        f"s=$(date +%s.%N); dd if=/mnt/bench/{BENCH}/{name} of=/dev/null bs=1M status=none; e=$(date +%s.%N); "
        "umount /mnt/bench; "
        f"echo \"{mib} * 1.048576 / ($e - $s)\" | bc -l"
    )
    return _float(lab.ssh(client, script, timeout=600).stdout, f"cold read on {client}")


# -------------------------------------------------- hdd: sync/async, stripe cache
@contextmanager
def export_mode(lab: Lab, mode: str) -> Iterator[None]:
    """The export re-exported sync or async for the block; /etc/exports put back after."""
    if mode not in ("sync", "async"):
        raise ValueError(mode)
    opts = EXPORT_OPTIONS.format(mode=mode)
    lab.ssh(SERVER, f"exportfs -o {opts} {SUBNET_PREFIX}.0/24:{EXPORT}")
    try:
        yield
    finally:
        lab.ssh(SERVER, "exportfs -ra")


def creates_per_s(lab: Lab, client: str, *, files: int = 300, size: int = 4096) -> float:
    """bonnie++-style creates: open, write ``size`` bytes, close, in one new directory."""
    tag = f"creates-{time.time_ns()}"
    code = (
        "import os,sys,time\n"
        f"d={MOUNT!r}+'/{BENCH}/{tag}'; os.makedirs(d); b=b'x'*{size}; t=time.time()\n"
        f"for i in range({files}):\n"
        "    fd=os.open('%s/f%06d'%(d,i),os.O_CREAT|os.O_WRONLY|os.O_EXCL,0o644); os.write(fd,b); os.close(fd)\n"
        f"print({files}/(time.time()-t))\n"
    )
    try:
        return _float(lab.ssh(client, f"mkdir -p {MOUNT}/{BENCH} && python3 -c {shlex.quote(code)}", timeout=900).stdout, "creates")
    finally:
        lab.ssh(SERVER, f"rm -rf {EXPORT}/{BENCH}/{tag}", timeout=600)


@dataclass(frozen=True)
class TreeTimes:
    untar_s: float
    find_s: float
    rm_s: float


def make_tree_tarball(lab: Lab, client: str, *, dirs: int = 40, per_dir: int = 40) -> str:
    """A source-tree-like tarball in the client's /tmp (small files, 1-8 KiB): its path."""
    path = f"/tmp/tree-{dirs}x{per_dir}.tar"
    code = (
        "import os,random,tarfile,io\n"
        f"r=random.Random(7); t=tarfile.open({path!r},'w')\n"
        f"for d in range({dirs}):\n"
        f"    for f in range({per_dir}):\n"
        "        data=os.urandom(r.randint(1024,8192)); i=tarfile.TarInfo('tree/d%03d/f%03d.c'%(d,f)); i.size=len(data)\n"
        "        t.addfile(i, io.BytesIO(data))\n"
        "t.close()\n"
    )
    lab.ssh(client, f"[ -f {path} ] || python3 -c {shlex.quote(code)}")
    return path


def tree_times(lab: Lab, client: str, *, dirs: int = 40, per_dir: int = 40) -> TreeTimes:
    """The seeds' kernel-tree test in small: untar, then find over it cold, then rm -rf."""
    tarball = make_tree_tarball(lab, client, dirs=dirs, per_dir=per_dir)
    where = f"{MOUNT}/{BENCH}/tree-{time.time_ns()}"
    w = shlex.quote(where)
    script = (
        f"set -e; mkdir -p {w}; t0=$(date +%s.%N); tar -xf {tarball} -C {w}; sync; t1=$(date +%s.%N); "
        "echo 3 > /proc/sys/vm/drop_caches; "
        f"find {w} -type f | wc -l >/dev/null; t2=$(date +%s.%N); rm -rf {w}; t3=$(date +%s.%N); "
        'echo "$t1 - $t0" | bc -l; echo "$t2 - $t1" | bc -l; echo "$t3 - $t2" | bc -l'
    )
    try:
        out = lab.ssh(client, script, timeout=1800).stdout.split()
    finally:
        lab.ssh(SERVER, f"rm -rf {EXPORT}/{BENCH}/{where.rsplit('/', 1)[1]}", timeout=600)
    return TreeTimes(*(float(x) for x in out[-3:]))


@contextmanager
def host_setting(lab: Lab, host: str, path: str, value: int) -> Iterator[None]:
    """A sysfs/proc value on a guest for the block, then the old one back."""
    q = shlex.quote(path)
    old = lab.ssh(host, f"cat {q}").stdout.strip()
    lab.ssh(host, f"echo {int(value)} > {q}")
    try:
        yield
    finally:
        lab.ssh(host, f"echo {shlex.quote(old)} > {q}")


STRIPE_CACHE = "/sys/block/md0/md/stripe_cache_size"
NFSD_THREADS = "/proc/fs/nfsd/threads"


def md_seq_write(lab: Lab, *, stripe_cache_size: int, mib: int = 256) -> float:
    """MB/s of a buffered sequential write to the RAID-5's file system on the server, flushed."""
    path = f"{EXPORT}/{BENCH}/sw-{time.time_ns()}"
    with host_setting(lab, SERVER, STRIPE_CACHE, stripe_cache_size):
        script = (
            f"mkdir -p {EXPORT}/{BENCH}; sync; s=$(date +%s.%N); "
            f"dd if=/dev/zero of={path} bs=1M count={mib} conv=fdatasync status=none; e=$(date +%s.%N); rm -f {path}; "
            f'echo "{mib} * 1.048576 / ($e - $s)" | bc -l'
        )
        return _float(lab.ssh(SERVER, script, timeout=900).stdout, "md write")


# ----------------------------------------------------------- contention: threads
@dataclass(frozen=True)
class RandReadResult:
    iops: float
    arrived: int  # requests that reached a pool (pool_stats packets-arrived)
    no_idle_thread: int  # of those, how many found no idle nfsd thread (arrived - woken, at least 0)

    @property
    def queued_share(self) -> float:
        return self.no_idle_thread / self.arrived if self.arrived else 0.0


def pool_stats(lab: Lab) -> tuple[int, int, int]:
    """(packets-arrived, sockets-enqueued, threads-woken) summed over the pools."""
    rows = [ln.split() for ln in lab.ssh(SERVER, "cat /proc/fs/nfsd/pool_stats").stdout.splitlines() if ln and not ln.startswith("#")]
    return sum(int(r[1]) for r in rows), sum(int(r[2]) for r in rows), sum(int(r[3]) for r in rows)


def rand_read(lab: Lab, *, threads: int, streams: int = 8, seconds: int = 10, mib: int = 192,
              clients: tuple[str, ...] = CLIENTS) -> RandReadResult:  # fmt: skip
    """IOPS of 4 KiB O_DIRECT random reads by ``streams`` fio jobs on each client, cold server cache."""
    files = {c: prepare_file(lab, f"rr-{c}-{mib}m", mib).rsplit("/", 1)[1] for c in clients}
    job = "--name=rr --rw=randread --bs=4k --direct=1 --ioengine=psync --time_based --group_reporting --output-format=terse --terse-version=3"
    with host_setting(lab, SERVER, NFSD_THREADS, threads):
        drop_caches(lab, SERVER)
        before = pool_stats(lab)
        procs = [
            lab.ssh_start(c, f"fio {job} --numjobs={streams} --runtime={seconds} --filename={MOUNT}/{BENCH}/{files[c]}")
            for c in clients
        ]
        outs = [p.communicate(timeout=seconds + 300)[0] for p in procs]
        after = pool_stats(lab)
    iops = 0.0
    for c, out in zip(clients, outs):
        fields = out.strip().splitlines()[-1].split(";") if out.strip() else []
        if len(fields) < 8:
            raise RuntimeError(f"fio on {c} gave no result: {out[-300:]!r}")
        iops += float(fields[7])  # terse v3: read IOPS
    # A request that found an idle thread woke it: arrived - woken waited, on both lab kernels (app.recommend.
    # telemetry). enqueued - woken, its twin on 6.1 (where enqueued = arrived), overstates 7.2's waits: there a
    # transport is enqueued again after each request (enqueued 1.6× arrived at 32 threads) and a wake-up
    # may serve it, so woken can exceed arrived.
    arrived, woken = after[0] - before[0], after[2] - before[2]
    return RandReadResult(iops, arrived, max(0, arrived - woken))


def rtt_ms(lab: Lab, client: str = CLIENTS[0]) -> float:
    out = lab.ssh(client, f"ping -c 5 -i 0.2 -q {SERVER}").stdout
    m = re.search(r"= [\d.]+/([\d.]+)/", out)
    if not m:
        raise RuntimeError(f"no RTT in {out!r}")
    return float(m.group(1))
