"""A whole guided session per lab profile, as an admin gets it: time against the estimate, trials, measuring.

For each profile: the lab is reshaped, then `nfs-tuner sweep` runs with no --knob (the diagnosis proposes
the plan) and the default budget (30 min), on both clients, from connect to a confirmed recommendation.
It prints, per profile: the wall time of the session (connect, baseline, plan, sweep, confirmation, put
back), the estimate the plan printed (trials and seconds: where a session whose screening finds nothing ends,
and the expected figure; each plus what connecting and the baseline took before it) and the error of the
expected figure against what happened, the trials
run, the share of the wall time spent measuring (the agents' measuring seconds over the wall), the
recommendation's changes, status and confirmed gain. Figures only, never a timed assert; the lab shares
its two cores with whatever else runs, so say what ran beside it.

    .venv/bin/python benchmarks/guided_session.py                       # gigabit, wan, hdd, contention
    .venv/bin/python benchmarks/guided_session.py --profile wan --out wan.json
    .venv/bin/python benchmarks/guided_session.py --profile gigabit --grid   # and the ratio to its grid's best

--grid then measures the session's own plan as an independent grid on the same lab (every combination of
its knobs' values, on its workloads, both clients, --grid-runs runs each at the session's measuring time or
10 s, whichever is less) and prints, per workload, the grid's mean at the configuration the session recommends
over the grid's best mean (the ratio the recommendation reaches), and how far the grid's best is above the
recommendation with its 95 % interval: a best of many configurations' few runs is an overestimate, so a ratio
under 1 whose gap is within the noise says the grid could not tell them apart.

--settle N then measures again, per workload whose grid's best is another configuration, the recommendation
against that best alone (a grid over the knobs where they differ, the others at the recommendation's values,
N runs each, the same measuring time): the ratio of two configurations measured side by side, free of the
pick of the best among many. --keep DIR keeps each session's database and log (to read its screening:
``nfs-tuner --db DIR/wan.db sessions show 1``). --from FILE settles the rows of an earlier --out without
running their sessions or grids again (the lab set to each row's profile first).

What the server is for, per profile (it sets the workloads): large files on gigabit and wan, small files on
hdd, databases on contention.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.report.session_data import load_session_data  # noqa: E402
from app.store import Store, TrialState  # noqa: E402
from experiments.statistics import compare  # noqa: E402
from tests.lab.lab import Lab  # noqa: E402

USES = {"gigabit": "large_files", "wan": "large_files", "hdd": "small_files", "contention": "databases"}


def one_session(lab: Lab, profile: str, workdir: Path, budget: str) -> dict[str, Any]:
    lab.set_profile(profile, 20 if profile == "wan" else None)
    db = workdir / f"{profile}.db"
    argv = [sys.executable, "-m", "app", "--db", str(db), "sweep", "--ssh-config", str(lab.ssh_config),
            "--server", "lab-server", "--client", "lab-client1", "--client", "lab-client2",
            "--use", USES[profile], "--budget", budget, "--json"]  # fmt: skip
    start = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=3 * 3600)
    wall = time.monotonic() - start
    (workdir / f"{profile}.log").write_text(proc.stderr)
    try:
        out = json.loads(proc.stdout)
    except ValueError:
        return {"profile": profile, "wall_s": wall, "error": f"exit {proc.returncode}: {proc.stderr.strip()[-400:]}"}
    with Store(db, readonly=True) as store:
        sid = int(out["session"])
        trials = store.trials(sid)
        data = load_session_data(store, sid)
    measured = sum(float((t.summary or {}).get("measured_s") or 0.0) for t in trials if isinstance(t.summary, dict))
    plan = data.plan
    gain = plan.confirmed_gain if plan is not None else None
    estimate = out.get("estimate") or {}
    return {
        "profile": profile, "use": USES[profile], "state": out.get("state"), "wall_s": wall,
        "estimate_s": estimate.get("seconds"), "estimate_trials": estimate.get("trials"),
        "least_s": estimate.get("least_seconds"), "before_s": out["plan"].get("before_s") or 0.0,
        "trials": len(trials), "measured_s": measured,
        "knobs": [k["knob"] for k in out["plan"]["knobs"] if k.get("in_plan")],
        "values": {k["knob"]: k["values"] for k in out["plan"]["knobs"] if k.get("in_plan")},
        "workloads": out["plan"]["workloads"], "measure_s": out["plan"]["measure_s"],
        "config": dict(plan.config) if plan is not None else {},
        "changes": plan.change_text() if plan is not None else "", "status": plan.status if plan is not None else "",
        "gain": gain,
    }  # fmt: skip


Runs = dict[str, dict[tuple[tuple[str, str], ...], list[float]]]  # workload -> configuration -> its runs' means


def _grid(lab: Lab, db: Path, runs: int, measure_s: float, knobs: dict[str, list[str]],
          workloads: list[str]) -> tuple[Runs | str, float]:  # fmt: skip
    """A grid sweep on the lab (both clients, ``runs`` runs each, at most 10 s measuring): each configuration's runs
    per workload, or what went wrong; and its wall time."""
    argv = [sys.executable, "-m", "app", "--db", str(db), "sweep", "--ssh-config", str(lab.ssh_config),
            "--server", "lab-server", "--client", "lab-client1", "--client", "lab-client2", "--strategy", "grid",
            "--repetitions", str(runs), "--max-repetitions", str(runs), "--budget", "none", "--json",
            "--duration", str(min(measure_s, 10.0))]  # fmt: skip
    for knob, values in knobs.items():
        argv += ["--knob", f"{knob}={','.join(values)}"]
    for workload in workloads:
        argv += ["--workload", workload]
    start = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=6 * 3600)
    wall = time.monotonic() - start
    try:
        sid = int(json.loads(proc.stdout)["session"])
    except (ValueError, KeyError):
        return f"exit {proc.returncode}: {proc.stderr.strip()[-400:]}", wall
    means: Runs = {}
    with Store(db, readonly=True) as store:
        for t in store.trials(sid, TrialState.OK):
            if isinstance(t.workload, dict) and isinstance(t.summary, dict) and t.summary.get("mean") is not None:
                key = tuple(sorted((k, str(v)) for k, v in t.config.items()))
                means.setdefault(str(t.workload["kind"]), {}).setdefault(key, []).append(float(t.summary["mean"]))
    return means, wall


def grid_ratio(lab: Lab, row: dict[str, Any], workdir: Path, runs: int) -> dict[str, Any]:
    """The session's plan as an independent grid on the same lab; per workload, the grid's mean at the session's
    recommended configuration over its best mean (the lab keeps the profile the session ran on)."""
    knobs = {knob: [str(v) for v in values] for knob, values in row["values"].items()}
    means, wall = _grid(lab, workdir / f"{row['profile']}-grid.db", runs, float(row["measure_s"]), knobs,
                        row["workloads"])  # fmt: skip
    if isinstance(means, str):
        return {"grid_error": means, "grid_wall_s": wall}
    chosen = tuple(sorted((k, str(row["config"].get(k))) for k in row["values"]))
    ratios: dict[str, float | None] = {}
    beyond: dict[str, str] = {}  # the grid's best against the recommendation: the gap and its 95 % interval (Welch)
    tops: dict[str, dict[str, str]] = {}  # the grid's best per workload, for --settle
    for kind, by_config in means.items():
        mean_of = {key: sum(v) / len(v) for key, v in by_config.items()}
        top = max(mean_of, key=mean_of.__getitem__)
        tops[kind] = dict(top)
        ratios[kind] = mean_of[chosen] / mean_of[top] if chosen in mean_of and mean_of[top] > 0 else None
        if chosen in by_config and top != chosen:
            gap = compare(by_config[chosen], by_config[top])
            beyond[kind] = (f"{gap.rel_diff * 100:+.0f} % ({gap.rel_low * 100:+.0f} … {gap.rel_high * 100:+.0f}) at "
                            f"{', '.join(f'{k}={v}' for k, v in top)}, {'beyond' if gap.beyond_noise else 'within'} "
                            "the noise")  # fmt: skip
    return {"grid_wall_s": wall, "grid_configs": len(next(iter(means.values()), {})), "ratios": ratios, "best": beyond,
            "tops": tops}


def _top(row: dict[str, Any], kind: str) -> dict[str, str] | None:
    """The grid's best configuration for ``kind`` (from an older --out: read back from its words)."""
    if kind in row.get("tops", {}):
        return {k: str(v) for k, v in row["tops"][kind].items()}
    words = row.get("best", {}).get(kind, "")
    if " at " not in words:
        return None
    pairs = words.split(" at ", 1)[1].rsplit(", within", 1)[0].rsplit(", beyond", 1)[0]
    return dict(pair.split("=", 1) for pair in pairs.split(", "))


