"""A stored load ladder read back: its steps with their layer figures, the knee and the saturated layer.

Every face reads a ladder here (``study ladder``, ``sessions show``, the HTML report).
A step's load is its streams per client (the trial's workload ``jobs``) × the clients
that ran it; throughput, p50 and p99 come from the trial's summary, the layer figures
from its stored telemetry: nfsd's waiting share and the server's CPU and busiest export
disk with its queue (app.recommend.telemetry), the NIC as the busiest host's network rate
over the link (per client: the admin's --link-mbps or the measured TCP ceiling; the server:
that × clients), and the busiest client's CPU. nfsd's thread count at a step is the held
knob's value when the ladder held nfsd_threads, else what the step's telemetry read from
/proc/fs/nfsd/threads, else the server's facts the session recorded (taken before any
change: the hosts' own setting). The rule: experiments.knee.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.recommend.context import stored_ceilings
from app.recommend.telemetry import digest_arrays
from app.report.session_data import ladder_sweep, trial_latency, trial_mean
from app.store.records import TelemetryArrays, TrialRecord
from app.store.states import TrialState
from app.store.store import Store
from app.vocabulary import figure_text, latency_text, percent_text
from app.vocabulary.ladder import knee_text, load_text, queue_text
from experiments.knee import Knee, Layers, Saturated, Step, find_knee, saturated_layer, thread_count


@dataclass(frozen=True, slots=True)
class LadderStep:
    trial_id: int
    streams: int  # per client
    clients: int
    throughput_bps: float | None  # None: the step broke
    p50_ms: float | None
    p99_ms: float | None
    layers: Layers
    reason: str = ""  # why the step broke

    @property
    def load(self) -> int:
        return self.streams * self.clients


@dataclass(frozen=True, slots=True)
class LadderResult:
    workload: str
    config: Mapping[str, Any]  # the knobs held for the whole ladder ({}: the hosts' own settings)
    steps: tuple[LadderStep, ...]
    knee: Knee
    saturated: Saturated

    @property
    def sentence(self) -> str:
        return knee_text(self.knee, self.saturated)

    def to_json(self) -> dict[str, Any]:
        k, s = self.knee, self.saturated
        return {
            "workload": self.workload, "config": dict(self.config),
            "steps": [{"trial": st.trial_id, "streams_per_client": st.streams, "clients": st.clients, "load": st.load,
                       "throughput_bps": st.throughput_bps, "p50_ms": st.p50_ms, "p99_ms": st.p99_ms,
                       "layers": {"nfsd_waiting": st.layers.nfsd_waiting, "server_cpu": st.layers.server_cpu,
                                  "disk_util": st.layers.disk_util, "disk_queue": st.layers.disk_queue,
                                  "nfsd_threads": st.layers.nfsd_threads, "nic_util": st.layers.nic_util,
                                  "client_cpu": st.layers.client_cpu}, "reason": st.reason}
                      for st in self.steps],
            "knee": {"load": k.load, "saturated_load": k.past_load, "step": k.index, "gain_per_doubling": k.gain,
                     "p99_growth_per_doubling": k.p99_growth,
                     "last_load": k.last_load, "layer": s.layer, "figure": s.figure, "threshold": s.threshold,
                     "disk_queue": s.disk_queue, "nfsd_threads": s.nfsd_threads},
            "sentence": self.sentence,
        }  # fmt: skip


STEP_COLUMNS = ("Load", "Streams × clients", "Throughput", "p50", "p99", "nfsd waiting", "Server CPU", "Disk",
                "Disk queue", "NIC", "Client CPU", "Reason")  # fmt: skip
STEP_NUMERIC = range(2, 11)  # the figures' columns, right-aligned


def step_cells(st: LadderStep) -> tuple[str, ...]:
    """One step as the report and the review window show it (STEP_COLUMNS)."""
    lay = st.layers
    return (load_text(st.load), f"{st.streams} × {st.clients}", figure_text(st.throughput_bps), latency_text(st.p50_ms),
            latency_text(st.p99_ms), percent_text(lay.nfsd_waiting), percent_text(lay.server_cpu),
            percent_text(lay.disk_util), queue_text(lay.disk_queue), percent_text(lay.nic_util),
            percent_text(lay.client_cpu), st.reason)  # fmt: skip


def _host_means(arrays: TelemetryArrays, hosts: set[str]) -> dict[str, tuple[float, float]]:
    """host -> (mean network rate, the larger direction; mean CPU busy) over its rows."""
    out: dict[str, tuple[float, float]] = {}
    for h in hosts:
        rows = [i for i, x in enumerate(arrays.host) if x == h]
        if rows:
            net = np.maximum(np.asarray(arrays.net_rx_bps)[rows], np.asarray(arrays.net_tx_bps)[rows])
            out[h] = (float(np.nanmean(net)), float(np.nanmean(np.asarray(arrays.cpu_busy)[rows])))
    return out


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def recorded_threads(store: Store, session_id: int, server: str) -> int | None:
    """The server's nfsd threads as the session's host facts recorded them (its own setting)."""
    for f in reversed(store.host_facts(session_id, server)):
        nfsd = f.facts.get("nfsd") if f.role == "server" and isinstance(f.facts, dict) else None
        if isinstance(nfsd, dict) and (n := thread_count(nfsd.get("threads"))) is not None:
            return n
    return None


def step_layers(arrays: TelemetryArrays, server: str, clients: set[str], link_bps: float | None,
                held_threads: int | None = None, recorded: int | None = None) -> Layers:  # fmt: skip
    """The saturation figures of one trial's telemetry (see the module docstring); the thread count
    is ``held_threads``, else the telemetry's, else ``recorded``."""
    digest = digest_arrays(arrays, server)
    threads = held_threads or thread_count(digest.nfsd_threads) or recorded
    means = _host_means(arrays, {server, *clients})
    nic: float | None = None
    if link_bps:
        shares = [net / link_bps for h, (net, _) in means.items() if h in clients]
        if server in means:
            shares.append(means[server][0] / (link_bps * max(len(clients), 1)))
        nic = max(shares, default=None)
    cpu = [c for h, (_, c) in means.items() if h in clients]
    return Layers(nfsd_waiting=digest.waiting_share, server_cpu=digest.cpu_busy, disk_util=digest.disk_util,
                  nic_util=_finite(nic), client_cpu=_finite(max(cpu, default=None)), disk_queue=digest.disk_queue,
                  nfsd_threads=threads)  # fmt: skip


