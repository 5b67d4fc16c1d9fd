"""Soak the lab: hundreds of consecutive nfs-tuner trials over the whole knob space.

Each round is one `nfs-tuner sweep` (grid, one run per configuration, short trials)
over two or three knobs drawn at random from every knob the catalog has (both MTUs
in every other round), a random workload and one or both clients. After each round
every guest must answer SSH; one that does not is a *wedge*: it is named with its
console's tail, restarted (Lab.heal) and the soak goes on. At the end: trials run,
broken trials by cause, wedges.

    sudo .venv/bin/python benchmarks/lab_soak.py                 # 300 trials, ~60 min
    sudo .venv/bin/python benchmarks/lab_soak.py --trials 40     # a short one

The lab must be up (make lab-up). The clients' standing /mnt/lab mounts are taken down
for the soak (MTU trials need connections of their own) and put back after.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.lab_hosts import without_standing_mounts  # noqa: E402
from tests.lab.lab import GUESTS, Lab  # noqa: E402
from tests.lab.clock_watchdog import NUDGED  # noqa: E402

# Two values per knob, far apart, each one the lab accepts.
SPACE: dict[str, tuple[str, str]] = {
    "nfsd_threads": ("2", "32"),
    "nfsd_min_threads": ("0", "8"),  # where nfsd's threads scale themselves (the lab's UML 7.2); refused on 6.1
    "pool_mode": ("global", "percpu"),  # never on the lab: one CPU per guest makes one pool in every mode
    "max_block_size": ("65536", "1048576"),
    "export_sync": ("sync", "async"),
    "stripe_cache_size": ("256", "4096"),
    "rsize": ("32768", "1048576"),
    "wsize": ("32768", "1048576"),
    "nfsvers": ("3", "4.2"),
    "nconnect": ("1", "4"),
    "read_ahead_kb": ("128", "8192"),
    "mtu": ("1500", "9000"),
    "export_wdelay": ("wdelay", "no_wdelay"),
    "nocto": ("cto", "nocto"),
    "actimeo": ("0", "60"),
    "dirty_bytes": ("16M", "1G"),
    "dirty_background": ("4M", "256M"),
    "rpc_slots": ("16", "65536"),
}  # a low and a high value of every knob in the catalog (tests/unit/benchmarks/test_soak_space.py checks it)
WORKLOADS = ("seq_read", "seq_write", "small_files", "mixed", "seq_read", "seq_write")
CLIENTS = ("lab-client1", "lab-client2")


def cause(reason: str) -> str:
    """A broken trial's reason without its figures and names, so like causes count together."""
    text = re.sub(r"lab-(server|client\d)", "HOST", reason or "?")
    text = re.sub(r"\d+(\.\d+)?", "N", text)
    return text[:140]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=300)
    ap.add_argument("--duration", type=float, default=4.0, help="measuring cap per trial, s")
    ap.add_argument("--file-size", type=int, default=48, help="MiB per client")
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    lab = Lab()
    if not lab.is_up():
        print("the lab is not up: sudo make lab-up", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    self_scaling = "min-threads:" in lab.ssh("lab-server", "nfsdctl threads", check=False).stdout
    db = Path(tempfile.mkdtemp(prefix="lab-soak-")) / "soak.db"
    states: collections.Counter[str] = collections.Counter()
    causes: collections.Counter[str] = collections.Counter()
    wedges: list[str] = []
    failures: list[str] = []
    rounds = 0
    kicked_before = {name: len(lines) for name, lines in lab.kicks().items()}
    nudged_before = {name: len(lines) for name, lines in lab.nudges().items()}
    refused_before = {g.name: lab.tap_counters(g.name)["rx_dropped"] for g in GUESTS}
    started = time.monotonic()
    # SIGTERM or Ctrl-C: the running sweep is asked to stop (it puts its changes back), then the
    # soak ends as if its trials were done: mounts put back, the summary printed.
    running: list[subprocess.Popen[str] | None] = [None]
    stopping: list[int] = []

    def stop(signum: int, _frame: object) -> None:
        stopping.append(signum)
        print(f"signal {signum}: stopping after this sweep", flush=True)
        if (child := running[0]) is not None:
            child.send_signal(signal.SIGTERM)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    with ExitStack() as stack:
        for client in CLIENTS:
            stack.enter_context(without_standing_mounts(lab.ssh_config, client, "lab-server"))
        while sum(states.values()) < args.trials and not stopping:
            rounds += 1
            names = rng.sample(sorted(k for k in SPACE if k not in ("nfsd_min_threads", "pool_mode") or
                                      (k == "nfsd_min_threads" and self_scaling)), 2)
            if rounds % 2 == 0 and "mtu" not in names:
                names.append("mtu")
            clients = CLIENTS if rng.random() < 0.6 else (rng.choice(CLIENTS),)
            workload = rng.choice(WORKLOADS)
            argv = [str(REPO / ".venv" / "bin" / "nfs-tuner"), "--db", str(db), "sweep", "--json",
                    "--ssh-config", str(lab.ssh_config), "--server", "lab-server", "--strategy", "grid",
                    "--repetitions", "1", "--max-repetitions", "1", "--duration", str(args.duration),
                    "--file-size", str(args.file_size), "--no-ceilings", "--async-opt-in", "--restart-opt-in", "--workload", workload,
                    *(x for c in clients for x in ("--client", c)),
                    *(x for n in names for x in ("--knob", f"{n}={','.join(SPACE[n])}"))]  # fmt: skip
            label = f"round {rounds}: {workload} on {'+'.join(clients)} over {', '.join(names)}"
            print(label, flush=True)
            proc = running[0] = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                stdout, stderr = proc.communicate(timeout=1800)
                out = json.loads(stdout) if stdout.strip() else {}
            except (subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
                proc.kill()
                stdout, stderr = proc.communicate()
                out = {}
                failures.append(f"{label}: {type(exc).__name__}")
            running[0] = None
            if proc.returncode not in (0, 1, 3, 128 + signal.SIGTERM) or not out.get("trials"):
                # exit 1 with no trial in the answer is a sweep that never ran, not a finding
                failures.append(f"{label}: exit {proc.returncode}: {stderr.strip()[-300:]}")
            for t in out.get("trials", []):
                states[t["state"]] += 1
                if t["state"] != "ok":
                    causes[cause(t.get("reason") or "")] += 1
            for p in out.get("revert_problems", []):
                failures.append(f"{label}: revert: {p}")
            sick = lab.unhealthy(timeout=20)
            if sick:
                for name, problem in sick.items():
                    wedges.append(f"{label}: {name} {problem}")
                    print(f"WEDGE {name}: {problem}", flush=True)
                lab.heal()
                for client in CLIENTS:  # a restarted client mounted /mnt/lab again: down for the soak
                    lab.ssh(client, "umount /mnt/lab 2>/dev/null || true")
            print(f"  {dict(states)} after {time.monotonic() - started:.0f} s", flush=True)
    total = sum(states.values())
    print(f"\n{total} trials in {rounds} sweeps, {time.monotonic() - started:.0f} s; sessions in {db}"
          + (f" (stopped early by signal {stopping[0]})" if stopping else ""))
    print(f"trial states: {dict(states)}")
    with sqlite3.connect(db) as conn:  # the database's own account, which nothing above can miss
        stored = dict(conn.execute("SELECT state, COUNT(*) FROM trials GROUP BY state").fetchall())
        unfinished = conn.execute("SELECT COUNT(*) FROM sessions WHERE state != 'complete'").fetchone()[0]
    print(f"trial states in the database: {stored}; sessions not complete: {unfinished}")
    print(f"wedges: {len(wedges)}")
    # A receive stall the guest's watchdog undid (tests/lab/rx_watchdog.py): not a wedge, but counted.
    kicks = {n: lines[kicked_before.get(n, 0):] for n, lines in lab.kicks().items()}
    print(f"receive stalls undone by the guests' watchdog: {sum(map(len, kicks.values()))}")
    for name, lines in kicks.items():
        if lines:
            print(f"  {name}: {len(lines)} (last: {lines[-1]})")
    # A stopped clock the host's clock watchdog undid (tests/lab/clock_watchdog.py): each nudge and its outcome.
    nudges = {n: lines[nudged_before.get(n, 0):] for n, lines in lab.nudges().items()}
    print(f"clocks the host's watchdog nudged: {sum(1 for ls in nudges.values() for ln in ls if NUDGED in ln)}")
    for name, lines in nudges.items():
        if lines:
            print(f"  {name}: {len(lines)} lines (last: {lines[-1]})")
    for w in wedges:
        print(f"  {w}")
    # A frame a guest wrote that its host tap refused: what latches UML's vector driver (a kick follows).
    refused = {g.name: lab.tap_counters(g.name)["rx_dropped"] - refused_before[g.name] for g in GUESTS}
    print("frames the host taps refused (rx_dropped): " + ", ".join(f"{n} {v}" for n, v in refused.items()))
    print("broken trials by cause:")
    for text, n in causes.most_common():
        print(f"  {n:4}  {text}")
    print(f"sweep failures: {len(failures)}")
    for f in failures:
        print(f"  {f}")
    return 1 if wedges else 0


if __name__ == "__main__":
    sys.exit(main())
