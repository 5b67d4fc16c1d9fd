"""Each lab profile's effect, measured without nfs-tuner, and its ground-truth grid.

For every profile the knobs it was built for are set by hand and measured with plain
tools on the guests (tests/lab/effects.py: dd, tar/find/rm, a bonnie++-style create
loop, fio): a table of each knob's low vs high value with the ratio, and a grid
written to benchmarks/data/grid_<profile>_<workload>.json in the format
benchmarks/grids.py reads (several runs per configuration, wall time per run).

    sudo .venv/bin/python benchmarks/lab_profiles.py                  # every profile, ~25 min
    sudo .venv/bin/python benchmarks/lab_profiles.py wan --runs 2     # one profile
    sudo .venv/bin/python benchmarks/lab_profiles.py --no-record      # tables only

The lab must be up (make lab-up, or make lab-up KERNEL=7.2: that kernel's grids go to
benchmarks/data/uml-7.2/); each profile is set on it in turn and the lab is left on the
profile it had.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.lab import effects  # noqa: E402
from tests.lab.kernels import DEFAULT as DEFAULT_KERNEL  # noqa: E402
from tests.lab.lab import Lab  # noqa: E402

DATA = REPO / "benchmarks" / "data"
Config = dict[str, int | str]


class Recorder:
    """Runs ``measure`` ``runs`` times per configuration, interleaved, and keeps every figure."""

    def __init__(self, runs: int) -> None:
        self.runs = runs
        self.grids: dict[str, dict[str, object]] = {}

    def grid(self, key: str, unit: str, knobs: dict[str, list[int | str]], source: str,
             measure: Callable[[Config], float]) -> dict[str, list[float]]:  # fmt: skip
        configs: list[Config] = [{}]
        for name, values in knobs.items():
            configs = [{**c, name: v} for c in configs for v in values]
        figures: dict[str, list[float]] = {json.dumps(c, sort_keys=True): [] for c in configs}
        durations: dict[str, list[float]] = {k: [] for k in figures}
        for run in range(self.runs):  # interleaved, so a drift of the host hits every configuration
            for config in configs if run % 2 == 0 else reversed(configs):
                key_c = json.dumps(config, sort_keys=True)
                t0 = time.monotonic()
                value = measure(config)
                durations[key_c].append(round(time.monotonic() - t0, 1))
                figures[key_c].append(round(value, 3))
                print(f"  {key} {config}: {value:.1f} {unit}", flush=True)
        self.grids[key] = {
            "workload": key,
            "unit": unit,
            "source": source,
            "knobs": knobs,
            "runs": [{"config": json.loads(k), "values": v, "durations_s": durations[k]} for k, v in figures.items()],
        }
        return figures


def row(knob: str, low: object, high: object, what: str, a: list[float], b: list[float], unit: str) -> str:
    ma, mb = statistics.median(a), statistics.median(b)
    ratio = f"×{max(ma, mb) / min(ma, mb):.1f}" if min(ma, mb) > 0 else "—"
    return f"| {knob} | {low} | {high} | {what} | {ma:.1f} | {mb:.1f} | {unit} | {ratio} |"


def k(**config: int | str) -> str:
    return json.dumps(config, sort_keys=True)


def wan(lab: Lab, rec: Recorder, rtt: float | None) -> list[str]:
    chosen = lab.set_profile("wan", rtt)
    measured = effects.rtt_ms(lab)
    src = f"lab profile wan (RTT +{chosen.rtt_ms:g} ms, measured {measured:.1f} ms), one client, cold 128 MiB dd"
    f = rec.grid("wan_seqread", "MB/s", {"rsize": [65536, 1048576], "read_ahead_kb": [128, 16384]}, src,
                 lambda c: effects.cold_seq_read(lab, effects.CLIENTS[0], rsize=int(c["rsize"]),
                                                 read_ahead_kb=int(c["read_ahead_kb"])))  # fmt: skip
    return [
        f"wan: RTT {measured:.1f} ms between lab-client1 and lab-server",
        row("read_ahead_kb", 128, 16384, "cold seq read, rsize 1 MiB", f[k(rsize=1048576, read_ahead_kb=128)],
            f[k(rsize=1048576, read_ahead_kb=16384)], "MB/s"),
        row("read_ahead_kb", 128, 16384, "cold seq read, rsize 64 KiB", f[k(rsize=65536, read_ahead_kb=128)],
            f[k(rsize=65536, read_ahead_kb=16384)], "MB/s"),
        row("rsize", 65536, 1048576, "cold seq read, readahead 128 KiB", f[k(rsize=65536, read_ahead_kb=128)],
            f[k(rsize=1048576, read_ahead_kb=128)], "MB/s"),
        row("rsize + readahead", "64 KiB, 128 KiB", "1 MiB, 16 MiB", "cold seq read", f[k(rsize=65536, read_ahead_kb=128)],
            f[k(rsize=1048576, read_ahead_kb=16384)], "MB/s"),
    ]  # fmt: skip


def hdd(lab: Lab, rec: Recorder) -> list[str]:
    lab.set_profile("hdd")
    client = effects.CLIENTS[0]

    def in_mode(c: Config, measure: Callable[[], float]) -> float:
        with effects.export_mode(lab, str(c["export_sync"])):
            return measure()

    src = "lab profile hdd; lab-client1; 150 files of 4 KiB created (open, write, close) in a new directory"
    cr = rec.grid("hdd_creates", "ops/s", {"export_sync": ["sync", "async"]}, src,
                  lambda c: in_mode(c, lambda: effects.creates_per_s(lab, client, files=150)))
    # Recorded as files per second (higher is better, as every grid); the table gives the times.
    src = "lab profile hdd; lab-client1; untar of 300 files of 1-8 KiB in 10 directories, sync included, in files/s"
    tree: dict[str, list[effects.TreeTimes]] = {}

    def untar(c: Config) -> float:
        return 300 / in_mode(c, lambda: _keep(tree, c, effects.tree_times(lab, client, dirs=10, per_dir=30)))

    rec.grid("hdd_untar", "ops/s", {"export_sync": ["sync", "async"]}, src, untar)
    ut = {key: [t.untar_s for t in ts] for key, ts in tree.items()}
    rm = {key: [t.rm_s for t in ts] for key, ts in tree.items()}
    src = "lab profile hdd; on lab-server: 256 MiB dd to the RAID-5's ext4, conv=fdatasync"
    sw = rec.grid("hdd_mdwrite", "MB/s", {"stripe_cache_size": [256, 4096]}, src,
                  lambda c: effects.md_seq_write(lab, stripe_cache_size=int(c["stripe_cache_size"])))
    sync, asy = k(export_sync="sync"), k(export_sync="async")
    return [
        row("export", "sync", "async", "creates/s (4 KiB files)", cr[sync], cr[asy], "ops/s"),
        row("export", "sync", "async", "untar 300 files", ut[sync], ut[asy], "s"),
        row("export", "sync", "async", "rm -rf of them", rm[sync], rm[asy], "s"),
        row("stripe_cache_size", 256, 4096, "RAID-5 seq write", sw[k(stripe_cache_size=256)],
            sw[k(stripe_cache_size=4096)], "MB/s"),
    ]  # fmt: skip


def _keep(store: dict[str, list[effects.TreeTimes]], c: Config, t: effects.TreeTimes) -> float:
    store.setdefault(json.dumps(c, sort_keys=True), []).append(t)
    return t.untar_s


def contention(lab: Lab, rec: Recorder) -> list[str]:
    lab.set_profile("contention")
    queued: dict[int, list[float]] = {}

    def measure(c: Config) -> float:
        r = effects.rand_read(lab, threads=int(c["nfsd_threads"]), streams=8, seconds=10)
        queued.setdefault(int(c["nfsd_threads"]), []).append(r.queued_share * 100)
        return r.iops

    src = "lab profile contention; both clients, 8 fio jobs each, 4 KiB O_DIRECT random reads of 192 MiB, 10 s, server cache dropped"
    f = rec.grid("contention_randread", "IOPS", {"nfsd_threads": [1, 2, 8, 32, 64]}, src, measure)
    lines = [row("nfsd_threads", lo, hi, "random 4 KiB reads, 16 streams", f[k(nfsd_threads=lo)],
                 f[k(nfsd_threads=hi)], "IOPS") for lo, hi in ((1, 32), (2, 32), (2, 64), (8, 32))]  # fmt: skip
    lines += [row("nfsd_threads", lo, hi, "requests finding no idle thread (pool_stats)", queued[lo], queued[hi], "%")
              for lo, hi in ((2, 32),)]  # fmt: skip
    return lines


def on_profiles(lab: Lab, names: list[str], measure: Callable[[str], list[str]]) -> list[str]:
    """Each named profile's table rows and notes (``measure(name)``); the lab put back on the profile it had."""
    before = lab.current_profile()
    tables: list[str] = []
    try:
        for name in names:
            print(f"profile {name} …", flush=True)
            tables += measure(name)
    finally:
        lab.set_profile(before.name, before.rtt_ms if before.name == "wan" else None)
    return tables


