"""How good is the configuration the product finally recommends, against a known ground truth?

search_efficiency.py asks whether a strategy *visits* the grid's best; this script
scores what the admin is *handed*: the product's real search strategies
(experiments.strategies.make_strategy, repeated by the sweep engine's own repeat rule)
followed by the real recommender (app.recommend.build.recommend_objective), on grids
whose true figures are known.

Grids (each replayed over --seeds seeds, the same seeds for every strategy):
  lab              benchmarks/data/grid_seqread_lab.json: the grid recorded in the lab;
                   a run is one of the configuration's recorded runs, drawn with the seed
                   (a configuration that was never recorded only breaks)
  lab+broken       the same, with broken runs injected (below)
  synthetic        benchmarks/data/grid_seqread.json, resampled the same way
  gen-noisy        the synthetic seq-read surface (benchmarks.grids.seqread_surface) with
                   lognormal run-to-run noise of 2-8 % CV and occasional outlier runs
                   (3 % of runs stall to 55-85 % of the figure)
  gen-broken       gen-noisy with broken runs injected
  gen-flat         every configuration within 1 % of the current one (the default is the true best)
  gen-default-best the current configuration is the true best; others fall off 6 % per step away
  gen-far          flat, except one configuration far from the current one (every knob at its
                   farthest value) that is 25 % better
Broken runs: in every seed of a "+broken"/"gen-broken" grid, 10-20 % of runs give no value,
and in half of them the true best configuration keeps only one ok run (the rest break).

Per seed: a random current configuration (the plan's baseline and start), the strategy
replayed run by run (each configuration repeated by the engine's RepeatPolicy rule; a
broken run costs its time and gives no value), the ok runs handed to the recommender as
TrialFigures. Printed per grid × strategy:
  rec/best   the recommended configuration's TRUE mean / the grid's true best (worst and
             mean over seeds; goal ≥ 95 % at worst)
  reach      the truly best configuration the search measured with ≥ 2 ok runs / the true
             best, worst over seeds: what the recommender could have picked
  kept-def   how often the current configuration is kept although the grid's best beats
             it beyond noise, as k/n of the seeds where it does (goal 0)
  w/ evid    of those (2σ), the seeds where the search had measured a truly better
             configuration with ≥ 2 ok runs: the recommender's misses, not the search's
  worse      how often a change is recommended that the grid says is worse than the
             current configuration beyond noise (goal 0)
  changed    how often the recommendation is a change at all
  time       the trial time used / the full grid's (every configuration at the plan's
             min_runs, at its mean run time); adaptive goal ≤ 25 %
"Beyond noise" is judged on the ground truth twice: 2σ (the true difference exceeds twice
the noise sd of one run of each, sqrt(sd_a² + sd_b²)) and 5 % (of the current figure).
Truth: recorded grids: the mean of a configuration's recorded runs, its sd the grid's
pooled relative run-to-run sd; generated grids: the noise-free figure, sd = CV × figure
(outliers are not counted as noise). Resampling 2-3 recorded runs often repeats one value
(a configuration with zero spread), so on the recorded grids the recommender sees less
pooled noise than the lab had; the generated grids have no such artefact. Ends with a one-line verdict per goal and notes on
every kept-default and worse-change case (what the recommender saw).

Run: .venv/bin/python benchmarks/score_recommendation.py [--seeds N] [--grid FILE]
     [--strategies grid,ofat,adaptive] [--jobs N]
--grid FILE replaces the default grid list by that recorded grid (clean and +broken).
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import random
import statistics as st
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import experiments.statistics as xstats  # noqa: E402
from app.recommend.build import TrialFigures, recommend_objective  # noqa: E402
from app.recommend.model import ObjectiveRecommendation  # noqa: E402
from app.recommend.telemetry import TelemetryDigest  # noqa: E402
from app.sweep.engine import SweepEngine  # noqa: E402
from benchmarks.grids import KNOBS, LAB_GRID, SYNTHETIC_GRID, load_runs, seqread_surface  # noqa: E402
from experiments.plan import Config, Plan, Value  # noqa: E402
from experiments.statistics import RepeatPolicy  # noqa: E402
from experiments.strategies import TrialResult, make_strategy  # noqa: E402
from experiments.topups import TOPUP_TRIES, short_of_runs, topup_budget, topup_order  # noqa: E402

STRATEGIES = ("grid", "ofat", "adaptive")
OBJECTIVE = "seq_read"
SCALE = 1e6  # the grids are in MB/s, the recommender's figures in B/s
BROKEN_RATE = (0.10, 0.20)
CV_RANGE = (0.02, 0.08)
OUTLIER_RATE = 0.03
Knobs = dict[str, list[Value]]
Runs = dict[Config, tuple[tuple[float | None, float], ...]]


# -- ground truth ---------------------------------------------------------------------------


@dataclass
class Instance:
    """One seed's ground truth: the true figures, the current configuration and how a run is drawn."""

    name: str
    seed: int
    knobs: Knobs
    baseline: Config
    truth: dict[Config, float]  # the true mean; a configuration missing here only breaks
    sd: dict[Config, float]  # the true run-to-run sd
    run_time: dict[Config, float]  # the mean run time
    draw: Callable[[Config, random.Random], tuple[float | None, float]]
    broken_rate: float = 0.0
    best_one_run: bool = False  # the true best keeps one ok run, the rest break
    one_run_at: int = 0

    @functools.cached_property
    def best(self) -> Config:
        return max(self.truth, key=lambda c: (self.truth[c], c == self.baseline))

    def beats(self, a: Config, b: Config, rule: str) -> bool:
        """a's true mean exceeds b's beyond noise (rule "2sd" or "5%")."""
        if a not in self.truth or b not in self.truth:
            return False
        diff = self.truth[a] - self.truth[b]
        if rule == "5%":
            return diff > 0.05 * self.truth[b]
        return diff > 2.0 * math.hypot(self.sd[a], self.sd[b])

    def run(self, config: Config, rep: int) -> tuple[float | None, float]:
        """Run number ``rep`` of a configuration: the same draw for every strategy (common random numbers)."""
        rng = random.Random(f"{self.name}|{self.seed}|{sorted(config.items())}|{rep}")
        value, duration = self.draw(config, rng)
        if self.best_one_run and config == self.best and rep != self.one_run_at:
            return None, duration
        if self.broken_rate and rng.random() < self.broken_rate:
            return None, duration
        return value, duration


