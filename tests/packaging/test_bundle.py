"""The PyInstaller recipe builds a single-file bundle that starts.

One build per run (a few minutes on two cores); the build venv in build/bundle-venv is
reused across runs, the bundle itself goes to a temporary directory.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from app import __version__
from tests.packaging._tools import APP_ID, REPO, assert_desktop_file_valid, headless_env, run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

MAX_BYTES = 150 * 1024 * 1024  # a bundle past this has picked up Qt modules it should not


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out_dir = tmp_path_factory.mktemp("bundle")
    start = time.monotonic()
    out = run(
        ["sh", str(REPO / "packaging" / "build-bundle.sh"), str(out_dir / "dist")],
        timeout=1500, env=headless_env(BUNDLE_WORK=str(out_dir / "work")), cwd=REPO,
    )
    assert out.returncode == 0, f"bundle build failed:\n{out.stdout[-4000:]}\n{out.stderr[-6000:]}"
    print(f"\nbundle build took {time.monotonic() - start:.0f} s")
    return out_dir / "dist" / "nfs-tuner"


def test_bundle_is_a_single_executable(bundle: Path) -> None:
    assert bundle.is_file() and os.access(bundle, os.X_OK)
    assert [p.name for p in bundle.parent.iterdir()] == ["nfs-tuner"], "onefile: nothing beside it"
    size = bundle.stat().st_size
    print(f"\nbundle size {size / 2**20:.0f} MiB")
    assert 10 * 2**20 < size < MAX_BYTES


def test_bundle_prints_its_version(bundle: Path, tmp_path: Path) -> None:
    out = run([str(bundle), "--version"], env=headless_env(), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"nfs-tuner {__version__}"


def test_bundle_prints_help(bundle: Path, tmp_path: Path) -> None:
    out = run([str(bundle), "--help"], env=headless_env(), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: nfs-tuner")
    assert "--install-desktop-entry" in out.stdout and "--db PATH" in out.stdout


def test_bundle_installs_its_desktop_entry(bundle: Path, tmp_path: Path) -> None:
    out = run([str(bundle), "--install-desktop-entry"], env=headless_env(XDG_DATA_HOME=str(tmp_path)))
    assert out.returncode == 0, out.stdout + out.stderr
    desktop = tmp_path / "applications" / f"{APP_ID}.desktop"
    # The menu entry must start the bundle itself, not the temporary unpacked copy.
    assert f"Exec={bundle}\n" in desktop.read_text(encoding="utf-8")
    assert (tmp_path / "icons" / "hicolor" / "256x256" / "apps" / f"{APP_ID}.png").is_file()
    assert_desktop_file_valid(desktop)


def test_bundle_opens_its_window(bundle: Path, tmp_path: Path) -> None:
    """The GUI starts and stays up (a missing Qt plugin or library makes it exit at once)."""
    env = headless_env(QT_QPA_PLATFORM="offscreen", NFS_TUNER_DB=str(tmp_path / "s.db"), HOME=str(tmp_path))
    proc = subprocess.Popen(
        [str(bundle)], env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True,
    )
    try:
        exited = proc.wait(timeout=20)  # unpacking alone takes seconds on a busy machine
    except subprocess.TimeoutExpired:
        exited = None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # its own session: the bootloader and its child
        _, err = proc.communicate(timeout=30)
    assert exited is None, f"the bundle's GUI exited with {exited}:\n{err}"
    assert "Could not load the Qt platform plugin" not in err


def test_bundle_carries_the_files_read_at_run_time(bundle: Path) -> None:
    """Files read by path or importlib.resources, which PyInstaller's import scan misses."""
    lister = (
        "import sys\nfrom PyInstaller.archive.readers import CArchiveReader\n"
        "print('\\n'.join(CArchiveReader(sys.argv[1]).toc))"
    )
    venv_python = os.environ.get("BUNDLE_VENV", str(REPO / "build" / "bundle-venv")) + "/bin/python"
    out = run([venv_python, "-c", lister, str(bundle)])
    assert out.returncode == 0, out.stderr
    names = set(out.stdout.splitlines())
    wanted = {
        "experiments/agent.py",  # sent to the hosts as source text
        "app/knobs/deadman_host.py",  # likewise
        f"resources/desktop/{APP_ID}.desktop",
        f"resources/desktop/{APP_ID}-256.png",
    }
    assert wanted <= names, f"missing from the bundle: {sorted(wanted - names)}"
    gtk = sorted(n for n in names if "libgtk-3" in n or "libqgtk3" in n)
    assert not gtk, f"GTK theme stack should be left out: {gtk}"
