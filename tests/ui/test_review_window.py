"""The session browser on real stores: list and filter, open, compare, export, import, bad files.

Sessions are fabricated through the Store API (tests/fabricate_session.py);
tests/ui/test_review_lab.py does the same with sessions the lab sweeps made.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QDate, QPoint, Qt
from PySide6.QtGui import QFontInfo, QGuiApplication
from PySide6.QtWidgets import QPlainTextEdit, QTableWidget

from app.vocabulary import figure_text
from app.store import SessionState, Store
from tests.fabricate_session import Recipe, fabricate_session
from ui.review.compare_view import CompareView
from ui.review.launch import open_review_window
from ui.review.tables import cell_texts
from ui.review.timeline import session_timeline
from ui.review.window import ALL_HOSTS, ReviewWindow
from app.session.results import PlacedSnippet
from app.snippets.model import Snippet
from ui.pages.results_snippets import SnippetCard
from ui.review.compare_view import COLUMNS as COMPARE_COLUMNS
from ui.review.session_rows import COLUMNS as SESSION_COLUMNS
from ui.review.snippets_view import SnippetPane

DAY = 86400.0


class ScriptedDialogs:
    """Answers the window's questions from queues; records every message it shows."""

    def __init__(self) -> None:
        self.paths: list[Path | None] = []
        self.errors: list[tuple[str, str]] = []
        self.infos: list[tuple[str, str]] = []

    def save_path(self, title: str, suggested: str, filters: str) -> Path | None:
        return self.paths.pop(0)

    def open_path(self, title: str, filters: str) -> Path | None:
        return self.paths.pop(0)

    def choose_dir(self, title: str) -> Path | None:
        return self.paths.pop(0)

    def error(self, title: str, text: str) -> None:
        self.errors.append((title, text))

    def info(self, title: str, text: str) -> None:
        self.infos.append((title, text))


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def db(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    """Three sessions: an old one on other hosts, and a before/after pair on the lab hosts."""
    path = tmp_path / "sessions.db"
    clock = Clock(time.time() - 40 * DAY)
    with Store(path, clock=clock) as store:
        old = fabricate_session(store, Recipe(server="srv-old", clients=("ws-7",), samples_per_trial=8,
                                              knobs={"nfsd_threads": (8, 16)}, workloads=("seq_write",),
                                              state=SessionState.CANCELLED, store_recommendation=False))
        clock.t = time.time() - 2 * DAY
        before = fabricate_session(store, Recipe(samples_per_trial=24, seed=1, notes="before the RAID change"))
        clock.t = time.time() - 1 * DAY
        after = fabricate_session(store, Recipe(samples_per_trial=24, seed=2, speed=1.2, notes="after"))
    return path, {"old": old, "before": before, "after": after}


@pytest.fixture
def window(qtbot, db: tuple[Path, dict[str, int]]) -> Iterator[tuple[ReviewWindow, ScriptedDialogs]]:  # type: ignore[no-untyped-def]
    dialogs = ScriptedDialogs()
    w = ReviewWindow(Store(db[0]), source=str(db[0]), dialogs=dialogs)  # type: ignore[arg-type]
    qtbot.addWidget(w)
    w.show()
    yield w, dialogs
    w.close()


def test_lists_every_session_with_state_plan_and_best(window, db) -> None:  # type: ignore[no-untyped-def]
    w, _ = window
    ids = db[1]
    assert [r.id for r in w.visible_rows] == [ids["after"], ids["before"], ids["old"]]  # newest first
    assert w.table.rowCount() == 3
    after = w.visible_rows[0]
    assert after.state == "complete" and after.hosts == ("lab-server", "lab-client1", "lab-client2")
    assert after.plan == "nfsd_threads ×2, rsize ×3 · seq_read, seq_write · grid"  # the store sorts keys
    assert "seq_read" in after.best and "seq_write" in after.best and "MB/s" in after.best
    assert w.visible_rows[2].state == "cancelled" and "seq_write" in w.visible_rows[2].best
    # a cancelled session's figures were computed now, none stored: the list says so (as `sessions list`)
    assert w.visible_rows[2].best.startswith("computed now, none stored: ") and "computed" not in after.best
    assert cell_texts(w.table, 4) == ["complete", "complete", "cancelled"]


def test_filters_by_host_text_and_date(window, db) -> None:  # type: ignore[no-untyped-def]
    w, _ = window
    ids = db[1]
    assert w.host_box.findText("ws-7") > 0 and w.host_box.currentText() == ALL_HOSTS
    w.host_box.setCurrentText("ws-7")
    assert [r.id for r in w.visible_rows] == [ids["old"]]
    w.host_box.setCurrentText(ALL_HOSTS)
    w.search.setText("RAID")
    assert [r.id for r in w.visible_rows] == [ids["before"]]
    w.search.setText("")
    w.since_date.setDate(QDate.currentDate().addDays(-10))
    w.since_on.setChecked(True)
    assert {r.id for r in w.visible_rows} == {ids["before"], ids["after"]}
    w.until_date.setDate(QDate.currentDate().addDays(-2))
    w.until_on.setChecked(True)
    assert [r.id for r in w.visible_rows] == [ids["before"]]
    assert w.table.rowCount() == 1


def test_opening_shows_results_samples_snippets_facts_and_journal(window, db, qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    w, dialogs = window
    sid = db[1]["after"]
    w.select_sessions(sid)
    w.open_selected()
    view = w.tabs.currentWidget()
    assert view is not None and view.session_id == sid
    assert "Session" in view.header.text() and "after" in view.header.text()
    # results: the bonnie-style table and a ranking per objective, with CIs
    assert view.results.table.rowCount() == 6 and view.results.table.columnCount() == 1 + 2 * 2
    read = next(b for b in view.results.boxes if b.view.objective == "seq_read")
    assert read.verdict.text() == read.view.verdict() == f"Change to: nfsd_threads=32, rsize=1048576 — {figure_text(read.view.figure)}"
    assert "beyond the run-to-run noise" in read.evidence.text()
    assert read.ranking.rowCount() == 6 and "±" in read.ranking.item(0, 2).text()
    assert cell_texts(read.ranking, 0) == [str(i) for i in range(1, 7)]
    assert view.results.excluded.rowCount() == 1
    # samples load when their tab is shown: both clients' full streams
    assert view.samples.timeline is None
    view.tabs.setCurrentWidget(view.samples)
    qtbot.waitUntil(lambda: view.samples.timeline is not None)
    total = sum(len(s.x) for s in view.samples.timeline.streams)
    assert total == w.store.sample_count(sid) and [s.client for s in view.samples.timeline.streams] == \
        ["lab-client1", "lab-client2"]
    trial = view.data.trials[7]
    view.samples.table.selectRow(7)
    lo, hi = view.samples.plot.getPlotItem().viewRange()[0]
    a, b = view.samples.timeline.spans[trial.id]
    assert lo <= a < b <= hi and hi - lo < 1.2 * (b - a) + 1
    caption = view.samples.caption.text()
    assert f"Trial #{trial.id}" in caption and f"rsize={trial.config['rsize']}" in caption
    # snippets: copy and save
    pane = view.snippets.panes[0]
    pane.copy_button.click()
    assert QGuiApplication.clipboard().text() == pane.snippet.text
    dialogs.paths.append(tmp_path / "fstab.txt")
    pane.save_button.click()
    assert (tmp_path / "fstab.txt").read_text() == pane.snippet.text
    # host facts as they were, and the journal
    assert view.facts.topLevelItemCount() == 3
    assert view.facts.topLevelItem(0).text(0) == "lab-server (server)"
    assert view.journal.table.rowCount() == len(w.store.journal(sid)) > 0
    assert set(cell_texts(view.journal.table, 6)) == {"reverted"}


def test_compare_two_sessions_side_by_side(window, db) -> None:  # type: ignore[no-untyped-def]
    w, dialogs = window
    ids = db[1]
    w.select_sessions(ids["before"])
    w.compare_selected()
    assert dialogs.infos and "exactly two" in dialogs.infos[-1][1]
    w.select_sessions(ids["after"], ids["before"])
    w.compare_selected()
    view = w.tabs.currentWidget()
    assert isinstance(view, CompareView)
    best = [r for r in view.rows if r.label == "best"]
    assert [r.objective for r in best] == ["seq_read", "seq_write"]
    assert all(r.beyond_noise and r.diff > 0 for r in best)  # B (after) is 20 % faster
    assert view.table.rowCount() == len(view.rows) == 2 * (1 + 6)
    verdicts = cell_texts(view.table, 9)
    assert verdicts.count("B faster, beyond noise") >= 2
    assert view.table.item(0, 7).text().startswith("+")


def test_export_html_csv_and_session_file(window, db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    w, dialogs = window
    sid = db[1]["after"]
    w.open_session(sid)
    dialogs.paths += [tmp_path / "r.html", tmp_path / "csv", tmp_path / "one.db"]
    (tmp_path / "csv").mkdir()
    html_path = w.export_html()
    csv_paths = w.export_csv()
    file_path = w.export_session_file()
    html = html_path.read_text(encoding="utf-8")
    assert '<table class="results">' in html and "<svg" in html and "Recommended for seq_read" in html
    assert "http://" not in html and "https://" not in html
    assert csv_paths is not None and all(p.exists() and p.stat().st_size > 0 for p in csv_paths)
    assert file_path is not None and file_path.stat().st_size < 2 * 1024 * 1024
    with Store(file_path, readonly=True) as one:
        assert len(one.list_sessions()) == 1 and one.sample_count(one.list_sessions()[0].id) == w.store.sample_count(sid)
    # exporting over an existing file is refused, and the file is left as it was
    before = file_path.read_bytes()
    dialogs.paths.append(file_path)
    assert w.export_session_file() is None
    assert file_path.read_bytes() == before
    assert "exists already" in dialogs.errors[-1][1] and "exists already" in w.banner.text()


def test_imported_file_is_listed_and_opened_in_another_database(qtbot, window, db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    w, _ = window
    exported = w.export_session_file(db[1]["before"], tmp_path / "shared.db")
    dialogs = ScriptedDialogs()
    other = ReviewWindow(Store(tmp_path / "colleague.db"), source="colleague", dialogs=dialogs)  # type: ignore[arg-type]
    qtbot.addWidget(other)
    assert other.visible_rows == []
    dialogs.paths.append(exported)
    ids = other.import_file()
    assert len(ids) == 1
    assert [r.id for r in other.visible_rows] == ids and other.visible_rows[0].state == "complete (imported)"
    view = other.tabs.currentWidget()
    assert view.session_id == ids[0] and "imported from shared.db" in view.header.text()
    assert view.results.boxes and not dialogs.errors
    # the same file again: nothing is copied twice; the session held already is opened and named
    dialogs.paths.append(exported)
    assert other.import_file() == []
    assert [r.id for r in other.visible_rows] == ids and other.tabs.currentWidget().session_id == ids[0]
    assert f"is here already as session {ids[0]}" in other.statusBar().currentMessage()
    other.close()


def test_damaged_and_too_new_files_get_a_clear_message_and_stay_untouched(window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    w, dialogs = window
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"SQLite format 3\x00" + os.urandom(4000))
    newer = tmp_path / "newer.db"
    Store(newer).close()
    con = sqlite3.connect(newer)
    con.execute("PRAGMA user_version = 999")
    con.close()
    for path, words in ((damaged, "damaged"), (newer, "newer nfs-tuner")):
        before = path.read_bytes()
        dialogs.paths.append(path)
        assert w.import_file() == []
        assert words in dialogs.errors[-1][1] and words in w.banner.text()
        assert path.read_bytes() == before
    assert len(w.visible_rows) == 3


def test_review_file_opens_a_private_copy(qtbot, window, db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    w, _ = window
    exported = w.export_session_file(db[1]["after"], tmp_path / "sent.db")
    before = exported.read_bytes()
    review = open_review_window(str(exported), tmp_path / "unused.db", dialogs=ScriptedDialogs())  # type: ignore[arg-type]
    qtbot.addWidget(review)
    assert len(review.visible_rows) == 1 and review.tabs.count() == 1
    assert "not changed" in review.windowTitle()
    review.close()
    assert exported.read_bytes() == before and not (tmp_path / "unused.db").exists()

    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all")
    bad = open_review_window(str(junk), tmp_path / "unused.db", dialogs=ScriptedDialogs())  # type: ignore[arg-type]
    qtbot.addWidget(bad)
    assert bad.banner.isVisibleTo(bad) and "damaged" in bad.banner.text() and bad.visible_rows == []
    bad.close()
    assert junk.read_bytes() == b"not a database at all"


def test_session_database_that_is_damaged_opens_an_empty_browser_with_the_reason(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "sessions.db"
    path.write_bytes(b"garbage" * 100)
    w = open_review_window("", path, dialogs=ScriptedDialogs())  # type: ignore[arg-type]
    qtbot.addWidget(w)
    assert w.store is None and "damaged" in w.banner.text() and not w.act_import.isEnabled()
    assert path.read_bytes() == b"garbage" * 100


def test_timeline_lays_trials_end_to_end(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with Store(tmp_path / "t.db") as store:
        sid = fabricate_session(store, Recipe(samples_per_trial=12, repetitions=1, knobs={"rsize": (65536, 1048576)},
                                              workloads=("seq_read",), broken_trial=False))
        tl = session_timeline(store.load_session_samples(sid))
        trials = store.trials(sid)
    spans = [tl.spans[t.id] for t in trials]
    assert spans[0][0] == 0 and spans[0][1] == pytest.approx(3.0) and spans[1][0] > spans[0][1]
    for s in tl.streams:
        assert np.all(np.diff(s.x) > 0)  # monotonic: pyqtgraph may clip to the view
        assert int((~s.connect).sum()) == len(trials)  # the line breaks after each trial
    assert tl.trial_at(spans[1][0] + 1) == trials[1].id


def test_entry_opens_the_browser_for_review(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import ui.entry
    import ui.review.launch

    seen = []
    monkeypatch.setattr(ui.review.launch, "run_review", lambda args: seen.append(args.review) or 0)
    assert ui.entry.main(["--review"]) == 0 and ui.entry.main(["--review", "x.db"]) == 0
    assert seen == ["", "x.db"]


# -- readable at 1280 × 800: the list, a comparison, the snippets --------------------------------


def shown_at_1280(qtbot, w: ReviewWindow) -> None:  # type: ignore[no-untyped-def]
    w.resize(1280, 800)
    qtbot.waitExposed(w)
    qtbot.waitUntil(lambda: w.width() == 1280)
    qtbot.wait(20)  # the list fits its columns to new rows once the loop is back (ui.table_fit)


def visible_in_viewport(table: QTableWidget, columns: Iterable[int]) -> bool:
    """Every one of ``columns`` lies wholly inside the table's viewport, as it is scrolled now."""
    header = table.horizontalHeader()
    width = table.viewport().width()
    return all(0 <= header.sectionViewportPosition(c) and header.sectionViewportPosition(c) + header.sectionSize(c)
               <= width for c in columns)


def test_list_has_notes_fits_1280_without_scrolling_and_sorts(qtbot, window, db) -> None:  # type: ignore[no-untyped-def]
    w, _ = window
    ids = db[1]
    note = ("RAID 6 rebuilt on new disks, stripe cache left at 256, firmware 4.2 on both controllers, "
            "the cache batteries replaced\nsecond line")  # longer than the room the other columns leave it
    with_note = fabricate_session(w.store, Recipe(samples_per_trial=4, repetitions=2, seed=3, notes=note,
                                                  knobs={"rsize": (65536, 1048576)}, workloads=("seq_read",)))
    w.reload()
    shown_at_1280(qtbot, w)
    notes = SESSION_COLUMNS.index("Notes")
    assert w.table.horizontalHeaderItem(notes).text() == "Notes"
    row = next(r for r in range(w.table.rowCount()) if w.table.item(r, 0).text() == str(with_note))
    cell = w.table.item(row, notes)
    assert cell.text() == note.replace("\n", " ") and cell.toolTip() == note  # one line; the tooltip as written
    assert w.table.fontMetrics().horizontalAdvance(cell.text()) > w.table.columnWidth(notes)  # so it elides
    titles = w.table.horizontalHeader()
    assert all(titles.sectionSize(c) >= titles.sectionSizeHint(c) for c in range(len(SESSION_COLUMNS)))  # none cut
    assert w.table.item(row, SESSION_COLUMNS.index("Plan")).toolTip() == w.table.item(row, 3).text()
    # every column inside the viewport: no sideways scrolling at 1280 px
    assert w.table.horizontalScrollBar().maximum() == 0
    assert visible_in_viewport(w.table, range(len(SESSION_COLUMNS)))
    # sorting by a column header, as the admin clicks it; the selection follows the session, not the row
    newest_first = [with_note, ids["after"], ids["before"], ids["old"]]
    assert cell_texts(w.table, 0) == [str(i) for i in newest_first]
    header = w.table.horizontalHeader()
    click = QPoint(header.sectionViewportPosition(0) + 5, header.height() // 2)
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=click)
    first = [int(x) for x in cell_texts(w.table, 0)]
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=click)
    second = [int(x) for x in cell_texts(w.table, 0)]
    assert sorted([first, second]) == [sorted(first), sorted(first, reverse=True)]  # by number, both ways
    w.select_sessions(ids["before"])
    assert w.selected_ids() == [ids["before"]]
    w.open_selected()
    assert w.tabs.currentWidget().session_id == ids["before"]
    w.search.setText("RAID 6")  # a refresh keeps the admin's sort
    assert [int(x) for x in cell_texts(w.table, 0)] == [with_note]


def test_compare_shows_difference_and_verdict_without_scrolling_at_1280(qtbot, window, db) -> None:  # type: ignore[no-untyped-def]
    w, _ = window
    ids = db[1]
    shown_at_1280(qtbot, w)
    view = w.compare(ids["before"], ids["after"])
    assert view is not None
    qtbot.waitExposed(view)
    wanted = [COMPARE_COLUMNS.index(n) for n in ("Objective", "Configuration", "B − A (%)", "B − A", "Verdict")]
    header = view.table.horizontalHeader()
    assert [header.logicalIndex(v) for v in range(5)] == wanted  # the difference and verdict first after the name
    assert view.table.horizontalScrollBar().value() == 0 and visible_in_viewport(view.table, wanted)
    verdict = COMPARE_COLUMNS.index("Verdict")
    metrics = view.table.fontMetrics()
    assert all(metrics.horizontalAdvance(t) < view.table.columnWidth(verdict) for t in cell_texts(view.table, verdict))
    best = view.table.item(0, COMPARE_COLUMNS.index("Configuration"))
    assert best.text().startswith("best: A ") and best.toolTip() == best.text()  # elided, whole in the tooltip


def test_snippet_pane_says_where_on_which_host_and_never_wraps(qtbot, window, db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    w, dialogs = window
    shown_at_1280(qtbot, w)
    view = w.open_session(db[1]["after"])
    assert view is not None
    view.tabs.setCurrentWidget(view.snippets)
    groups = view.snippets.groups
    assert groups is not None and groups.count() == 2  # seq_read and seq_write recommend different rsize
    assert groups.tabText(groups.currentIndex()) == "seq_read (recommended)"
    assert groups.tabText(1) == "seq_write (alternative)"
    assert "a client mounts with one fstab line" in groups.toolTip()
    assert "Recommended for the server and every client" in view.snippets.heads[0].text()
    assert "Only if the clients mostly write large files" in view.snippets.heads[1].text()
    fstab = next(p for p in view.snippets.panes if p.snippet.key == "fstab")
    qtbot.waitExposed(fstab)
    assert fstab.where.text() == "/etc/fstab"
    assert fstab.on.text() == "lab-client1, lab-client2 (every client)"  # the session's hosts by name, and role
    assert "fresh mount" in fstab.caveat.text() and not fstab.caveat.text().startswith("⚠")  # a step, not a risk
    server = next(p for p in view.snippets.panes if p.snippet.key == "exports")
    assert server.on.text() == "lab-server (the NFS server)"
    assert fstab.text.lineWrapMode() == QPlainTextEdit.LineWrapMode.NoWrap
    assert QFontInfo(fstab.text.font()).fixedPitch()
    block = fstab.text.document().firstBlock()
    assert block.text() == fstab.snippet.text.rstrip("\n") and block.layout().lineCount() == 1
    fstab.resize(260, fstab.height())  # narrower than the line: it scrolls sideways, still one line
    qtbot.waitUntil(lambda: fstab.text.horizontalScrollBar().maximum() > 0)
    assert block.layout().lineCount() == 1
    # one save-name rule for both faces: the file's own name, else the key (a shell command has no file)
    assert SnippetCard.save_name is SnippetPane.save_name
    assert {p.snippet.key: p.save_name() for p in view.snippets.panes[:6]} == {
        "fstab": "fstab", "exports": "exports", "nfs.conf": "nfs-tuner.conf", "tuned": "tuned.conf",
        "ansible": "nfs-tuner.yml", "fio": "nfs-tuner-seq_read.fio"}
    shell = SnippetPane(PlacedSnippet(Snippet("mtu-nmcli:lab-client1", "MTU", "shell", "nmcli …\n"), "a shell",
                                      ("lab-client1",), "lab-client1 (client)", "none"), dialogs)
    qtbot.addWidget(shell)
    assert shell.save_name() == "mtu-nmcli_lab-client1.txt"
    dialogs.paths.append(tmp_path / fstab.save_name())
    fstab.save_button.click()
    assert (tmp_path / "fstab").read_text() == fstab.snippet.text