def all_configs(knobs: Mapping[str, Sequence[Value]]) -> list[Config]:
    out = [Config({})]
    for name, values in knobs.items():
        out = [c.replace(name, v) for c in out for v in values]
    return out


def _inject_broken(inst: Instance, rng: random.Random) -> None:
    inst.broken_rate = rng.uniform(*BROKEN_RATE)
    if rng.random() < 0.5 and inst.best != inst.baseline:
        inst.best_one_run = True
        inst.one_run_at = rng.choice((0, 1))  # two breaks in a row end a configuration (the engine's rule)


class Source:
    """A grid that makes one Instance per seed."""

    name: str
    broken: bool

    def instance(self, seed: int) -> Instance:
        raise NotImplementedError


@dataclass
class RecordedSource(Source):
    """A grid file; a run is one of the configuration's recorded (value, duration) pairs."""

    name: str
    path: Path
    broken: bool = False

    @functools.cached_property
    def _grid(self) -> tuple[Knobs, dict[Config, float], float, dict[Config, float], Runs]:
        grid = load_runs(self.path)
        truth, rel_vars, run_time = {}, [], {}
        for c, runs in grid.runs.items():
            ok = [v for v, _ in runs if v is not None]
            run_time[c] = st.fmean(d for _, d in runs)
            if ok:
                truth[c] = st.fmean(ok)
            if len(ok) >= 2 and truth[c] > 0:
                rel_vars.append(st.variance(ok) / truth[c] ** 2)
        rel_sd = math.sqrt(st.fmean(rel_vars)) if rel_vars else 0.0
        typical = st.fmean(run_time.values())
        for c in grid.configs():
            run_time.setdefault(c, typical)
        return grid.knobs, truth, rel_sd, run_time, grid.runs

    def instance(self, seed: int) -> Instance:
        knobs, truth, rel_sd, run_time, runs = self._grid
        rng = random.Random(f"{self.name}|{seed}|setup")
        baseline = rng.choice(sorted(truth, key=lambda c: sorted(c.items())))

        def draw(c: Config, r: random.Random) -> tuple[float | None, float]:
            return r.choice(runs[c]) if c in runs else (None, run_time[c])

        inst = Instance(self.name, seed, knobs, baseline, truth, {c: rel_sd * v for c, v in truth.items()},
                        run_time, draw)
        if self.broken:
            _inject_broken(inst, rng)
        return inst


