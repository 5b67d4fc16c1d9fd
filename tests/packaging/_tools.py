"""Shared helpers for the packaging tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DESKTOP_DIR = REPO / "resources" / "desktop"
APP_ID = "io.github.nfs_tuner.NfsTuner"
# Copying the checkout for a build skips what is big, generated or private to this machine.
COPY_IGNORE = shutil.ignore_patterns(
    ".git", ".venv", ".lab", ".lab-*", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
    ".hypothesis", "*.pyc",
)


def require_tool(name: str, package: str) -> str:
    """Path of a system tool; skips without it (fails under CI, where it must be there)."""
    path = shutil.which(name)
    if path:
        return path
    msg = f"{name} not found: Debian package {package} (tests/system-deps.sh installs it as root)"
    if os.environ.get("CI") == "true":
        pytest.fail(msg)
    pytest.skip(msg)


def headless_env(**extra: str) -> dict[str, str]:
    """The environment of a desktop-less run, with extra variables."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "VIRTUAL_ENV")}
    env.update(extra)
    return env


def run(
    cmd: list[str], timeout: float = 120, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False, env=env, cwd=cwd)


def assert_desktop_file_valid(path: Path) -> None:
    """desktop-file-validate passes: exit 0 and no error or warning (hints are allowed)."""
    tool = require_tool("desktop-file-validate", "desktop-file-utils")
    out = run([tool, str(path)])
    problems = [line for line in out.stdout.splitlines() if ": error:" in line or ": warning:" in line]
    assert out.returncode == 0 and not problems, out.stdout + out.stderr


def assert_metainfo_valid(path: Path) -> None:
    tool = require_tool("appstreamcli", "appstream")
    out = run([tool, "validate", "--no-net", str(path)])
    assert out.returncode == 0, out.stdout + out.stderr


def python_for_venvs() -> str:
    """An interpreter that can make venvs (the test venv's own one can)."""
    return sys.executable


def copy_checkout(dest: Path) -> Path:
    """The working tree (with uncommitted files) copied, so builds do not write into it."""
    shutil.copytree(REPO, dest, ignore=COPY_IGNORE, symlinks=True)
    return dest
