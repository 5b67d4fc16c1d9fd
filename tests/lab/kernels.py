"""The lab's kernels: Debian bookworm's UML 6.1 (the host's package), or Debian testing's 7.2.

6.1 is the ``user-mode-linux`` package installed on this machine (tests/system-packages.txt).
7.2 is fetched from Debian's archive by this module, by pinned pool paths whose SHA-256
digests were taken from testing's Packages index, and prepared once under the lab
directory (``<lab>/kernels``: the debs, and the kernel ready to boot in ``7.2/``; ``lab down``
leaves it, so the next lab boots at once):

- ``linux.uml`` and its modules, from ``user-mode-linux``. It was built against glibc
  2.43 (bookworm has 2.36), so testing's own ``libc6`` is extracted beside it and the
  binary's interpreter and library path are set to it (patchelf). Running it through
  ``ld.so --library-path`` instead does not work: UML re-executes /proc/self/exe at start
  (to turn address randomisation off), which is then ld.so without its arguments.
- ``nfsdctl`` (nfs-utils 3.1, from ``nfs-kernel-server``) with the libnl it needs, set to
  load its C library from ``/run/lab-userland/lib``, where the guests mount this
  directory. The guests keep the host's bookworm userland (nfs-utils 2.6.2, python3.11)
  otherwise: both kernels then run the same tools, so a difference between them in the
  lab's figures is the kernel's, and nfsdctl is the one piece of today's nfs-utils the
  product needs (nfsd's netlink interface: threads per pool, min-threads, pool mode,
  listeners, versions). A whole testing root (debootstrap) would cost minutes and a few
  hundred MB on a clean CI machine, and would change every tool under the benchmarks.

Pool files of a suite that moved on leave the archive: a pin that 404s says so, and the
pins below are then updated from testing's Packages index (version, path, SHA-256, size).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MIRROR = os.environ.get("NFS_TUNER_DEBIAN_MIRROR", "http://deb.debian.org/debian")
SYSTEM_MODULES = Path("/usr/lib/uml/modules")
GUEST_USERLAND = "/run/lab-userland"  # where a guest mounts a kernel's userland directory (guest_init.sh)
DEFAULT = "6.1"


@dataclass(frozen=True)
class Deb:
    pool_path: str
    sha256: str
    size: int

    @property
    def file_name(self) -> str:
        return self.pool_path.rsplit("/", 1)[1]


# Debian testing, 2026-11-27 (Packages index of that day).
UML_72 = Deb("pool/main/u/user-mode-linux/user-mode-linux_7.2um1_amd64.deb",
             "f947c9244fd79d481299df2ad68961f6b3b7703bff38c4b0e726f861161da62c", 36430088)
LIBC_243 = Deb("pool/main/g/glibc/libc6_2.43-7_amd64.deb",
               "5c71715c51103beb4fbba9fe9f8dff604af6610dfa71c70bff342f54a7860803", 1866392)
NFS_SERVER_311 = Deb("pool/main/n/nfs-utils/nfs-kernel-server_3.1.1-1_amd64.deb",
                     "56830f653f32e7e30396233c5d376d83020f5ab73a4322bf8e5a578a32a4a70f", 214200)
LIBNL_312 = Deb("pool/main/libn/libnl3/libnl-3-200_3.12.0-2+b1_amd64.deb",
                "a5ca78bbb9d5cc067b78952c5d38b7caac831d42e94b85b91edf1f6f00dfd48a", 62208)
LIBNL_GENL_312 = Deb("pool/main/libn/libnl3/libnl-genl-3-200_3.12.0-2+b1_amd64.deb",
                     "a4d295d6c273216a2dd6de7890f0f0da0a02963cb3cd366c726028922dc6ee15", 18720)  # fmt: skip

FETCHED: dict[str, tuple[Deb, ...]] = {"7.2": (UML_72, LIBC_243, NFS_SERVER_311, LIBNL_312, LIBNL_GENL_312)}
# UML 6.16 and later can catch a guest process's system calls with a seccomp filter instead of
# ptrace: each costs the host about half the context switches. On this machine 7.2 with it spends
# 2.2x less host CPU than 6.1 to start a program or write a file over NFS (1.4x less than 7.2 under
# ptrace). `auto` falls back to ptrace where the host refuses the filter. Its known weakness (a guest
# process could reach the guest kernel's memory) is the guest's own: the lab's guests are ours.
BOOT_ARGS: dict[str, tuple[str, ...]] = {"7.2": ("seccomp=auto",)}
NAMES = (DEFAULT, *FETCHED)
LIBC_DIR = "usr/lib/x86_64-linux-gnu"
USERLAND_BINARIES = ("usr/sbin/nfsdctl",)


class KernelError(RuntimeError):
    """A kernel could not be had; the message says which step and what to do."""


@dataclass(frozen=True)
class Kernel:
    """A UML kernel ready to boot: its binary, its modules' directory and the userland it adds."""

    name: str
    binary: Path
    modules: Path  # the directory holding <release>/ (modules.dep, kernel/)
    userland: Path | None  # sbin/ and lib/ the guests mount at GUEST_USERLAND, or None
    boot_args: tuple[str, ...] = ()  # what this kernel adds to the guests' command line

    @property
    def release(self) -> str | None:
        found = sorted(p.name for p in self.modules.glob("*") if (p / "modules.dep").exists()) if self.modules.is_dir() else []
        return found[-1] if found else None


