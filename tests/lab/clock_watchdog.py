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

So: each second, every guest's UML process is read from /proc. Not sleeping once for at
least STALL_S while it used SPIN_CPU_S of CPU: it gets a SIGALRM and a ``LAB-NUDGE`` line
goes to the log (the lab counts them: Lab.nudges). CPU used, not a share of the window: a
guest is its own session, so its own scheduling group, and beside five labs' guests at work
on two cores a spinning guest had less than a fifth of a core for minutes (make test,
2026-11-28: no nudge in 120 s); it still adds up CPU without sleeping, which a guest at work
never does (it sleeps waiting on its own processes, or idle). A stopped (SIGSTOP) guest adds
none and is left alone. A tick too many is harmless (the interrupt finds no timer due and
programs the next), so a kernel that was merely saturated is nudged too; its outcome, read
once it slept or used SPIN_CPU_S more, then says it went on without sleeping, and the next
nudge waits BACKOFF_S.

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
from dataclasses import dataclass
from pathlib import Path

LOG_NAME = "clock.log"
MARK = "LAB-NUDGE"
NUDGED = "sent SIGALRM"  # ends a nudge's line; its outcome's line follows
INTERVAL_S = 1.0
STALL_S = 2.0  # a guest at work sleeps many times a second (waiting on its own processes, or idle)
# CPU used without a sleep: a fifth of a core for STALL_S. At 0.9 of a core make test never saw its stopped
# clock, and a fifth of the window was too much too once the guests were many (see above).
SPIN_CPU_S = 0.4
BACKOFF_S = 30.0  # also how long a nudge's outcome is awaited
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
    """One guest's readings since it last slept, and what was last done about them."""

    pid: int
    quiet_since: Reading | None = None  # the first reading at today's count of sleeps
    last: Reading | None = None
    nudged: Reading | None = None  # the reading a nudge was sent at, while its outcome is awaited
    nudged_at: float | None = None

    def add(self, reading: Reading) -> bool:
        """Takes the reading; whether the guest slept since the one before."""
        slept = self.last is not None and reading.sleeps != self.last.sleeps
        if self.quiet_since is None or slept:
            self.quiet_since = reading
        self.last = reading
        return slept

    def spinning(self) -> tuple[float, float] | None:
        """(seconds, CPU seconds) when the guest never slept for STALL_S and used SPIN_CPU_S meanwhile."""
        first, last = self.quiet_since, self.last
        if first is None or last is None:
            return None
        span, cpu = last.at - first.at, last.cpu_s - first.cpu_s
        return (span, cpu) if span >= STALL_S and cpu >= SPIN_CPU_S else None


def _outcome(nudged: Reading, reading: Reading, slept: bool) -> str | None:
    """A nudge's outcome once this reading tells it (None: not yet)."""
    if slept:
        return "after the nudge it slept again: its clock had stopped"
    if reading.cpu_s - nudged.cpu_s >= SPIN_CPU_S:
        return f"after the nudge it went on without sleeping: it was at work (next nudge in {BACKOFF_S:.0f} s at the earliest)"
    if reading.at - nudged.at >= BACKOFF_S:
        return f"after the nudge it had almost no CPU for {BACKOFF_S:.0f} s and did not sleep: stopped, outcome unknown"
    return None


def decide(watch: GuestWatch, reading: Reading) -> tuple[bool, str] | None:
    """What this reading calls for: (True, why) to nudge; (False, outcome) for the last nudge's outcome."""
    slept = watch.add(reading)
    if watch.nudged is not None:
        if (said := _outcome(watch.nudged, reading, slept)) is not None:
            watch.nudged = None
            return False, said
        return None
    found = watch.spinning()
    if found is None or (watch.nudged_at is not None and reading.at - watch.nudged_at < BACKOFF_S):
        return None
    seconds, cpu = found
    watch.nudged_at, watch.nudged = reading.at, reading
    watch.quiet_since = reading
    return True, f"{cpu:.1f} s of CPU and no sleep for {seconds:.0f} s: {NUDGED}"


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
