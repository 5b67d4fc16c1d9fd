"""What every wizard page shares: the core, the bridge and the session state."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget, QWizardPage

from ui.bridge import Bridge
from ui.core_api import CoreApi, SessionState

MB = 1_000_000.0


def mb_s(bps: float) -> str:
    return f"{bps / MB:,.0f} MB/s"


def duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h} h {m:02d} min" if h else (f"{m} min {s:02d} s" if m else f"{s} s")


def config_text(config: dict[str, str] | object) -> str:
    items = dict(config).items()  # type: ignore[call-overload]
    return ", ".join(f"{k} = {v}" if v else k for k, v in items) or "today's configuration"


class Page(QWizardPage):
    TITLE = ""
    SUBTITLE = ""

    def __init__(self, core: CoreApi, bridge: Bridge, state: SessionState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.core = core
        self.bridge = bridge
        self.state = state
        self.setTitle(self.TITLE)
        self.setSubTitle(self.SUBTITLE)

    def hint(self, text: str) -> QLabel:
        label = QLabel(text, self)
        label.setObjectName("pageHint")
        label.setWordWrap(True)
        return label
