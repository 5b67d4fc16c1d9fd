"""The load ladder's saturation point (the knee) and the layer that saturated there.

The rule (stated in every report): going from one step to the next — the offered load
doubling — the knee is the first step where throughput gains less than ``MIN_GAIN``
(10 %) per doubling while p99 grows by more than ``MAX_P99_GROWTH`` (50 %) per doubling:
more load buys little and costs waiting. Where a step lacks p99, the gain alone decides.
The gain is scaled to a doubling (a step of ×4 counts as two), so uneven ladders compare.
Steps whose throughput is missing (broken trials) are skipped: the next measured step
is compared with the last measured one. No step meeting the rule: no knee up to the
ladder's last load.

The layer at the knee: the first of these over its threshold at the knee's step, in this
order — nfsd (share of requests that found no idle thread > 50 %), server CPU (busy >
90 %), disk (busiest export device's utilisation > 90 %), NIC (> 90 % of the link or
its measured ceiling), client CPU (> 90 %). None over: "unknown"; no figures: "unknown".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

MIN_GAIN = 0.10  # throughput growth per doubling below this: load buys little
MAX_P99_GROWTH = 0.50  # p99 growth per doubling above this: requests wait
BUSY = 0.90  # CPU, disk, NIC: a share above this is saturated
NFSD_WAITING = 0.50  # nfsd: a share of requests that found no idle thread above this

RULE = (f"the knee is the first step where doubling the offered load gains less than {MIN_GAIN * 100:.0f} % "
        f"throughput while p99 grows more than {MAX_P99_GROWTH * 100:.0f} %")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Step:
    """One rung: offered load (streams in flight over all clients) and what it gave."""

    load: int
    throughput_bps: float | None  # None: the step broke
    p99_ms: float | None = None


@dataclass(frozen=True, slots=True)
class Layers:
    """The saturation figures at one step, each 0..1; None when not seen."""

    nfsd_waiting: float | None = None
    server_cpu: float | None = None
    disk_util: float | None = None
    nic_util: float | None = None
    client_cpu: float | None = None


@dataclass(frozen=True, slots=True)
class Knee:
    """The knee's step (index into the ladder) or None, and the figures that decided."""

    index: int | None
    load: int | None = None
    gain: float | None = None  # throughput growth per doubling into the knee
    p99_growth: float | None = None  # p99 growth per doubling (None: no p99 to judge)
    last_load: int | None = None  # the ladder's highest measured load


@dataclass(frozen=True, slots=True)
class Saturated:
    """The layer that saturated at the knee and the figure that said so."""

    layer: str  # nfsd, server_cpu, disk, nic, client_cpu or unknown
    figure: float | None = None
    threshold: float | None = None


def _per_doubling(before: float, after: float, doublings: float) -> float:
    return float((after / before) ** (1.0 / doublings) - 1.0)


def find_knee(steps: Sequence[Step]) -> Knee:
    """The knee by the module's rule; ``Knee(None, …)`` when none is seen."""
    measured = [(i, s) for i, s in enumerate(steps)
                if s.throughput_bps is not None and math.isfinite(s.throughput_bps) and s.throughput_bps > 0 and s.load > 0]  # fmt: skip
    last = measured[-1][1].load if measured else None
    for (_, a), (j, b) in zip(measured, measured[1:], strict=False):
        doublings = math.log2(b.load / a.load)
        if doublings <= 0:
            continue
        assert a.throughput_bps is not None and b.throughput_bps is not None
        gain = _per_doubling(a.throughput_bps, b.throughput_bps, doublings)
        growth = None
        if a.p99_ms and b.p99_ms and a.p99_ms > 0 and math.isfinite(a.p99_ms) and math.isfinite(b.p99_ms):
            growth = _per_doubling(a.p99_ms, b.p99_ms, doublings)
        if gain < MIN_GAIN and (growth is None or growth > MAX_P99_GROWTH):
            return Knee(j, b.load, gain, growth, last)
    return Knee(None, last_load=last)


def saturated_layer(layers: Layers | None) -> Saturated:
    """The first layer over its threshold (order: nfsd, server CPU, disk, NIC, client CPU)."""
    if layers is None:
        return Saturated("unknown")
    checks = (("nfsd", layers.nfsd_waiting, NFSD_WAITING), ("server_cpu", layers.server_cpu, BUSY),
              ("disk", layers.disk_util, BUSY), ("nic", layers.nic_util, BUSY), ("client_cpu", layers.client_cpu, BUSY))  # fmt: skip
    for name, figure, threshold in checks:
        if figure is not None and math.isfinite(figure) and figure > threshold:
            return Saturated(name, figure, threshold)
    return Saturated("unknown")
