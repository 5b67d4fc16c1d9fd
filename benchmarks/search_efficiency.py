"""How close the adaptive search gets to the full grid's best, and at what share of its time.

Replays a recorded grid (benchmarks/data/grid_seqread.json: for every configuration
the repeated measurements and each run's duration). The grid's best is the
configuration with the highest mean; a strategy "measures" a configuration by
reading its recorded runs, and pays their recorded durations. Over several seeds
(each shuffles the knob order and starts from a different current config) it prints
the adaptive and one-factor-at-a-time strategies' result as a share of the grid's
best and the share of the grid's trial time they used. Goal: within 5 % using ≤ 25 %.

Run: .venv/bin/python benchmarks/search_efficiency.py [--grid FILE] [--regenerate]
--grid defaults to the grid recorded in the lab (benchmarks/data/grid_seqread_lab.json,
made by benchmarks/record_grid.py) when it is there, else the synthetic one
(benchmarks/data/grid_seqread.json: a realistic gigabit seq-read surface with noise).
--regenerate rewrites the synthetic grid (at --grid, default the synthetic file).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.grids import KNOBS, LAB_GRID, SYNTHETIC_GRID, load_runs, seqread_surface  # noqa: E402
from experiments.plan import Config, Plan  # noqa: E402
from experiments.strategies import TrialResult, best_config, make_strategy, run_offline  # noqa: E402


def synthetic_grid(seed: int = 7, runs: int = 3) -> dict[str, object]:
    """The gigabit seq-read surface (benchmarks.grids.seqread_surface) with noise and run times."""
    rng = random.Random(seed)
    entries = []
    for rsize in KNOBS["rsize"]:
        for threads in KNOBS["nfsd_threads"]:
            for ra in KNOBS["read_ahead_kb"]:
                kb = rsize / 1024
                true = seqread_surface(rsize, threads, ra)
                # bigger blocks burst higher but dip deeper: noisier at the top end
                noise = 0.015 + 0.01 * (kb >= 512)
                values = [round(true * (1 + rng.gauss(0, noise)), 3) for _ in range(runs)]
                durations = [round(25 + rng.uniform(15, 45) * (1.3 if kb <= 16 else 1.0), 1) for _ in range(runs)]
                entries.append({"config": {"rsize": rsize, "nfsd_threads": threads, "read_ahead_kb": ra},
                                "values": values, "durations_s": durations})
    return {"workload": "seqread", "unit": "MB/s", "source": f"synthetic (seed {seed})",
            "knobs": KNOBS, "runs": entries}


def load_grid(path: Path) -> tuple[dict[str, list[int]], dict[Config, tuple[float, float]]]:
    """Per configuration the mean of its ok runs and the sum of all its run times (only-broken ones left out)."""
    grid = load_runs(path)
    table = {}
    for config, runs in grid.runs.items():
        ok = [v for v, _ in runs if v is not None]
        if ok:
            table[config] = (sum(ok) / len(ok), float(sum(d for _, d in runs)))
    return grid.knobs, table  # type: ignore[return-value]  # the recorded knobs are ints


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--grid", type=Path, help="a recorded grid (default: the lab's if recorded, else the synthetic)")
    ap.add_argument("--regenerate", action="store_true", help="rewrite the synthetic grid fixture")
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args()
    if args.grid is None:
        args.grid = SYNTHETIC_GRID if args.regenerate or not LAB_GRID.exists() else LAB_GRID
    if args.regenerate:
        args.grid.parent.mkdir(parents=True, exist_ok=True)
        args.grid.write_text(json.dumps(synthetic_grid(), indent=1) + "\n")
    knobs, table = load_grid(args.grid)
    grid_best, grid_best_v = max(table.items(), key=lambda kv: kv[1][0])[0], max(v for v, _ in table.values())
    grid_time = sum(d for _, d in table.values())
    source = json.loads(args.grid.read_text()).get("source", "")
    print(f"grid file: {args.grid.relative_to(REPO) if args.grid.is_relative_to(REPO) else args.grid} ({source})")
    print(f"grid: {len(table)} configs, best {grid_best_v:.1f} at {dict(grid_best)}, trial time {grid_time / 3600:.1f} h")
    near = sum(1 for v, _ in table.values() if v >= 0.95 * grid_best_v)
    print(f"configs within 5 % of the best: {near} of {len(table)} (a flat or noisy top makes the goal easy or hard)")
    print(f"{'strategy':9} {'seed':>4} {'configs':>7} {'of best':>8} {'time share':>10}")
    for name in ("adaptive", "ofat"):
        quality, share = [], []
        for seed in range(args.seeds):
            rng = random.Random(1000 + seed)
            baseline = {k: rng.choice(v) for k, v in knobs.items()}  # the admin's current config
            plan = Plan(knobs={k: tuple(v) for k, v in knobs.items()}, strategy=name, seed=seed, baseline=baseline)
            # a configuration whose recorded trials all broke counts as broken here too
            results: list[TrialResult] = run_offline(make_strategy(plan), lambda c: table[c][0] if c in table else None)
            tried = {r.config for r in results}
            found = best_config(results)
            assert found is not None
            q = table[found[0]][0] / grid_best_v
            s = sum(table[c][1] for c in tried if c in table) / grid_time
            quality.append(q)
            share.append(s)
            print(f"{name:9} {seed:>4} {len(tried):>7} {q:>8.1%} {s:>10.1%}")
        ok = min(quality) >= 0.95 and max(share) <= 0.25
        print(f"{name:9} worst {min(quality):.1%} of the grid's best, mean {sum(quality) / len(quality):.1%};"
              f" time share mean {sum(share) / len(share):.1%}, max {max(share):.1%}"
              f" -> goal (≥95 %, ≤25 %) {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
