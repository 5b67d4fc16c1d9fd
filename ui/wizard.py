"""The tuning flow as a QWizard: a tuple of page classes, each with
initializePage / validatePage / isComplete (as MusicBrainz Picard's setup wizard).

Enter never presses a wizard button: as a QDialog, a QWizard turns Enter in any field
into a click on its default button (Next, or "Start run" on the commit page), so an
admin confirming a typed value would advance a page or start changing hosts. Pages
only move on a click (or Space on a focused button); a field's own Enter (the host
name's "add") is the field's business."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QDialog, QPushButton, QWidget, QWizard

from app.session import TuningSession
from ui.bridge import Bridge
from ui.pages.base import Page, WizardState
from ui.pages.baseline import BaselinePage
from ui.pages.hosts import HostsPage
from ui.pages.plan import PlanPage
from ui.pages.results import ResultsPage
from ui.pages.run import RunPage

PAGES: tuple[type[Page], ...] = (HostsPage, BaselinePage, PlanPage, RunPage, ResultsPage)


class TuningWizard(QWizard):
    sessionFinished = Signal()

    def __init__(self, session: TuningSession, bridge: Bridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.bridge = bridge
        self.state = WizardState()
        self.setWizardStyle(QWizard.WizardStyle.ClassicStyle)
        self.setOptions(QWizard.WizardOption.NoCancelButton | QWizard.WizardOption.NoBackButtonOnLastPage
                        | QWizard.WizardOption.NoDefaultButton)  # fmt: skip
        self.setButtonText(QWizard.WizardButton.FinishButton, "&Finish")
        self.pages: list[Page] = []
        self._add_pages()
        self._no_default_buttons()
        self._wire_results()

    def _no_default_buttons(self) -> None:
        """No button of the wizard or its pages becomes the default when it had the focus once
        (autoDefault): a later Enter in a field would press it. Dialogs the pages open keep theirs."""
        for which in (QWizard.WizardButton.BackButton, QWizard.WizardButton.NextButton,
                      QWizard.WizardButton.CommitButton, QWizard.WizardButton.FinishButton):  # fmt: skip
            self.button(which)  # made on first use: make them now
        for button in self.findChildren(QPushButton):
            if _dialog_of(button) is self:
                button.setAutoDefault(False)
                button.setDefault(False)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Enter that a field left unhandled ends here, never at QDialog's default-button click."""
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            event.accept()
            return
        super().keyPressEvent(event)

    def _add_pages(self) -> None:
        """Every page made anew, each header naming the steps with its own in bold."""
        titles = [cls.TITLE for cls in PAGES]
        for index, cls in enumerate(PAGES):
            page = cls(self.session, self.bridge, self.state, self)
            page.header.show_steps(titles, index)
            self.pages.append(page)
            self.addPage(page)

    def page_of(self, cls: type[Page]) -> Page:
        return next(p for p in self.pages if isinstance(p, cls))

    def accept(self) -> None:
        """Finish keeps the window open on the results; the main window decides what next."""
        self.sessionFinished.emit()

    def reject(self) -> None:
        """Escape must not hide the embedded wizard; closing is the window's business."""

    # --- New session (the Results page's button) ------------------------------------------
    def _wire_results(self) -> None:
        page = self.page_of(ResultsPage)
        assert isinstance(page, ResultsPage)
        page.newSessionRequested.connect(self.start_over)

    def start_over(self) -> None:
        """Back to the first page with every page and all state made anew, so nothing of the last
        run shows; the session layer forgets it too (it stays in the database)."""
        if self.session.running:
            return
        self.session.start_over()
        self.bridge.live.reset(None)  # the live plots start blank
        self.state = WizardState()
        current = self.currentId()  # removed last: removed first, Qt would show (initialize) another old page
        for page_id in sorted(self.pageIds(), key=lambda i: i == current):
            self.removePage(page_id)
        for old in self.pages:
            old.deleteLater()
        self.pages = []
        self._add_pages()
        self._wire_results()
        self._no_default_buttons()
        self.restart()


def _dialog_of(widget: QWidget) -> QWidget | None:
    """The dialog a widget is in (the nearest QDialog above it)."""
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QDialog):
        parent = parent.parentWidget()
    return parent
