"""Starting coroutines from Qt slots on the one asyncio loop (qasync's)."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QDialog

log = logging.getLogger(__name__)
T = TypeVar("T")
_tasks: set[asyncio.Task[Any]] = set()  # strong references: the loop keeps only weak ones


def spawn(coro: Coroutine[Any, Any, T], on_done: Callable[[asyncio.Task[T]], None] | None = None,
          owner: QObject | None = None) -> asyncio.Task[T]:
    """Run ``coro`` as a task; an exception nobody handled goes to sys.excepthook (the crash dialog).

    With ``owner``, the task is cancelled when that widget is destroyed, so it never
    resumes into a deleted widget."""
    task = asyncio.ensure_future(coro)
    _tasks.add(task)
    if owner is not None:
        keep_alive(owner, task)

    def _finished(t: asyncio.Task[T]) -> None:
        _tasks.discard(t)
        if on_done is not None:
            if t.cancelled() and owner is not None and not _alive(owner):
                return  # the widget is gone; nothing to tell it
            on_done(t)
        elif not t.cancelled() and t.exception() is not None:
            exc = t.exception()
            assert exc is not None
            sys.excepthook(type(exc), exc, exc.__traceback__)

    task.add_done_callback(_finished)
    return task


async def dialog_result(dialog: QDialog) -> int:
    """Open ``dialog`` window-modally and wait for its result without blocking the loop."""
    future: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def _set(result: int) -> None:
        if not future.done():
            future.set_result(result)

    dialog.finished.connect(_set)
    dialog.open()
    return await future


def keep_alive(owner: QObject, task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` when ``owner`` is destroyed, so no callback reaches a dead widget."""
    owner.destroyed.connect(lambda *_: task.cancel())


def _alive(obj: QObject) -> bool:
    from shiboken6 import isValid

    return bool(isValid(obj))
