"""How good is what the admin is handed, against a known ground truth?

search_efficiency.py asks whether a strategy *visits* the grid's best; this script
scores what the admin is *handed*: a plan's real steps (experiments.steps.plan_steps: a
guided sweep's screening, refinement, put-back checks and confirmation, or a chosen
strategy's search followed by the same two checks), driven offline
(experiments.steps.run_offline) against grids whose true figures are known, then the
real recommendation (app.recommend.plan_choice.plan_recommendation, on the verdicts of
experiments.steps.decide).

Grids (each replayed over --seeds seeds, the same seeds for every strategy):
  lab              benchmarks/data/grid_seqread_lab.json: the grid recorded in the lab;
                   a run is one of the configuration's recorded runs, drawn with the seed,
                   times a lognormal jitter of the grid's pooled sd / √(its recorded runs)
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
                   farthest value) that is 25 % better: an interaction no knob shows alone
  gen-inert        seq-read: rsize and readahead as on the surface, nfsd_threads and mtu inert
  gen-conflict     seq-read and seq-write: readahead helps reads, the stripe cache writes,
                   nfsd_threads trades (writes up to +30 %, reads down to −20 %), mtu inert
  gen-split        seq-read and seq-write: readahead does the reads' work, the stripe cache
                   the writes', nfsd_threads and mtu inert: both changes belong in the answer
Broken runs: in every seed of a "+broken"/"gen-broken" grid, 10-20 % of runs give no value,
and in half of them the true best configuration keeps only one ok run of the sweep (the
rest break).

Per seed: a random current configuration (today's settings: the plan's baseline), the
plan's steps run to their end with the product's defaults (2 runs per configuration at
least, 6 at most, 3.5 % stddev, 95 % confidence); a run is drawn from the seed, the
configuration, the workload, its number and whether it is a confirmation run (common
random numbers: run k of a configuration is the same for every strategy).

Truth: a configuration's true figure per workload is the geometric mean of its runs (the
noise is multiplicative: the recorded grids' geometric mean of their runs, the generated
grids' noise-free figure); jointly, the geometric mean over the plan's workloads, as the
rule judges. The true best is the best joint figure among the configurations that lose no
more than 1 % on any workload against today's (the rule wants no workload worse). A knob
is inert when no change of it alone changes any true figure anywhere in the grid.
Printed per grid × strategy:
  rec/best   the recommended configuration's true joint figure / the true best (worst, mean)
  reach      the truly best configuration the sweep measured with ≥ 2 ok runs per workload
             / the true best, worst over seeds: what the rule could have picked
  changed    seeds whose recommendation changes something
  inert      inert knobs the recommendation changes / inert knobs the candidate changed (the
             put-back checks had to put them back), summed over seeds (goal 0)
  idle       changed knobs whose own true gain in the recommended configuration (it against
             the same with that knob put back) is under 1 %, summed over seeds
  cover      of the confirmed recommendations, how often the confirmation's 95 % interval
             holds the true gain of the change over today's (goal ≥ 90 %); "all": of every
             confirmation run, confirmed or not
  curse      how often a reported gain exceeds the true one by more than its 95 % interval
             (its low end above the truth): before = the sweep's own estimate of its best
             (the candidate against today's, from the search runs); after = the
             confirmation's paired estimate of the change it ran
  kept-def   seeds where today's settings are kept although the true best beats them
             beyond noise, as k/n of the seeds where it does (goal 0)
  worse      seeds whose recommendation is truly worse than today's beyond noise, on the
             joint figure or on one workload (goal 0)
  trials     trials per seed (mean), and the trial time used / the full grid's (every
             configuration and workload at the plan's minimum runs), mean and max
"Beyond noise" is judged on the truth twice: 2σ (the true log difference exceeds twice the
noise sd of one run of each) and 5 %. Ends with a one-line verdict per goal and notes on
the seeds that miss one (what the rule saw).

Run: .venv/bin/python benchmarks/score_recommendation.py [--seeds N] [--grid FILE]
     [--grids NAME,…] [--strategies guided,grid,ofat,adaptive] [--jobs N] [--notes N]
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import experiments.noise as xnoise  # noqa: E402
import experiments.statistics as xstats  # noqa: E402
from app.recommend.plan_choice import CONFIRMED, PlanRecommendation, plan_recommendation  # noqa: E402
from app.session.plan import PlanChoices  # noqa: E402
from benchmarks.grids import KNOBS, LAB_GRID, SYNTHETIC_GRID, load_runs, seqread_surface  # noqa: E402
from experiments.board import CONFIRM, Ask, Board, Run  # noqa: E402
from experiments.plan import Config, Plan, Value  # noqa: E402
from experiments.statistics import RepeatPolicy  # noqa: E402
from experiments.steps import GUIDED_MIN_RUNS, SEARCH_STEPS, plan_steps, run_offline  # noqa: E402
from experiments.verdicts import changed_knobs  # noqa: E402

STRATEGIES = ("guided", "grid", "ofat", "adaptive")
CONFIDENCE = 0.95
MIN_RUNS, MAX_RUNS = PlanChoices().runs  # the product's defaults
READ, WRITE = "seq_read", "seq_write"
BROKEN_RATE = (0.10, 0.20)
CV_RANGE = (0.02, 0.08)
OUTLIER_RATE = 0.03
ADMISSIBLE_LOSS = 0.01  # the true best loses no more than this on any workload against today's
NO_EFFECT = 0.01  # a changed knob whose own true gain is under this earned nothing
RULES = ("2sd", "5%")
Knobs = dict[str, list[Value]]
Figures = dict[str, float]  # workload -> figure


# -- ground truth ---------------------------------------------------------------------------


def all_configs(knobs: Mapping[str, Sequence[Value]]) -> list[Config]:
    out = [Config({})]
    for name, values in knobs.items():
        out = [c.replace(name, v) for c in out for v in values]
    return out


def inert_knobs(knobs: Mapping[str, Sequence[Value]], truth: Mapping[Config, Figures]) -> frozenset[str]:
    """The knobs no change of which, alone, changes any true figure anywhere in the grid."""
    out = set()
    for k, values in knobs.items():
        if all(c.replace(k, v) in truth and all(math.isclose(truth[c.replace(k, v)][w], f, rel_tol=1e-9)
                                                for w, f in figs.items())
               for c, figs in truth.items() for v in values):  # fmt: skip
            out.add(k)
    return frozenset(out)


@dataclass
class Instance:
    """One seed's ground truth: the true figures, today's configuration and how a run is drawn."""

    name: str
    seed: int
    knobs: Knobs
    workloads: tuple[str, ...]
    baseline: Config
    truth: dict[Config, Figures]  # a configuration missing here only breaks
    sd: dict[Config, Figures]  # the true run-to-run sd of the log figure
    run_time: dict[Config, float]  # the mean run time (each workload's)
    draw: Callable[[Config, str, random.Random], tuple[float | None, float]]
    broken_rate: float = 0.0
    best_one_run: bool = False  # the true best keeps one ok sweep run per workload, the rest break
    one_run_at: int = 0
    drift: float = 0.0  # the hosts' drift: a random walk of every figure, this sd of its log step per trial

    def joint(self, c: Config) -> float | None:
        figs = self.truth.get(c)
        if figs is None:
            return None
        return math.exp(math.fsum(math.log(figs[w]) for w in self.workloads) / len(self.workloads))

    def gain(self, c: Config, ref: Config) -> float | None:
        """The true joint gain of ``c`` over ``ref`` (a ratio less one)."""
        a, b = self.joint(c), self.joint(ref)
        return a / b - 1.0 if a is not None and b is not None else None

    def admissible(self, c: Config) -> bool:
        today = self.truth[self.baseline]
        return c in self.truth and all(self.truth[c][w] >= (1 - ADMISSIBLE_LOSS) * today[w] for w in self.workloads)

    @functools.cached_property
    def inert(self) -> frozenset[str]:
        return inert_knobs(self.knobs, self.truth)

    @functools.cached_property
    def best(self) -> Config:
        fit = [c for c in self.truth if self.admissible(c)]
        # ties (inert knobs) go to the configuration that changes least
        return max(fit, key=lambda c: (self.joint(c) or 0.0, -len(changed_knobs(c, self.baseline))))

    def beats(self, a: Config, b: Config, rule: str) -> bool:
        """a's true joint figure exceeds b's beyond noise (rule "2sd" or "5%")."""
        ja, jb = self.joint(a), self.joint(b)
        if ja is None or jb is None:
            return False
        if rule == "5%":
            return ja > 1.05 * jb
        n = len(self.workloads)
        sd = math.sqrt(math.fsum(self.sd[a][w] ** 2 + self.sd[b][w] ** 2 for w in self.workloads)) / n
        return math.log(ja / jb) > 2.0 * sd

    def loses_on(self, a: Config, b: Config, rule: str) -> list[str]:
        """The workloads on which a's true figure is below b's beyond noise."""
        if a not in self.truth or b not in self.truth:
            return []
        out = []
        for w in self.workloads:
            fa, fb = self.truth[a][w], self.truth[b][w]
            limit = math.log(1.05) if rule == "5%" else 2.0 * math.hypot(self.sd[a][w], self.sd[b][w])
            if math.log(fb / fa) > limit:
                out.append(w)
        return out

    def run(self, config: Config, workload: str, rep: int, confirm: bool) -> tuple[float | None, float]:
        """Run number ``rep`` of a configuration on a workload, in the sweep or in the confirmation: the same
        draw for every strategy (common random numbers)."""
        stream = "confirm" if confirm else "sweep"
        rng = random.Random(f"{self.name}|{self.seed}|{sorted(config.items())}|{workload}|{stream}|{rep}")
        value, duration = self.draw(config, workload, rng)
        if self.best_one_run and not confirm and config == self.best and rep != self.one_run_at:
            return None, duration
        if self.broken_rate and rng.random() < self.broken_rate:
            return None, duration
        return value, duration


def _inject_broken(inst: Instance, rng: random.Random) -> None:
    inst.broken_rate = rng.uniform(*BROKEN_RATE)
    if rng.random() < 0.5 and inst.best != inst.baseline:
        inst.best_one_run = True
        inst.one_run_at = rng.choice((0, 1))  # two breaks in a row end a configuration (the board's rule)


class Source:
    """A grid that makes one Instance per seed."""

    name: str
    broken: bool

    def instance(self, seed: int) -> Instance:
        raise NotImplementedError


@dataclass
class RecordedSource(Source):
    """A grid file (one workload); a run is one of the configuration's recorded (value, duration) pairs."""

    name: str
    path: Path
    broken: bool = False
    workload: str = READ

    @functools.cached_property
    def _grid(self) -> tuple[Knobs, dict[Config, Figures], float, dict[Config, float],
                             dict[Config, tuple[tuple[float | None, float], ...]]]:  # fmt: skip
        grid = load_runs(self.path)
        truth, log_vars, run_time = {}, [], {}
        for c, runs in grid.runs.items():
            logs = [math.log(v) for v, _ in runs if v is not None and v > 0]
            run_time[c] = st.fmean(d for _, d in runs)
            if logs:
                truth[c] = {self.workload: math.exp(st.fmean(logs))}
            if len(logs) >= 2:
                log_vars.append(st.variance(logs))
        sd = math.sqrt(st.fmean(log_vars)) if log_vars else 0.0
        typical = st.fmean(run_time.values())
        for c in grid.configs():
            run_time.setdefault(c, typical)
        return grid.knobs, truth, sd, run_time, grid.runs

    def instance(self, seed: int) -> Instance:
        knobs, truth, sd, run_time, runs = self._grid
        rng = random.Random(f"{self.name}|{seed}|setup")
        baseline = rng.choice(sorted(truth, key=lambda c: sorted(c.items())))

        def draw(c: Config, _w: str, r: random.Random) -> tuple[float | None, float]:
            if c not in runs:
                return None, run_time[c]
            value, duration = r.choice(runs[c])
            if value is None:
                return None, duration
            # a smoothed bootstrap: jitter of the pooled sd / √(its recorded runs) keeps a run's variance at the
            # pool's and no two runs alike (a repeated value would give the confirmation a zero-width interval)
            ok = sum(1 for v, _ in runs[c] if v is not None)
            return value * math.exp(r.gauss(0.0, sd / math.sqrt(ok))), duration

        inst = Instance(self.name, seed, knobs, (self.workload,), baseline, truth,
                        {c: {self.workload: sd} for c in truth}, run_time, draw)  # fmt: skip
        if self.broken:
            _inject_broken(inst, rng)
        return inst


