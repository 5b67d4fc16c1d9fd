"""What the application layer says before it loads or changes hosts: the baseline's steps
and a run's changes per host, as the engine will really make them."""

from __future__ import annotations

import asyncio
from pathlib import Path

from app.session import BaselineStepStarted, TuningSession
from app.session.preview import run_preview
from app.simulated import SimulatedHosts
from app.store import Store
from tests.unit.app.session.test_session_service import connected


def _session(tmp_path: Path) -> TuningSession:
    async def go() -> TuningSession:
        return await connected(Store(tmp_path / "s.db"), SimulatedHosts(speed=400.0))

    return asyncio.run(go())


def test_the_baseline_announces_the_steps_it_said_it_would_take(tmp_path: Path) -> None:
    session = _session(tmp_path)
    planned = session.baseline_steps(["seq_read"])
    assert [s.what for s in planned] == ["network client1 → nfs-server", "network client2 → nfs-server",
                                         "nfs-server disk, sequential write and read",
                                         "today's configuration, seq_read (sequential read)"]  # fmt: skip
    assert planned[0].hosts == ("client1", "nfs-server") and planned[3].hosts == ("nfs-server", "client1", "client2")
    assert all(s.expected_s > 0 and s.load for s in planned)
    announced: list[BaselineStepStarted] = []
    session.bus.subscribe(announced.append, BaselineStepStarted)
    asyncio.run(session.baseline(["seq_read"]))
    assert [(e.index, e.total, e.step) for e in announced] == [(i, 4, s) for i, s in enumerate(planned)]
    session.store.close()


def test_the_preview_names_each_hosts_changes_with_todays_value_among_those_tried(tmp_path: Path) -> None:
    session = _session(tmp_path)
    spec = session.plan(session.choices(knobs={"nfsd_threads": "16, 64", "read_ahead_kb": "4096", "mtu": "9000"},
                                        workloads=("seq_read",)))  # fmt: skip
    preview = session.preview(spec)
    by_host = {h.host: {c.knob: c for c in h.changes} for h in preview.hosts}
    assert [h.host for h in preview.hosts] == ["nfs-server", "client1", "client2"]
    assert set(by_host["nfs-server"]) == {"nfsd_threads", "mtu"}  # the MTU on both ends of the path
    assert set(by_host["client1"]) == set(by_host["client2"]) == {"read_ahead_kb", "mtu"}
    threads = by_host["nfs-server"]["nfsd_threads"]
    assert (threads.target, threads.today, threads.values) == ("/proc/fs/nfsd/threads", "8", "8, 16, 64")
    assert by_host["client1"]["read_ahead_kb"].values == "128, 4096"  # today's 128 is measured too
    assert by_host["client1"]["mtu"].risk.startswith("A value the network does not carry")
    assert by_host["client1"]["read_ahead_kb"].risk == ""
    client = preview.hosts[1]
    assert client.test_mount == "nfs-server:/srv/nfs at /mnt/nfs-tuner-<session>-<token>"
    assert client.own_mounts == ("/mnt/nfs",) and preview.hosts[0].test_mount == ""
    assert preview.caches_dropped_on == ("nfs-server", "client1", "client2") and preview.workloads == ("seq_read",)
    assert preview.async_risk == "" and preview.estimate == session.estimate(spec)
    session.store.close()


def test_async_is_named_as_a_risk_and_unknown_hosts_read_unknown(tmp_path: Path) -> None:
    session = _session(tmp_path)
    spec = session.plan(session.choices(knobs={"export_sync": "sync, async"}, allow_async=True))
    assert "may lose data" in session.preview(spec).async_risk
    blind = run_preview(spec, {})  # no facts: nothing made up
    change = blind.hosts[0].changes[0]
    assert (change.today, change.target) == ("unknown", "not found on this host")
    session.store.close()
