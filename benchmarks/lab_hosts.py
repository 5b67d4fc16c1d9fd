"""The lab as the benchmarks reach it: their common arguments, ssh, and the standing mounts.

A client's own mounts of the server are taken down for a benchmark and put back after. A test mount joins the NFS connection of any other mount of the same server (one per
server and NFS version), and TCP fixed that connection's frame size when it connected.
The lab's clients mount the export at /mnt/lab from boot, at MTU 1500, so a benchmark
that sweeps or sets the MTU unmounts them first (the sweep would refuse those trials).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def ssh(ssh_config: Path, host: str, command: str, *, check: bool = True) -> str:
    p = subprocess.run(["ssh", "-F", str(ssh_config), host, command], capture_output=True, text=True, timeout=300)
    if check and p.returncode != 0:
        raise RuntimeError(f"{host}: {command!r} failed ({p.returncode}): {p.stderr.strip() or p.stdout.strip()}")
    return p.stdout


REPO = Path(__file__).resolve().parents[1]


def add_lab_args(ap: argparse.ArgumentParser) -> None:
    """Where the benchmark runs: the lab by default."""
    ap.add_argument("--ssh-config", type=Path, default=REPO / ".lab" / "ssh_config")
    ap.add_argument("--server", default="lab-server")
    ap.add_argument("--client", default="lab-client1")
    ap.add_argument("--export", default="/srv/nfs")


def address_of(ssh_config: Path, host: str, name: str) -> str:
    """The IPv4 address ``name`` has as seen from ``host``."""
    return ssh(ssh_config, host, f"getent ahostsv4 {shlex.quote(name)}").split()[0]


def standing_mounts(ssh_config: Path, client: str, server: str) -> list[tuple[str, str, str]]:
    """(source, mount point, options) of the client's NFS mounts of the server, not nfs-tuner's."""
    address = address_of(ssh_config, client, server)
    out = []
    for line in ssh(ssh_config, client, "cat /proc/mounts").splitlines():
        source, point, fstype, options = line.split()[:4]
        if fstype.startswith("nfs") and f"addr={address}" in options.split(",") and "nfs-tuner-" not in point:
            out.append((source, point, options))
    return out


@contextmanager
def without_standing_mounts(ssh_config: Path, client: str, server: str, *, keep: bool = False) -> Iterator[None]:
    mounts = [] if keep else standing_mounts(ssh_config, client, server)
    for _, point, _ in mounts:
        print(f"unmounting {client}:{point} for the run (put back at the end)", flush=True)
        ssh(ssh_config, client, f"umount {shlex.quote(point)}")
    try:
        yield
    finally:
        for source, point, options in mounts:
            q = shlex.quote(point)
            ssh(ssh_config, client, f"mountpoint -q {q} || mount -t nfs -o {shlex.quote(options)} {shlex.quote(source)} {q}",
                check=False)  # fmt: skip