def settle(lab: Lab, row: dict[str, Any], workdir: Path, runs: int) -> dict[str, str]:
    """Per workload whose grid's best is not the recommendation: the two measured again side by side."""
    out: dict[str, str] = {}
    chosen = {k: str(row["config"].get(k)) for k in row["values"]}
    for kind in row.get("ratios", {}):
        top = _top(row, kind)
        if top is None or top == chosen:
            continue
        knobs = {knob: list(dict.fromkeys([chosen[knob], top[knob]])) for knob in row["values"]}
        means, wall = _grid(lab, workdir / f"{row['profile']}-settle-{kind}.db", runs, float(row["measure_s"]), knobs,
                            [kind])  # fmt: skip
        if isinstance(means, str):
            out[kind] = f"failed after {wall / 60:.1f} min: {means}"
            continue
        by_config = means.get(kind, {})
        runs_of = {name: by_config.get(tuple(sorted(wanted.items())), []) for name, wanted in (("chosen", chosen),
                                                                                              ("top", top))}
        if not runs_of["chosen"] or not runs_of["top"]:
            out[kind] = f"no runs of {'the recommendation' if not runs_of['chosen'] else 'the grid best'} measured"
            continue
        gap = compare(runs_of["chosen"], runs_of["top"])
        ratio = (sum(runs_of["chosen"]) / len(runs_of["chosen"])) / (sum(runs_of["top"]) / len(runs_of["top"]))
        out[kind] = (f"{ratio:.2f} ({len(runs_of['chosen'])} and {len(runs_of['top'])} runs, {wall / 60:.1f} min; "
                     f"the grid's best {gap.rel_diff * 100:+.0f} % ({gap.rel_low * 100:+.0f} … "
                     f"{gap.rel_high * 100:+.0f}), {'beyond' if gap.beyond_noise else 'within'} the noise)")  # fmt: skip
    return out


