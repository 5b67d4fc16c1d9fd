"""What every wizard page shares: the session, the bridge and what the pages hand on."""

from __future__ import annotations

from dataclasses import dataclass

from collections.abc import Sequence
from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget, QWizardPage

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


class PageHeader(QWidget):
    """Where the page sits among the wizard's steps and what it is for, in two short lines.

    It stands in for QWizard's own header (title, subtitle, a rule: some 80 pixels) and its
    side list of steps (150 pixels wide, mostly blank), which left a 960×540 screen (1920×1080
    at 2×) too little room for the pages."""

    def __init__(self, subtitle: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.steps = QLabel(self)
        self.steps.setObjectName("wizardSteps")
        self.steps.setWordWrap(True)
        self.subtitle = QLabel(subtitle, self)
        self.subtitle.setObjectName("pageSubtitle")
        self.subtitle.setWordWrap(True)
        rule = QFrame(self)
        rule.setFrameShape(QFrame.Shape.HLine)
        rule.setFrameShadow(QFrame.Shadow.Sunken)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.steps)
        layout.addWidget(self.subtitle)
        layout.addWidget(rule)

    def show_steps(self, titles: Sequence[str], current: int) -> None:
        """'1. Hosts › 2. Baseline › …' with this page's step in bold."""
        self.steps.setText(" › ".join(f"<b>{i}. {escape(t)}</b>" if i - 1 == current else f"{i}. {escape(t)}"
                                      for i, t in enumerate(titles, start=1)))


class PageBody(QWidget):
    """A page's widgets in its scroll area, which scrolls only below what they need at the least.

    QScrollArea sizes a widget whose layout has a height for its width by heightForWidth(),
    and a box layout answers that with its preferred height: a page with a wrapped label and
    a plot would scroll on any screen shorter than the plot's wish. The minimum answers."""

    def heightForWidth(self, width: int) -> int:  # noqa: N802 (Qt's name)
        layout = self.layout()
        return layout.minimumHeightForWidth(width) if layout is not None else super().heightForWidth(width)


class Page(QWizardPage):
    """A wizard page: its header, then its own widgets in ``body`` (laid out by ``body_layout``),
    which scrolls when the window is smaller than the page needs."""

    TITLE = ""  # in the header's steps and the help's title; never QWizard's title (its header is tall)
    SUBTITLE = ""

    def __init__(self, session: TuningSession, bridge: Bridge, state: WizardState,
                 parent: QWidget | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.session = session
        self.bridge = bridge
        self.state = state
        self.setAccessibleName(self.TITLE)
        self.header = PageHeader(self.SUBTITLE, self)
        self.header.show_steps((self.TITLE,), 0)
        self.body = PageBody(self)
        self.scroller = QScrollArea(self)
        self.scroller.setObjectName("pageScroller")
        self.scroller.setWidget(self.body)
        self.scroller.setWidgetResizable(True)
        self.scroller.setFrameShape(QFrame.Shape.NoFrame)
        self.scroller.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab goes to the page's fields, never to it
        self.scroller.setAccessibleName(self.TITLE)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.header)
        outer.addWidget(self.scroller, 1)

    def body_layout(self) -> QVBoxLayout:
        """The layout of the page's own widgets, flush with the header."""
        layout = QVBoxLayout(self.body)
        layout.setContentsMargins(0, 0, 0, 0)
        return layout

    def hint(self, text: str) -> QLabel:
        label = QLabel(text, self)
        label.setObjectName("pageHint")
        label.setWordWrap(True)
        return label
