"""Buffered sample writing: a crash loses at most one flush interval of samples.

Samples arrive at 4 Hz per client from the asyncio loop; a commit per sample would
cost more than the measurement. The writer buffers them and commits one block per
client per interval — from ``add`` when the interval has passed, and from a small
flusher thread when samples stop arriving, so buffered data never waits longer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from app.events import EventBus, SamplesBatch, TelemetryBatch
from experiments.samples import HostTelemetry, Sample

log = logging.getLogger(__name__)


class SampleSink(Protocol):
    """Where a writer commits (the Store): one transaction around many writes."""

    def transaction(self) -> AbstractContextManager[Any]: ...

    def write_samples(self, trial_id: int, samples: Iterable[Sample]) -> int: ...

    def write_telemetry(self, trial_id: int, items: Iterable[HostTelemetry]) -> int: ...


class SampleWriter:
    def __init__(
        self,
        store: SampleSink,
        flush_interval: float = 1.0,
        *,
        background: bool = True,
        on_close: Callable[[SampleWriter], None] | None = None,
    ) -> None:
        if flush_interval <= 0:
            raise ValueError("flush_interval must be positive")
        self._store = store
        self._on_close = on_close
        self.flush_interval = flush_interval
        self._lock = threading.Lock()
        self._samples: dict[int, list[Sample]] = {}
        self._telemetry: dict[int, list[HostTelemetry]] = {}
        self._last_flush = time.monotonic()
        self._inflight = 0  # taken from the buffer, not yet committed
        self._closed = False
        self.last_error: Exception | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if background:
            self._thread = threading.Thread(target=self._run, name="nfs-tuner-sample-flush", daemon=True)
            self._thread.start()

    @property
    def pending(self) -> int:
        """Samples and telemetry rows not yet committed (buffered or being written)."""
        with self._lock:
            return self._inflight + sum(map(len, self._samples.values())) + sum(map(len, self._telemetry.values()))

    def add(self, trial_id: int, samples: Iterable[Sample]) -> None:
        self._check_open()
        with self._lock:
            self._samples.setdefault(trial_id, []).extend(samples)
        self._flush_if_due()

    def add_telemetry(self, trial_id: int, telemetry: Iterable[HostTelemetry]) -> None:
        self._check_open()
        with self._lock:
            self._telemetry.setdefault(trial_id, []).extend(telemetry)
        self._flush_if_due()

    def attach(self, bus: EventBus) -> Callable[[], None]:
        """Write every SamplesBatch and TelemetryBatch published on ``bus``; returns a detach."""
        off_s = bus.subscribe(lambda e: self.add(e.trial_id, e.samples), SamplesBatch)
        off_t = bus.subscribe(lambda e: self.add_telemetry(e.trial_id, e.telemetry), TelemetryBatch)

        def detach() -> None:
            off_s()
            off_t()

        return detach

    def flush(self) -> int:
        """Commit everything buffered; returns how many samples were written."""
        with self._lock:
            samples, self._samples = self._samples, {}
            telemetry, self._telemetry = self._telemetry, {}
            self._last_flush = time.monotonic()
            taken = sum(map(len, samples.values())) + sum(map(len, telemetry.values()))
            self._inflight += taken
        written = 0
        try:
            with self._store.transaction():  # one commit for all trials and telemetry
                for trial_id, batch in samples.items():
                    written += self._store.write_samples(trial_id, batch)
                for trial_id, tel in telemetry.items():
                    self._store.write_telemetry(trial_id, tel)
        except Exception:
            # Put the data back so a passing problem (a busy file) loses nothing.
            with self._lock:
                for trial_id, batch in samples.items():
                    self._samples[trial_id] = batch + self._samples.get(trial_id, [])
                for trial_id, tel in telemetry.items():
                    self._telemetry[trial_id] = tel + self._telemetry.get(trial_id, [])
            raise
        finally:
            with self._lock:
                self._inflight -= taken
        return written

    def close(self) -> None:
        """Stop the flusher and commit what is left."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        try:
            self.flush()
        finally:
            if self._on_close is not None:
                self._on_close(self)

    def __enter__(self) -> SampleWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("SampleWriter is closed")

    def _flush_if_due(self) -> None:
        if time.monotonic() - self._last_flush >= self.flush_interval:
            self.flush()

    def _run(self) -> None:
        # Wake at twice the interval's rate so a buffered sample waits at most one interval.
        while not self._stop.wait(self.flush_interval / 2):
            try:
                if time.monotonic() - self._last_flush >= self.flush_interval / 2 and self.pending:
                    self.flush()
                self.last_error = None
            except Exception as e:  # keep trying; the loop's add() will raise it too
                self.last_error = e
                log.exception("flushing samples failed")
