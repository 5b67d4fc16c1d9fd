"""Which core the GUI talks to. Until the real core implements ``ui.core_api.CoreApi``,
the window runs on the in-process demo core (the lead swaps this one function)."""

from __future__ import annotations

from pathlib import Path

from ui.core_api import CoreApi


def make_core(db_path: Path) -> tuple[CoreApi, bool]:
    """(core, is_demo)."""
    from app.paths import log_dir
    from ui.fake_core import FakeCore

    return FakeCore(log_path=log_dir() / "nfs-tuner.log"), True
