"""Opening the browser: on the session database, or on a file someone sent (``--review FILE``).

A reviewed file is never opened for writing: its sessions are imported into a private
temporary database (the store checks and, if older, migrates a copy), so a damaged or
too-new file only produces a message and stays byte for byte as it was.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from app.paths import resolve_db_path
from app.store.errors import StoreError
from app.store import Store, import_sessions
from ui.review.dialogs import Dialogs
from ui.review.window import ReviewWindow


def open_review_window(review: str, db_path: Path, *, dialogs: Dialogs | None = None) -> ReviewWindow:
    """review: "" for the session database at db_path, else a session file to look at."""
    if not review:
        try:
            store = Store(db_path)
        except StoreError as e:
            return ReviewWindow(None, source=str(db_path), dialogs=dialogs, problem=str(e))
        return ReviewWindow(store, source=str(db_path), dialogs=dialogs)
    src = Path(review).expanduser()
    private = tempfile.TemporaryDirectory(prefix="nfs-tuner-review-")
    store = Store(Path(private.name) / "review.db")
    try:
        import_sessions(store, src, again=True)  # a private database: the file's sessions, each once
    except StoreError as e:
        return ReviewWindow(store, source=f"{src} (not opened)", dialogs=dialogs, problem=str(e), private_dir=private)
    window = ReviewWindow(store, source=f"{src} (a private copy: the file is not changed)", dialogs=dialogs,
                          private_dir=private)
    if window.visible_rows:
        window.select_sessions(window.visible_rows[0].id)
        window.open_session(window.visible_rows[0].id)
    return window


def run_review(args: argparse.Namespace) -> int:
    """``nfs-tuner --review [FILE]``: the browser alone, no asyncio loop (it makes no connection)."""
    from ui.theme import application

    qapp = application()
    window = open_review_window(args.review or "", resolve_db_path(args.db))
    window.show()
    return int(qapp.exec())
