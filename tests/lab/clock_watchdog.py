"""The lab's clock watchdog (runs on the host, beside the forwarder): a guest whose clock stopped gets a tick.

UML 6.1 drives its clock from one host POSIX timer that raises SIGALRM. When one of its
expiries never arrives while the guest is busy, the guest's high-resolution timers wait
for an interrupt that is not coming and never program the timer again. Idle, the guest
then spins: os_idle_sleep() sleeps only while the host timer is armed, so its process
runs at 100 % CPU in rt_sigprocmask/timer_gettime/getpid and never sleeps. Interrupts
from the network and the disks still run, so SSH gets through key exchange, but nothing
that waits on a timer (sshd's session, nfsd, jbd2, TCP's retransmits) ever wakes. The
lab's fourth wedge kind was this, caught live with strace; one SIGALRM ends it: the
guest's timer interrupt runs its expired timers and programs the next one.

How the expiry is lost (read in Debian's 6.1 binary, not caught at the instruction): in
unblock_signals the compiler stores ``signals_enabled = 0`` before ``signals_pending = 0``;
a SIGALRM landing between the two stores is recorded as pending and then wiped.

So: each second, every guest's UML process is read from /proc. On CPU the whole time and
not sleeping once, for STALL_S: it gets a SIGALRM and a ``LAB-NUDGE`` line goes to the
log (the lab counts them: Lab.nudges). A tick too many is harmless (the interrupt finds
no timer due and programs the next), so a kernel that was merely saturated is nudged too;
the line then says the guest went on without sleeping, and the next nudge waits BACKOFF_S.

Usage: python -m tests.lab.clock_watchdog STATE_FILE LOG NAME [NAME ...]
(STATE_FILE is the lab's state.json, read each second: a restarted guest has a new pid;
the watchdog ends when the file goes.)
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

LOG_NAME = "clock.log"
MARK = "LAB-NUDGE"
NUDGED = "sent SIGALRM"  # ends a nudge's line; its outcome's line follows
INTERVAL_S = 1.0
STALL_S = 2.0  # a guest at work sleeps many times a second (waiting on its own processes, or idle)
# On CPU for at least this share of the window: a spinning guest gets a whole core on an idle host, and a
# quarter or less beside three labs and a test run (at 0.9, make test never saw its stopped clock); a
# stopped (SIGSTOP) or starved guest gets almost nothing, and is left alone.
BUSY_SHARE = 0.2
BACKOFF_S = 30.0
HZ = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Reading:
    at: float  # monotonic seconds
    cpu_s: float  # user + system time used so far
    sleeps: int  # voluntary context switches so far


def read_process(pid: int, at: float) -> Reading | None:
    """``pid``'s CPU time and voluntary sleeps, or None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    sleeps = next(int(ln.split()[1]) for ln in status.splitlines() if ln.startswith("voluntary_ctxt_switches:"))
    return Reading(at, (int(fields[11]) + int(fields[12])) / HZ, sleeps)


@dataclass
class GuestWatch:
    """One guest's readings and what was last done about them."""

    pid: int
    readings: list[Reading] = field(default_factory=list)
    nudged_at: float | None = None
    awaiting_outcome: bool = False

    def add(self, reading: Reading) -> None:
        self.readings.append(reading)
        while len(self.readings) > 2 and reading.at - self.readings[1].at >= STALL_S:
            self.readings.pop(0)

    def spinning(self) -> tuple[float, float] | None:
        """(seconds, CPU share) when the guest was on CPU and never slept for STALL_S."""
        first, last = self.readings[0], self.readings[-1]
        span = last.at - first.at
        if span < STALL_S or last.sleeps != first.sleeps:
            return None
        share = (last.cpu_s - first.cpu_s) / span
        return (span, share) if share >= BUSY_SHARE else None

    def slept_since(self, reading: Reading) -> bool:
        return bool(self.readings) and reading.sleeps != self.readings[-1].sleeps


def decide(watch: GuestWatch, reading: Reading) -> tuple[bool, str] | None:
    """What this reading calls for: (True, why) to nudge; (False, outcome) for the last nudge's outcome."""
    if watch.awaiting_outcome:
        watch.awaiting_outcome = False
        slept = watch.slept_since(reading)
        watch.add(reading)
        if slept:
            return False, "after the nudge it slept again: its clock had stopped"
        return False, f"after the nudge it went on without sleeping: it was at work (next nudge in {BACKOFF_S:.0f} s at the earliest)"
    watch.add(reading)
    found = watch.spinning()
    if found is None or (watch.nudged_at is not None and reading.at - watch.nudged_at < BACKOFF_S):
        return None
    seconds, share = found
    watch.nudged_at, watch.awaiting_outcome = reading.at, True
    watch.readings = [reading]
    return True, f"{share:.0%} CPU and no sleep for {seconds:.0f} s: {NUDGED}"


def guest_pids(state_file: Path, names: list[str]) -> dict[str, int] | None:
    try:
        pids = json.loads(state_file.read_text()).get("pids", {})
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}  # being rewritten: next time
    return {n: int(pids[n]) for n in names if n in pids}


def main(argv: list[str]) -> int:
    state_file, log_path, names = Path(argv[0]), Path(argv[1]), argv[2:]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    watches: dict[str, GuestWatch] = {}
    with open(log_path, "a", buffering=1) as log:
        while (pids := guest_pids(state_file, names)) is not None:
            now = time.monotonic()
            for name, pid in pids.items():
                watch = watches.get(name)
                if watch is None or watch.pid != pid:  # a new guest, or one restarted
                    watch = watches[name] = GuestWatch(pid)
                reading = read_process(pid, now)
                if reading is None:
                    continue
                if (found := decide(watch, reading)) is None:
                    continue
                nudge, said = found
                if nudge:
                    try:
                        os.kill(pid, signal.SIGALRM)
                    except ProcessLookupError:
                        continue
                log.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {MARK} {name} (pid {pid}): {said}\n")
            time.sleep(INTERVAL_S)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
