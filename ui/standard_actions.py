"""What every window has: Quit (Ctrl+Q) and a Help menu (F1 for where you are, the README, About)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMainWindow, QTextBrowser, QVBoxLayout, QWidget

from ui.help_texts import KEYS, about_text, readme_text

Topic = Callable[[], tuple[str, str]]  # the help for where the window is now: (title, HTML)


def quit_action(window: QWidget, on_quit: Callable[[], object]) -> QAction:
    """Quit, Ctrl+Q on every platform (the offscreen and some desktop themes give the standard key none)."""
    action = QAction("&Quit", window)
    action.setObjectName("quitAction")
    action.setShortcut(QKeySequence("Ctrl+Q"))
    action.setMenuRole(QAction.MenuRole.QuitRole)
    action.triggered.connect(lambda _checked=False: on_quit())
    return action


class HelpDialog(QDialog):
    """A text to read beside the window (not modal): the page's help, the README or About."""

    def __init__(self, title: str, text: str, parent: QWidget | None = None, *, markdown: bool = False) -> None:
        super().__init__(parent)
        self.setObjectName("helpDialog")
        self.setWindowTitle(title)
        self.browser = QTextBrowser(self)
        self.browser.setObjectName("helpText")
        self.browser.setAccessibleName(title)
        self.browser.setOpenExternalLinks(True)
        if markdown:
            self.browser.setMarkdown(text)
        else:
            self.browser.setHtml(text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser, 1)
        layout.addWidget(buttons)
        self.resize(720, 560 if markdown else 380)

    def text(self) -> str:
        return self.browser.toPlainText()


class HelpMenu:
    """The &Help menu of ``window``: Help on this page or window (F1), Read me, About nfs-tuner."""

    def __init__(self, window: QMainWindow, topic: Topic, place: str) -> None:
        self.window = window
        self.topic = topic
        self.dialog: HelpDialog | None = None  # the last one shown
        self.help_action = QAction(f"&Help on this {place}", window)
        self.help_action.setObjectName("helpAction")
        self.help_action.setShortcut(QKeySequence(QKeySequence.StandardKey.HelpContents))
        self.help_action.triggered.connect(lambda _checked=False: self.show_topic())
        self.readme_action = QAction("&Read me", window)
        self.readme_action.setObjectName("readmeAction")
        self.readme_action.triggered.connect(
            lambda _checked=False: self._show("nfs-tuner — read me", readme_text(), markdown=True))
        self.about_action = QAction("&About nfs-tuner", window)
        self.about_action.setObjectName("aboutAction")
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        self.about_action.triggered.connect(lambda _checked=False: self._show("About nfs-tuner", about_text()))
        menu = window.menuBar().addMenu("&Help")
        menu.setObjectName("helpMenu")
        menu.addAction(self.help_action)
        menu.addSeparator()
        menu.addAction(self.readme_action)
        menu.addAction(self.about_action)

    def show_topic(self) -> HelpDialog:
        title, text = self.topic()
        return self._show(title, text + KEYS)

    def _show(self, title: str, text: str, *, markdown: bool = False) -> HelpDialog:
        if self.dialog is not None:
            self.dialog.close()
            self.dialog.deleteLater()
        self.dialog = HelpDialog(title, text, self.window, markdown=markdown)
        self.dialog.show()
        return self.dialog