def print_tables(runs: int, started: float, tables: list[str]) -> None:
    """The rows as one markdown table (knob, low, high, measure, medians, ratio), the notes after."""
    print(f"\n{runs} runs per configuration, medians; {time.monotonic() - started:.0f} s in all\n")
    print("| knob | low | high | measure | low value | high value | unit | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for line in (t for t in tables if t.startswith("|")):
        print(line)
    for line in (t for t in tables if not t.startswith("|")):
        print(line)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profiles", nargs="*", choices=["wan", "hdd", "contention"], help="default: all three")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rtt-ms", type=float, default=None)
    ap.add_argument("--no-record", action="store_true", help="print the tables; leave benchmarks/data alone")
    args = ap.parse_args()
    lab = Lab()
    if not lab.is_up():
        print("the lab is not up: sudo make lab-up", file=sys.stderr)
        return 2
    rec = Recorder(args.runs)
    started = time.monotonic()
    measure = {"wan": lambda: wan(lab, rec, args.rtt_ms), "hdd": lambda: hdd(lab, rec), "contention": lambda: contention(lab, rec)}
    tables = on_profiles(lab, args.profiles or list(measure), lambda name: measure[name]())
    print_tables(args.runs, started, tables)
    if not args.no_record:
        kernel = lab.kernel_name() or DEFAULT_KERNEL
        # The default kernel's grids are the ones benchmarks/grids.py replays; another kernel's go beside them.
        out = DATA if kernel == DEFAULT_KERNEL else DATA / f"uml-{kernel}"
        out.mkdir(exist_ok=True)
        for key, grid in rec.grids.items():
            grid["source"] = (f"{grid['source']}; UML {kernel}; recorded {time.strftime('%Y-%m-%d')} by "
                              "benchmarks/lab_profiles.py")
            path = out / f"grid_{key}.json"
            path.write_text(json.dumps(grid, indent=1) + "\n")
            print(f"wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
