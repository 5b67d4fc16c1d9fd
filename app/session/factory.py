"""Which hosts a session talks to: the real ones over SSH, or the simulated ones when asked for
explicitly (``NFS_TUNER_DEMO=1``: demos, screenshots), never by accident."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from app.hosts import HostPool, SshSettings
from app.session.service import TuningSession
from app.simulated import SimulatedHosts
from app.store import Store
from app.sweep.ssh_hosts import SshHosts

DEMO_ENV = "NFS_TUNER_DEMO"
DEMO_SPEED = 20.0  # simulated seconds per real second: a trial of about a minute takes three


def demo_requested() -> bool:
    return os.environ.get(DEMO_ENV, "").strip().lower() in ("1", "true", "yes")


def open_tuning_session(db_path: Path, ssh_config: Path | None = None, *, demo: bool | None = None) -> TuningSession:
    """A session over SSH on ``db_path``; in the demo, simulated hosts and a throwaway database
    (``session.store.path``), so no real session or journal entry is ever mixed with the demo's."""
    if demo_requested() if demo is None else demo:
        db = Path(tempfile.mkdtemp(prefix="nfs-tuner-demo-")) / "demo-sessions.db"
        return TuningSession(Store(db), SimulatedHosts(speed=DEMO_SPEED))
    pool = HostPool(SshSettings(config_file=ssh_config))
    return TuningSession(Store(db_path), SshHosts(pool, ssh_config))
