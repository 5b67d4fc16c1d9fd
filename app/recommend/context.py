"""A session's recommendation made in the session's own context, read back from the store.

The context is what the sweep recorded: the ceilings it measured (host facts with the
role "ceiling"), whether the admin opted in to async exports, and the server. The sweep
engine recommends through ``recommend_session`` when a session completes, and the read
model (``app.report.session_data``) through the same function when a session has no
stored recommendation: one session, one recommendation, whoever asks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.recommend.build import recommend
from app.recommend.model import Ceilings, SessionRecommendation
from app.store.store import Store
from experiments.goals import Goal

CEILING = "ceiling"  # the host-facts role of a measured ceiling


def stored_ceilings(store: Store, sid: int, server: str | None, clients: Sequence[str] | None) -> Ceilings | None:
    """The session's measured ceilings; None when none were stored.

    A client's network ceiling is the best it measured (a sweep over the MTU measures at
    each MTU); the session's is the lowest client's. ``None`` for server or clients takes
    whichever host stored the figure (sessions from before the plan named them).
    """
    rows = [f for f in store.host_facts(sid) if f.role == CEILING and isinstance(f.facts, dict)]
    if not rows:
        return None
    best: dict[str, float] = {}
    for f in rows:
        if (clients is None or f.host in clients) and f.facts.get("tcp_bps"):
            best[f.host] = max(best.get(f.host, 0.0), float(f.facts["tcp_bps"]))
    disk: dict[str, Any] = next((f.facts for f in reversed(rows)
                 if (server is None or f.host == server) and "disk_read_bps" in f.facts), {})  # fmt: skip
    return Ceilings(
        network_per_client_bps=min(best.values()) if best else None,
        clients=len(clients) if clients is not None else max(len(best), 1),
        disk_read_bps=disk.get("disk_read_bps"),
        disk_write_bps=disk.get("disk_write_bps"),
    )


def ceiling_mtus(store: Store, sid: int) -> set[int]:
    """The MTUs the network ceiling was measured at (a sweep's first measure has none)."""
    return {int(f.facts["mtu"]) for f in store.host_facts(sid) if f.role == CEILING and f.facts.get("mtu")}


@dataclass(frozen=True, slots=True)
class SessionContext:
    """What a session's recommendation depends on besides its trials."""

    ceilings: Ceilings
    allow_async: bool
    server: str | None
    goal: Goal = field(default_factory=Goal)  # what the plan chose to optimise; older sessions: throughput


def session_context(store: Store, sid: int) -> SessionContext:
    plan = store.get_session(sid).plan
    sweep: Mapping[str, Any] = plan.get("sweep", {}) if isinstance(plan, Mapping) else {}
    sweep = sweep if isinstance(sweep, Mapping) else {}
    server = sweep.get("server") if isinstance(sweep.get("server"), str) else None
    clients = [str(c) for c in sweep["clients"]] if isinstance(sweep.get("clients"), list) else None
    ceilings = stored_ceilings(store, sid, server, clients) or Ceilings(clients=len(clients) if clients else 1)
    return SessionContext(ceilings, bool(sweep.get("async_opt_in", False)), server, Goal.stored(sweep.get("goal")))


def recommend_session(store: Store, sid: int, *, telemetry: bool = True) -> SessionRecommendation:
    """The recommendation for a session in its own context (see the module's docstring)."""
    ctx = session_context(store, sid)
    return recommend(store, sid, ceilings=ctx.ceilings, allow_async=ctx.allow_async, server_host=ctx.server,
                     telemetry=telemetry, goal=ctx.goal)  # fmt: skip
