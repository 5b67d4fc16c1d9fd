"""The load ladder's knee rule and layer attribution (experiments.knee): pure, no hosts."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from experiments.knee import (
    BUSY,
    NFSD_WAITING,
    Knee,
    Layers,
    Saturated,
    Step,
    find_knee,
    saturated_layer,
    thread_count,
    threads_wait_on_disk,
)

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
    assert knee.index == 4 and knee.load == 8 and knee.past_load == 16  # 8 → 16 gained nothing, p99 doubled: it carried 8
    assert knee.gain == pytest.approx(0.0) and knee.p99_growth == pytest.approx(1.0)


def test_a_plateau_with_flat_p99_is_no_knee_and_noise_does_not_make_one() -> None:
    # throughput stops growing but p99 stays flat: no waiting, so the rule names no knee
    assert find_knee(ladder([10.0, 20.0, 40.0, 40.0, 40.0, 40.0, 40.0])).index is None
    noisy = [10.0 * n * (1.0 + 0.05 * (-1) ** i) for i, n in enumerate(LOADS)]  # ±5 % around a line
    assert find_knee(ladder(noisy, [2.0 * (1.0 + 0.1 * (-1) ** i) for i in range(7)])).index is None


def test_a_noisy_flat_ladder_has_its_knee_at_the_second_step() -> None:
    flat = [50.0, 51.0, 49.5, 50.5, 50.0, 49.0, 50.0]
    knee = find_knee(ladder(flat, [2.0 * n for n in LOADS]))  # nothing gained, p99 doubling from the start
    assert knee.index == 1 and knee.load == 1 and knee.past_load == 2


def test_broken_steps_are_skipped_and_the_gain_counts_per_doubling() -> None:
    # the 4- and 8-stream steps broke: 2 → 16 is three doublings, 8× the throughput (a line)
    steps = ladder([10.0, 20.0, None, None, 160.0, 170.0, 171.0], [2.0, 2.0, None, None, 2.0, 4.0, 8.0])
    knee = find_knee(steps)
    assert knee.index == 5 and knee.load == 16 and knee.past_load == 32 and knee.gain == pytest.approx(170 / 160 - 1)
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


# The lab's contention profile: the server's disk delays each read ~20 ms and serves many at once.
def test_two_threads_each_blocked_on_a_parallel_disk_are_the_threads_not_the_disk() -> None:
    # 100 reads/s × 20 ms = 2 in flight = the thread count; pool_stats' waiting share says only 7 %
    # (two TCP connections carry every request) and io_ticks says 97 % "busy"
    lab = Layers(nfsd_waiting=0.072, server_cpu=0.039, disk_util=0.97, client_cpu=0.024, disk_queue=1.9, nfsd_threads=2)
    assert saturated_layer(lab) == Saturated("nfsd", 0.97, BUSY, 1.9, 2)
    assert saturated_layer(lab).waits_on_disk
    # the same figures without the queue (telemetry from before the agent sent it): the old rule, unchanged
    old = Layers(nfsd_waiting=0.072, server_cpu=0.039, disk_util=0.97, client_cpu=0.024, nfsd_threads=2)
    assert saturated_layer(old) == Saturated("disk", 0.97, BUSY)


def test_thirty_two_threads_with_thirty_reads_in_flight_are_the_threads_too() -> None:
    # 30 ≥ 0.75 × 32 = 24: nearly every thread waits on the disk, so the next stream waits for a thread;
    # the disk is no limit (it served 20× more reads here than at 2 threads, at the same 96 %)
    at_32 = Layers(nfsd_waiting=0.027, server_cpu=0.21, disk_util=0.96, client_cpu=0.56, disk_queue=30.0, nfsd_threads=32)
    assert saturated_layer(at_32) == Saturated("nfsd", 0.96, BUSY, 30.0, 32)
    just_under = Layers(disk_util=0.96, disk_queue=23.9, nfsd_threads=32)
    assert saturated_layer(just_under) == Saturated("disk", 0.96, BUSY, 23.9, 32)
    assert saturated_layer(Layers(disk_util=0.96, disk_queue=24.0, nfsd_threads=32)).layer == "nfsd"  # the bound itself


def test_a_busy_disk_holding_far_fewer_requests_than_threads_is_the_disk() -> None:
    # 12 in flight for 64 threads: most threads are free, yet requests do not reach the disk faster
    hdd = Layers(nfsd_waiting=0.01, server_cpu=0.2, disk_util=0.97, disk_queue=12.0, nfsd_threads=64)
    assert saturated_layer(hdd) == Saturated("disk", 0.97, BUSY, 12.0, 64)
    assert not saturated_layer(hdd).waits_on_disk
    # a disk under its threshold names nothing, whatever its queue
    assert saturated_layer(Layers(disk_util=0.85, disk_queue=1.9, nfsd_threads=2)) == Saturated("unknown")


def test_with_the_queue_known_a_measured_limit_outranks_the_disks_busy_share() -> None:
    # a parallel disk reads ~100 % busy at a dozen requests; the clients' links, measured full, are the limit
    links_full = Layers(nfsd_waiting=0.2, server_cpu=0.3, disk_util=1.0, nic_util=0.94, disk_queue=12.2, nfsd_threads=32)
    assert saturated_layer(links_full) == Saturated("nic", 0.94, BUSY)
    cpu = Layers(disk_util=0.99, client_cpu=0.95, disk_queue=3.0, nfsd_threads=64)
    assert saturated_layer(cpu).layer == "client_cpu"
    # without the queue the disk keeps its old place, ahead of the NIC
    assert saturated_layer(Layers(disk_util=1.0, nic_util=0.94, nfsd_threads=32)).layer == "disk"
    # the waiting share still comes first, and names the threads by its own figure
    assert saturated_layer(Layers(nfsd_waiting=0.9, disk_util=0.97, disk_queue=1.9, nfsd_threads=2)) == \
        Saturated("nfsd", 0.9, NFSD_WAITING)  # fmt: skip


@pytest.mark.parametrize("layers", [
    Layers(disk_util=0.97, disk_queue=math.nan, nfsd_threads=2), Layers(disk_util=0.97, disk_queue=-1.0, nfsd_threads=2),
    Layers(disk_util=0.97, disk_queue=1.9, nfsd_threads=0), Layers(disk_util=0.97, disk_queue=1.9),
], ids=["nan queue", "negative queue", "no threads", "threads unknown"])  # fmt: skip
def test_a_queue_or_thread_count_that_says_nothing_leaves_the_old_rule(layers: Layers) -> None:
    assert threads_wait_on_disk(layers) is None
    assert saturated_layer(layers) == Saturated("disk", 0.97, BUSY)


@pytest.mark.parametrize(("value", "count"), [(8, 8), ("16", 16), (" 4 ", 4), (7.6, 8), (0.6, 1), (0, None), (-3, None),
                                              (0.4, None), (math.nan, None), (math.inf, None), (True, None),
                                              ("eight", None), (None, None), ([8], None)])  # fmt: skip
def test_a_thread_count_is_a_positive_whole_number_whatever_it_was_recorded_as(value: object, count: int | None) -> None:
    assert thread_count(value) == count