def _row(r: dict[str, Any]) -> str:
    if "error" in r:
        return f"{r['profile']:<11} failed after {r['wall_s'] / 60:.1f} min: {r['error']}"
    before = r.get("before_s") or 0.0  # connecting and the baseline, before the plan (its estimate is the rest)
    est = (r["estimate_s"] or 0.0) + before
    err = (r["wall_s"] - est) / est * 100 if est else float("nan")
    least = "" if r.get("least_s") is None else f"{(r['least_s'] + before) / 60:.1f}–"
    gain = r["gain"]
    said = (f"{gain[0] * 100:+.0f} % ({gain[1] * 100:+.0f} … {gain[2] * 100:+.0f})"
            if gain and gain[1] is not None and gain[2] is not None else "none")  # fmt: skip
    return (f"{r['profile']:<11} {r['wall_s'] / 60:6.1f} min  estimate {least}{est / 60:.1f} min ({err:+4.0f} % on its "
            "expected figure)  "
            f"trials {r['trials']:3d} of {r['estimate_trials']}  measuring {r['measured_s'] / r['wall_s'] * 100:3.0f} %  "
            f"knobs {', '.join(r['knobs']) or '-'}  → {r['changes'] or 'no change'} [{r['status']}], confirmed {said}")


def _grid_row(r: dict[str, Any]) -> str:
    if "grid_error" in r:
        return f"{r['profile']:<11} grid failed after {r['grid_wall_s'] / 60:.1f} min: {r['grid_error']}"
    ratios = ", ".join(f"{kind} {'n/a' if x is None else f'{x:.2f}'}" for kind, x in r["ratios"].items())
    best = "; ".join(f"{kind}: the grid's best {words}" for kind, words in r["best"].items())
    return (f"{r['profile']:<11} grid of its plan: {r['grid_configs']} configurations in {r['grid_wall_s'] / 60:.1f} min; "
            f"the recommendation's mean over the grid's best: {ratios}" + (f"\n{'':<11} {best}" if best else ""))


