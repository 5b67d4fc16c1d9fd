"""Record a real seq-read grid in the lab for benchmarks/search_efficiency.py.

Every combination of rsize (= wsize: the two are applied together), nfsd threads and
client readahead (and the MTU on both ends, default 1500 and 9000) is run --runs times
(default 2) through the product's sweep engine (journal, a fresh test
mount per trial, caches dropped on server and client before the trial and before every
pass over the file, warm-up, short measurement) and written in the format of
benchmarks/data/grid_seqread.json: per configuration its measured MB/s ("values") and
the trial's wall time from creation to finish ("durations_s", setup included).

rsize and wsize are one grid dimension: the engine is run once per rsize value with
rsize and wsize pinned to it (the plan's other knobs as a grid, in the engine's
shuffled order), the rsize blocks themselves in a shuffled order. The grid's knob is
called "rsize" in the output (wsize is equal to it in every run).

    .venv/bin/python benchmarks/record_grid.py            # the lab; ~15-25 min
    .venv/bin/python benchmarks/record_grid.py --rsize 32k,1M --threads 8 --readahead 128  # smoke

The link must be shaped as it should be for the figures (python -m tests.lab profile gigabit).
The client's own mounts of the server (the lab's /mnt/lab) are unmounted for the run and
put back after: the test mounts must open their own connections at the grid's MTU.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.events import EventBus  # noqa: E402
from benchmarks.lab_hosts import add_lab_args, without_standing_mounts  # noqa: E402
from app.hosts import HostPool, SshSettings  # noqa: E402
from app.store import Store, TrialState  # noqa: E402
from app.sweep import SweepEngine, SweepSpec, TrialFinished  # noqa: E402
from app.knobs.values import parse_values  # noqa: E402
from experiments.plan import Plan, Timing  # noqa: E402
from experiments.workloads import MIB  # noqa: E402

OUT = Path(__file__).with_name("data") / "grid_seqread_lab.json"


def _ints(knob: str, text: str) -> list[int]:
    return [int(v) for v in parse_values(knob, text)]


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


async def _record_block(args: argparse.Namespace, settings: SshSettings, db: Path, rsize: int, threads: list[int],
                        readahead: list[int], mtus: list[int], first: bool, seed: int) -> tuple[int, list[dict]]:  # fmt: skip
    timing = Timing(setup_s=10.0, warmup_s=args.warmup, min_measure_s=args.measure, max_measure_s=args.measure)
    plan = Plan(knobs={"rsize": (rsize,), "wsize": (rsize,), "nfsd_threads": tuple(threads),
                       "read_ahead_kb": tuple(readahead), **({"mtu": tuple(mtus)} if mtus else {})},
                workloads=("seq_read",), strategy="grid", min_runs=args.runs, max_runs=args.runs, seed=seed,
                timing=timing)  # fmt: skip
    spec = SweepSpec(args.server, (args.client,), args.export, plan, file_size=args.file_size * MIB,
                     measure_ceilings=first and not args.no_ceilings,
                     link_bps=args.link_mbps * 1e6 if args.link_mbps else None)  # fmt: skip
    bus = EventBus()

    def show(e: TrialFinished) -> None:
        v = f"{e.value_bps / 1e6:7.1f} MB/s" if e.value_bps is not None else f"BROKEN {e.reason[:80]}"
        print(f"  {dict(e.config)} -> {v}", flush=True)

    bus.subscribe(show, TrialFinished)
    with Store(db) as store:
        async with HostPool(settings) as pool:
            sid = await SweepEngine(store, pool, bus, spec, deadman_timeout=60).run()
        rows = []
        for t in store.trials(sid):
            ok = t.state == TrialState.OK and isinstance(t.summary, dict) and "mean" in t.summary
            rows.append({
                "config": {k: t.config[k] for k in ("rsize", "nfsd_threads", "read_ahead_kb", "mtu") if k in t.config},
                "value": round(t.summary["mean"] / 1e6, 3) if ok else None,
                "duration_s": round((t.ended or 0) - (t.started or 0), 1),
                "effective": t.summary.get("effective") if isinstance(t.summary, dict) else None,
                "reason": t.reason,
            })  # fmt: skip
    return sid, rows


def _grouped(ok: list[dict]) -> list[dict]:
    """One entry per configuration with all its runs, in the order first recorded."""
    by: dict[str, dict] = {}
    for r in ok:
        entry = by.setdefault(json.dumps(r["config"], sort_keys=True),
                              {"config": r["config"], "values": [], "durations_s": []})  # fmt: skip
        entry["values"].append(r["value"])
        entry["durations_s"].append(r["duration_s"])
    return list(by.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_lab_args(ap)
    ap.add_argument("--rsize", default="32k,64k,128k,256k,1M", help="rsize=wsize values")
    ap.add_argument("--threads", default="2,4,8,32", help="nfsd thread counts")
    ap.add_argument("--readahead", default="128,512,2048,8192", help="client read_ahead_kb values")
    ap.add_argument("--file-size", type=int, default=64, help="MiB per trial (caches are dropped every pass)")
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--measure", type=float, default=3.0, help="seconds measured per trial")
    ap.add_argument("--no-ceilings", action="store_true")
    ap.add_argument("--link-mbps", type=float, default=125.0,
                    help="the shaped link in MB/s: faster trials are broken (0: judge by the measured TCP ceiling,"
                         " which the lab's CPU-bound iperf3 puts below what NFS reaches)")
    ap.add_argument("--mtu", default="1500,9000", help="MTU values on both ends ('' leaves the MTU as it is)")
    ap.add_argument("--runs", type=int, default=2, help="trials per configuration")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--db", type=Path, help="session database (default: a new file under /tmp)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    rsizes = _ints("rsize", args.rsize)
    threads = _ints("nfsd_threads", args.threads)
    readahead = _ints("read_ahead_kb", args.readahead)
    mtus = _ints("mtu", args.mtu)
    db = args.db or Path(tempfile.mkdtemp(prefix="record-grid-")) / "grid.db"
    settings = SshSettings(config_file=args.ssh_config, app_known_hosts=db.parent / "known_hosts")
    n = len(rsizes) * len(threads) * len(readahead) * max(len(mtus), 1)
    print(f"recording {n} configs into {db}; load {_load()}", flush=True)
    t0 = time.monotonic()
    order = list(rsizes)
    random.Random(args.seed).shuffle(order)  # the rsize blocks in a shuffled order too
    runs: list[dict] = []
    sessions = []
    with without_standing_mounts(args.ssh_config, args.client, args.server):
        for i, rsize in enumerate(order):
            print(f"rsize=wsize={rsize} (block {i + 1}/{len(order)}), load {_load()}", flush=True)
            sid, rows = asyncio.run(_record_block(args, settings, db, rsize, threads, readahead, mtus, i == 0,
                                                  args.seed + i))  # fmt: skip
            sessions.append(sid)
            runs += rows
    elapsed = time.monotonic() - t0
    broken = [r for r in runs if r["value"] is None]
    ok = [r for r in runs if r["value"] is not None]
    data = {
        "workload": "seqread",
        "unit": "MB/s",
        "source": (f"lab {args.server} -> {args.client}:{args.export}, recorded {time.strftime('%Y-%m-%d %H:%M')} "
                   f"by benchmarks/record_grid.py; rsize=wsize; {args.file_size} MiB file, warm-up {args.warmup} s, "
                   f"{args.measure} s measured, {args.runs} runs each; "
                   f"{len(broken)} broken trials left out; "
                   f"recording took {elapsed / 60:.1f} min; load at the end {_load()}; sessions {sessions} in {db}"),
        "knobs": {"rsize": sorted(rsizes), "nfsd_threads": sorted(threads), "read_ahead_kb": sorted(readahead),
                  **({"mtu": sorted(mtus)} if mtus else {})},
        "runs": _grouped(ok),
    }  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    best = max(ok, key=lambda r: r["value"]) if ok else None
    print(f"\n{len(ok)}/{len(runs)} trials ok in {elapsed / 60:.1f} min"
          f" (trial time {sum(r['duration_s'] for r in runs) / 60:.1f} min); load {_load()}")  # fmt: skip
    if best:
        print(f"best {best['value']:.1f} MB/s at {best['config']}; worst {min(r['value'] for r in ok):.1f} MB/s")
    for r in broken:
        print(f"broken: {r['config']}: {r['reason']}")
    print(f"wrote {args.out}")
    if os.environ.get("RECORD_GRID_CHECK_MOUNTS", "1") == "1":
        left = subprocess.run(["ssh", "-F", str(args.ssh_config), args.client, "findmnt -rn -o TARGET"],
                              capture_output=True, text=True, timeout=60).stdout  # fmt: skip
        if "nfs-tuner-" in left:
            print(f"WARNING: test mounts left on {args.client}: {left}")


if __name__ == "__main__":
    main()
