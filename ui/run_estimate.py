"""The Run page's time left: a countdown from the engine's estimate that ticks every second.

The engine estimates the rest of the run when a trial ends (trials left × the mean trial
time so far, ``app.sweep.events.Progress``); before the first one, the plan's estimate
stands in. Between those the label counts down by the clock, so it never sits still for
minutes (it changes at the resolution it is written in: seconds under an hour, minutes
above); each new estimate re-bases it. Paused, the clock stops and the label says so.
When the run ends it says how, never a stale time.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer, Slot
from PySide6.QtWidgets import QLabel

from app.vocabulary import duration_text

TICK_MS = 1000


class RunEstimate(QObject):
    def __init__(self, label: QLabel, note: str = "") -> None:
        super().__init__(label)
        self.label = label
        self.note = note  # what the clock runs on, when not real hosts' (app.vocabulary.pace_note)
        self._end: float | None = None  # time.monotonic() when the run should end
        self._left = 0.0  # seconds left when paused
        self.paused = False
        self.timer = QTimer(self)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self.show)

    def left(self) -> float | None:
        """Seconds left by the estimate now (frozen while paused); None when there is none."""
        if self._end is None:
            return None
        return self._left if self.paused else max(0.0, self._end - time.monotonic())

    def rebase(self, seconds: float) -> None:
        """A new estimate of the time left (the plan's, then the engine's after each trial)."""
        self._end = time.monotonic() + max(0.0, seconds)
        self._left = max(0.0, seconds)
        if not self.paused:
            self.timer.start()  # the next tick a whole second after this estimate
        self.show()

    def pause(self) -> None:
        self._left = self.left() or 0.0
        self.paused = True
        self.timer.stop()
        self.show()

    def resume(self) -> None:
        self.paused = False
        if self._end is not None:
            self.rebase(self._left)

    def finish(self, text: str) -> None:
        """The run ended (or is ending): ``text`` says how, instead of a time."""
        self.timer.stop()
        self._end = None
        self.paused = False
        self.label.setText(text)

    @Slot()
    def show(self) -> None:
        left = self.left()
        if left is None:
            return
        if self.paused:
            text = f"paused: about {duration_text(left)} left once resumed{self.note}"
        elif left >= 1:
            text = f"about {duration_text(left)} left{self.note}"
        else:  # the run outlasted its estimate: the next trial's end brings a new one
            text = "a little longer than estimated"
        if text != self.label.text():
            self.label.setText(text)