def _settled(lab: Lab, row: dict[str, Any], workdir: Path, runs: int) -> None:
    row["settled"] = settle(lab, row, workdir, runs)
    for kind, words in row["settled"].items():
        print(f"{row['profile']:<11} {kind}: the recommendation over the grid's best, measured again: {words}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", action="append", choices=list(USES), help="a profile (repeat; default all four)")
    ap.add_argument("--budget", default="30m", help="the session's budget (default 30m, the product's default)")
    ap.add_argument("--out", type=Path, help="also write the rows as JSON")
    ap.add_argument("--grid", action="store_true", help="after each session, its plan as a grid: the ratio to its best")
    ap.add_argument("--grid-runs", type=int, default=2, help="runs of each configuration in the grid (default 2)")
    ap.add_argument("--settle", type=int, default=0, metavar="N",
                    help="after the grid, the recommendation against the grid's best again, N runs each (default: not)")
    ap.add_argument("--keep", type=Path, metavar="DIR",
                    help="keep the sessions' databases and logs in DIR (default: a temporary directory, removed)")
    ap.add_argument("--from", dest="rows_from", type=Path, metavar="FILE",
                    help="settle the rows of an earlier --out (their profiles; no sessions, no grids)")
    args = ap.parse_args()
    lab = Lab()
    if not lab.is_up():
        print("the lab is not up: sudo make lab-up (KERNEL=7.2 for today's kernel)", file=sys.stderr)
        return 2
    before = lab.current_profile()
    rows: list[dict[str, Any]] = []
    try:
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
        workdir = contextlib.nullcontext(str(args.keep)) if args.keep else tempfile.TemporaryDirectory(prefix="guided-")
        with workdir as tmp:
            if args.rows_from:
                for row in json.loads(args.rows_from.read_text()):
                    if args.profile and row["profile"] not in args.profile:
                        continue
                    lab.set_profile(row["profile"], 20 if row["profile"] == "wan" else None)
                    rows.append(row)
                    _settled(lab, row, Path(tmp), args.settle or 4)
            for profile in [] if args.rows_from else args.profile or list(USES):
                rows.append(one_session(lab, profile, Path(tmp), args.budget))
                print(_row(rows[-1]), flush=True)
                if args.grid and "error" not in rows[-1]:
                    rows[-1].update(grid_ratio(lab, rows[-1], Path(tmp), args.grid_runs))
                    print(_grid_row(rows[-1]), flush=True)
                    if args.settle and "grid_error" not in rows[-1]:
                        _settled(lab, rows[-1], Path(tmp), args.settle)
    finally:
        lab.set_profile(before.name, before.rtt_ms if before.name == "wan" else None)
    print(f"lab kernel {lab.kernel_name()}; wall = connect to put back; estimate = the plan's, printed before it ran, "
          "plus the time before the plan")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
