"""Which hosts a session talks to: the real ones over SSH, or the simulated ones when asked for
explicitly (``NFS_TUNER_DEMO=1``: demos, screenshots), never by accident."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from app.hosts import HostPool, SshSettings
from app.paths import default_db_path
from app.session.service import TuningSession
from app.simulated import SimulatedHosts
from app.store import Store
from app.sweep.ssh_hosts import SshHosts

DEMO_ENV = "NFS_TUNER_DEMO"
DEMO_SPEED = 20.0  # simulated seconds per real second: a trial of about a minute takes three


def demo_requested() -> bool:
    return os.environ.get(DEMO_ENV, "").strip().lower() in ("1", "true", "yes")


def open_tuning_session(db_path: Path | None, ssh_config: Path | None = None, *, demo: bool | None = None) -> TuningSession:
    """A session over SSH on ``db_path`` (None: the default session database).

    In the demo, simulated hosts, on the database the admin named (--db, $NFS_TUNER_DB) or else a
    throwaway one (``session.store.path``), removed when the session is closed or the program ends:
    the demo never writes into the default sessions, and never leaves a database behind unasked.
    """
    if demo_requested() if demo is None else demo:
        if db_path is not None:
            return TuningSession(Store(db_path), SimulatedHosts(speed=DEMO_SPEED))
        throwaway = tempfile.TemporaryDirectory(prefix="nfs-tuner-demo-")  # removed at exit, if not before
        session = TuningSession(Store(Path(throwaway.name) / "demo-sessions.db"), SimulatedHosts(speed=DEMO_SPEED))
        session.throwaway = throwaway
        return session
    pool = HostPool(SshSettings(config_file=ssh_config))
    return TuningSession(Store(db_path or default_db_path()), SshHosts(pool, ssh_config))
