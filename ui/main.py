"""Start the desktop application: one asyncio loop, run inside Qt by qasync."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path

from app.paths import chosen_db_path, log_dir

log = logging.getLogger(__name__)


def _log_to_file() -> None:
    path = log_dir() / "nfs-tuner.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.INFO)


def run_gui(args: argparse.Namespace) -> int:
    ssh_config = Path(args.gui_ssh_config).expanduser() if getattr(args, "gui_ssh_config", None) else None
    if ssh_config is not None and not ssh_config.is_file():
        print(f"nfs-tuner: --ssh-config {ssh_config}: no such file; give the SSH config your hosts are in",
              file=sys.stderr)  # fmt: skip
        return 2
    from qasync import QEventLoop

    from ui.main_window import MainWindow
    from ui.theme import application

    _log_to_file()
    qapp = application()
    loop = QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    window = MainWindow(db_path=chosen_db_path(args.db), ssh_config=ssh_config)
    window.crash.install()
    # An exception in a task or callback is a bug like any other: same dialog, same revert.
    loop.set_exception_handler(
        lambda _loop, ctx: window.crash.handle(type(e), e, e.__traceback__)
        if isinstance(e := ctx.get("exception"), BaseException) else log.error("%s", ctx.get("message")))
    window.show()
    loop.call_soon(window.check_leftovers)
    with loop:
        return int(loop.run_forever() or 0)