Shape = Callable[[Config, Config, Knobs, random.Random], float]


@dataclass
class SyntheticSource(Source):
    """A generated grid: true figures from ``shape(config, baseline, knobs, rng)``, lognormal noise of
    a CV drawn per seed within ``cv`` (each configuration's within ±25 % of it), outlier runs."""

    name: str
    knobs: Knobs
    shape: Shape
    cv: tuple[float, float] = CV_RANGE
    outliers: float = OUTLIER_RATE
    broken: bool = False

    def instance(self, seed: int) -> Instance:
        rng = random.Random(f"{self.name}|{seed}|setup")
        configs = all_configs(self.knobs)
        baseline = rng.choice(configs)
        truth = {c: self.shape(c, baseline, self.knobs, rng) for c in configs}
        cv0 = rng.uniform(*self.cv)
        cvs = {c: min(self.cv[1], max(self.cv[0], cv0 * rng.uniform(0.8, 1.25))) for c in configs}
        run_time = {c: 25 + rng.uniform(15, 45) * (1.3 if int(c.get("rsize", 1 << 20)) <= 16384 else 1.0)
                    for c in configs}  # fmt: skip
        outliers = self.outliers

        def draw(c: Config, r: random.Random) -> tuple[float | None, float]:
            s = math.sqrt(math.log1p(cvs[c] ** 2))
            value = truth[c] * math.exp(r.gauss(-s * s / 2, s))  # mean 1, CV cvs[c]
            if outliers and r.random() < outliers:
                value *= r.uniform(0.55, 0.85)  # a stall: the run dips below its usual figure
            return value, run_time[c] * r.uniform(0.9, 1.1)

        inst = Instance(self.name, seed, dict(self.knobs), baseline, truth,
                        {c: cvs[c] * truth[c] for c in configs}, run_time, draw)
        if self.broken:
            _inject_broken(inst, rng)
        return inst


def surface(c: Config, _base: Config, _knobs: Knobs, _rng: random.Random) -> float:
    return seqread_surface(int(c["rsize"]), int(c["nfsd_threads"]), int(c["read_ahead_kb"]))


def flat(c: Config, base: Config, _knobs: Knobs, rng: random.Random) -> float:
    return 100.0 if c == base else 100.0 * rng.uniform(0.99, 1.0)


def _steps(c: Config, base: Config, knobs: Knobs) -> int:
    return sum(abs(list(knobs[k]).index(c[k]) - list(knobs[k]).index(base[k])) for k in knobs)


def default_best(c: Config, base: Config, knobs: Knobs, _rng: random.Random) -> float:
    return 100.0 * max(0.4, 1.0 - 0.06 * _steps(c, base, knobs))


def far_needle(c: Config, base: Config, knobs: Knobs, _rng: random.Random) -> float:
    far = {k: max(v, key=lambda x: (abs(list(v).index(x) - list(v).index(base[k])), list(v).index(x)))
           for k, v in knobs.items()}  # fmt: skip
    return 125.0 if dict(c) == far else 100.0


