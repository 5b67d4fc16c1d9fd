"""The application's main window: the wizard, the core's messages, and a safe exit."""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, Qt
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import QLabel, QMainWindow, QMessageBox, QVBoxLayout, QWidget

from app import __version__
from app.events import Level, Message
from app.session import SessionError, TuningSession
from app.session.factory import open_tuning_session
from app.session.results import saved_text
from ui.async_tasks import spawn
from ui.bridge import Bridge
from ui.crash import CrashHandler
from ui.help_texts import PAGE_HELP
from ui.leftovers_dialog import LeftoversDialog
from ui.message_banner import MessageBanner
from ui.pages.base import Page
from ui.questions import ask_to_revert
from ui.standard_actions import HelpMenu, quit_action
from ui.wizard import TuningWizard

log = logging.getLogger(__name__)
DEFAULT_SIZE = (1280, 800)


class MainWindow(QMainWindow):
    def __init__(self, db_path: Path | None, session: TuningSession | None = None, settings: QSettings | None = None,
                 ssh_config: Path | None = None) -> None:
        super().__init__()
        self.session = session if session is not None else open_tuning_session(db_path, ssh_config)
        self.db_path = self.session.store.path  # None: the default; the demo's own is a throwaway one
        demo = self.session.simulated
        self.settings = settings or QSettings()
        self.setWindowTitle(f"nfs-tuner {__version__}")
        self.bridge = Bridge(self.session.bus, parent=self)
        self.banner = MessageBanner(self.session.log_path, self)
        self.wizard = TuningWizard(self.session, self.bridge, self)
        self.wizard.setWindowFlags(Qt.WindowType.Widget)  # a dialog class, embedded
        self.wizard.sessionFinished.connect(self._say_saved)
        body = QWidget(self)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(6, 6, 6, 0)
        layout.addWidget(self.banner)
        layout.addWidget(self.wizard, 1)
        self.setCentralWidget(body)

        db_label = QLabel(f"Sessions are kept in {self.db_path}", self)
        db_label.setObjectName("dbPathLabel")
        db_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.statusBar().addPermanentWidget(db_label)
        core_label = QLabel("Demo: simulated hosts, nothing is changed anywhere." if demo else
                            "Real hosts: every change is journaled and put back after the run.", self)
        core_label.setObjectName("demoLabel" if demo else "coreLabel")
        self.statusBar().addWidget(core_label)
        self.review_window: QWidget | None = None
        self.leftovers_dialog: LeftoversDialog | None = None
        review = QAction("&Review saved sessions…", self)
        review.setObjectName("reviewAction")
        review.setShortcut(QKeySequence("Ctrl+R"))
        review.triggered.connect(self.open_review)
        self.review_action = review
        sessions = self.menuBar().addMenu("&Sessions")
        sessions.addAction(review)
        sessions.addSeparator()
        self.quit_action = quit_action(self, self.quit)
        sessions.addAction(self.quit_action)
        self.help = HelpMenu(self, self._page_help, "page")
        self._quitting = False  # Quit closes the review window too, once this window may close

        self.bridge.message.connect(self.show_message)
        self.crash = CrashHandler(self, self.session.revert_all, self.session.log_path)
        self.close_question: QMessageBox | None = None
        self._may_close = False
        # No minimum of its own: the layouts' fits a 960×540 screen (1920×1080 at 2×), and pages
        # scroll below that. The first size is the default, or the screen when that is smaller.
        room = self.screen().availableGeometry().size()
        self.resize(min(DEFAULT_SIZE[0], room.width()), min(DEFAULT_SIZE[1], room.height()))
        geometry = self.settings.value("mainWindow/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)

    def _say_saved(self) -> None:
        """Finish: where the session is kept, in true words (a demo's database is a throwaway one)."""
        self.statusBar().showMessage(saved_text(self.session.store, self.session.session_id,
                                                demo=self.session.simulated,
                                                throwaway=self.session.throwaway is not None), 10_000)  # fmt: skip

    def open_review(self) -> None:
        """The offline review window over the same session database."""
        from ui.review.launch import open_review_window

        self.review_window = open_review_window("", self.db_path)
        self.review_window.show()

    def quit(self) -> None:
        """Quit: this window closes as its close button would (asking first during a run), then the review."""
        self._quitting = True
        self.close()

    def _page_help(self) -> tuple[str, str]:
        page = self.wizard.currentPage()
        title = page.TITLE if isinstance(page, Page) else ""
        return f"Help: {title or 'nfs-tuner'}", PAGE_HELP.get(title, "")

    def check_leftovers(self) -> None:
        """Offer to revert changes an earlier run left behind (call once the loop runs)."""
        spawn(self._check_leftovers(), owner=self)

    async def _check_leftovers(self) -> None:
        try:
            leftovers = await self.session.leftovers()
        except SessionError as exc:
            self.show_message(Message(Level.WARNING, "Changes of an earlier run could not be checked", str(exc)))
            return
        if leftovers:
            self.leftovers_dialog = LeftoversDialog(self.session, leftovers, self)
            self.leftovers_dialog.open()

    def show_message(self, message: Message) -> None:
        if message.level is Level.ERROR:
            log.error("%s %s", message.text, message.detail)
        self.banner.show_message(message)

    # --- closing: never leave a host changed ---
    def closeEvent(self, event: QCloseEvent) -> None:
        if self.session.running and not self._may_close:
            event.ignore()
            self.ask_close()
            return
        if self._quitting and self.review_window is not None:
            self.review_window.close()
        self.settings.setValue("mainWindow/geometry", self.saveGeometry())
        self.settings.sync()
        self.bridge.close()
        self.crash.uninstall()
        event.accept()

    def ask_close(self) -> None:
        if self.close_question is not None and self.close_question.isVisible():
            return
        self.close_question = ask_to_revert(
            self, "closeQuestion", "A run is in progress",
            "Quit now? The run stops and every change made on the hosts is put back first.",
            "&Revert and quit", self._revert_then_close)

    def _revert_then_close(self) -> None:
        self.statusBar().showMessage("Stopping the run and putting every change back…")
        self.setEnabled(False)
        spawn(self._revert_and_close())

    async def _revert_and_close(self) -> None:
        try:
            await self.session.cancel_and_revert()
        finally:
            self._may_close = True
            self.setEnabled(True)
            self.close()