Shape = Callable[[Config, str, Config, Knobs, random.Random], float]


@dataclass
class SyntheticSource(Source):
    """A generated grid: true figures from ``shape(config, workload, today, knobs, rng)``, lognormal noise of
    a CV drawn per seed within ``cv`` (each configuration's within ±25 % of it), outlier runs."""

    name: str
    knobs: Knobs
    shape: Shape
    workloads: tuple[str, ...] = (READ,)
    cv: tuple[float, float] = CV_RANGE
    outliers: float = OUTLIER_RATE
    broken: bool = False
    drift: float = 0.0  # Instance.drift

    def instance(self, seed: int) -> Instance:
        rng = random.Random(f"{self.name}|{seed}|setup")
        configs = all_configs(self.knobs)
        baseline = rng.choice(configs)
        truth = {c: {w: self.shape(c, w, baseline, self.knobs, rng) for w in self.workloads} for c in configs}
        cv0 = rng.uniform(*self.cv)
        sd = {c: {w: math.sqrt(math.log1p(min(self.cv[1], max(self.cv[0], cv0 * rng.uniform(0.8, 1.25))) ** 2))
                  for w in self.workloads} for c in configs}  # fmt: skip
        run_time = {c: 25 + rng.uniform(15, 45) * (1.3 if int(c.get("rsize", 1 << 20)) <= 16384 else 1.0)
                    for c in configs}  # fmt: skip
        outliers = self.outliers

        def draw(c: Config, w: str, r: random.Random) -> tuple[float | None, float]:
            value = truth[c][w] * math.exp(r.gauss(0.0, sd[c][w]))  # its geometric mean is the true figure
            if outliers and r.random() < outliers:
                value *= r.uniform(0.55, 0.85)  # a stall: the run dips below its usual figure
            return value, run_time[c] * r.uniform(0.9, 1.1)

        inst = Instance(self.name, seed, dict(self.knobs), self.workloads, baseline, truth, sd, run_time, draw,
                        drift=self.drift)  # fmt: skip
        if self.broken:
            _inject_broken(inst, rng)
        return inst


