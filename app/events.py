"""A Qt-free message bridge: the core publishes events, faces subscribe.

The core never calls the UI. The GUI subscribes and turns events into Qt signals
(ui.bridge); the CLI subscribes and prints. Callbacks run on the publishing thread,
which in nfs-tuner is the one asyncio loop, so subscribers must be quick: the GUI
only appends to buffers and lets a timer draw.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from experiments.samples import HostTelemetry, Sample

log = logging.getLogger(__name__)


class Level(Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Message:
    """Something the admin should read, in words they can act on."""

    level: Level
    text: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class SamplesBatch:
    trial_id: int
    samples: Sequence[Sample]


@dataclass(frozen=True, slots=True)
class TelemetryBatch:
    trial_id: int
    telemetry: Sequence[HostTelemetry]


Subscriber = Callable[[Any], None]


class EventBus:
    def __init__(self) -> None:
        self._subscribers: list[tuple[type | None, Subscriber]] = []

    def subscribe(self, callback: Subscriber, kind: type | None = None) -> Callable[[], None]:
        """Call ``callback`` for every event (of ``kind``, if given); returns an unsubscribe."""
        entry = (kind, callback)
        self._subscribers.append(entry)
        return lambda: self._subscribers.remove(entry) if entry in self._subscribers else None

    def publish(self, event: object) -> None:
        for kind, callback in list(self._subscribers):
            if kind is None or isinstance(event, kind):
                try:
                    callback(event)
                except Exception:  # a broken subscriber must not break the core
                    log.exception("event subscriber failed on %r", type(event).__name__)
