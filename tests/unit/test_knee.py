"""The load ladder's knee rule and layer attribution (experiments.knee): pure, no hosts."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from experiments.knee import BUSY, NFSD_WAITING, Knee, Layers, Saturated, Step, find_knee, saturated_layer

LOADS = (1, 2, 4, 8, 16, 32, 64)


def ladder(throughputs: Sequence[float | None], p99s: Sequence[float | None] | None = None) -> list[Step]:
    p99s = p99s or [2.0] * len(throughputs)
    return [Step(load, bps, p99) for load, bps, p99 in zip(LOADS, throughputs, p99s, strict=False)]


def test_a_linear_ladder_has_no_knee_up_to_its_last_load() -> None:
    knee = find_knee(ladder([10.0 * n for n in LOADS]))
    assert knee == Knee(None, last_load=64)


def test_a_saturating_ladder_has_its_knee_at_the_first_step_that_gains_little_while_p99_grows() -> None:
    capacity = 80.0
    bps = [min(10.0 * n, capacity) for n in LOADS]  # 10, 20, 40, 80, 80, 80, 80
    p99 = [2.0 * max(1.0, 10.0 * n / capacity) for n in LOADS]  # flat until the cap, then doubling
    knee = find_knee(ladder(bps, p99))
    assert knee.index == 4 and knee.load == 16  # 8 → 16 streams gained nothing, p99 doubled
    assert knee.gain == pytest.approx(0.0) and knee.p99_growth == pytest.approx(1.0)


def test_a_plateau_with_flat_p99_is_no_knee_and_noise_does_not_make_one() -> None:
    # throughput stops growing but p99 stays flat: no waiting, so the rule names no knee
    assert find_knee(ladder([10.0, 20.0, 40.0, 40.0, 40.0, 40.0, 40.0])).index is None
    noisy = [10.0 * n * (1.0 + 0.05 * (-1) ** i) for i, n in enumerate(LOADS)]  # ±5 % around a line
    assert find_knee(ladder(noisy, [2.0 * (1.0 + 0.1 * (-1) ** i) for i in range(7)])).index is None


def test_a_noisy_flat_ladder_has_its_knee_at_the_second_step() -> None:
    flat = [50.0, 51.0, 49.5, 50.5, 50.0, 49.0, 50.0]
    knee = find_knee(ladder(flat, [2.0 * n for n in LOADS]))  # nothing gained, p99 doubling from the start
    assert knee.index == 1 and knee.load == 2


def test_broken_steps_are_skipped_and_the_gain_counts_per_doubling() -> None:
    # the 4- and 8-stream steps broke: 2 → 16 is three doublings, 8× the throughput (a line)
    steps = ladder([10.0, 20.0, None, None, 160.0, 170.0, 171.0], [2.0, 2.0, None, None, 2.0, 4.0, 8.0])
    knee = find_knee(steps)
    assert knee.index == 5 and knee.load == 32 and knee.gain == pytest.approx(170 / 160 - 1)
    assert find_knee([Step(1, None), Step(2, math.nan)]) == Knee(None)  # nothing measured: nothing to name
    assert find_knee([]) == Knee(None)


def test_without_p99_the_gain_alone_decides() -> None:
    knee = find_knee([Step(1, 10.0), Step(2, 20.0), Step(4, 21.0)])
    assert knee.index == 2 and knee.p99_growth is None


def test_the_layer_is_the_first_over_its_threshold_with_the_figure_that_decided() -> None:
    assert saturated_layer(Layers(nfsd_waiting=0.94, server_cpu=0.95)) == Saturated("nfsd", 0.94, NFSD_WAITING)
    assert saturated_layer(Layers(nfsd_waiting=0.2, server_cpu=0.95)) == Saturated("server_cpu", 0.95, BUSY)
    assert saturated_layer(Layers(nfsd_waiting=0.1, server_cpu=0.3, disk_util=0.99)).layer == "disk"
    assert saturated_layer(Layers(nic_util=0.93, client_cpu=0.97)) == Saturated("nic", 0.93, BUSY)
    assert saturated_layer(Layers(client_cpu=0.97)).layer == "client_cpu"
    assert saturated_layer(Layers(server_cpu=0.5, disk_util=0.4, nic_util=math.nan)) == Saturated("unknown")
    assert saturated_layer(Layers()) == Saturated("unknown")  # no telemetry
    assert saturated_layer(None) == Saturated("unknown")