def surface(c: Config, _w: str, _base: Config, _knobs: Knobs, _rng: random.Random) -> float:
    return seqread_surface(int(c["rsize"]), int(c["nfsd_threads"]), int(c["read_ahead_kb"]))


def surface_without_threads(c: Config, _w: str, _base: Config, _knobs: Knobs, _rng: random.Random) -> float:
    return seqread_surface(int(c["rsize"]), 32, int(c["read_ahead_kb"]))


def flat(c: Config, _w: str, base: Config, _knobs: Knobs, rng: random.Random) -> float:
    return 100.0 if c == base else 100.0 * rng.uniform(0.99, 1.0)


def _steps(c: Config, base: Config, knobs: Knobs) -> int:
    return sum(abs(list(knobs[k]).index(c[k]) - list(knobs[k]).index(base[k])) for k in knobs)


def default_best(c: Config, _w: str, base: Config, knobs: Knobs, _rng: random.Random) -> float:
    return 100.0 * max(0.4, 1.0 - 0.06 * _steps(c, base, knobs))


def far_needle(c: Config, _w: str, base: Config, knobs: Knobs, _rng: random.Random) -> float:
    far = {k: max(v, key=lambda x: (abs(list(v).index(x) - list(v).index(base[k])), list(v).index(x)))
           for k, v in knobs.items()}  # fmt: skip
    return 125.0 if dict(c) == far else 100.0