def default_sources(grid: Path | None = None) -> list[Source]:
    if grid is not None:
        return [RecordedSource(grid.stem, grid), RecordedSource(grid.stem + "+broken", grid, broken=True)]
    knobs: Knobs = {k: list(v) for k, v in KNOBS.items()}
    small: Knobs = {"rsize": [32768, 131072, 1048576], "nfsd_threads": [8, 32, 128], "read_ahead_kb": [128, 1024, 8192],
                    "mtu": [1500, 9000]}  # the lab grid's shape  # fmt: skip
    out: list[Source] = []
    if LAB_GRID.exists():
        out += [RecordedSource("lab", LAB_GRID), RecordedSource("lab+broken", LAB_GRID, broken=True)]
    out += [
        RecordedSource("synthetic", SYNTHETIC_GRID),
        SyntheticSource("gen-noisy", knobs, surface),
        SyntheticSource("gen-broken", knobs, surface, broken=True),
        SyntheticSource("gen-flat", small, flat),
        SyntheticSource("gen-default-best", small, default_best),
        SyntheticSource("gen-far", small, far_needle),
    ]
    return out


# -- one seed -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    """One seed of one grid × strategy."""

    quality: float  # recommended true mean / true best (0: no recommendation)
    reach: float  # the truly best configuration with ≥ 2 ok runs / true best: what the recommender could pick
    changed: bool
    best_beats_default: dict[str, bool]  # by rule
    kept_default: dict[str, bool]  # by rule: kept although the best beats it
    kept_with_evidence: bool  # kept although a config with ≥ 2 ok runs that truly beats it (2σ) was measured
    worse_change: dict[str, bool]  # by rule
    time_share: float
    broken: bool
    note: str = ""


def replay(inst: Instance, strategy: str) -> tuple[list[tuple[Config, float | None, float]], Plan]:
    """The sweep engine's loop offline: the strategy's configurations, each repeated by the engine's rule."""
    plan = Plan(knobs={k: tuple(v) for k, v in inst.knobs.items()}, strategy=strategy, seed=inst.seed,
                baseline=dict(inst.baseline))  # fmt: skip
    engine = SimpleNamespace(policy=RepeatPolicy(plan.max_rel_stddev, plan.min_runs, plan.max_runs))
    strat = make_strategy(plan)
    results: list[TrialResult] = []
    runs: list[tuple[Config, float | None, float]] = []
    while todo := strat.next_trials(results):
        random.Random(plan.seed + len(results)).shuffle(todo)
        for config in todo:
            own: list[TrialResult] = []
            while True:
                value, duration = inst.run(config, len(own))
                r = TrialResult(config, value)
                own.append(r)
                results.append(r)
                runs.append((config, value, duration))
                # the engine's own rule (repeat to the plan's stddev, two breaks in a row end it)
                if not SweepEngine._needs_more(engine, config, own):  # type: ignore[arg-type]
                    break
    # the engine's top-ups: configurations that lost runs get them back, within its budget
    budget, done = topup_budget(results), 0
    for config in topup_order(results, plan.start_config(), plan.min_runs):
        tries = 0
        while short_of_runs(config, results, plan.min_runs) and tries < TOPUP_TRIES and done < budget:
            value, duration = inst.run(config, sum(1 for r in results if r.config == config))
            results.append(TrialResult(config, value))
            runs.append((config, value, duration))
            tries, done = tries + 1, done + 1
    return runs, plan


def recommend(inst: Instance, runs: Sequence[tuple[Config, float | None, float]]) -> ObjectiveRecommendation | None:
    figures = [
        TrialFigures(trial_id=i + 1, order=i, config=dict(c), mean=v * SCALE, median=v * SCALE, p5=v * SCALE * 0.95,
                     cv=0.03, deepest_dip=0.1, dips=0, telemetry=TelemetryDigest())
        for i, (c, v, _) in enumerate(runs) if v is not None
    ]  # fmt: skip
    # A grid that measured async exports was swept with the admin's opt-in (nothing runs async without it).
    return recommend_objective(OBJECTIVE, figures, baseline=dict(inst.baseline), allow_async="export_sync" in inst.knobs)


