"""A plan as steps one engine runs: which trials come next, given every run so far.

Every kind of plan is a list of steps:

- a guided sweep (the default): ``screen`` (each knob alone at its extremes, to find the
  knobs that move the figure on these hosts), ``refine`` (a coordinate search over only
  those), ``attribute`` (each change of the best configuration put back alone, until
  every change left has earned its place) and ``confirm`` (the minimal change and
  today's configuration run alternately);
- a sweep with a chosen strategy (grid, ofat, adaptive): ``search``, then ``attribute``
  and ``confirm``;
- a load ladder: ``ladder`` (one trial per step of streams per client);
- a directory study: ``dirs`` (one trial per layout).

A step is pure: ``next(runs)`` depends only on the plan and the runs so far, so a resumed
session, fed its stored trials, carries on exactly where it stopped. Each ask is one
trial; a step repeats a configuration by asking for it again (the noise rule,
experiments.board), and the engine runs a step until it asks for nothing. The verdicts
a step acts on are experiments.verdicts', the same the recommendation states.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from experiments.board import CONFIRM, Ask, Board, Run
from experiments.noise import Versus
from experiments.plan import Config, Plan, Value
from experiments.statistics import RepeatPolicy
from experiments.strategies import CoordinateStrategy, Strategy, TrialResult, make_strategy
from experiments.verdicts import (
    MAX_PAIRS,
    Outcome,
    candidate,
    changed_knobs,
    confirmation,
    eliminate,
    probe_values,
    screen,
)

SCREEN, SEARCH, REFINE, ATTRIBUTE, LADDER, DIRS = "screen", "search", "refine", "attribute", "ladder", "dirs"
STEP_NAMES = (SCREEN, SEARCH, REFINE, ATTRIBUTE, CONFIRM, LADDER, DIRS)
SEARCH_STEPS = (SCREEN, SEARCH, REFINE)  # whose runs the candidate is chosen from
GUIDED_MIN_RUNS = 2


class Step(Protocol):
    name: str
    ordered: bool  # its asks run in the order given (the confirmation's pairs); else shuffled against drift

    def next(self, runs: Sequence[Run]) -> list[Ask]: ...


def _asks(step: str, board: Board, configs: Sequence[Config], label: Mapping[Config, str] | None = None,
          strict: bool = False) -> list[Ask]:  # fmt: skip
    """One more run of each configuration, on each workload the noise rule wants one more of (``strict``: also
    while its runs disagree beyond the pooled noise, Board.unsettled)."""
    wants = board.unsettled if strict else board.needs
    return [Ask(step, c, w, label=(label or {}).get(c, "")) for c in configs for w in board.workloads if wants(c, w)]


@dataclass
class SearchStep:
    """A search strategy over the joint figure: a configuration is evaluated once every workload has its runs."""

    strategy: Strategy
    workloads: tuple[str, ...]
    policy: RepeatPolicy
    name: str = SEARCH
    ordered: bool = False

    def next(self, runs: Sequence[Run]) -> list[Ask]:
        board = Board(runs, self.workloads, self.policy)
        results = []
        for c in board.configs():
            if not any(board.needs(c, w) for w in self.workloads):
                score = board.score(c)
                results.append(TrialResult(c, score if score > float("-inf") else None))
        return _asks(self.name, board, self.strategy.next_trials(results))


@dataclass
class ScreenStep:
    """Today's configuration and each knob alone at its extremes, until the noise rule is met."""

    knobs: Mapping[str, tuple[Value, ...]]
    today: Config
    workloads: tuple[str, ...]
    policy: RepeatPolicy
    name: str = SCREEN
    ordered: bool = False

    def probes(self) -> dict[Config, str]:
        out = {self.today: "today's settings"}
        for knob, values in self.knobs.items():
            for v in probe_values(values, self.today[knob]):
                out[self.today.replace(knob, v)] = f"screening {knob}"  # the trial's line gives the value
        return out

    def next(self, runs: Sequence[Run]) -> list[Ask]:
        probes = self.probes()
        return _asks(self.name, Board(runs, self.workloads, self.policy), list(probes), probes)


