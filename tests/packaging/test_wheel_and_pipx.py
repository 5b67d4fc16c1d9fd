"""What `make dist` makes: a wheel and sdist twine accepts, carrying the desktop data, and a wheel
that `pipx install dist/nfs_tuner-*.whl` turns into a working nfs-tuner.

All build from a copy of the working tree, so nothing is written into the shared
checkout (an in-tree build would leave build/ and egg-info behind).
"""

from __future__ import annotations

import shutil
import tarfile
import sys
import time
import zipfile
from pathlib import Path

import pytest

from app import __version__
from app.desktop_entry import data_files
from tests.packaging._tools import (
    APP_ID,
    assert_desktop_file_valid,
    copy_checkout,
    headless_env,
    python_for_venvs,
    run,
)

pytestmark = pytest.mark.slow  # every test here builds the app (python -m build), some install it

PACKAGE_DIR = "resources/desktop"
HINT = (
    "the package-data patterns in pyproject.toml ([tool.setuptools.package-data]) must "
    "match every file of resources/desktop (and resources/desktop/__init__.py must exist)"
)


@pytest.fixture(scope="module")
def source_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_checkout(tmp_path_factory.mktemp("src") / "nfs-tuner")


@pytest.fixture(scope="module")
def dist(source_copy: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m build` as `make dist` runs it: the sdist, then the wheel built from that sdist."""
    out_dir = tmp_path_factory.mktemp("dist")
    out = run([sys.executable, "-m", "build", "--outdir", str(out_dir), str(source_copy)], timeout=600, env=headless_env())
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out_dir


def test_twine_accepts_the_wheel_and_the_sdist(dist: Path) -> None:
    files = sorted(str(p) for p in dist.iterdir())
    assert len(files) == 2, files
    out = run([sys.executable, "-m", "twine", "check", "--strict", *files], timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_sdist_carries_the_sources_the_tests_and_tools_read(dist: Path) -> None:
    (sdist,) = dist.glob("nfs_tuner-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"pyproject.toml", "README.md", "app/shell/manpage.py", "experiments/agent.py"} <= names


def test_wheel_contains_the_desktop_data(dist: Path) -> None:
    (wheel,) = dist.glob("nfs_tuner-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {f"{PACKAGE_DIR}/{f.resource}" for f in data_files()} | {f"{PACKAGE_DIR}/__init__.py"}
    missing = sorted(wanted - names)
    assert not missing, f"missing from {wheel.name}: {missing}; {HINT}"


def _pipx(cache: Path) -> list[str]:
    """pipx from PATH, else from a venv made once per test session."""
    found = shutil.which("pipx")
    if found:
        return [found]
    venv = cache / "pipx-venv"
    if not (venv / "bin" / "pipx").exists():
        made = run([python_for_venvs(), "-m", "venv", str(venv)], timeout=120)
        assert made.returncode == 0, made.stderr
        got = run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "pipx>=1.4"], timeout=300)
        assert got.returncode == 0, f"installing pipx failed: {got.stderr}"
    return [str(venv / "bin" / "pipx")]


@pytest.fixture(scope="module")
def pipx_install(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`pipx install dist/nfs_tuner-*.whl` into a private PIPX_HOME; returns PIPX_BIN_DIR."""
    root = tmp_path_factory.mktemp("pipx")
    bin_dir = root / "bin"
    env = headless_env(
        PIPX_HOME=str(root / "home"), PIPX_BIN_DIR=str(bin_dir), PIPX_MAN_DIR=str(root / "man"),
        PIPX_DEFAULT_PYTHON=python_for_venvs(),
    )
    start = time.monotonic()
    (wheel,) = dist.glob("nfs_tuner-*.whl")
    out = run([*_pipx(root), "install", "--python", python_for_venvs(), str(wheel)], timeout=900, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    print(f"pipx install took {time.monotonic() - start:.0f} s")
    return bin_dir


def test_pipx_install_gives_a_working_nfs_tuner(pipx_install: Path) -> None:
    exe = pipx_install / "nfs-tuner"
    assert exe.exists(), f"pipx made no {exe}"
    out = run([str(exe), "--version"], env=headless_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"nfs-tuner {__version__}"


def test_pipx_install_prints_its_completion_script(pipx_install: Path) -> None:
    exe = pipx_install / "nfs-tuner"
    out = run([str(exe), "completion", "bash"], env=headless_env())
    assert out.returncode == 0 and "complete -F _nfs_tuner nfs-tuner" in out.stdout, out.stderr


def test_pipx_install_installs_the_desktop_entry(pipx_install: Path, tmp_path: Path) -> None:
    exe = pipx_install / "nfs-tuner"
    out = run([str(exe), "--install-desktop-entry"], env=headless_env(XDG_DATA_HOME=str(tmp_path)))
    assert out.returncode == 0, f"{out.stdout}{out.stderr}\n{HINT}"
    desktop = tmp_path / "applications" / f"{APP_ID}.desktop"
    # pipx's bin link, not the venv behind it: the link survives `pipx upgrade`.
    assert f"Exec={exe}\n" in desktop.read_text(encoding="utf-8")
    for f in data_files():
        assert (tmp_path / f.target).is_file(), f"{f.target} not installed"
    assert_desktop_file_valid(desktop)
