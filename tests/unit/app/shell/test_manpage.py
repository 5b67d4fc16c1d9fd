"""nfs-tuner(1): made from the parser, read by real man and mandoc, and its prose checked against the code."""

from __future__ import annotations

import ast
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from app import __version__
from app.cli import LOG_NAME, build_parser
from app.paths import default_db_path, known_hosts_path, log_dir
from app.commands.exit_status import SIGNALLED, Exit
from app.shell import man_sections
from app.shell.manpage import page, release_date
from app.shell.model import command_line
from tests.packaging._tools import require_tool

REPO = Path(__file__).resolve().parents[4]


@pytest.fixture(scope="module")
def roff(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("man") / "nfs-tuner.1"
    path.write_text(page(), encoding="utf-8")
    return path


def test_mandoc_lint_finds_nothing(roff: Path) -> None:
    out = subprocess.run([require_tool("mandoc", "mandoc"), "-T", "lint", "-W", "style", str(roff)],
                         capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert out.returncode == 0 and not out.stdout.strip() and not out.stderr.strip(), out.stdout + out.stderr


def _rendered(roff: Path) -> str:
    out = subprocess.run([require_tool("man", "man-db"), "--warnings", "-l", str(roff)], capture_output=True, text=True,
                         timeout=60, check=False, env={"MANWIDTH": "100", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})  # fmt: skip
    assert out.returncode == 0 and not out.stderr.strip(), out.stderr
    return out.stdout


def test_man_renders_it_without_warnings_with_every_command_and_option(roff: Path) -> None:
    text = _rendered(roff)
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "FILES",
                    "EXAMPLES", "SEE ALSO"):  # fmt: skip
        assert re.search(rf"^{section}$", text, re.M), f"no {section} section"
    plain = re.sub(r".\x08", "", text)  # man's overstrike bold, should the pager leave it
    for cmd in command_line().walk():
        assert cmd.name in plain, f"{cmd.name} is not in the page"
        for option in cmd.options:
            assert option.long in plain, f"{cmd.name} {option.long} is not in the page"
    assert f"nfs-tuner {__version__}" in plain and release_date() in plain


def test_every_exit_status_a_command_returns_is_explained() -> None:
    returned: set[int] = set()
    for path in [REPO / "app" / "cli.py", *sorted((REPO / "app" / "commands").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, int):
                returned.add(node.value.value)
    explained = {term for term, _ in man_sections.EXIT_STATUS}
    assert returned >= {0, 1, 2}, returned  # the scan still sees the commands' literal statuses
    returned |= {int(e) for e in Exit}  # and the named ones (app.commands.exit_status)
    assert {str(n) for n in returned if n < SIGNALLED} <= explained, f"undocumented exit statuses: {returned}"
    assert "128+N" in explained  # sweep and study return 128 + the signal; 130 for Ctrl-C anywhere


def test_every_environment_variable_the_code_reads_is_explained() -> None:
    read = {m for p in (REPO / "app").rglob("*.py") for m in re.findall(r'"(NFS_TUNER_[A-Z_]+)"', p.read_text("utf-8"))}
    explained = {term for term, _ in man_sections.ENVIRONMENT}
    assert read and read <= explained, f"not in ENVIRONMENT: {sorted(read - explained)}"


def test_the_files_are_where_the_code_puts_them(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "NFS_TUNER_DB"):
        monkeypatch.delenv(name, raising=False)
    home = lambda p: str(p).replace(str(tmp_path), "~", 1)  # noqa: E731
    files = {term for term, _ in man_sections.FILES}
    assert {home(default_db_path()), home(known_hosts_path()), home(log_dir() / LOG_NAME)} <= files


@pytest.mark.parametrize(("said", "example"), man_sections.EXAMPLES, ids=[e for _, e in man_sections.EXAMPLES])
def test_every_example_parses(said: str, example: str) -> None:
    words = shlex.split(example)
    assert words[0] == "nfs-tuner" and said.endswith(".")
    args = build_parser().parse_args(words[1:])  # a refused one exits 2 here
    assert args.command is not None
