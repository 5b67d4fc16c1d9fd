"""The tuning flow as a QWizard: a tuple of page classes, each with
initializePage / validatePage / isComplete (as MusicBrainz Picard's setup wizard)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QListWidget, QWidget, QWizard

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
        self.state = WizardState()
        self.setWizardStyle(QWizard.WizardStyle.ClassicStyle)
        self.setOptions(QWizard.WizardOption.NoCancelButton | QWizard.WizardOption.NoBackButtonOnLastPage)
        self.setButtonText(QWizard.WizardButton.FinishButton, "&Finish")
        self.pages: list[Page] = []
        for cls in PAGES:
            page = cls(session, bridge, self.state, self)
            self.pages.append(page)
            self.addPage(page)
        self.steps = QListWidget(self)
        self.steps.setObjectName("wizardSteps")
        self.steps.addItems([f"{i}. {p.TITLE}" for i, p in enumerate(self.pages, start=1)])
        self.steps.setFocusPolicy(self.steps.focusPolicy().NoFocus)  # navigation is Back / Next
        self.steps.setFixedWidth(150)
        self.setSideWidget(self.steps)
        self.currentIdChanged.connect(self._mark_step)
        self._mark_step(self.currentId())

    def _mark_step(self, page_id: int) -> None:
        index = self.pageIds().index(page_id) if page_id in self.pageIds() else 0
        self.steps.setCurrentRow(index)

    def page_of(self, cls: type[Page]) -> Page:
        return next(p for p in self.pages if isinstance(p, cls))

    def accept(self) -> None:
        """Finish keeps the window open on the results; the main window decides what next."""
        self.sessionFinished.emit()

    def reject(self) -> None:
        """Escape must not hide the embedded wizard; closing is the window's business."""
