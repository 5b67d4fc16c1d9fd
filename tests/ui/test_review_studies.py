"""Studies in the review window: a load ladder opens on its Ladder tab, a directory study on its
Directory scaling tab, and two ladders compared overlay their knees.

The sessions are real: `nfs-tuner study ladder` and `study dirs` run over the demo's simulated
hosts (as tests/unit/app/session/test_ladder_study.py and test_dirs_study.py run them) into one SQLite
file, beside an ordinary sweep fabricated through the Store API. Every word is checked against
what app.report reads back from the same file (LadderResult, DirsResult).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QTableWidget

from app.cli import main
from app.report.dirs import DirsResult, load_dirs
from app.report.ladder import STEP_COLUMNS, LadderResult, load_ladder
from app.store import Store
from app.vocabulary import figure_text, latency_text
from app.vocabulary.dirs import collapse_clause
from app.vocabulary.ladder import knee_short_text, load_text
from tests.fabricate_session import Recipe, fabricate_session
from tests.unit.app.session.study_hosts import simulated_study_hosts
from tests.unit.app.session.test_dirs_study import dirs_args
from tests.unit.app.session.test_ladder_study import ladder_args
from ui.review.compare_view import CompareView
from ui.review.session_view import SessionView
from ui.review.study_views import DirsView, LadderView
from ui.review.tables import cell_texts
from ui.review.window import ReviewWindow
from ui import theme

from .accessibility import walk

SIZES = ((1280, 800), (1024, 700))


def _run(db: Path, argv: list[str]) -> int:
    """One study run to its end; the session it stored."""
    assert main(argv) == 0
    with Store(db, readonly=True) as store:
        return max(s.id for s in store.list_sessions())


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    """Two ladders (nfsd_threads 2 and 32), a directory study and a sweep, in one file."""
    path = tmp_path_factory.mktemp("studies") / "sessions.db"
    with pytest.MonkeyPatch.context() as mp:
        simulated_study_hosts(mp)
        ids = {"few": _run(path, ladder_args(path, "--knob", "nfsd_threads=2")),
               "many": _run(path, ladder_args(path, "--knob", "nfsd_threads=32")),
               "dirs": _run(path, dirs_args(path, "--entries", "400000"))}  # fmt: skip
    with Store(path) as store:
        ids["sweep"] = fabricate_session(store, Recipe(samples_per_trial=8))
    return path, ids


@pytest.fixture
def window(qtbot, db: tuple[Path, dict[str, int]]) -> Iterator[ReviewWindow]:  # type: ignore[no-untyped-def]
    w = ReviewWindow(Store(db[0]), source=str(db[0]))
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.close()


def _ladder(w: ReviewWindow, sid: int) -> LadderResult:
    assert w.store is not None
    ladder = load_ladder(w.store, sid)
    assert ladder is not None
    return ladder


def _dirs(w: ReviewWindow, sid: int) -> DirsResult:
    assert w.store is not None
    result = load_dirs(w.store, sid)
    assert result is not None
    return result


def _open(w: ReviewWindow, sid: int) -> SessionView:
    view = w.open_session(sid)
    assert isinstance(view, SessionView)
    return view


def _headers(table: QTableWidget) -> list[str]:
    return [h.text() if (h := table.horizontalHeaderItem(c)) is not None else "" for c in range(table.columnCount())]


def _first_tab(w: ReviewWindow, sid: int, sentence: str) -> LadderView | DirsView:
    """The study tab of the session opened: first, in front, its sentence in bold."""
    view = _open(w, sid)
    study = view.study
    assert study is not None and view.tabs.tabText(0) == study.TITLE and view.tabs.currentWidget() is study
    assert study.sentence.text() == sentence and study.sentence.font().bold()
    return study


def test_a_ladder_opens_on_its_ladder_tab(window: ReviewWindow, db: tuple[Path, dict[str, int]]) -> None:
    ladder = _ladder(window, db[1]["few"])
    study = _first_tab(window, db[1]["few"], ladder.sentence)
    assert isinstance(study, LadderView) and study.TITLE == "&Ladder"
    assert study.held.text() == "rand_read at nfsd_threads=2."
    assert ladder.knee.load is not None  # two nfsd threads saturate early
    (mark,) = study.knee_marks
    assert mark.at == ladder.knee.load and math.isclose(10 ** mark.value(), ladder.knee.load)  # a log axis
    assert mark.text == mark.label.toPlainText() == knee_short_text(ladder.to_json()["knee"]) == \
        f"knee at {load_text(ladder.knee.load)} (nfsd)"  # fmt: skip
    ok = [st for st in ladder.steps if st.throughput_bps is not None]
    throughput, p99 = study.curves
    assert list(throughput.xData) == list(p99.xData) == [st.load for st in ok]
    assert list(throughput.yData) == [st.throughput_bps for st in ok] and list(p99.yData) == [st.p99_ms for st in ok]
    axes = study.plot.getPlotItem().getAxis("left"), study.plot.getPlotItem().getAxis("right")
    assert [a.labelText for a in axes] == ["throughput", "p99 (ms)"] and axes[1].isVisible()
    table = study.table
    assert _headers(table) == list(STEP_COLUMNS)
    assert table.rowCount() == len(ladder.steps) == 7
    assert cell_texts(table, 0) == [load_text(st.load) for st in ladder.steps]
    assert cell_texts(table, 1) == [f"{st.streams} × {st.clients}" for st in ladder.steps]
    assert cell_texts(table, 2) == [figure_text(st.throughput_bps) for st in ladder.steps]
    assert cell_texts(table, 4) == [latency_text(st.p99_ms) for st in ladder.steps]
    assert walk(window) == []


def test_a_dark_palette_redraws_the_ladder_in_its_colours(window: ReviewWindow, db: tuple[Path, dict[str, int]]) -> None:
    study = _open(window, db[1]["few"]).study
    assert isinstance(study, LadderView)
    dark = QPalette(study.palette())
    dark.setColor(QPalette.ColorRole.Window, QColor("#202020"))
    dark.setColor(QPalette.ColorRole.Base, QColor("#181818"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#e0e0e0"))
    items = [*study.curves, *study.knee_marks]
    in_plot = len(study.plot.getPlotItem().items)
    study.setPalette(dark)  # a PaletteChange: the same curves and knee, recoloured (nothing left to the collector)
    assert [*study.curves, *study.knee_marks] == items and len(study.plot.getPlotItem().items) == in_plot
    throughput, p99 = study.curves
    assert throughput.opts["pen"].color() == theme.client_colour(0, dark) != theme.client_colour(0, QPalette())
    assert p99.opts["pen"].color() == theme.client_colour(2, dark) and p99.opts["symbolBrush"].color() == theme.client_colour(2, dark)
    (mark,) = study.knee_marks
    assert mark.at == _ladder(window, db[1]["few"]).knee.load and mark.pen.color() == QColor("#e0e0e0")
    assert mark.label is not None and mark.label.color == QColor("#e0e0e0")


def test_a_dark_palette_recolours_the_directory_and_compare_views_in_place(window: ReviewWindow,
                                                                           db: tuple[Path, dict[str, int]]) -> None:  # fmt: skip
    dirs = _open(window, db[1]["dirs"]).study
    assert isinstance(dirs, DirsView)
    overlay = window.compare(db[1]["few"], db[1]["many"])
    assert isinstance(overlay, CompareView) and overlay.ladders is not None
    for view in (dirs, overlay.ladders):
        dark = QPalette(view.palette())
        dark.setColor(QPalette.ColorRole.Base, QColor("#181818"))
        dark.setColor(QPalette.ColorRole.Text, QColor("#e0e0e0"))
        marks = dirs.collapse_marks if view is dirs else overlay.ladders.knee_marks
        items = [*view.curves, *marks]
        view.setPalette(dark)
        assert [*view.curves, *marks] == items and marks
        for i, curve in enumerate(view.curves):
            assert curve.opts["pen"].color() == theme.client_colour(i, dark)
        assert marks[0].pen.color() == theme.client_colour(0, dark)


def test_a_directory_study_opens_on_its_tab(window: ReviewWindow, db: tuple[Path, dict[str, int]]) -> None:
    result = _dirs(window, db[1]["dirs"])
    study = _first_tab(window, db[1]["dirs"], result.sentence)
    assert isinstance(study, DirsView) and study.TITLE == "&Directory scaling"
    assert study.plot.accessibleDescription() == result.summary == study.plot.toolTip()
    assert [c.name() for c in study.plot.getPlotItem().listDataItems()] == ["flat", "hashed"]
    flat = result.curves[0]
    assert flat.layout == "flat" and flat.collapse.entries is not None  # a flat directory collapses, hashed holds
    assert [(m.at, m.text) for m in study.collapse_marks] == [(flat.collapse.entries, collapse_clause("flat", flat.collapse))]
    assert study.collapse_marks[0].value() == flat.collapse.entries
    table = study.table
    assert _headers(table) == ["Entries", "flat creates/s", "hashed creates/s"]
    rows = result.table_rows()
    assert 8 <= table.rowCount() == len(rows) <= 12 and cell_texts(table, 0)[-1] == "400,000"
    assert [tuple(cell_texts(table, c)[r] for c in range(3)) for r in range(len(rows))] == rows
    assert walk(window) == []


def test_a_sweep_has_no_study_tab(window: ReviewWindow, db: tuple[Path, dict[str, int]]) -> None:
    view = _open(window, db[1]["sweep"])
    assert view.study is None
    assert [view.tabs.tabText(i) for i in range(view.tabs.count())] == \
        ["&Results", "S&amples", "S&nippets", "Host &facts", "&Journal"]  # fmt: skip
    assert view.tabs.currentWidget() is view.results


def test_two_ladders_compared_overlay_their_knees(window: ReviewWindow, db: tuple[Path, dict[str, int]]) -> None:
    few, many = _ladder(window, db[1]["few"]), _ladder(window, db[1]["many"])
    view = window.compare(db[1]["few"], db[1]["many"])
    assert isinstance(view, CompareView) and view.ladders is not None and view.tabs is not None
    assert view.tabs.tabText(0) == "&Ladders" and view.tabs.currentWidget() is view.ladders
    overlay = view.ladders
    assert len(overlay.curves) == 2 and [c.name() for c in overlay.curves] == ["A: nfsd_threads=2", "B: nfsd_threads=32"]
    assert [list(c.xData) for c in overlay.curves] == \
        [[st.load for st in ld.steps if st.throughput_bps is not None] for ld in (few, many)]  # fmt: skip
    assert [m.at for m in overlay.knee_marks] == [few.knee.load, many.knee.load]
    assert few.knee.load is not None and many.knee.load is not None and few.knee.load < many.knee.load  # it moves
    assert [m.text for m in overlay.knee_marks] == [
        f"A (nfsd_threads=2):\n{knee_short_text(few.to_json()['knee'])}",
        f"B (nfsd_threads=32):\n{knee_short_text(many.to_json()['knee'])}"]  # fmt: skip
    assert [m.label.toPlainText() for m in overlay.knee_marks] == [m.text for m in overlay.knee_marks]
    assert overlay.held.text() == "A: rand_read at nfsd_threads=2. B: rand_read at nfsd_threads=32."
    assert overlay.sentence.text() == f"A: {few.sentence}\nB: {many.sentence}" and overlay.sentence.font().bold()
    assert view.table.rowCount() == len(view.rows)  # the comparison's table is a tab away
    assert walk(window) == []


def test_a_ladder_compared_with_a_sweep_keeps_the_plain_comparison(window: ReviewWindow,
                                                                   db: tuple[Path, dict[str, int]]) -> None:  # fmt: skip
    view = window.compare(db[1]["sweep"], db[1]["few"])
    assert isinstance(view, CompareView) and view.ladders is None and view.tabs is None
    assert view.table.isVisible()


@pytest.mark.parametrize("size", SIZES)
def test_the_study_tabs_fit_the_window(qtbot, window: ReviewWindow,  # type: ignore[no-untyped-def]
                                       db: tuple[Path, dict[str, int]], size: tuple[int, int]) -> None:  # fmt: skip
    """At 1280 × 800 and 1024 × 700 the window keeps its size and every plot keeps room to read."""
    ladder, dirs = _open(window, db[1]["few"]), _open(window, db[1]["dirs"])
    compare = window.compare(db[1]["few"], db[1]["many"])
    assert compare is not None and compare.ladders is not None
    assert isinstance(ladder.study, LadderView) and isinstance(dirs.study, DirsView)
    window.resize(*size)
    for page, plots, table in ((ladder, ladder.study.plots, ladder.study.table), (dirs, dirs.study.plots, dirs.study.table),
                               (compare, compare.ladders.plots, None)):  # fmt: skip
        window.tabs.setCurrentWidget(page)
        qtbot.wait(20)
        assert (window.width(), window.height()) == size
        for plot in plots:
            where = f"{plot.accessibleName()} at {size}"
            assert plot.isVisible() and plot.height() >= 8 * plot.fontMetrics().lineSpacing(), where
            assert plot.width() >= 300, where
        if table is not None:  # three rows in view at least, the rest a scroll away
            assert table.viewport().height() >= 3 * table.verticalHeader().defaultSectionSize(), table.accessibleName()