def _share(knobs: Knobs, c: Config, knob: str) -> float:
    """Where a knob's value sits among its values: 0 at the first, 1 at the last."""
    values = knobs[knob]
    return values.index(c[knob]) / (len(values) - 1)


@dataclass(frozen=True)
class TwoWorkloads:
    """Readahead helps reads (+40 % at its largest), the stripe cache writes (+50 %); nfsd_threads moves
    writes up by ``trade`` and reads down by two thirds of it (0: inert); mtu is inert."""

    trade: float

    def __call__(self, c: Config, w: str, _base: Config, knobs: Knobs, _rng: random.Random) -> float:
        threads = _share(knobs, c, "nfsd_threads")
        if w == READ:
            return 100.0 * (1 + 0.40 * _share(knobs, c, "read_ahead_kb")) * (1 - 2 / 3 * self.trade * threads)
        return 80.0 * (1 + 0.50 * _share(knobs, c, "stripe_cache_size")) * (1 + self.trade * threads)


def default_sources(grid: Path | None = None) -> list[Source]:
    if grid is not None:
        return [RecordedSource(grid.stem, grid), RecordedSource(grid.stem + "+broken", grid, broken=True)]
    knobs: Knobs = {k: list(v) for k, v in KNOBS.items()}
    small: Knobs = {"rsize": [32768, 131072, 1048576], "nfsd_threads": [8, 32, 128], "read_ahead_kb": [128, 1024, 8192],
                    "mtu": [1500, 9000]}  # the lab grid's shape  # fmt: skip
    two: Knobs = {"read_ahead_kb": [128, 1024, 8192], "stripe_cache_size": [256, 1024, 4096, 8192],
                  "nfsd_threads": [8, 16, 32, 64], "mtu": [1500, 9000]}  # fmt: skip
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
        SyntheticSource("gen-inert", small, surface_without_threads),
        # the hosts drift about 4 % over 60 trials, as the lab did under load: earlier steps' runs are stale
        SyntheticSource("gen-drift", small, surface_without_threads, drift=0.005),
        SyntheticSource("gen-conflict", two, TwoWorkloads(0.30), (READ, WRITE)),
        SyntheticSource("gen-split", two, TwoWorkloads(0.0), (READ, WRITE)),
    ]
    return out


