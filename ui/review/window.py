"""The session browser: every stored session, filters, opened sessions and comparisons, export and import.

Nothing here connects to a host: it reads the store only. File problems (damaged,
too new, not an nfs-tuner file) are shown as the store words them, and the file is
left exactly as it was.
"""

from __future__ import annotations

import datetime as dt
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QDate, Qt
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QComboBox,
    QDateEdit,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.output_files import OutputError
from app.report import write_report
from app.store.errors import StoreError
from app.store import Store, export_csv, export_session, import_sessions
from ui.help_texts import REVIEW_HELP
from ui.review.compare_view import CompareView
from ui.review.dialogs import Dialogs
from ui.review.session_rows import COLUMNS, SessionRow
from ui.review.session_view import SessionView
from ui.review.tables import fill_table, make_table, tip_columns
from ui.standard_actions import HelpMenu, quit_action
from ui.table_fit import ColumnFit
from ui.tooltips import plain_tip

ALL_HOSTS = "All hosts"
LONG_COLUMNS = (2, 3, 5, 6)  # hosts, plan, recommended, notes: they give up width and elide, their headers whole
NOTES = COLUMNS.index("Notes")
SESSION_FILTER = "nfs-tuner session files (*.db *.sqlite *.nfs-tuner);;All files (*)"


def _day_start(d: QDate) -> float:
    return time.mktime(dt.date(d.year(), d.month(), d.day()).timetuple())


