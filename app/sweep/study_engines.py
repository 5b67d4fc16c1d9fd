"""Which engine runs a session: a load ladder's, a directory study's, else the sweep's.

Its own module: the study engines subclass one another, and a resume picks among them all.
"""

from __future__ import annotations

from typing import Any

from app.events import EventBus
from app.hosts import HostPool
from app.store import Store
from app.sweep.dirs import DirsEngine
from app.sweep.engine import SweepEngine
from app.sweep.host_side import HostSide
from app.sweep.ladder import LadderEngine
from app.sweep.spec import SweepSpec


def engine_class(spec: SweepSpec) -> type[SweepEngine]:
    return LadderEngine if spec.ladder else DirsEngine if spec.dirs else SweepEngine


def engine_for_session(store: Store, hosts: HostSide | HostPool, bus: EventBus, session_id: int,
                       **kw: Any) -> SweepEngine:  # fmt: skip
    """The engine that resumes a stored session: a ladder's or a directory study's own, else the sweep's."""
    plan = store.get_session(session_id).plan
    sweep = plan.get("sweep") if isinstance(plan, dict) else None
    sweep = sweep if isinstance(sweep, dict) else {}
    cls = LadderEngine if sweep.get("ladder") else DirsEngine if sweep.get("dirs") else SweepEngine
    return cls.for_session(store, hosts, bus, session_id, **kw)
