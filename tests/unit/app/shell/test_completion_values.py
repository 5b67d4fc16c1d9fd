"""What the scripts ask nfs-tuner for while completing: the SSH config's hosts, the database's sessions."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main
from app.shell.completion import host_lines, session_lines
from app.store import Store


def test_hosts_are_the_ssh_configs_concrete_names(tmp_path: Path) -> None:
    (tmp_path / "more").write_text("Host client2\n", encoding="utf-8")
    config = tmp_path / "config"
    config.write_text(f"Host nfs1 client1\n  User tuner\nHost *.lab !x\nInclude {tmp_path / 'more'}\n", encoding="utf-8")
    assert host_lines(str(config)) == ["nfs1", "client1", "client2"]


def test_a_half_typed_config_path_offers_nothing(tmp_path: Path) -> None:
    assert host_lines(str(tmp_path / "no-such")) == []


def test_sessions_newest_first_with_what_they_were(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with Store(db) as store:
        store.create_session(["nfs1", "client1"])
        store.create_session(["nfs2"])
    lines = session_lines(str(db))
    assert [line.split("\t")[0] for line in lines] == ["2", "1"]
    assert lines[1].endswith("running nfs1 client1")


def test_no_database_offers_nothing_and_makes_none(tmp_path: Path) -> None:
    db = tmp_path / "none.db"
    assert session_lines(str(db)) == []
    assert not db.exists()


def test_a_file_that_is_no_database_offers_nothing(tmp_path: Path) -> None:
    db = tmp_path / "junk.db"
    db.write_bytes(b"not sqlite at all" * 100)
    assert session_lines(str(db)) == []


def test_the_values_interface_prints_one_a_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config"
    config.write_text("Host nfs1\n", encoding="utf-8")
    assert main(["completion", "--values", "hosts", "--ssh-config", str(config)]) == 0
    assert capsys.readouterr().out == "nfs1\n"


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_script_names_itself_and_every_subcommand(shell: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", shell]) == 0
    text = capsys.readouterr().out
    assert f"{shell} completion for nfs-tuner" in text.splitlines()[0 if shell != "zsh" else 1]
    for name in ("sweep", "ladder", "dirs", "sessions", "import", "journal", "completion"):
        assert name in text


def test_no_shell_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion"]) == 2
    assert "bash, zsh or fish" in capsys.readouterr().err
