"""Files the admin names (report, session file, CSV): stdout, refusal or --force, mode, failures named right."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from app import cli
from app.output_files import OutputError, OutputExists, staged, write_text
from app.store import Store
from tests.fabricate_session import Recipe, fabricate_session
from tests.unwritable import unwritable


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "s.db"
    with Store(path) as store:
        fabricate_session(store, Recipe(samples_per_trial=4, knobs={"rsize": (65536, 1048576)}, repetitions=2))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_new_file_is_readable_by_others_as_the_umask_allows_and_a_replaced_one_keeps_its_mode(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        made = write_text(tmp_path / "r.html", "<p>x</p>", "the report")
        assert stat.S_IMODE(made.stat().st_mode) == 0o644  # meant to be handed on, not 0600
        made.chmod(0o600)
        write_text(made, "<p>y</p>", "the report", replace=True)
        assert stat.S_IMODE(made.stat().st_mode) == 0o600 and made.read_text() == "<p>y</p>"
    finally:
        os.umask(old)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]  # no temporary file left


def test_an_existing_file_is_refused_unless_replace_and_left_as_it_was(tmp_path: Path) -> None:
    dest = tmp_path / "r.html"
    dest.write_text("mine")
    with pytest.raises(OutputExists, match="exists already; the report was not written"):
        write_text(dest, "new", "the report")
    assert dest.read_text() == "mine"
    with pytest.raises(OutputExists), staged(dest, "the report") as tmp:
        tmp.write_text("new")
    assert dest.read_text() == "mine" and sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]


def test_a_failure_while_writing_names_the_file_asked_for_and_leaves_nothing(tmp_path: Path) -> None:
    dest = tmp_path / "r.html"
    with pytest.raises(OutputError, match=f"The report was not written to {dest}: No space left"), \
            staged(dest, "the report") as tmp:
        tmp.write_text("half")
        raise OSError(28, os.strerror(28), str(tmp))
    assert list(tmp_path.iterdir()) == []


def test_report_to_dash_writes_standard_output_and_no_file(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "--db", str(db), "report", "1", "--to", "-")
    assert code == 0, err
    assert out.startswith("<!DOCTYPE html>") and out.rstrip().endswith("</html>")
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("command", [("report", "1", "--to"), ("sessions", "export", "1", "--to")])
def test_report_and_export_agree_an_existing_file_is_refused_and_force_replaces_it(
        db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: tuple[str, ...]) -> None:
    dest = tmp_path / "out.file"
    dest.write_text("mine")
    code, _, err = run(capsys, "--db", str(db), *command, str(dest))
    assert code == 1 and f"{dest} exists already" in err and "--force" in err
    assert dest.read_text() == "mine"
    code, out, err = run(capsys, "--db", str(db), *command, str(dest), "--force")
    assert code == 0, err
    assert f"written to {dest}" in out and dest.read_bytes() != b"mine"


@pytest.mark.parametrize("command", [("report", "1", "--to", "{dir}/r.html"),
                                     ("sessions", "export", "1", "--to", "{dir}/s.db"),
                                     ("sessions", "export", "1", "--to", "{tmp}/copy.db", "--csv", "{dir}")])
def test_an_unwritable_target_is_named_never_a_temporary_file_nor_the_session_database(
        db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: tuple[str, ...]) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    argv = [a.format(dir=folder, tmp=tmp_path) for a in command]
    with unwritable(folder):
        code, _, err = run(capsys, "--db", str(db), *argv)
    assert code == 1
    assert f"was not written to {folder}/" in err and "choose a folder you may write to" in err
    assert ".part" not in err and "session database" not in err and "Traceback" not in err
    assert list(folder.iterdir()) == []


def test_export_to_dash_writes_the_session_file_to_standard_output(
        db: Path, tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    assert cli.main(["--db", str(db), "sessions", "export", "1", "--to", "-"]) == 0
    out, err = capfdbinary.readouterr()
    assert out.startswith(b"SQLite format 3\x00") and b"session 1 written" in err
    (tmp_path / "piped.db").write_bytes(out)
    with Store(tmp_path / "piped.db", readonly=True) as copy:
        assert len(copy.list_sessions()) == 1
