"""Which core the GUI talks to: the real one, or the simulated demo core when asked for
explicitly (``NFS_TUNER_DEMO=1``: demos, screenshots), never by accident."""

from __future__ import annotations

import os
from pathlib import Path

from ui.core_api import CoreApi

DEMO_ENV = "NFS_TUNER_DEMO"


def demo_requested() -> bool:
    return os.environ.get(DEMO_ENV, "").strip().lower() in ("1", "true", "yes")


def make_core(db_path: Path, ssh_config: Path | None = None) -> tuple[CoreApi, bool]:
    """(core, is_demo)."""
    from app.paths import log_dir

    log_path = log_dir() / "nfs-tuner.log"
    if demo_requested():
        from ui.fake_core import FakeCore

        return FakeCore(log_path=log_path), True
    from ui.real_core import RealCore

    return RealCore(db_path, ssh_config=ssh_config, log_path=log_path), False