# -- one seed -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    """One seed of one grid × strategy."""

    quality: float  # recommended true joint / true best
    reach: float  # the truly best configuration usable in the sweep / true best
    changed: bool
    status: str
    inert: int  # inert knobs changed
    inert_tested: int  # inert knobs the candidate changed: the put-back checks judged them
    idle: int  # changed knobs whose own true gain in the recommendation is under NO_EFFECT
    covered: bool | None  # the confirmation's interval holds the true gain (None: no confirmation)
    confirmed: bool  # the confirmation held: the change is recommended
    curse_before: bool | None  # the sweep's interval of its best lies above the true gain (None: no estimate)
    curse_after: bool | None  # the confirmation's interval lies above the true gain
    best_beats_default: dict[str, bool]  # by rule
    kept_default: dict[str, bool]  # by rule: kept although the best beats it
    worse_change: dict[str, bool]  # by rule: worse than today's on the joint figure or a workload
    trials: int
    time_share: float
    broken: bool
    note: str = ""


def policy_of(plan: Plan) -> RepeatPolicy:
    """The noise rule the steps and the recommendation use (as app.recommend.build.session_plan)."""
    low = max(plan.min_runs, GUIDED_MIN_RUNS) if plan.strategy == "guided" else plan.min_runs
    return RepeatPolicy(plan.max_rel_stddev, low, max(low, plan.max_runs))


def sweep(inst: Instance, strategy: str) -> tuple[list[Run], Plan, float]:
    """The plan's steps run offline against the instance: the runs, the plan and the trial time spent."""
    plan = Plan(knobs={k: tuple(v) for k, v in inst.knobs.items()}, workloads=inst.workloads, strategy=strategy,
                seed=inst.seed, baseline=dict(inst.baseline), min_runs=MIN_RUNS, max_runs=MAX_RUNS)  # fmt: skip
    counts: dict[tuple[Config, str, bool], int] = {}
    spent = [0.0]
    walk, level = random.Random(f"{inst.name}|{inst.seed}|drift"), [0.0]

    def measure(ask: Ask) -> float | None:
        key = (ask.config, ask.workload, ask.step == CONFIRM)
        rep = counts.get(key, 0)
        counts[key] = rep + 1
        value, duration = inst.run(ask.config, ask.workload, rep, ask.step == CONFIRM)
        spent[0] += duration
        if inst.drift:
            level[0] += walk.gauss(0.0, inst.drift)
        return value * math.exp(level[0]) if value is not None else None

    runs = run_offline(plan_steps(plan, plan.workloads, CONFIDENCE), measure)
    return runs, plan, spent[0]


def _above(low: float | None, truth: float | None) -> bool | None:
    return None if low is None or truth is None else low > truth


