"""Fabricate realistic sessions through the Store API, for the review and report tests and benchmarks.

A session looks like one the sweep leaves: a plan, host facts parsed from the lab's
real discovery captures, trials per workload × configuration × repetition with 4 Hz
samples from each client (noise and an occasional dip), telemetry, a journal of
changes that were applied and put back, and optionally the stored recommendation.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from app.facts.build import build_host_facts
from app.recommend import recommend, save
from app.store import JournalState, SessionState, Store, TrialState
from experiments.samples import HostTelemetry, Sample
from experiments.stability import summarize
from experiments.workloads import SeqRead, SeqWrite, SmallFiles

FACTS = Path(__file__).resolve().parent / "fixtures" / "facts"
MB = 1e6
WORKLOADS = {"seq_read": SeqRead(), "seq_write": SeqWrite(), "small_files": SmallFiles()}


@dataclass
class Recipe:
    server: str = "lab-server"
    clients: tuple[str, ...] = ("lab-client1", "lab-client2")
    knobs: Mapping[str, Sequence[Any]] = field(
        default_factory=lambda: {"rsize": (65536, 262144, 1048576), "nfsd_threads": (8, 32)})
    workloads: tuple[str, ...] = ("seq_read", "seq_write")
    repetitions: int = 3
    samples_per_trial: int = 40  # per client, at 4 Hz
    speed: float = 1.0  # scales every throughput (a "before/after" pair differs here)
    seed: int = 1
    state: SessionState = SessionState.COMPLETE
    store_recommendation: bool = True
    broken_trial: bool = True  # one extra trial that broke (host error), as real sweeps have
    notes: str = "fabricated"


def _base_bps(workload: str, config: Mapping[str, Any], speed: float) -> float:
    rsize = float(config.get("rsize", 65536))
    threads = float(config.get("nfsd_threads", 8))
    # bigger rsize helps reads (up to +25 %); writes only gain from more nfsd threads
    size_gain = 1 + 0.25 * math.log2(rsize / 65536) / 4 if workload != "seq_write" else 1.0
    thread_gain = 1.0 + (0.12 if threads >= 32 else 0.0)
    base = {"seq_read": 100 * MB, "seq_write": 55 * MB, "small_files": 8 * MB}.get(workload, 50 * MB)
    return base * size_gain * thread_gain * speed


def _client_samples(rng: np.random.Generator, client: str, mean_bps: float, n: int, *, write: bool,
                    ops_size: float) -> list[Sample]:
    values = rng.normal(mean_bps, mean_bps * 0.03, n).clip(min=0)
    if n > 20 and rng.random() < 0.3:  # a short dip, as a busy server shows
        at = int(rng.integers(10, n - 5))
        values[at:at + 3] *= 0.55
    out = []
    for i, v in enumerate(values):
        moved = int(v * 0.25)
        out.append(Sample(client=client, t=(i + 1) * 0.25, interval=0.25,
                          bytes_read=0 if write else moved, bytes_written=moved if write else 0,
                          ops=max(1, int(moved / ops_size)), lat_p50_ms=2.0, lat_p99_ms=9.0, lat_max_ms=20.0))
    return out


def fabricate_session(store: Store, recipe: Recipe | None = None) -> int:
    """Write one session into ``store`` and return its id."""
    r = recipe or Recipe()
    rng = np.random.default_rng(r.seed)
    hosts = [r.server, *r.clients]
    baseline = {k: v[0] for k, v in r.knobs.items()}
    plan = {"knobs": {k: list(v) for k, v in r.knobs.items()}, "workloads": list(r.workloads),
            "clients": list(r.clients), "strategy": "grid", "min_runs": r.repetitions, "max_runs": r.repetitions,
            "baseline": baseline, "seed": r.seed}
    sid = store.create_session(hosts, plan=plan, notes=r.notes)
    plan_id = store.save_plan(sid, plan)
    for host, role, capture in ((r.server, "server", "lab_server.txt"),
                                *((c, "client", f"lab_client{i % 2 + 1}.txt") for i, c in enumerate(r.clients))):
        facts = build_host_facts(host, (FACTS / capture).read_text()).to_dict()
        store.add_host_facts(sid, host, role, facts)
    configs = [dict(zip(r.knobs, values, strict=True)) for values in itertools.product(*r.knobs.values())]
    for workload in r.workloads:
        spec = WORKLOADS[workload]
        for config in configs:
            for k, v in config.items():  # the change the sweep made, journaled first, then put back
                if v != baseline[k]:
                    target = "/proc/fs/nfsd/threads" if k == "nfsd_threads" else "mount option"
                    host = r.server if k == "nfsd_threads" else r.clients[0]
                    e = store.journal_intend(sid, host, k, target, baseline[k], v)
                    store.journal_update(e, JournalState.APPLIED)
                    store.journal_update(e, JournalState.REVERTED)
            for rep in range(r.repetitions):
                tid = store.add_trial(sid, config, spec.to_dict(), repetition=rep, plan_id=plan_id)
                mean = _base_bps(workload, config, r.speed) * rng.normal(1.0, 0.01)
                samples = [s for c in r.clients for s in _client_samples(
                    rng, c, mean / len(r.clients), r.samples_per_trial, write=workload != "seq_read",
                    ops_size=4096 if workload == "small_files" else 1 << 20)]
                store.write_samples(tid, samples)
                store.write_telemetry(tid, [HostTelemetry(r.server, (i + 1) * 1.0, 1.0, disk_read_bps=mean,
                                                          cpu_busy=0.35, extra={"cpu.iowait": 0.05})
                                            for i in range(max(1, r.samples_per_trial // 4))])
                total = np.zeros(r.samples_per_trial)
                ops = 0
                for s in samples:
                    total[int(round(s.t / 0.25)) - 1] += s.throughput_bps
                    ops += s.ops
                t = np.arange(1, r.samples_per_trial + 1) * 0.25
                summary = {"unit": "B/s", **summarize(t, total).to_dict(),
                           "ops_per_s": ops / (r.samples_per_trial * 0.25), "measured_s": float(t[-1])}
                store.finish_trial(tid, TrialState.OK, summary=summary)
    if r.broken_trial:
        tid = store.add_trial(sid, configs[-1], WORKLOADS[r.workloads[0]].to_dict(), repetition=r.repetitions)
        store.finish_trial(tid, TrialState.BROKEN, summary={"unit": "B/s", "n": 0},
                           reason="lab-client2: the load agent ended without a summary")
    if r.store_recommendation:
        save(store, recommend(store, sid))
    store.set_session_state(sid, r.state)
    return sid
