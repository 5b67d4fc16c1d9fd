"""The Debian package: lintian passes, and it installs, runs and removes cleanly in a throwaway root.

The root is the machine's own / under an overlay whose writes go to a tmpfs, in a private mount
namespace (unshare -m): apt, dpkg, man, bash and the app run as on a real machine, and nothing they
write reaches it. What removal left behind is read off the overlay's upper layer.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import __version__
from tests.integration.test_shell_completion import tab
from tests.packaging._tools import REPO, copy_checkout, headless_env, require_tool, run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

DEB_NAME = f"nfs-tuner_{__version__}-1_amd64.deb"
# What dpkg, apt and the triggers of man-db, desktop-file-utils and the icon theme rewrite on any
# install and removal; none of it may still name nfs-tuner after the purge.
SYSTEM_STATE = ("var/lib/dpkg/", "var/log/", "var/cache/", "var/lib/apt/", "etc/ld.so.cache", "tmp/", "run/",
                "usr/share/icons/hicolor/icon-theme.cache", "usr/share/applications/mimeinfo.cache")  # fmt: skip
# dpkg's own record of what it did; man-db's index, whose stale entry points at a page that is gone.
KEEPS_THE_NAME = ("var/lib/dpkg/", "var/log/", "var/cache/man/")


@pytest.fixture(scope="module")
def deb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    for tool, package in (("dpkg-shlibdeps", "dpkg-dev"), ("patchelf", "patchelf"), ("fakeroot", "fakeroot")):
        require_tool(tool, package)
    work = tmp_path_factory.mktemp("deb")
    source = copy_checkout(work / "src")
    wheel = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"), str(source)],
                timeout=300, env=headless_env())  # fmt: skip
    assert wheel.returncode == 0, wheel.stderr
    (whl,) = (work / "dist").glob("nfs_tuner-*.whl")
    start = time.monotonic()
    built = run(["sh", str(REPO / "packaging/deb/build-deb.sh"), str(whl), str(work / "out")], timeout=900,
                env=headless_env(DEB_COMPRESS="gzip", DEB_COMPRESS_LEVEL="1"))  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr[-6000:]
    print(f"\n.deb built in {time.monotonic() - start:.0f} s")
    return work / "out" / DEB_NAME


def test_lintian_passes_with_only_the_explained_overrides(deb: Path) -> None:
    out = run([require_tool("lintian", "lintian"), "--fail-on", "error,warning", "--tag-display-limit", "0", "-I", str(deb)],
              timeout=600)  # fmt: skip
    tags = [line for line in out.stdout.splitlines() if line[:2] in ("E:", "W:", "I:")]
    assert out.returncode == 0 and not [t for t in tags if t[:2] != "I:"], out.stdout + out.stderr
    assert not [t for t in tags if "unused-override" in t], "an override no longer needed: remove it"


class Root:
    """/ under an overlay in a private mount namespace, kept by one sleeping process."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.merged = base / "merged"
        self.proc = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sleep", "infinity"])
        time.sleep(0.2)
        self.ns = ["nsenter", "-t", str(self.proc.pid), "-m"]
        script = f"""set -e
mount -t tmpfs tmpfs {base}
mkdir {base}/upper {base}/work {self.merged}
mount -t overlay overlay -o lowerdir=/,upperdir={base}/upper,workdir={base}/work {self.merged}
mount -t proc proc {self.merged}/proc
mount --rbind /dev {self.merged}/dev
mount --rbind /sys {self.merged}/sys
mount -t tmpfs tmpfs {self.merged}/tmp
mount -t tmpfs tmpfs {self.merged}/run"""
        done = run([*self.ns, "sh", "-c", script])
        assert done.returncode == 0, done.stderr

    def argv(self, command: str) -> list[str]:
        return [*self.ns, "/usr/sbin/chroot", str(self.merged), "sh", "-c", command]

    def sh(self, command: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8", "DEBIAN_FRONTEND": "noninteractive"}
        return run(self.argv(command), timeout=timeout, env=env)

    def upper(self) -> Path:
        """The overlay's upper layer, as seen from inside the namespace (it lives on its tmpfs)."""
        return Path(f"/proc/{self.proc.pid}/root{self.base}/upper")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture(scope="module")
def root(deb: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Root]:
    if os.geteuid() != 0:
        pytest.skip("installing into a throwaway root needs root (mount namespaces, overlayfs)")
    sandbox = Root(tmp_path_factory.mktemp("root"))
    try:
        copied = run([*sandbox.ns, "cp", str(deb), f"{sandbox.merged}/tmp/{DEB_NAME}"])
        assert copied.returncode == 0, copied.stderr
        start = time.monotonic()
        # As an admin installs a downloaded package: apt resolves its Depends (all present here).
        out = sandbox.sh(f"apt-get install -y -q --no-install-recommends /tmp/{DEB_NAME}", timeout=900)
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
        print(f"\ninstalled in {time.monotonic() - start:.0f} s")
        yield sandbox
    finally:
        sandbox.close()


def test_the_installed_command_prints_its_version_for_any_user(root: Root) -> None:
    out = root.sh("runuser -u nobody -- nfs-tuner --version")
    assert out.returncode == 0 and out.stdout.strip() == f"nfs-tuner {__version__}", out.stderr
    assert root.sh("command -v nfs-tuner").stdout.strip() == "/usr/bin/nfs-tuner"


def test_man_finds_and_renders_the_page(root: Root) -> None:
    assert root.sh("man -w nfs-tuner").stdout.strip() == "/usr/share/man/man1/nfs-tuner.1.gz"
    out = root.sh("MANWIDTH=100 man --warnings -l /usr/share/man/man1/nfs-tuner.1.gz")
    assert out.returncode == 0 and not out.stderr.strip(), out.stderr
    assert "nfs-tuner sweep" in out.stdout and "EXAMPLES" in out.stdout


def test_bash_completion_loads_the_installed_script_on_first_tab(root: Root, tmp_path: Path) -> None:
    shell = [*root.argv("exec bash --norc --noprofile -i")]
    setup = ["export PATH=/usr/bin:/bin", "source /usr/share/bash-completion/bash_completion"]  # the packaged nfs-tuner
    seen = tab(shell, setup, "nfs-tuner sweep --knob rs", tmp_path, "rsize=")
    assert "--knob rsize=" in seen


def test_fish_and_zsh_find_the_installed_scripts(root: Root) -> None:
    fish = root.sh("HOME=/tmp XDG_CONFIG_HOME=/tmp/none fish -c 'complete -C \"nfs-tuner sweep --knob rs\"'")
    assert fish.stdout.split("\t")[0] == "rsize=", fish.stdout + fish.stderr
    zsh = root.sh("HOME=/tmp zsh -f -c 'autoload -U compinit; compinit -u -D; print -r -- $_comps[nfs-tuner]'")
    assert zsh.stdout.strip() == "_nfs-tuner", zsh.stdout + zsh.stderr


def test_the_wizard_opens_offscreen(root: Root) -> None:
    out = root.sh("mkdir -p /tmp/h && chown nobody /tmp/h && timeout 15 runuser -u nobody -- env HOME=/tmp/h "
                  "QT_QPA_PLATFORM=offscreen NFS_TUNER_DB=/tmp/h/s.db nfs-tuner", timeout=60)  # fmt: skip
    assert out.returncode == 124, f"the wizard exited by itself ({out.returncode}):\n{out.stderr[-3000:]}"
    assert "Could not load the Qt platform plugin" not in out.stderr


def _left_behind(upper: Path) -> list[str]:
    """What the upper layer holds that the lower does not: new files, changed files, deletions."""
    found = []
    for path in sorted(upper.rglob("*")):
        rel = str(path.relative_to(upper))
        info = path.lstat()
        lower = Path("/") / rel
        if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
            found.append(f"deleted {rel}")
        elif stat.S_ISDIR(info.st_mode):
            if not lower.is_dir():
                found.append(f"new directory {rel}")
        elif not (lower.is_file() and lower.read_bytes() == path.read_bytes()):
            found.append(f"changed {rel}")
    return found


def test_purge_leaves_nothing_behind(root: Root) -> None:
    assert root.sh("test -d /usr/lib/nfs-tuner/lib && find /usr/lib/nfs-tuner -name '*.pyc' | grep -q .").returncode == 0, \
        "postinst compiled no bytecode"  # fmt: skip
    out = root.sh("dpkg --purge nfs-tuner")
    assert out.returncode == 0, out.stdout + out.stderr
    upper = root.upper()
    left = [e for e in _left_behind(upper) if not e.split(" ", 1)[1].startswith(SYSTEM_STATE)]
    assert not left, "removal left behind:\n" + "\n".join(left)
    named = [str(p.relative_to(upper)) for p in upper.rglob("*") if p.is_file() and not p.is_symlink()
             and not str(p.relative_to(upper)).startswith(KEEPS_THE_NAME) and b"nfs-tuner" in p.read_bytes()]  # fmt: skip
    assert not named, f"system files still naming nfs-tuner after the purge: {named}"