RULES = ("2sd", "5%")


def _fmt(c: Mapping[str, Value]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(c.items()))


def score_seed(source: Source, strategy: str, seed: int) -> Outcome:
    inst = source.instance(seed)
    runs, plan = replay(inst, strategy)
    rec = recommend(inst, runs)
    best_v = inst.truth[inst.best]
    full = sum(inst.run_time[c] for c in all_configs(inst.knobs)) * plan.min_runs
    share = sum(d for _, _, d in runs) / full
    broken = inst.broken_rate > 0 or inst.best_one_run
    beats = {r: inst.beats(inst.best, inst.baseline, r) for r in RULES}
    ok_runs: dict[Config, int] = {}
    for c, v, _ in runs:
        ok_runs[c] = ok_runs.get(c, 0) + (v is not None)
    reach = max((inst.truth.get(c, 0.0) for c, n in ok_runs.items() if n >= 2), default=0.0) / best_v
    evidence = any(n >= 2 and inst.beats(c, inst.baseline, "2sd") for c, n in ok_runs.items())
    if rec is None:
        return Outcome(0.0, reach, False, beats, dict(beats), evidence, dict.fromkeys(RULES, False), share, broken,
                       "[no recommendation]")  # fmt: skip
    chosen = Config(rec.config)
    quality = inst.truth.get(chosen, 0.0) / best_v
    is_default = chosen == inst.baseline
    kept = {r: beats[r] and is_default for r in RULES}
    worse = {r: not is_default and inst.beats(inst.baseline, chosen, r) for r in RULES}
    note = ""
    if kept["2sd"] or worse["2sd"] or (quality < 0.95 <= reach):
        tag = "kept-default" if kept["2sd"] else "worse-change" if worse["2sd"] else "below-reach"
        note = f"[{tag}] {_explain(inst, runs, rec, chosen)}"
    return Outcome(quality, reach, not is_default, beats, kept, kept["2sd"] and evidence, worse, share, broken, note)


def _explain(inst: Instance, runs: Sequence[tuple[Config, float | None, float]], rec: ObjectiveRecommendation,
             chosen: Config) -> str:  # fmt: skip
    """What the recommender saw when it kept the default or chose something worse."""
    ok: dict[Config, list[float]] = {}
    for c, v, _ in runs:
        if v is not None:
            ok.setdefault(c, []).append(v)
    base_v = inst.truth[inst.baseline]
    better = sorted((c for c in ok if inst.beats(c, inst.baseline, "2sd")), key=lambda c: -inst.truth[c])
    bits = [f"truth default {base_v:.1f}, best {inst.truth[inst.best]:.1f}, chosen {inst.truth.get(chosen, 0):.1f}"
            f" ({'kept default' if chosen == inst.baseline else 'changed'})"]
    if inst.broken_rate:
        bits.append(f"broken {inst.broken_rate:.0%}" + (", best kept 1 ok run" if inst.best_one_run else ""))
    mine = ok.get(inst.baseline, [])
    spread = f" (CV {st.stdev(mine) / st.fmean(mine):.1%})" if len(mine) >= 2 else ""
    bits.append(f"default's ok runs {len(mine)}{spread}")
    if better:
        c = better[0]
        bits.append(f"measured truly better: {len(better)}, top true {inst.truth[c]:.1f} with {len(ok[c])} ok run(s)"
                    f" mean {st.fmean(ok[c]):.1f}")  # fmt: skip
    else:
        bits.append("search measured nothing truly better (2σ)")
    top = rec.ranking[0]
    bits.append(f"ranked first: {inst.truth.get(Config(top.config), 0):.1f} true, n={top.throughput.n}"
                f" of {len(rec.ranking)} ranked")
    if rec.gain is not None:
        bits.append(f"gain {rec.gain.rel:+.1%} beyond_noise={rec.gain.beyond_noise}")
    return "; ".join(bits)


