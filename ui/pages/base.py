"""What every wizard page shares: the session, the bridge and what the pages hand on."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import QLabel, QWidget, QWizardPage

from app.report import SessionData
from app.session import Baseline, TuningSession
from app.sweep.spec import SweepSpec
from app.sweep.events import SweepFinished
from ui.bridge import Bridge

@dataclass(slots=True)
class WizardState:
    """What the pages learn and hand on to each other (the hosts' facts live in the session)."""

    baseline: Baseline | None = None
    spec: SweepSpec | None = None
    finished: SweepFinished | None = None  # how the run ended; None while it runs or failed
    failed: str = ""  # why the run stopped early, in the host's words
    results: SessionData | None = None


class Page(QWizardPage):
    TITLE = ""
    SUBTITLE = ""

    def __init__(self, session: TuningSession, bridge: Bridge, state: WizardState,
                 parent: QWidget | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.session = session
        self.bridge = bridge
        self.state = state
        self.setTitle(self.TITLE)
        self.setSubTitle(self.SUBTITLE)

    def hint(self, text: str) -> QLabel:
        label = QLabel(text, self)
        label.setObjectName("pageHint")
        label.setWordWrap(True)
        return label