def _step(store: Store, t: TrialRecord, server: str, link_bps: float | None,
          threads: tuple[int | None, int | None]) -> LadderStep | None:  # fmt: skip
    workload = t.workload if isinstance(t.workload, Mapping) else {}
    jobs = workload.get("jobs")
    if not isinstance(jobs, int) or isinstance(jobs, bool):
        return None
    summary = t.summary if isinstance(t.summary, Mapping) else {}
    ran = summary.get("clients")
    clients = set(ran) if isinstance(ran, Mapping) and ran else set()
    lat = trial_latency(t)
    ok = t.state == TrialState.OK
    return LadderStep(t.id, jobs, max(len(clients), 1), trial_mean(t) if ok else None,
                      lat.p50_ms if lat and ok else None, lat.p99_ms if lat and ok else None,
                      step_layers(store.load_telemetry(t.id), server, clients, link_bps, *threads),
                      "" if ok else t.reason)  # fmt: skip


def load_ladder(store: Store, session_id: int) -> LadderResult | None:
    """The ladder of a stored session; None when the session is no ladder."""
    session = store.get_session(session_id)
    sweep = ladder_sweep(session.plan)
    if sweep is None:
        return None
    server = str(sweep.get("server", ""))
    clients = tuple(str(c) for c in sweep.get("clients", ()))
    link = sweep.get("link_bps")
    if not isinstance(link, int | float) or isinstance(link, bool):
        ceilings = stored_ceilings(store, session_id, server, clients)
        link = ceilings.network_per_client_bps if ceilings else None
    plan = session.plan if isinstance(session.plan, Mapping) else {}
    held = held_config(plan)
    threads = (thread_count(held.get("nfsd_threads")), recorded_threads(store, session_id, server))
    trials = [t for t in store.trials(session_id) if t.state in (TrialState.OK, TrialState.BROKEN)]
    steps = sorted((s for t in trials if (s := _step(store, t, server, link, threads)) is not None),
                   key=lambda s: (s.load, s.trial_id))  # fmt: skip
    knee = find_knee([Step(s.load, s.throughput_bps, s.p99_ms) for s in steps])
    saturated = saturated_layer(steps[knee.index].layers) if knee.index is not None else Saturated("unknown")
    workloads = plan.get("workloads") or ["?"]
    return LadderResult(str(workloads[0]), held, tuple(steps), knee, saturated)


def held_config(plan: Mapping[str, Any]) -> dict[str, Any]:
    """The knobs a study (ladder, directory scaling) held for every trial: each knob's one value."""
    knobs = plan.get("knobs")
    knobs = knobs if isinstance(knobs, Mapping) else {}
    return {k: v[0] for k, v in knobs.items() if isinstance(v, list) and v}