# -- many seeds -----------------------------------------------------------------------------


@dataclass
class Row:
    grid: str
    strategy: str
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def seeds(self) -> int:
        return len(self.outcomes)

    @property
    def quality_worst(self) -> float:
        return min(o.quality for o in self.outcomes)

    @property
    def quality_mean(self) -> float:
        return st.fmean(o.quality for o in self.outcomes)

    @property
    def reach_worst(self) -> float:
        return min(o.reach for o in self.outcomes)

    @property
    def changed(self) -> int:
        return sum(o.changed for o in self.outcomes)

    @property
    def broken(self) -> int:
        return sum(o.broken for o in self.outcomes)

    def kept_default(self, rule: str) -> tuple[int, int]:
        return sum(o.kept_default[rule] for o in self.outcomes), sum(o.best_beats_default[rule] for o in self.outcomes)

    @property
    def kept_with_evidence(self) -> int:
        return sum(o.kept_with_evidence for o in self.outcomes)

    def worse_change(self, rule: str) -> int:
        return sum(o.worse_change[rule] for o in self.outcomes)

    @property
    def time_mean(self) -> float:
        return st.fmean(o.time_share for o in self.outcomes)

    @property
    def time_max(self) -> float:
        return max(o.time_share for o in self.outcomes)


def _chunk(source: Source, strategy: str, seeds: Sequence[int]) -> list[Outcome]:
    return [score_seed(source, strategy, s) for s in seeds]


