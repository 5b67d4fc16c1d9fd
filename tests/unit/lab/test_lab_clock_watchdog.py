"""The lab's clock watchdog's judgement (tests/lab/clock_watchdog.py), on made-up /proc readings."""

from __future__ import annotations

import os

from tests.lab.clock_watchdog import BACKOFF_S, SPIN_CPU_S, GuestWatch, Reading, decide, read_process


def feed(watch: GuestWatch, readings: list[Reading]) -> list[tuple[bool, str]]:
    return [found for r in readings if (found := decide(watch, r)) is not None]


def spin(start: float, seconds: int, cpu0: float = 0.0, sleeps: int = 100) -> list[Reading]:
    """A process on CPU the whole time that never sleeps: the lost clock."""
    return [Reading(start + i, cpu0 + i * 1.0, sleeps) for i in range(seconds + 1)]


def test_a_guest_spinning_without_sleep_is_nudged_once_and_the_outcome_said() -> None:
    watch = GuestWatch(pid=1)
    said = feed(watch, spin(0, 2))
    assert said == [(True, "2.0 s of CPU and no sleep for 2 s: sent SIGALRM")]
    # after the tick it sleeps again: the clock had stopped
    said = feed(watch, [Reading(3, 3.05, 140), Reading(4, 3.1, 190)])
    assert said == [(False, "after the nudge it slept again: its clock had stopped")]


def test_an_idle_or_working_guest_is_left_alone() -> None:
    idle = GuestWatch(pid=1)
    assert feed(idle, [Reading(i, i * 0.02, 100 + 50 * i) for i in range(10)]) == []
    # busy at 100 % CPU but sleeping (waiting on its processes) every second: at work, not stopped
    busy = GuestWatch(pid=2)
    assert feed(busy, [Reading(i, i * 1.0, 100 + 3 * i) for i in range(10)]) == []
    # never sleeping and never on CPU (stopped): not the spin, however long
    stopped = GuestWatch(pid=3)
    assert feed(stopped, [Reading(i, 5.0, 100) for i in range(120)]) == []


def test_a_spin_on_a_small_share_of_a_core_is_nudged_once_it_used_enough_cpu() -> None:
    # a quarter of a core (the spin on a host saturated by other work): nudged after STALL_S
    shared = GuestWatch(pid=4)
    assert feed(shared, [Reading(i, i * 0.25, 100) for i in range(3)]) == [(True, "0.5 s of CPU and no sleep for 2 s: sent SIGALRM")]
    # a twentieth of a core (beside five labs' guests at work on two cores): nudged once it used SPIN_CPU_S
    starved = GuestWatch(pid=5)
    at = [r.at for r in (Reading(i, i * 0.05, 100) for i in range(20)) if decide(starved, r) is not None]
    assert at[0] == SPIN_CPU_S / 0.05


def test_an_outcome_is_awaited_while_the_guest_gets_no_cpu_and_said_unknown_after_the_backoff() -> None:
    watch = GuestWatch(pid=1)
    feed(watch, spin(0, 2))  # nudged at 2
    assert feed(watch, [Reading(3 + i, 2.1, 100) for i in range(int(BACKOFF_S) - 2)]) == []
    said = feed(watch, [Reading(2 + BACKOFF_S, 2.1, 100)])
    assert len(said) == 1 and not said[0][0] and "outcome unknown" in said[0][1]
    # a slow guest's outcome: it slept once it got the CPU to run the tick
    slow = GuestWatch(pid=2)
    feed(slow, spin(0, 2))
    assert feed(slow, [Reading(3, 2.05, 100), Reading(4, 2.1, 100), Reading(5, 2.15, 101)]) == [
        (False, "after the nudge it slept again: its clock had stopped")]


def test_one_sleep_inside_the_window_means_no_nudge() -> None:
    watch = GuestWatch(pid=1)
    readings = [Reading(0, 0.0, 100), Reading(1, 1.0, 100), Reading(2, 2.0, 101), Reading(3, 3.0, 101)]
    assert feed(watch, readings) == []
    assert feed(watch, [Reading(4, 4.0, 101)]) == [(True, "2.0 s of CPU and no sleep for 2 s: sent SIGALRM")]


def test_a_saturated_kernel_is_nudged_then_left_for_the_backoff() -> None:
    watch = GuestWatch(pid=1)
    said: list[tuple[float, bool, str]] = []
    for r in spin(0, int(BACKOFF_S) + 6):
        if (found := decide(watch, r)) is not None:
            said.append((r.at, *found))
    assert said[0] == (2.0, True, "2.0 s of CPU and no sleep for 2 s: sent SIGALRM")
    assert said[1][:2] == (3.0, False) and "went on without sleeping: it was at work" in said[1][2]
    assert [at for at, nudge, _ in said if nudge] == [2, 2 + BACKOFF_S]  # the next only after the backoff


def test_a_restarted_guest_is_watched_afresh() -> None:
    watch = GuestWatch(pid=1)
    feed(watch, spin(0, 2))  # nudged
    fresh = GuestWatch(pid=2)  # what the watchdog makes when the pid changes
    assert feed(fresh, spin(10, 2)) == [(True, "2.0 s of CPU and no sleep for 2 s: sent SIGALRM")]


def test_the_readings_of_a_live_process_are_its_own() -> None:
    got = read_process(os.getpid(), at=1.0)
    assert got is not None and got.cpu_s > 0 and got.sleeps >= 0 and got.at == 1.0
    assert read_process(2**22 + 12345, at=1.0) is None
