"""The completion scripts in real shells: bash and zsh take a TAB in a terminal, fish its own ``complete -C``.

Each shell gets the script ``nfs-tuner completion SHELL`` prints and the venv's nfs-tuner on
PATH (the scripts ask it for hosts and sessions), a private HOME, and no rc files.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.shell.completion import script
from app.store import Store
from tests.packaging._tools import require_tool

BIN = Path(sys.executable).parent  # the venv's nfs-tuner
# real shells completing through the installed command: make test runs them, make check does not
pytestmark = pytest.mark.slow


def _shell(name: str) -> str:
    return require_tool(name, name)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "config").write_text("Host nfs1 client1\n  User tuner\nHost *.lab\n", encoding="utf-8")
    for shell in ("bash", "zsh", "fish"):
        (tmp_path / f"completion.{shell}").write_text(script(shell), encoding="utf-8")
    (tmp_path / "zfunc").mkdir()
    (tmp_path / "zfunc" / "_nfs-tuner").write_text(script("zsh"), encoding="utf-8")
    return tmp_path


def _env(home: Path) -> dict[str, str]:
    return {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(home), "TERM": "dumb", "PS1": "$ ", "LANG": "C.UTF-8",
            "NFS_TUNER_DB": str(home / "sessions.db")}  # fmt: skip


def tab(argv: list[str], setup: list[str], line: str, home: Path, want: str, timeout: float = 20) -> str:
    """Type ``line`` and a TAB into an interactive shell on a terminal; what it wrote back once ``want`` shows."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=_env(home), cwd=home,
                            start_new_session=True, close_fds=True)  # fmt: skip
    os.close(slave)
    seen = b""

    def read_until(text: bytes, limit: float) -> None:
        nonlocal seen
        end = time.monotonic() + limit
        while text not in seen and time.monotonic() < end:
            if select.select([master], [], [], 0.1)[0]:
                try:
                    seen += os.read(master, 65536)
                except OSError:  # the shell is gone
                    return

    try:
        for command in [*setup, "echo READY"]:
            os.write(master, command.encode() + b"\n")
        read_until(b"READY\r\n", timeout)
        seen = b""
        os.write(master, line.encode() + b"\t")
        read_until(want.encode(), timeout)
        return seen.decode(errors="replace")
    finally:
        proc.kill()
        proc.wait()
        os.close(master)


def _bash(home: Path, line: str, want: str) -> str:
    return tab([_shell("bash"), "--norc", "--noprofile", "-i"], [f"source {home}/completion.bash"], line, home, want)


def _zsh(home: Path, line: str, want: str) -> str:
    setup = [f"fpath=({home}/zfunc $fpath); autoload -U compinit; compinit -u -D"]
    return tab([_shell("zsh"), "-f", "-i"], setup, line, home, want)


def test_bash_completes_a_knob_name_to_its_equals_sign(home: Path) -> None:
    assert "nfs-tuner sweep --knob rsize=" in _bash(home, "nfs-tuner sweep --knob rs", "rsize=")


def test_bash_completes_a_knobs_values_after_its_name(home: Path) -> None:
    assert "--knob export_sync=async" in _bash(home, "nfs-tuner sweep --knob export_sync=as", "=async")


def test_bash_completes_subcommands_and_options(home: Path) -> None:
    assert "nfs-tuner study ladder" in _bash(home, "nfs-tuner study lad", "ladder")
    assert "--max-streams" in _bash(home, "nfs-tuner study ladder --max-s", "--max-streams")


def test_bash_completes_hosts_from_the_ssh_config_named_on_the_line(home: Path) -> None:
    (home / "other_config").write_text("Host filer-a\n", encoding="utf-8")  # the shell runs in home
    assert "--server nfs1" in _bash(home, "nfs-tuner sweep --server nf", "nfs1")
    assert "--ssh-config other_config --server filer-a" in _bash(home, "nfs-tuner sweep --ssh-config other_config --server fi", "filer-a")


def test_bash_completes_session_ids_from_the_database(home: Path) -> None:
    with Store(home / "sessions.db") as store:
        store.create_session(["nfs1"])
    assert "sessions show 1 " in _bash(home, "nfs-tuner sessions show ", "show 1 ")


def test_zsh_completes_a_knob_name_and_hosts(home: Path) -> None:
    assert "--knob rsize=" in _zsh(home, "nfs-tuner sweep --knob rs", "rsize=")
    assert "--client client1" in _zsh(home, "nfs-tuner sweep --server nfs1 --client cl", "client1")


def _fish(home: Path, line: str) -> list[str]:
    out = subprocess.run([_shell("fish"), "--no-config", "-c", f"source {home}/completion.fish; complete -C {line!r}"],
                         capture_output=True, text=True, env=_env(home), cwd=home, timeout=60, check=False)  # fmt: skip
    assert out.returncode == 0 and not out.stderr, out.stderr
    return [row.split("\t")[0] for row in out.stdout.splitlines()]


def test_fish_completes_knobs_commands_hosts_and_choices(home: Path) -> None:
    assert _fish(home, "nfs-tuner sweep --knob rs") == ["rsize="]
    assert "rsize=1048576" in _fish(home, "nfs-tuner sweep --knob rsize=1")
    assert _fish(home, "nfs-tuner sess") == ["sessions"]
    assert _fish(home, "nfs-tuner sweep --server ") == ["client1", "nfs1"]
    assert _fish(home, "nfs-tuner sweep --strategy ") == ["adaptive", "grid", "guided", "ofat"]
    assert _fish(home, "nfs-tuner journal ") == ["check", "dismiss", "list", "revert"]