@dataclass
class RefineStep:
    """A coordinate search over the knobs screening found moving the figure, the others held at today's; then
    every knob probed at its extremes in the best configuration that search measured, and searched from there
    if a probe beats it: a knob can matter only once another has changed (readahead at a large rsize, not at
    8 KiB), or at a value the first search passed over before the other knobs moved."""

    knobs: Mapping[str, tuple[Value, ...]]
    today: Config
    workloads: tuple[str, ...]
    policy: RepeatPolicy
    confidence: float
    seed: int = 0
    min_gain: float = 0.035
    passes: int = 1  # coordinate passes over the moving knobs
    name: str = REFINE
    ordered: bool = False

    def moving(self, runs: Sequence[Run]) -> list[str]:
        screened = screen(Board([r for r in runs if r.step == SCREEN], self.workloads, self.policy), self.knobs,
                          self.today, self.confidence)  # fmt: skip
        return [k for k, s in screened.items() if s.moves]

    def _search(self, runs: Sequence[Run], free: Sequence[str], start: Config) -> list[Ask]:
        knobs = {k: (v if k in free else (start[k],)) for k, v in self.knobs.items()}
        # no diagonal check: the put-back checks and the confirmation judge the combination
        strategy = CoordinateStrategy(knobs, start, self.seed, min_gain=self.min_gain, max_passes=self.passes,
                                      interactions=False)  # fmt: skip
        return SearchStep(strategy, self.workloads, self.policy, name=self.name).next(runs)

    def next(self, runs: Sequence[Run]) -> list[Ask]:
        moving = self.moving(runs)
        if not moving:
            return []
        if asks := self._search(runs, moving, self.today):
            return asks
        board = Board([r for r in runs if r.step in SEARCH_STEPS], self.workloads, self.policy)
        # the best of the first search's configurations (those that change only the moving knobs), not of all:
        # probing again around every better configuration found would go on round after round, for 5 %
        # more trials and no better choice in the scores (benchmarks/score_recommendation.py)
        domain = [c for c in board.configs() if board.usable(c)
                  and all(str(c[k]) == str(self.today[k]) for k in self.knobs if k not in moving)]  # fmt: skip
        best = max(domain, key=board.score, default=self.today)
        if best == self.today:
            return []  # the probes around today's settings were the screening's
        probes = {best.replace(k, v): f"screening {k}={v} in the refined configuration"
                  for k, values in self.knobs.items() for v in probe_values(values, best[k])}  # fmt: skip
        if asks := _asks(self.name, board, list(probes), probes):
            return asks
        # only a probe better than the best counts: the best's runs are what made it the best, so they read
        # high and every other probe would seem to move the figure (down)
        better = [k for k, s in screen(board, self.knobs, best, self.confidence).items()
                  if any(_better(v, self.confidence) for p in s.probes for v in (p.joint, *p.per_workload.values()))]
        return self._search(runs, better, best) if better else []


def _better(v: Versus | None, confidence: float) -> bool:
    return v is not None and v.ratio_interval(confidence)[0] > 0.0


def checking(policy: RepeatPolicy) -> RepeatPolicy:
    """The put-back checks judge gains against the noise: every configuration they compare runs at least twice."""
    low = max(policy.min_runs, GUIDED_MIN_RUNS)
    return RepeatPolicy(policy.max_rel_stddev, low, max(low, policy.max_runs))


