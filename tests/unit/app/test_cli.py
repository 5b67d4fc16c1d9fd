"""The entry point works without a display and never drags Qt into headless runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app import __version__
from app.paths import resolve_db_path

# a Python start or more per case: make test runs it, make check does not
starts_programs = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    base.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", "import sys; from ui.entry import main; sys.exit(main())", *args],
        capture_output=True, text=True, env=base, cwd=REPO, timeout=60,
    )


@starts_programs
def test_version_without_display() -> None:
    out = _run("--version")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"nfs-tuner {__version__}"


@starts_programs
def test_help_without_display_names_the_db_option() -> None:
    out = _run("--help")
    assert out.returncode == 0, out.stderr
    assert "--db PATH" in out.stdout
    assert "NFS_TUNER_DB" in out.stdout


@starts_programs
def test_headless_cli_does_not_import_qt() -> None:
    code = (
        "import sys; from ui.entry import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph', 'qasync')]\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_db_path_precedence(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("NFS_TUNER_DB", raising=False)
    default = resolve_db_path(None)
    assert default.parts[-2:] == ("nfs-tuner", "sessions.db")
    monkeypatch.setenv("NFS_TUNER_DB", str(tmp_path / "env.db"))
    assert resolve_db_path(None) == tmp_path / "env.db"
    assert resolve_db_path(str(tmp_path / "cli.db")) == tmp_path / "cli.db"


@starts_programs
def test_wizard_ssh_config_option_is_its_own_and_a_missing_file_is_refused_before_qt(tmp_path: Path) -> None:
    from app import cli

    assert cli.parse(["--ssh-config", "lab.conf"]).gui_ssh_config == "lab.conf"
    # a command's own --ssh-config is not taken by the wizard's option (and must exist: its parser checks)
    (tmp_path / "b").write_text("")
    args = cli.parse(["--ssh-config", "a", "discover", "--ssh-config", str(tmp_path / "b"), "h"])
    assert args.gui_ssh_config == "a" and args.ssh_config == str(tmp_path / "b")
    code = (
        "import sys; from ui.entry import main\n"
        f"rc = main(['--ssh-config', {str(tmp_path / 'nope')!r}])\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'qasync')]\n"
        "sys.exit(rc if not bad else 99)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "no such file" in out.stderr and "nope" in out.stderr
