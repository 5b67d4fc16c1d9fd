"""``nfs-tuner report``: the HTML report from the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from app import cli
from app.store import Store
from tests.fabricate_session import Recipe, fabricate_session


def test_report_command_writes_the_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.db"
    with Store(db) as store:
        sid = fabricate_session(store, Recipe(samples_per_trial=8))
    out = tmp_path / "r.html"
    assert cli.main(["--db", str(db), "report", str(sid), "--to", str(out)]) == 0
    assert f"report of session {sid} written to {out}" in capsys.readouterr().out
    html = out.read_text(encoding="utf-8")
    assert '<table class="results">' in html and "<svg" in html


def test_report_command_fails_clearly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--db", str(tmp_path / "none.db"), "report", "1", "--to", str(tmp_path / "r.html")]) == 1
    assert "no session database" in capsys.readouterr().err
    db = tmp_path / "s.db"
    Store(db).close()
    assert cli.main(["--db", str(db), "report", "7", "--to", str(tmp_path / "r.html")]) == 1
    assert "no session 7" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()