def score_seed(source: Source, strategy: str, seed: int) -> Outcome:
    inst = source.instance(seed)
    runs, plan, spent = sweep(inst, strategy)
    today = inst.baseline
    policy = policy_of(plan)
    rec = plan_recommendation(runs, today, inst.workloads, policy, CONFIDENCE,
                              knobs=plan.knobs if strategy == "guided" else None)  # fmt: skip
    chosen = Config(rec.config)
    best_v = inst.joint(inst.best) or 1.0
    quality = (inst.joint(chosen) or 0.0) / best_v
    search = Board([r for r in runs if r.step in SEARCH_STEPS], inst.workloads, policy)
    reach = max((inst.joint(c) or 0.0 for c in search.configs() if search.usable(c) and inst.admissible(c)),
                default=0.0) / best_v  # fmt: skip
    changes = changed_knobs(chosen, today)
    inert = sum(1 for k in changes if k in inst.inert)
    tested = sum(1 for k in changed_knobs(Config(rec.candidate), today) if k in inst.inert) if rec.candidate else 0
    idle = sum(1 for k in changes if (g := inst.gain(chosen, chosen.replace(k, today[k]))) is not None and g < NO_EFFECT)
    covered = curse_after = None
    conf = rec.confirmation
    confirmed = rec.status == CONFIRMED
    if conf is not None and conf.gain is not None and conf.gain.low is not None and conf.gain.high is not None:
        ran = _confirmed_config(runs, today)
        true_gain = inst.gain(ran, today) if ran is not None else None
        if true_gain is not None:
            covered = conf.gain.low <= true_gain <= conf.gain.high
            curse_after = _above(conf.gain.low, true_gain)
    curse_before = None
    if rec.candidate is not None and Config(rec.candidate) != today:
        cand = Config(rec.candidate)
        v = search.joint(cand, today)
        if v is not None and math.isfinite(low := v.ratio_interval(CONFIDENCE)[0]):
            curse_before = _above(low, inst.gain(cand, today))
    beats = {r: inst.beats(inst.best, today, r) for r in RULES}
    is_default = chosen == today
    kept = {r: beats[r] and is_default for r in RULES}
    worse = {r: not is_default and (inst.beats(today, chosen, r) or bool(inst.loses_on(chosen, today, r)))
             for r in RULES}  # fmt: skip
    full = sum(inst.run_time[c] for c in all_configs(inst.knobs)) * len(inst.workloads) * plan.min_runs
    broken = inst.broken_rate > 0 or inst.best_one_run
    tags = [t for t, hit in (("kept-default", kept["2sd"]), ("worse-change", worse["2sd"]), ("inert", inert),
                             ("below-95%", quality < 0.95), ("not-covered", covered is False)) if hit]  # fmt: skip
    note = f"[{', '.join(tags)}] {_explain(inst, rec, chosen, runs, policy)}" if tags else ""
    return Outcome(quality, reach, not is_default, rec.status, inert, tested, idle, covered, confirmed,
                   curse_before, curse_after, beats, kept, worse, len(runs), spent / full, broken, note)  # fmt: skip


def _confirmed_config(runs: Sequence[Run], today: Config) -> Config | None:
    """The configuration the confirmation ran against today's (the last one, if it ever changed)."""
    other = [r.config for r in runs if r.step == CONFIRM and r.config != today]
    return other[-1] if other else None


def _fmt(c: Mapping[str, Value], today: Config) -> str:
    return ",".join(f"{k}={c[k]}" for k in changed_knobs(Config(c), today)) or "today's"


def _explain(inst: Instance, rec: PlanRecommendation, chosen: Config, runs: Sequence[Run],
             policy: RepeatPolicy) -> str:  # fmt: skip
    """What the rule saw on a seed that misses a goal."""
    today = inst.baseline

    def g(c: Config) -> str:
        gain = inst.gain(c, today)
        return f"{gain:+.1%}" if gain is not None else "?"

    bits = [f"today {_fmt(today, Config())}; true best {_fmt(inst.best, today)} {g(inst.best)}",
            f"recommended {_fmt(chosen, today)} {g(chosen)} ({rec.status})"]
    if rec.candidate is not None:
        cand = Config(rec.candidate)
        bits.append(f"candidate {_fmt(cand, today)} {g(cand)}")
    if inst.broken_rate:
        bits.append(f"broken {inst.broken_rate:.0%}" + (", best kept 1 ok run" if inst.best_one_run else ""))
    if inst.inert:
        bits.append(f"inert {','.join(sorted(inst.inert))}")
    conf = rec.confirmation
    if conf is not None and conf.gain is not None:
        ran = _confirmed_config(runs, today)
        truth = f" (true {g(ran)})" if ran is not None else ""
        bits.append(f"confirmation {conf.gain.text()}{truth} in {conf.pairs} pairs, sweep said "
                    f"{conf.sweep.text() if conf.sweep else '—'}")  # fmt: skip
    for line in rec.knobs:
        bits.append(f"{line.knob}: {line.gain.text() if line.gain else '—'} {'kept' if line.kept else 'back'}")
    pool = Board(runs, inst.workloads, policy).pool(inst.workloads[0])[0]
    if pool is not None:
        bits.append(f"pooled noise {math.sqrt(pool):.1%}")
    return "; ".join(bits)


# -- many seeds -----------------------------------------------------------------------------


