"""UI tests run on qasync's loop (as the app does) and never touch the user's settings."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from qasync import QEventLoop

from ui.bridge import Bridge
from ui.fake_core import FakeCore


@pytest.fixture(autouse=True)
def _private_settings(tmp_path_factory: pytest.TempPathFactory) -> None:
    path = tmp_path_factory.mktemp("settings")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(path))


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
def core(loop: QEventLoop, tmp_path: Path) -> FakeCore:
    fake = FakeCore(speed=200.0, log_path=tmp_path / "nfs-tuner.log")
    fake.trial_samples = (16, 40)
    return fake


@pytest.fixture
def bridge(qtbot, core: FakeCore) -> Iterator[Bridge]:  # type: ignore[no-untyped-def]
    b = Bridge(core.bus)
    yield b
    b.close()