class ReviewWindow(QMainWindow):
    def __init__(self, store: Store | None, *, source: str, dialogs: Dialogs | None = None,
                 problem: str = "", private_dir: tempfile.TemporaryDirectory[str] | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.source = source
        self.dialogs = dialogs or Dialogs(self)
        self._private_dir = private_dir  # a private copy of a reviewed file, removed on close
        self._rows: dict[int, SessionRow] = {}
        self.visible_rows: list[SessionRow] = []
        self.setWindowTitle(f"nfs-tuner — sessions — {source}")
        self.resize(1280, 800)

        self.banner = QLabel(self)
        self.banner.setWordWrap(True)
        self.banner.setTextFormat(Qt.TextFormat.PlainText)
        self.banner.setStyleSheet("color: #b02020; font-weight: bold;")
        self.banner.setVisible(False)

        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Search hosts, plan, state, notes…")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Search sessions")
        self.search.textChanged.connect(self.refresh)
        self.host_box = QComboBox(self)
        self.host_box.setAccessibleName("Host filter")
        self.host_box.currentIndexChanged.connect(self.refresh)
        self.since_on = QCheckBox("Fro&m", self)  # &F is the Host facts tab's
        self.until_on = QCheckBox("&To", self)
        today = QDate.currentDate()
        self.since_date = QDateEdit(today.addMonths(-1), self)
        self.until_date = QDateEdit(today, self)
        self.since_date.setAccessibleName("From date")
        self.until_date.setAccessibleName("To date")
        for box, edit in ((self.since_on, self.since_date), (self.until_on, self.until_date)):
            edit.setCalendarPopup(True)
            edit.setDisplayFormat("yyyy-MM-dd")
            edit.setEnabled(False)
            box.toggled.connect(edit.setEnabled)
            box.toggled.connect(self.refresh)
            edit.dateChanged.connect(self.refresh)

        self.table = make_table(COLUMNS, self, name="sessions")
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table_fit = ColumnFit(self.table, LONG_COLUMNS, spare=NOTES, elide=True)
        self.table.horizontalHeader().setSortIndicator(COLUMNS.index("Date"), Qt.SortOrder.DescendingOrder)
        self.table.doubleClicked.connect(lambda _i: self.open_selected())
        self.open_button = QPushButton("&Open", self)
        self.open_button.clicked.connect(self.open_selected)
        self.compare_button = QPushButton("&Compare two", self)
        self.compare_button.setToolTip("Select two sessions (Ctrl+click), then compare them side by side.")
        self.compare_button.clicked.connect(self.compare_selected)

        filters = QHBoxLayout()  # the dates under the host: in one row they kept the list 560 pixels wide
        for w in (self.since_on, self.since_date, self.until_on, self.until_date):
            filters.addWidget(w)
        filters.addStretch(1)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.compare_button)
        left = QWidget(self)
        ll = QVBoxLayout(left)
        ll.addWidget(self.search)
        ll.addWidget(self.host_box)
        ll.addLayout(filters)
        ll.addWidget(self.table, 1)
        ll.addLayout(buttons)

        self.tabs = QTabWidget(self)
        self.tabs.setTabsClosable(True)
        self.tabs.tabCloseRequested.connect(self._close_tab)
        self.tabs.setDocumentMode(True)
        split = QSplitter(self)
        split.addWidget(left)
        split.addWidget(self.tabs)
        split.setStretchFactor(1, 2)
        split.setSizes([600, 680])  # at 1280 px: the list's seven columns and their titles whole, a comparison's Δ and verdict in view
        central = QWidget(self)
        cl = QVBoxLayout(central)
        cl.addWidget(self.banner)
        cl.addWidget(split, 1)
        self.setCentralWidget(central)
        self._actions()
        if problem:
            self.show_problem(problem, dialog=False)
        self.reload()

    # -- actions ----------------------------------------------------------------

    def _action(self, text: str, slot: object,
                shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None) -> QAction:
        action = QAction(text, self)
        action.triggered.connect(lambda _checked=False: slot())  # type: ignore[operator]
        if shortcut is not None:
            action.setShortcut(shortcut)
        return action

    def _actions(self) -> None:
        self.act_import = self._action("&Import session file…", self.import_file, QKeySequence.StandardKey.Open)
        self.act_html = self._action("Export &HTML report…", self.export_html)
        self.act_csv = self._action("Export CS&V (trials and samples)…", self.export_csv)  # &C: Close
        self.act_file = self._action("Export session &file…", self.export_session_file)
        self.act_refresh = self._action("&Refresh", self.reload, QKeySequence.StandardKey.Refresh)
        self.act_close = self._action("&Close", self.close, QKeySequence.StandardKey.Close)
        self.act_quit = quit_action(self, QApplication.closeAllWindows)  # the wizard too, which asks during a run
        menu = self.menuBar().addMenu("&Session")
        for a in (self.act_import, None, self.act_html, self.act_csv, self.act_file, None, self.act_refresh,
                  self.act_close, self.act_quit):
            menu.addSeparator() if a is None else menu.addAction(a)
        self.help = HelpMenu(self, lambda: ("Help: reviewing sessions", REVIEW_HELP), "window")
        bar = self.addToolBar("Session")
        bar.setObjectName("review-toolbar")
        for a in (self.act_import, self.act_html, self.act_csv, self.act_file):
            bar.addAction(a)
        enabled = self.store is not None
        for a in (self.act_import, self.act_html, self.act_csv, self.act_file, self.act_refresh):
            a.setEnabled(enabled)

    # -- the list ---------------------------------------------------------------

    def show_problem(self, text: str, *, dialog: bool = True, title: str = "nfs-tuner") -> None:
        self.banner.setText(text)
        self.banner.setVisible(bool(text))
        if text and dialog:
            self.dialogs.error(title, text)

    def reload(self) -> None:
        """Re-read the sessions (after an import, or another process finished one)."""
        self._rows.clear()
        hosts: set[str] = set()
        if self.store is not None:
            try:
                for s in self.store.list_sessions():
                    hosts.update(s.hosts)
            except StoreError as e:
                self.show_problem(str(e))
        current = self.host_box.currentText()
        self.host_box.blockSignals(True)
        self.host_box.clear()
        self.host_box.addItems([ALL_HOSTS, *sorted(hosts)])
        self.host_box.setCurrentText(current if current in hosts else ALL_HOSTS)
        self.host_box.blockSignals(False)
        self.refresh()

    def filters(self) -> tuple[str | None, float | None, float | None]:
        host = self.host_box.currentText()
        since = _day_start(self.since_date.date()) if self.since_on.isChecked() else None
        until = _day_start(self.until_date.date().addDays(1)) if self.until_on.isChecked() else None
        return (None if host in ("", ALL_HOSTS) else host), since, until

    def refresh(self) -> None:
        """Apply the filters: host and dates through the store, the search text over the rows."""
        if self.store is None:
            self.visible_rows = []
            fill_table(self.table, [])
            return
        host, since, until = self.filters()
        rows = []
        try:
            for s in self.store.list_sessions(host=host, since=since, until=until):
                if s.id not in self._rows:
                    self._rows[s.id] = SessionRow.of(self.store, s)
                rows.append(self._rows[s.id])
        except StoreError as e:
            self.show_problem(str(e))
        self.visible_rows = [r for r in rows if r.matches(self.search.text())]
        self._fill()
        self.statusBar().showMessage(f"{len(self.visible_rows)} of {len(self._rows) or len(rows)} session(s) shown"
                                     f" · {self.source}")

    def _fill(self) -> None:
        """The visible rows, sorted as the admin last sorted them (newest first until then); a row's
        session is the number in its first cell, so selections follow the rows through a sort."""
        fill_table(self.table, [r.cells() for r in self.visible_rows], numeric=(0,))
        tip_columns(self.table, LONG_COLUMNS)
        for i, r in enumerate(self.visible_rows):
            if (first := self.table.item(i, 0)) is not None:
                first.setData(Qt.ItemDataRole.DisplayRole, r.id)  # sorts as a number: 9 before 10
            if r.notes and (notes := self.table.item(i, NOTES)) is not None:
                notes.setToolTip(plain_tip(r.notes))  # as written, line breaks and all
        self.table.setSortingEnabled(True)

    def _row_id(self, row: int) -> int | None:
        item = self.table.item(row, 0)
        return int(item.text()) if item is not None and item.text().isdigit() else None

    def select_sessions(self, *ids: int) -> None:
        self.table.clearSelection()
        mode = self.table.selectionMode()
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.MultiSelection)
        for row in range(self.table.rowCount()):
            if self._row_id(row) in ids:
                self.table.selectRow(row)
        self.table.setSelectionMode(mode)

    def selected_ids(self) -> list[int]:
        rows = sorted({i.row() for i in self.table.selectedIndexes()})
        return [sid for r in rows if (sid := self._row_id(r)) is not None]

    # -- opening and comparing ----------------------------------------------------

    def open_selected(self) -> None:
        for sid in self.selected_ids()[:4]:
            self.open_session(sid)

    def open_session(self, session_id: int) -> SessionView | None:
        if self.store is None:
            return None
        for i in range(self.tabs.count()):
            w = self.tabs.widget(i)
            if isinstance(w, SessionView) and w.session_id == session_id:
                self.tabs.setCurrentIndex(i)
                return w
        try:
            view = SessionView(self.store, session_id, self.dialogs, self.tabs)
        except StoreError as e:
            self.show_problem(str(e))
            return None
        self.tabs.setCurrentIndex(self.tabs.addTab(view, f"Session {session_id}"))
        return view

    def compare_selected(self) -> None:
        ids = self.selected_ids()
        if len(ids) != 2:
            self.dialogs.info("Compare sessions", "Select exactly two sessions (Ctrl+click) to compare them.")
            return
        a, b = sorted(ids, key=lambda i: self._rows[i].created if i in self._rows else i)
        self.compare(a, b)

    def compare(self, session_a: int, session_b: int) -> CompareView | None:
        if self.store is None:
            return None
        try:
            view = CompareView(self.store, session_a, session_b, self.tabs)
        except StoreError as e:
            self.show_problem(str(e))
            return None
        self.tabs.setCurrentIndex(self.tabs.addTab(view, f"{session_a} ↔ {session_b}"))
        return view

    def _close_tab(self, index: int) -> None:
        w = self.tabs.widget(index)
        self.tabs.removeTab(index)
        if w is not None:
            w.deleteLater()

    def current_session_id(self) -> int | None:
        w = self.tabs.currentWidget()
        if isinstance(w, SessionView):
            return w.session_id
        ids = self.selected_ids()
        return ids[0] if ids else None

    # -- export and import --------------------------------------------------------

    def _target(self, session_id: int | None) -> int | None:
        sid = session_id if session_id is not None else self.current_session_id()
        if sid is None:
            self.dialogs.info("Export", "Open or select a session first.")
        return sid

    def _written[T](self, what: str, write: Callable[[], T]) -> T | None:
        """``write()``, or None with the reason shown (a file refused or unwritable names itself)."""
        try:
            return write()
        except OutputError as e:
            self.show_problem(str(e))
        except StoreError as e:
            self.show_problem(f"{what} was not written: {e}")
        return None

    def export_html(self, session_id: int | None = None, dest: Path | None = None) -> Path | None:
        sid = self._target(session_id)
        if sid is None or self.store is None:
            return None
        dest = dest or self.dialogs.save_path("Export HTML report", f"nfs-tuner-session-{sid}.html",
                                              "HTML report (*.html)")
        if dest is None:
            return None
        store, to = self.store, dest
        view = next((w for i in range(self.tabs.count())
                     if isinstance(w := self.tabs.widget(i), SessionView) and w.session_id == sid), None)
        path = self._written("The report", lambda: write_report(  # the save dialog asked before a file is replaced
            store, sid, to, data=view.data if view is not None else None, replace=True))
        if path is not None:
            self.statusBar().showMessage(f"Report written to {path}")
        return path

    def export_csv(self, session_id: int | None = None, folder: Path | None = None) -> tuple[Path, Path] | None:
        sid = self._target(session_id)
        if sid is None or self.store is None:
            return None
        folder = folder or self.dialogs.choose_dir("Folder for the CSV files")
        if folder is None:
            return None
        store, into = self.store, folder
        paths = self._written("The CSV files", lambda: export_csv(store, sid, into, replace=True))  # a folder chosen for them
        if paths is not None:
            self.statusBar().showMessage(f"CSV written: {paths[0]}, {paths[1]}")
        return paths

    def export_session_file(self, session_id: int | None = None, dest: Path | None = None) -> Path | None:
        sid = self._target(session_id)
        if sid is None or self.store is None:
            return None
        dest = dest or self.dialogs.save_path("Export session file", f"nfs-tuner-session-{sid}.db", SESSION_FILTER)
        if dest is None:
            return None
        store, to = self.store, dest
        path = self._written("The session file", lambda: export_session(store, sid, to))  # an existing file is refused
        if path is not None:
            self.statusBar().showMessage(f"Session {sid} written to {path}")
        return path

    def import_file(self, src: Path | None = None) -> list[int]:
        """Copy a received session file's sessions into this store, list them and open the first."""
        if self.store is None:
            return []
        src = src or self.dialogs.open_path("Import a session file", SESSION_FILTER)
        if src is None:
            return []
        try:
            done = import_sessions(self.store, src)
        except StoreError as e:  # damaged, too new, foreign: the file is untouched
            self.show_problem(str(e), title="The session file cannot be imported")
            return []
        self.show_problem("", dialog=False)
        self.reload()
        if shown := [*done.ids, *done.already.values()]:  # a session held already is opened, not copied again
            self.select_sessions(*shown)
            self.open_session(shown[0])
        here = "".join(f"; its session {theirs} is here already as session {mine}" for theirs, mine in done.already.items())
        self.statusBar().showMessage(f"Imported {len(done.ids)} session(s) from {src}{here}")
        return list(done.ids)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None
        if self._private_dir is not None:
            self._private_dir.cleanup()
            self._private_dir = None
        super().closeEvent(event)