def _rate(hits: Sequence[bool | None]) -> tuple[int, int]:
    got = [h for h in hits if h is not None]
    return sum(got), len(got)


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
    def below(self) -> tuple[int, int]:
        """Seeds recommending under 95 % of the best: (the sweep never measured a configuration within 5 % of it,
        it had and the rule chose otherwise)."""
        low = [o for o in self.outcomes if o.quality < 0.95]
        return sum(1 for o in low if o.reach < 0.95), sum(1 for o in low if o.reach >= 0.95)

    @property
    def changed(self) -> int:
        return sum(o.changed for o in self.outcomes)

    @property
    def broken(self) -> int:
        return sum(o.broken for o in self.outcomes)

    @property
    def inert(self) -> int:
        return sum(o.inert for o in self.outcomes)

    @property
    def inert_tested(self) -> int:
        return sum(o.inert_tested for o in self.outcomes)

    @property
    def idle(self) -> int:
        return sum(o.idle for o in self.outcomes)

    @property
    def covered(self) -> tuple[int, int]:
        """Of the confirmed recommendations, those whose interval holds the true gain."""
        return _rate([o.covered if o.confirmed else None for o in self.outcomes])

    @property
    def covered_all(self) -> tuple[int, int]:
        """Of every confirmation run, those whose interval holds the true gain."""
        return _rate([o.covered for o in self.outcomes])

    @property
    def curse_before(self) -> tuple[int, int]:
        return _rate([o.curse_before for o in self.outcomes])

    @property
    def curse_after(self) -> tuple[int, int]:
        return _rate([o.curse_after for o in self.outcomes])

    def kept_default(self, rule: str) -> tuple[int, int]:
        return sum(o.kept_default[rule] for o in self.outcomes), sum(o.best_beats_default[rule] for o in self.outcomes)

    def worse_change(self, rule: str) -> int:
        return sum(o.worse_change[rule] for o in self.outcomes)

    @property
    def trials_mean(self) -> float:
        return st.fmean(o.trials for o in self.outcomes)

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
    # chunks of about 10 seeds: a grid × strategy costs from 0.01 s to 1 s a seed, and one left to the end
    # would keep a worker busy while the others wait
    parts = max(1, min(seeds, max(4 * jobs // max(1, len(tasks)) + 1, seeds // 10)))
    bounds = [range(seeds * p // parts, seeds * (p + 1) // parts) for p in range(parts)]
    with ProcessPoolExecutor(jobs) as pool:
        futures = [(i, pool.submit(_chunk, src, s, list(b))) for i, src, s in tasks for b in bounds]
        for i, f in futures:
            rows[i].outcomes.extend(f.result())
    return rows


def _pct(k: int, n: int) -> str:
    return f"{k / n:.0%} of {n}" if n else "—"


def table(rows: Sequence[Row]) -> list[str]:
    w = max([16, *(len(r.grid) for r in rows)])
    head = (f"{'grid':{w}} {'strategy':8} {'seeds':>5} {'rec/best worst':>14} {'mean':>6} {'reach':>6} {'changed':>7}"
            f" {'inert':>7} {'idle':>4} {'cover':>11} {'all':>11} {'curse before':>12} {'after':>11}"
            f" {'kept-def 2σ':>11} {'5%':>7} {'worse 2σ':>8} {'5%':>4} {'trials':>6} {'time':>5} {'max':>5}")  # fmt: skip
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.grid:{w}} {r.strategy:8} {r.seeds:>5} {r.quality_worst:>14.1%} {r.quality_mean:>6.1%}"
            f" {r.reach_worst:>6.1%} {r.changed:>7} {f'{r.inert}/{r.inert_tested}':>7} {r.idle:>4} {_pct(*r.covered):>11}"
            f" {_pct(*r.covered_all):>11} {_pct(*r.curse_before):>12} {_pct(*r.curse_after):>11}"
            f" {'/'.join(map(str, r.kept_default('2sd'))):>11} {'/'.join(map(str, r.kept_default('5%'))):>7}"
            f" {r.worse_change('2sd'):>8} {r.worse_change('5%'):>4} {r.trials_mean:>6.0f} {r.time_mean:>5.0%}"
            f" {r.time_max:>5.0%}"
        )
    return lines


def _sum(pairs: Sequence[tuple[int, int]]) -> tuple[int, int]:
    return sum(k for k, _ in pairs), sum(n for _, n in pairs)


def verdicts(rows: Sequence[Row]) -> list[str]:
    def line(goal: str, misses: list[str], total: int, tail: str = "") -> str:
        if not misses:
            return f"{goal}: met on all {total}{tail}"
        shown = ", ".join(misses[:12]) + (f", … {len(misses) - 12} more" if len(misses) > 12 else "")
        return f"{goal}: NOT met on {len(misses)} of {total}: {shown}{tail}"

    n = len(rows)
    k, m = _sum([r.covered for r in rows])
    inert = (sum(r.inert for r in rows), sum(r.inert_tested for r in rows))
    unreached, passed = _sum([r.below for r in rows])
    before, after = _sum([r.curse_before for r in rows]), _sum([r.curse_after for r in rows])
    out = [
        line("(a) inert knobs changed = 0", [f"{r.grid}/{r.strategy} {r.inert}" for r in rows if r.inert], n,
             f" (overall {_pct(*inert)} of the inert knobs the candidates changed; a put-back check's own error"
             f" rate is {(1 - CONFIDENCE) / 2:.1%})"),
        line("(b) confirmed interval holds the true gain ≥ 90 %",
             [f"{r.grid}/{r.strategy} {_pct(*r.covered)}" for r in rows if r.covered[1] and r.covered[0] < 0.9 * r.covered[1]],
             n, f" (overall {_pct(k, m)})"),
        line("(c) recommended ≥ 95 % of the true best at worst",
             [f"{r.grid}/{r.strategy} {r.quality_worst:.1%}" for r in rows if r.quality_worst < 0.95], n,
             f" (seeds under 95 %: {unreached} where the sweep never measured a configuration within 5 % of the best,"
             f" {passed} where it had; of {sum(r.seeds for r in rows)})"),
        f"(d) winner's curse (reported gain above the truth beyond its interval): before, the sweep's own estimate of "
        f"its best {_pct(*before)}; after, the confirmation's {_pct(*after)}",
    ]  # fmt: skip
    for rule in RULES:
        out.append(line(f"(e) today's kept against a better best (beyond noise, {rule}) = 0",
                        [f"{r.grid}/{r.strategy} {'/'.join(map(str, r.kept_default(rule)))}" for r in rows
                         if r.kept_default(rule)[0]], n))  # fmt: skip
    for rule in RULES:
        out.append(line(f"(f) change worse than today's (beyond noise, {rule}) = 0",
                        [f"{r.grid}/{r.strategy} {r.worse_change(rule)}" for r in rows if r.worse_change(rule)], n))
    return out


def notes(rows: Sequence[Row], limit: int = 3) -> list[str]:
    if limit <= 0:
        return []
    out = []
    for r in rows:
        cases = [(i, o) for i, o in enumerate(r.outcomes) if o.note]
        for i, o in cases[:limit]:
            out.append(f"  {r.grid}/{r.strategy} seed {i}: {o.note}")
        if len(cases) > limit:
            out.append(f"  {r.grid}/{r.strategy}: … {len(cases) - limit} more")
    return out


def memoise_quantiles() -> None:
    """t_quantile is pure and recomputed by bisection for every interval: memoised (same results, faster).
    Only when run as a script, so importing this module changes nothing."""
    cached = functools.lru_cache(maxsize=4096)(xstats.t_quantile)
    xstats.t_quantile = cached
    setattr(xnoise, "t_quantile", cached)  # noqa: B010  # noise imported it by name


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--grid", type=Path, help="score only this recorded grid file (clean and with broken runs)")
    ap.add_argument("--grids", default="", help="only these of the default grids, by name (comma-separated)")
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--notes", type=int, default=2, help="seeds that miss a goal explained per row")
    args = ap.parse_args()
    memoise_quantiles()
    sources = default_sources(args.grid)
    if args.grids:
        wanted = args.grids.split(",")
        sources = [s for s in sources if s.name in wanted]
    strategies = [s for s in args.strategies.split(",") if s]
    t0 = time.monotonic()
    rows = score(sources, args.seeds, strategies, args.jobs)
    print(f"{args.seeds} seeds per grid × strategy; the same current configurations for every strategy;"
          f" {MIN_RUNS}-{MAX_RUNS} runs per configuration, {CONFIDENCE:.0%} confidence")
    print("rec/best, reach: true joint figures against the true best (the best losing ≤ 1 % on no workload);"
          " inert: inert knobs changed / changed in the candidates; idle: changed knobs with an own true gain < 1 %")
    print("cover: the confirmed interval holds the true gain (all: of every confirmation run); curse: the reported"
          " gain's interval lies above the true gain (before: the sweep's best; after: the confirmation)")
    print("kept-def k/n: today's kept in k of the n seeds where the true best beats it; worse: changes truly worse"
          " than today's (joint or one workload); 2σ = true log difference > 2 sd of one run each; 5% = by 5 %")
    print("trials: per seed; time: trial time / the full grid's at the plan's minimum runs")
    print()
    print("\n".join(table(rows)))
    print()
    print("\n".join(verdicts(rows)))
    explained = notes(rows, args.notes)
    if explained:
        print()
        print("seeds that miss a goal; what the rule saw:")
        print("\n".join(explained))
    print(f"\n({time.monotonic() - t0:.0f} s)")


if __name__ == "__main__":
    main()
