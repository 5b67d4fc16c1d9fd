"""From the core's EventBus to Qt: samples in batches, everything else as signals.

Bus callbacks run on the publishing thread (the asyncio loop, which qasync runs in
Qt's thread); they only queue. A ~30 Hz timer drains the queue into the ring
buffers of ``LiveData`` and emits ``frame`` once, so the plots redraw at most 30
times a second however fast samples come. Rare events (trial started, journal,
messages) are re-emitted as a queued Qt signal, which is also safe if the core
ever publishes from another thread.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QTimer, Signal, SignalInstance, Slot

from app.events import EventBus, Message, SamplesBatch, TelemetryBatch
from app.session import BaselineStepStarted
from app.sweep.events import JournalChanged, Progress, SweepFinished, SweepStarted, TrialFinished, TrialStarted
from ui.live_data import LiveData

FRAME_MS = 33


class Bridge(QObject):
    frame = Signal()  # LiveData changed since the last frame
    tick = Signal()  # every timer tick, after ``frame`` if any: plots spread work over ticks
    message = Signal(object)  # app.events.Message
    sweepStarted = Signal(object)  # the run events are app.sweep.events'
    trialStarted = Signal(object)
    trialFinished = Signal(object)
    progress = Signal(object)
    journalChanged = Signal(object)
    runFinished = Signal(object)
    baselineStep = Signal(object)  # app.session.BaselineStepStarted
    _event = Signal(object)  # any other event, hopped onto the GUI thread

    def __init__(self, bus: EventBus, live: LiveData | None = None, parent: QObject | None = None,
                 frame_ms: int = FRAME_MS) -> None:
        super().__init__(parent)
        self.live = live or LiveData()
        self._pending: deque[SamplesBatch | TelemetryBatch] = deque()
        self._unsubscribe: Callable[[], None] | None = bus.subscribe(self._on_bus_event)
        self._event.connect(self._dispatch, Qt.ConnectionType.QueuedConnection)
        self._routes: dict[type, SignalInstance] = {
            Message: self.message, SweepStarted: self.sweepStarted, TrialStarted: self.trialStarted,
            TrialFinished: self.trialFinished, Progress: self.progress, JournalChanged: self.journalChanged,
            SweepFinished: self.runFinished, BaselineStepStarted: self.baselineStep,
        }
        self.timer = QTimer(self)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(frame_ms)
        self.timer.timeout.connect(self._on_timer)
        self.timer.start()

    def _on_bus_event(self, event: object) -> None:
        # deque.append is atomic: fine from any thread, and O(1) on the loop.
        if isinstance(event, (SamplesBatch, TelemetryBatch)):
            self._pending.append(event)
        else:
            try:
                self._event.emit(event)
            except RuntimeError:  # the Qt side is gone (its window closed mid-run): stop listening
                self._stop_listening()

    @Slot(object)
    def _dispatch(self, event: object) -> None:
        signal = self._routes.get(type(event))
        if signal is not None:
            signal.emit(event)

    @Slot()
    def _on_timer(self) -> None:
        self.flush()
        self.tick.emit()

    @Slot()
    def flush(self) -> None:
        """Move every queued batch into the buffers; one ``frame`` if anything came."""
        if not self._pending:
            return
        while self._pending:
            self.live.ingest(self._pending.popleft())
        self.frame.emit()

    def pending(self) -> int:
        return len(self._pending)

    def close(self) -> None:
        self.timer.stop()
        self._stop_listening()

    def _stop_listening(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
