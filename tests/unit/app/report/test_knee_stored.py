"""A stored ladder's layer read back through the report (app.report.ladder): the export disk's queue
against nfsd's thread count, where that count comes from, and older telemetry without the queue.

The sessions mirror the lab's contention profile (rand_read, each disk read delayed ~20 ms, the disk
serving many at once): throughput flat at 0.4 MB/s from 2 streams on, p99 doubling with the load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.commands.study import ladder_lines
from app.report.ladder import STEP_COLUMNS, load_ladder, step_cells
from app.store import SessionState, Store, TrialState
from experiments.samples import HostTelemetry

SERVER, CLIENTS = "lab-server", ("lab-client1", "lab-client2")
P99_MS = {1: 22.0, 2: 44.1, 4: 81.4, 8: 163.0, 16: 330.0}  # per stream per client
ARRIVED = 210.0


def _server_extra(queue: float | None, threads: float | None) -> dict[str, float]:
    extra = {
        "disk.md0.util": 0.97,
        "disk.dm-2.util": 0.96,  # a member of md0: as busy, holding a share of its requests
        "disk.dm-2.queue": 0.7,
        "nfsd.packets_arrived_per_s": ARRIVED,
        "nfsd.threads_woken_per_s": ARRIVED * 0.93,  # 7 % waited for a thread
    }
    if queue is not None:
        extra["disk.md0.queue"] = queue
    if threads is not None:
        extra["nfsd.threads"] = threads
    return extra


def _ladder_session(store: Store, *, held: int | None, queue: float | None, telemetry_threads: float | None,
                    facts_threads: int = 8) -> int:  # fmt: skip
    """A finished ladder of five steps (1..16 streams per client), its server's facts saying
    ``facts_threads`` (discovery's, before any change), every step's server telemetry alike."""
    knobs = {"nfsd_threads": [held]} if held is not None else {}
    plan = {"knobs": knobs, "workloads": ["rand_read"],
            "sweep": {"ladder": list(P99_MS), "server": SERVER, "clients": list(CLIENTS), "link_bps": None}}  # fmt: skip
    sid = store.create_session([SERVER, *CLIENTS], plan, notes="ladder")
    store.add_host_facts(sid, SERVER, "server", {"host": SERVER, "nfsd": {"running": True, "threads": facts_threads}})
    for jobs, p99 in P99_MS.items():
        tid = store.add_trial(sid, {"nfsd_threads": held} if held else {}, {"kind": "rand_read", "jobs": jobs})
        summary: dict[str, Any] = {"mean": 4e5, "clients": {c: {} for c in CLIENTS},
                                   "latency": {"p50_ms": 20.0 * jobs, "p99_ms": p99, "p999_ms": p99, "max_ms": p99,
                                               "ops": 400, "hist": {}}}  # fmt: skip
        store.write_telemetry(tid, [HostTelemetry(SERVER, float(t), 1.0, cpu_busy=0.04,
                                                  extra=_server_extra(queue, telemetry_threads)) for t in (1, 2, 3)]
                              + [HostTelemetry(c, 1.0, 1.0, cpu_busy=0.05) for c in CLIENTS])  # fmt: skip
        store.finish_trial(tid, TrialState.OK, summary=summary)
    store.set_session_state(sid, SessionState.COMPLETE)
    return sid


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "s.db")


def test_two_held_threads_each_waiting_on_the_disk_are_named_with_the_queue(store: Store) -> None:
    ladder = load_ladder(store, _ladder_session(store, held=2, queue=1.9, telemetry_threads=2.0))
    assert ladder is not None and ladder.knee.load == 2 and ladder.knee.past_load == 4
    # the held knob, not discovery's 8; the queue of md0 (the busiest device), not of its member
    assert all(st.layers.disk_queue == pytest.approx(1.9) and st.layers.nfsd_threads == 2 for st in ladder.steps)
    assert ladder.saturated.layer == "nfsd" and ladder.saturated.waits_on_disk
    assert ladder.sentence.endswith("saturated there: nfsd threads (every thread waits on the disk: 1.9 requests in flight "
                                    "for 2 threads, the disk busy 97 %).")  # fmt: skip
    knee = ladder.to_json()["knee"]
    assert (knee["layer"], knee["disk_queue"], knee["nfsd_threads"]) == ("nfsd", pytest.approx(1.9), 2)
    assert ladder.to_json()["steps"][0]["layers"]["disk_queue"] == pytest.approx(1.9)
    # the disk's queue beside its utilisation in the table every face shows, and in the CLI's
    cells = dict(zip(STEP_COLUMNS, step_cells(ladder.steps[0]), strict=True))
    assert (cells["Disk"], cells["Disk queue"]) == ("97 %", "1.9")
    lines = ladder_lines(ladder)
    assert "disk q" in lines[1] and "97 %     1.9" in lines[2]


def test_without_a_held_knob_the_thread_count_is_the_steps_telemetrys_then_the_servers_facts(store: Store) -> None:
    measured = load_ladder(store, _ladder_session(store, held=None, queue=1.9, telemetry_threads=2.0))
    assert measured is not None and measured.steps[0].layers.nfsd_threads == 2 and measured.saturated.layer == "nfsd"
    # nothing held, no count in the telemetry: the server's own setting as discovery found it (8 threads),
    # which 1.9 requests in flight do not fill: the disk, with the figures that say so
    facts = load_ladder(store, _ladder_session(store, held=None, queue=1.9, telemetry_threads=None))
    assert facts is not None and facts.steps[0].layers.nfsd_threads == 8
    assert facts.saturated.layer == "disk"
    assert facts.sentence.endswith("saturated there: the export's disk (utilisation: 97 % > 90 %; 1.9 requests in flight "
                                   "for 8 threads).")  # fmt: skip


def test_telemetry_without_the_queue_reads_as_before(store: Store) -> None:
    ladder = load_ladder(store, _ladder_session(store, held=2, queue=None, telemetry_threads=2.0))
    assert ladder is not None and ladder.knee.load == 2 and ladder.knee.past_load == 4
    assert ladder.steps[0].layers.disk_queue is None and ladder.saturated.layer == "disk"
    assert ladder.sentence.endswith("saturated there: the export's disk (utilisation: 97 % > 90 %).")
    assert dict(zip(STEP_COLUMNS, step_cells(ladder.steps[0]), strict=True))["Disk queue"] == "—"
