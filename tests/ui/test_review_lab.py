"""The session browser on sessions that real lab sweeps made (tests/integration/test_sweep_lab.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.store import Store, import_sessions
from tests.conftest import LabHandle
from tests.integration.test_sweep_lab import run_tiny_sweep
from tests.ui.test_review_window import ScriptedDialogs
from ui.review.launch import open_review_window

pytestmark = pytest.mark.lab


def test_lab_sessions_open_compare_and_export(qtbot, lab: LabHandle, lab_sessions: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dbs = sorted(lab_sessions.glob("*.db"))
    if not dbs:  # run alone: make one
        run_tiny_sweep(lab, lab_sessions / "tiny.db")
        dbs = [lab_sessions / "tiny.db"]
    merged = tmp_path / "all.db"
    with Store(merged) as store:
        for db in dbs:
            import_sessions(store, db)
        if len(store.list_sessions()) < 2:
            import_sessions(store, dbs[0], again=True)  # compare a session with its own copy
    w = open_review_window("", merged, dialogs=ScriptedDialogs())  # type: ignore[arg-type]
    qtbot.addWidget(w)
    rows = w.visible_rows
    assert len(rows) >= 2
    for row in rows:
        view = w.open_session(row.id)
        assert view is not None and view.data.trials
        view.samples.load()
        html = w.export_html(row.id, tmp_path / f"{row.id}.html").read_text(encoding="utf-8")
        assert '<table class="results">' in html and "https://" not in html and "<svg" in html
        assert "lab-server" in html and "rsize" in html
    assert w.compare(rows[1].id, rows[0].id) is not None
    w.close()
