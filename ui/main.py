"""Start the desktop application: one asyncio loop, run inside Qt by qasync.

No start shows a traceback: a session database the app cannot use opens a dialog with the
command line's words and a way on (ui.database_dialog); any other failure while starting
is a dialog naming the log file that holds its traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli import log_traceback
from app.paths import chosen_db_path, log_dir, resolve_db_path
from app.session import TuningSession
from app.session.factory import open_tuning_session
from app.store import StoreError

if TYPE_CHECKING:  # Qt is imported once a window is really needed (a bad --ssh-config is said before)
    from ui.database_dialog import Way

log = logging.getLogger(__name__)


def _log_to_file() -> None:
    try:
        path = log_dir() / "nfs-tuner.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        return  # logging's last resort still says warnings on stderr; the start goes on
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.INFO)


def run_gui(args: argparse.Namespace) -> int:
    ssh_config = Path(args.gui_ssh_config).expanduser() if getattr(args, "gui_ssh_config", None) else None
    if ssh_config is not None and not ssh_config.is_file():
        print(f"nfs-tuner: --ssh-config {ssh_config}: no such file; give the SSH config your hosts are in",
              file=sys.stderr)  # fmt: skip
        return 2
    from ui.theme import application

    _log_to_file()
    application()
    try:
        return _start(args, ssh_config)
    except Exception as exc:  # a bug while starting: a dialog and where its traceback is, never a traceback
        return startup_failed(exc)


def _start(args: argparse.Namespace, ssh_config: Path | None) -> int:
    from qasync import QEventLoop

    from ui.database_dialog import DatabaseDialog, Way
    from ui.main_window import MainWindow
    from ui.review.launch import open_review_window
    from ui.theme import application

    opened = open_or_ask(chosen_db_path(args.db), ssh_config, lambda e, p: DatabaseDialog(e, p).way())
    if isinstance(opened, Way):
        if opened.review is None:
            return 1  # Quit: the dialog said why
        review = open_review_window(str(opened.review), opened.review)
        review.show()
        return int(application().exec())
    loop = QEventLoop(application())
    asyncio.set_event_loop(loop)
    with loop:  # closed however the start ends
        window = MainWindow(db_path=opened.store.path, session=opened, ssh_config=ssh_config)
        window.crash.install()
        # An exception in a task or callback is a bug like any other: same dialog, same revert.
        loop.set_exception_handler(
            lambda _loop, ctx: window.crash.handle(type(e), e, e.__traceback__)
            if isinstance(e := ctx.get("exception"), BaseException) else log.error("%s", ctx.get("message")))
        window.show()
        loop.call_soon(window.check_leftovers)
        return int(loop.run_forever() or 0)


Ask = Callable[[StoreError, Path], "Way"]


def open_or_ask(db: Path | None, ssh_config: Path | None, ask: Ask) -> TuningSession | Way:
    """The session on ``db`` (None: the default database); while the database cannot be used, ``ask`` the
    admin for a way on: another file (tried in turn), the review of this one, or quit."""
    while True:
        try:
            return open_tuning_session(db, ssh_config)
        except StoreError as exc:
            way: Way = ask(exc, db or resolve_db_path(None))
            if way.other is None:
                return way
            db = way.other


def startup_failed(exc: BaseException) -> int:
    """Any other failure while starting: its traceback in the log file, a dialog that names that file."""
    from PySide6.QtWidgets import QMessageBox

    log_file = log_traceback(exc)
    where = f"The details are in {log_file}; please attach that file to a bug report." if log_file else \
        "The details are below; please copy them into a bug report."
    box = QMessageBox(QMessageBox.Icon.Critical, "nfs-tuner could not start",
                      f"nfs-tuner could not start: {type(exc).__name__}: {exc}\n\nThis is a bug, not something you did. "
                      f"{where}")  # fmt: skip
    box.setObjectName("startupFailed")
    box.setDetailedText("".join(traceback.format_exception(exc)))
    box.exec()
    return 1