def decide(runs: Sequence[Run], today: Config, workloads: Sequence[str], policy: RepeatPolicy, confidence: float,
           knobs: Mapping[str, Sequence[Value]] | None = None, p99_cap: float | None = None) -> Outcome:  # fmt: skip
    """Every verdict the runs allow: screening, the candidate, its put-back checks, its confirmation."""
    w = tuple(workloads)
    screened = {}
    if knobs and any(r.step == SCREEN for r in runs):
        screened = screen(Board([r for r in runs if r.step == SCREEN], w, policy), knobs, today, confidence)
    cand = candidate(Board([r for r in runs if r.step in SEARCH_STEPS], w, policy), today, confidence, p99_cap=p99_cap)
    elim = None
    if cand is not None:
        elim = eliminate(checks_board(runs, w, policy), cand, today, confidence)
        if not elim.done and any(r.step == CONFIRM for r in runs):  # recorded before the checks ran on their own
            elim = eliminate(Board(_legacy_fresh(runs, cand, today), w, checking(policy)), cand, today, confidence,
                             legacy=True)  # fmt: skip
    chosen = elim.final if elim is not None and elim.done else None
    conf = confirmation(runs, chosen, today, w, confidence) if chosen is not None and chosen != today else None
    return Outcome(today, screened, cand, elim, conf)


def checks_board(runs: Sequence[Run], workloads: Sequence[str], policy: RepeatPolicy) -> Board:
    """The runs the put-back checks judge on: their own only, every configuration they compare measured afresh,
    side by side in the same rounds. The candidate's search runs made it the best of many, so they read high (the
    winner's curse: a knob with no effect at all kept its place); a put-back configuration's screening runs were
    taken minutes before, and the hosts drift (on the lab, an inert export_wdelay kept, or a real rsize gain lost,
    in 4 of 7 runs). The noise they are judged by pools every step's repeated runs."""
    own = [r for r in runs if r.step == ATTRIBUTE or r.blamed]  # a configuration a host refused stays refused
    return Board(own, workloads, checking(policy), noise_from=Board([r for r in runs if r.step != ATTRIBUTE], workloads))


def _legacy_fresh(runs: Sequence[Run], cand: Config, today: Config) -> list[Run]:
    """The put-back checks' runs as sessions recorded before they ran on their own saw them: every run but the
    candidate's search runs (a stored session keeps the verdict it was confirmed on)."""
    if cand == today:
        return list(runs)
    return [r for r in runs if not (r.config == cand and r.step in SEARCH_STEPS)]


@dataclass
class AttributeStep:
    """The put-back checks of the candidate's changes (experiments.verdicts.eliminate)."""

    today: Config
    workloads: tuple[str, ...]
    policy: RepeatPolicy
    confidence: float
    p99_cap: float | None = None
    name: str = ATTRIBUTE
    ordered: bool = False

    def next(self, runs: Sequence[Run]) -> list[Ask]:
        outcome = decide(runs, self.today, self.workloads, self.policy, self.confidence, p99_cap=self.p99_cap)
        elim = outcome.elimination
        if elim is None or elim.done:
            return []
        labels = {}
        for c in elim.wanted:  # relative to the round's configuration (elim.final while it runs)
            back = [k for k in changed_knobs(elim.final, self.today) if str(c[k]) == str(self.today[k])]
            labels[c] = f"{', '.join(back)} put back" if back else "the configuration checked"
        return _asks(self.name, checks_board(runs, self.workloads, self.policy), elim.wanted, labels, strict=True)


@dataclass
class ConfirmStep:
    """The minimal change and today's configuration one after the other, pair by pair."""

    today: Config
    workloads: tuple[str, ...]
    policy: RepeatPolicy
    confidence: float
    p99_cap: float | None = None
    name: str = CONFIRM
    ordered: bool = True

    def next(self, runs: Sequence[Run]) -> list[Ask]:
        outcome = decide(runs, self.today, self.workloads, self.policy, self.confidence, p99_cap=self.p99_cap)
        chosen, conf = outcome.chosen, outcome.confirmation
        if chosen is None or conf is None or conf.decided:
            return []
        mine = [r for r in runs if r.step == CONFIRM and r.config in (chosen, self.today)]
        asks: list[Ask] = []
        for w in self.workloads:
            ok = {c: sum(1 for r in mine if r.workload == w and r.config == c and r.value is not None)
                  for c in (self.today, chosen)}  # fmt: skip
            if _broke_twice(mine, w) or ok[self.today] >= MAX_PAIRS + 1:
                return []  # the pair cannot be completed: decided on what there is
            order = [self.today, chosen] if ok[self.today] == ok[chosen] else \
                [chosen] if ok[self.today] > ok[chosen] else [self.today]  # fmt: skip
            for c in order:
                what = "today's settings" if c == self.today else "the choice"
                asks.append(Ask(self.name, c, w, label=f"confirmation pair {ok[c] + 1}: {what}"))
        return asks