def score(sources: Sequence[Source], seeds: int, strategies: Sequence[str] = STRATEGIES, jobs: int = 1) -> list[Row]:
    """Every grid × strategy over seeds 0..seeds-1 (the same current configurations for every strategy)."""
    rows = [Row(src.name, s) for src in sources for s in strategies]
    tasks = [(i, src, s) for i, (src, s) in enumerate((src, s) for src in sources for s in strategies)]
    if jobs <= 1:
        for i, src, s in tasks:
            rows[i].outcomes = _chunk(src, s, range(seeds))
        return rows
    parts = max(1, min(seeds, 4 * jobs // max(1, len(tasks)) + 1))
    bounds = [range(seeds * p // parts, seeds * (p + 1) // parts) for p in range(parts)]
    with ProcessPoolExecutor(jobs) as pool:
        futures = [(i, pool.submit(_chunk, src, s, list(b))) for i, src, s in tasks for b in bounds]
        for i, f in futures:
            rows[i].outcomes.extend(f.result())
    return rows


def _frac(k: int, n: int) -> str:
    return f"{k}/{n}"


def table(rows: Sequence[Row]) -> list[str]:
    w = max([16, *(len(r.grid) for r in rows)])
    head = (f"{'grid':{w}} {'strategy':8} {'seeds':>5} {'broken':>6} {'rec/best worst':>14} {'mean':>6} {'reach':>6} {'changed':>7}"
            f" {'kept-def 2σ':>11} {'5%':>7} {'w/ evid':>7} {'worse 2σ':>8} {'5%':>4} {'time mean':>9} {'max':>6}")  # fmt: skip
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.grid:{w}} {r.strategy:8} {r.seeds:>5} {r.broken:>6} {r.quality_worst:>14.1%} {r.quality_mean:>6.1%} {r.reach_worst:>6.1%}"
            f" {r.changed:>7} {_frac(*r.kept_default('2sd')):>11} {_frac(*r.kept_default('5%')):>7} {r.kept_with_evidence:>7}"
            f" {r.worse_change('2sd'):>8} {r.worse_change('5%'):>4} {r.time_mean:>9.1%} {r.time_max:>6.1%}"
        )
    return lines


def verdicts(rows: Sequence[Row]) -> list[str]:
    def line(goal: str, misses: list[str], total: int) -> str:
        if not misses:
            return f"{goal}: met on all {total}"
        shown = ", ".join(misses[:12]) + (f", … {len(misses) - 12} more" if len(misses) > 12 else "")
        return f"{goal}: NOT met on {len(misses)} of {total}: {shown}"

    n = len(rows)
    out = [line("(a) recommended ≥ 95 % of the true best at worst",
                [f"{r.grid}/{r.strategy} {r.quality_worst:.1%}" for r in rows if r.quality_worst < 0.95], n)]
    for rule in RULES:
        out.append(line(f"(b) default kept against a better best (beyond noise, {rule}) = 0",
                        [f"{r.grid}/{r.strategy} {_frac(*r.kept_default(rule))}" for r in rows
                         if r.kept_default(rule)[0]], n))  # fmt: skip
    out.append(line("(b') of those (2σ), kept although a truly better config with ≥ 2 ok runs was measured = 0",
                    [f"{r.grid}/{r.strategy} {r.kept_with_evidence}" for r in rows if r.kept_with_evidence], n))
    for rule in RULES:
        out.append(line(f"(c) change worse than the default (beyond noise, {rule}) = 0",
                        [f"{r.grid}/{r.strategy} {r.worse_change(rule)}" for r in rows if r.worse_change(rule)], n))
    adaptive = [r for r in rows if r.strategy == "adaptive"]
    out.append(line("(d) adaptive trial time ≤ 25 % of the full grid (max over seeds)",
                    [f"{r.grid} {r.time_max:.1%}" for r in adaptive if r.time_max > 0.25], len(adaptive)))
    return out


def notes(rows: Sequence[Row], limit: int = 3) -> list[str]:
    out = []
    for r in rows:
        cases = [(i, o) for i, o in enumerate(r.outcomes) if o.note]
        for i, o in cases[:limit]:
            out.append(f"  {r.grid}/{r.strategy} seed {i}: {o.note}")
        if len(cases) > limit:
            out.append(f"  {r.grid}/{r.strategy}: … {len(cases) - limit} more")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--grid", type=Path, help="score only this recorded grid file (clean and with broken runs)")
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    args = ap.parse_args()
    # t_quantile is pure and recomputed by bisection for every interval: memoised here (same results, faster);
    # only when run as a script, so importing this module changes nothing
    xstats.t_quantile = functools.lru_cache(maxsize=4096)(xstats.t_quantile)
    sources = default_sources(args.grid)
    strategies = [s for s in args.strategies.split(",") if s]
    t0 = time.monotonic()
    rows = score(sources, args.seeds, strategies, args.jobs)
    print(f"{args.seeds} seeds per grid × strategy; the same current configurations for every strategy")
    print("beyond noise (ground truth): 2σ = true difference > 2 × sqrt(sd_a² + sd_b²) of one run each;"
          " 5% = true difference > 5 % of the current figure")
    print("kept-def: k/n = kept the current config in k of the n seeds where the true best beats it;"
          " worse: changes to a config truly worse than the current one; broken: seeds with broken runs injected")
    print("w/ evid: kept-def 2σ cases where the search HAD measured a config truly better (2σ) with ≥ 2 ok runs"
          " (the recommender's miss, not the search's)")
    print("reach: worst over seeds of the truly best config the search measured with ≥ 2 ok runs / true best"
          " (what the recommender could have picked)")
    print("time: trial time used / the full grid's at the plan's min_runs (3) per configuration")
    print()
    print("\n".join(table(rows)))
    print()
    print("\n".join(verdicts(rows)))
    explained = notes(rows)
    if explained:
        print()
        print("kept-default or worse-change cases (2σ), and recommendations < 95 % where the search had measured"
              " a config ≥ 95 % twice; what the recommender saw:")
        print("\n".join(explained))
    print(f"\n({time.monotonic() - t0:.0f} s)")


if __name__ == "__main__":
    main()