def kernel(name: str, kernels: Path, say: Callable[[str], None] = print) -> Kernel:
    """The named kernel; one not the host's own is fetched (``kernels``/debs) and prepared (``kernels``/NAME) once."""
    if name == DEFAULT:
        binary = shutil.which("linux.uml")
        if binary is None:
            raise KernelError("`linux.uml` is missing: run `make system-deps` as root (tests/system-packages.txt)")
        return Kernel(name, Path(binary), SYSTEM_MODULES, None)
    if name not in FETCHED:
        raise KernelError(f"unknown lab kernel {name!r}; choose one of {', '.join(NAMES)}")
    home = kernels / name
    ready = home / "ready.json"
    pins = _pins(FETCHED[name])
    kernels.mkdir(parents=True, exist_ok=True)
    with open(kernels / f".{name}.lock", "w") as lock:  # labs started side by side prepare it once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (ready.exists() and _read_json(ready) == pins):
            _prepare(name, FETCHED[name], home, kernels / "debs", say)
            ready.write_text(json.dumps(pins, indent=1))
    return Kernel(name, home / "linux.uml", home / "modules", home / "userland", BOOT_ARGS.get(name, ()))


def _pins(debs: tuple[Deb, ...]) -> list[str]:
    return [f"{d.pool_path} {d.sha256}" for d in debs]


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def fetch(deb: Deb, cache: Path, say: Callable[[str], None] = print) -> Path:
    """``deb`` from the archive into ``cache`` (once), its size and SHA-256 checked."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / deb.file_name
    if path.exists() and _digest(path) == deb.sha256:
        return path
    url = f"{MIRROR}/{deb.pool_path}"
    say(f"lab: fetching {url} ({deb.size / 1e6:.1f} MB)")
    part = path.with_suffix(".part")
    try:
        with urllib.request.urlopen(url, timeout=60) as response, open(part, "wb") as out:
            shutil.copyfileobj(response, out, 1 << 20)
    except urllib.error.HTTPError as exc:
        part.unlink(missing_ok=True)
        hint = " (the archive drops a testing package once a newer one replaces it: update the pins in tests/lab/kernels.py)"
        raise KernelError(f"fetching {url} failed: HTTP {exc.code}{hint if exc.code == 404 else ''}") from None
    except (OSError, urllib.error.URLError) as exc:
        part.unlink(missing_ok=True)
        raise KernelError(f"fetching {url} failed: {exc}") from None
    got = _digest(part)
    if part.stat().st_size != deb.size or got != deb.sha256:
        part.unlink()
        raise KernelError(f"{url}: {part.stat().st_size if part.exists() else '?'} bytes with SHA-256 {got}, "
                          f"pinned {deb.size} bytes with {deb.sha256}: refused")  # fmt: skip
    part.replace(path)
    return path


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _prepare(name: str, debs: tuple[Deb, ...], home: Path, cache: Path, say: Callable[[str], None]) -> None:
    for tool in ("dpkg-deb", "patchelf"):
        if shutil.which(tool) is None:
            raise KernelError(f"`{tool}` is missing: run `make system-deps` as root (tests/system-packages.txt)")
    files = [fetch(d, cache, say) for d in debs]
    say(f"lab: preparing UML {name} in {home}")
    shutil.rmtree(home, ignore_errors=True)
    home.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=home.parent) as tmp:
        tree = Path(tmp) / "tree"
        for deb in files:
            _run(["dpkg-deb", "-x", str(deb), str(tree)])
        stage = Path(tmp) / "stage"
        (stage / "userland" / "sbin").mkdir(parents=True)
        shutil.move(tree / "usr/lib/uml/modules", stage / "modules")
        # One C library, two homes: the kernel's on the host (an absolute path into the lab
        # directory), the guests' tools' where the guests mount the userland.
        shutil.copytree(tree / LIBC_DIR, stage / "userland" / "lib", symlinks=True)
        shutil.copy2(tree / "usr/bin/linux.uml", stage / "linux.uml")
        _set_loader(stage / "linux.uml", home / "userland" / "lib")
        for binary in USERLAND_BINARIES:
            target = stage / "userland" / "sbin" / Path(binary).name
            shutil.copy2(tree / binary, target)
            _set_loader(target, Path(GUEST_USERLAND) / "lib")
        stage.rename(home)
    for path in [home, *home.rglob("*")]:  # the helper runs only root-owned programs no one else may write
        if not path.is_symlink():
            os.chmod(path, path.stat().st_mode & ~0o022)


def _set_loader(binary: Path, lib: Path) -> None:
    # DT_RPATH (--force-rpath), not RUNPATH: it also holds for the libraries' own
    # dependencies, so no part of bookworm's older glibc (libresolv, libm) mixes in.
    _run(["patchelf", "--set-interpreter", str(lib / "ld-linux-x86-64.so.2"), "--force-rpath", "--set-rpath", str(lib), str(binary)])


def _run(argv: list[str]) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise KernelError(f"`{' '.join(argv)}` exited {proc.returncode}: {proc.stderr.strip()}")