def _broke_twice(runs: Sequence[Run], workload: str) -> bool:
    tail = [r for r in runs if r.workload == workload][-2:]
    return len(tail) == 2 and all(r.value is None for r in tail)


@dataclass
class VariantStep:
    """A study: one trial per variant of the workload (a ladder's streams, a directory study's layouts)."""

    name: str
    workload: str
    field: str  # the workload field each variant sets: "jobs", "layout"
    variants: tuple[Any, ...]
    config: Config
    labels: Mapping[Any, str]
    ordered: bool = True

    def next(self, runs: Sequence[Run]) -> list[Ask]:
        for v in self.variants:
            mine = [r for r in runs if dict(r.variant).get(self.field) == v and r.workload == self.workload]
            broken = sum(1 for r in mine if r.value is None)
            if any(r.value is not None for r in mine) or broken >= 2:
                continue  # measured, or broken twice (not tried again, as a sweep's configuration)
            return [Ask(self.name, self.config, self.workload, ((self.field, v),), self.labels.get(v, ""))]
        return []


def ladder_step(plan: Plan, streams: Sequence[int]) -> VariantStep:
    return VariantStep(LADDER, plan.workloads[0], "jobs", tuple(streams), plan.start_config(),
                       {n: f"{n} streams per client" for n in streams})  # fmt: skip


def dirs_step(plan: Plan, layouts: Sequence[str], entries: int) -> VariantStep:
    return VariantStep(DIRS, plan.workloads[0], "layout", tuple(layouts), plan.start_config(),
                       {v: f"{v} layout, {entries:,} entries" for v in layouts})  # fmt: skip


def plan_steps(plan: Plan, workloads: Sequence[str], confidence: float = 0.95, p99_cap: float | None = None) -> list[Step]:
    """The steps of a sweep: guided, or a chosen strategy's search; then the put-back checks and the confirmation."""
    w = tuple(workloads)
    guided = plan.strategy == "guided"
    policy = repeat_policy(plan)
    today = plan.start_config()
    tail: list[Step] = [AttributeStep(today, w, policy, confidence, p99_cap),
                        ConfirmStep(today, w, policy, confidence, p99_cap)]  # fmt: skip
    if guided:
        knobs = dict(plan.knobs)
        return [ScreenStep(knobs, today, w, policy),
                RefineStep(knobs, today, w, policy, confidence, plan.seed, plan.max_rel_stddev), *tail]  # fmt: skip
    return [SearchStep(make_strategy(plan), w, policy), *tail]


def repeat_policy(plan: Plan) -> RepeatPolicy:
    """The noise rule's bounds on a plan's runs per configuration."""
    # the guided verdicts need the run-to-run noise: every configuration at least twice
    low = max(plan.min_runs, GUIDED_MIN_RUNS) if plan.strategy == "guided" else plan.min_runs
    return RepeatPolicy(plan.max_rel_stddev, low, max(low, plan.max_runs))


def run_offline(steps: Sequence[Step], measure: Any, limit: int = 100_000) -> list[Run]:
    """Drive a plan's steps to their end against ``measure(ask) -> figure | None`` (benchmarks, tests)."""
    runs: list[Run] = []
    for step in steps:
        for _ in range(limit):
            asks = step.next(runs)
            if not asks:
                break
            runs.extend(Run(a.step, a.config, a.workload, measure(a), a.variant) for a in asks)
    return runs
