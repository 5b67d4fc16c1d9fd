"""UI tests run on qasync's loop (as the app does) and never touch the user's settings.

The wizard runs on the real application layer (app.session) over simulated hosts
(app.simulated): the product's engine, strategies, recommender, snippets and store.
"""

from __future__ import annotations

from dataclasses import replace

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from qasync import QEventLoop

from app.session import TuningSession
from app.simulated import SimulatedHosts
from app.store import Store
from ui.bridge import Bridge


@pytest.fixture(autouse=True)
def _private_settings(tmp_path_factory: pytest.TempPathFactory) -> None:
    path = tmp_path_factory.mktemp("settings")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(path))


# Every wait here bounds a hang; none is a speed claim (benchmarks/ make those). `make test` runs these tests
# niced beside three labs, where a click's answer can wait seconds for CPU: run-suites.sh stretches them all.
WAIT_SCALE = float(os.environ.get("NFS_TUNER_TEST_WAIT_SCALE") or 1)


@pytest.fixture(autouse=True)
def _waits_scaled(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if WAIT_SCALE == 1 or "qtbot" not in request.fixturenames:
        return
    qtbot = request.getfixturevalue("qtbot")
    for name, default in (("waitUntil", 5000), ("waitSignal", 5000), ("waitExposed", 5000), ("waitActive", 5000)):
        original = getattr(qtbot, name)

        def scaled(*args: object, _original=original, _default=default, **kwargs: object) -> object:  # type: ignore[no-untyped-def]
            timeout = kwargs.get("timeout", _default)
            if isinstance(timeout, int) and timeout > 0:
                kwargs["timeout"] = int(timeout * WAIT_SCALE)
            return _original(*args, **kwargs)

        monkeypatch.setattr(qtbot, name, scaled)


@pytest.fixture
def loop(qapp: QApplication) -> Iterator[QEventLoop]:
    """A qasync loop that counts as running while pytest-qt spins Qt's event loop."""
    ev_loop = QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(ev_loop)
    yield ev_loop
    for task in asyncio.all_tasks(ev_loop):
        task.cancel()
    asyncio.events._set_running_loop(None)
    asyncio.set_event_loop(None)
    # asyncssh resolves names in the loop's default executor, whose QThreads must be
    # joined here: Qt aborts the process if they are still alive at exit.
    executor = getattr(ev_loop, "_QEventLoop__default_executor", None)
    if executor is not None:
        executor.shutdown(wait=True)


@pytest.fixture
def session(qtbot, loop: QEventLoop, tmp_path: Path) -> Iterator[TuningSession]:  # type: ignore[no-untyped-def]
    """The application layer over simulated hosts that run 200 times faster than real ones."""
    s = TuningSession(Store(tmp_path / "s.db"), SimulatedHosts(speed=1000.0), log_path=tmp_path / "nfs-tuner.log")
    # a host taken away by a test is asked about at once (real seconds of waiting for it buy nothing here)
    s.plan_defaults = replace(s.plan_defaults, host_wait_s=0.0)
    yield s
    if s.running:  # a test left a run going: end it as closing the window would, every change put back
        ending = asyncio.ensure_future(s.cancel_and_revert())
        qtbot.waitUntil(ending.done, timeout=10_000)
    s.store.close()


@pytest.fixture
def bridge(qtbot, session: TuningSession) -> Iterator[Bridge]:  # type: ignore[no-untyped-def]
    b = Bridge(session.bus)
    yield b
    b.close()
