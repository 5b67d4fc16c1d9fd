"""Sweep strategies: which configurations to try next, given the results so far.

Every strategy is a pure object. ``next_trials(results)`` depends only on the
constructor's arguments (plan, seed) and on ``results``, so a resumed session, fed
its stored results, carries on exactly where it stopped. Internally the searches are
written as plain sequential code over an ``evaluate`` callback; replaying that code
against the results either finishes (done) or stops at the first configurations it
has no result for — those are the next trials.

Values are "higher is better" (throughput, ops/s); a config whose every run broke
counts as evaluated and worst, so a broken setting is never asked for again.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from experiments.plan import Config, Plan, Value


@dataclass(frozen=True, slots=True)
class TrialResult:
    config: Config
    value: float | None  # None: the trial broke and is not averaged in


def aggregate(results: Sequence[TrialResult]) -> dict[Config, float]:
    """Mean value per configuration; -inf for configurations that only broke."""
    runs: dict[Config, list[float]] = {}
    for r in results:
        runs.setdefault(r.config, [])
        if r.value is not None:
            runs[r.config].append(r.value)
    return {c: (math.fsum(v) / len(v) if v else -math.inf) for c, v in runs.items()}


def best_config(results: Sequence[TrialResult]) -> tuple[Config, float] | None:
    means = aggregate(results)
    if not means:
        return None
    config = max(means, key=lambda c: (means[c], _sort_key(c)))
    return config, means[config]


def _sort_key(c: Config) -> tuple[str, ...]:
    return tuple(f"{k}={c[k]!r}" for k in c)


class Strategy(Protocol):
    def next_trials(self, results: Sequence[TrialResult]) -> list[Config]: ...

    def done(self, results: Sequence[TrialResult]) -> bool: ...

    def estimated_configs(self) -> int: ...


class _Need(Exception):
    def __init__(self, configs: list[Config]) -> None:
        self.configs = configs


Evaluate = Callable[[Sequence[Config]], list[float]]


def _replay(search: Callable[[Evaluate], object], results: Sequence[TrialResult], max_configs: int | None) -> list[Config]:
    means = aggregate(results)

    def evaluate(configs: Sequence[Config]) -> list[float]:
        missing = list(dict.fromkeys(c for c in configs if c not in means))
        if missing:
            if max_configs is not None:
                room = max_configs - len(means)
                if room <= 0:
                    raise _Need([])
                missing = missing[:room]
            raise _Need(missing)
        return [means[c] for c in configs]

    try:
        search(evaluate)
    except _Need as need:
        return need.configs
    return []


class _Base:
    def __init__(self, knobs: Mapping[str, Sequence[Value]], start: Config, seed: int = 0,
                 max_configs: int | None = None) -> None:
        self.knobs: dict[str, tuple[Value, ...]] = {k: tuple(v) for k, v in knobs.items()}
        self.start = start
        self.seed = seed
        self.max_configs = max_configs

    def _search(self, evaluate: Evaluate) -> object:
        raise NotImplementedError

    def next_trials(self, results: Sequence[TrialResult]) -> list[Config]:
        return _replay(self._search, results, self.max_configs)

    def done(self, results: Sequence[TrialResult]) -> bool:
        return not self.next_trials(results)

    @property
    def grid_size(self) -> int:
        return math.prod(len(v) for v in self.knobs.values())


class GridStrategy(_Base):
    """Every combination, in an order shuffled by the seed (so drift does not favour one corner)."""

    def order(self) -> list[Config]:
        names = list(self.knobs)
        configs = [Config(dict(zip(names, combo, strict=True))) for combo in itertools.product(*self.knobs.values())]
        random.Random(self.seed).shuffle(configs)
        if self.start in configs:  # the current configuration first: everything is judged against it
            configs.remove(self.start)
            configs.insert(0, self.start)
        return configs

    def next_trials(self, results: Sequence[TrialResult]) -> list[Config]:
        seen = {r.config for r in results}
        todo = [c for c in self.order() if c not in seen]
        if self.max_configs is not None:
            todo = todo[: max(0, self.max_configs - len(seen))]
        return todo

    def estimated_configs(self) -> int:
        n = self.grid_size
        return n if self.max_configs is None else min(n, self.max_configs)


class OneFactorStrategy(_Base):
    """Classic one-factor-at-a-time: vary each knob alone from the start (current) config,
    then try the combination of each knob's best value."""

    def _search(self, evaluate: Evaluate) -> object:
        base_value = evaluate([self.start])[0]
        best: dict[str, Value] = {}
        for knob, values in self.knobs.items():
            variants = [self.start.replace(knob, v) for v in values]
            scores = evaluate(variants)
            i = max(range(len(values)), key=lambda j: scores[j])
            best[knob] = values[i] if scores[i] > base_value else self.start[knob]
        combined = Config({**dict(self.start), **best})
        evaluate([combined])
        return combined

    def estimated_configs(self) -> int:
        n = 2 + sum(len(v) - 1 for v in self.knobs.values())
        return min(n, self.grid_size)


class CoordinateStrategy(_Base):
    """Adaptive: coordinate search with an interaction check.

    1. From the start config, a line search per knob (knob order shuffled by the seed):
       every value when a knob has at most ``full_scan`` of them, else a coarse scan and
       a refinement around the coarse best. Move only for a gain above ``min_gain``, so
       noise does not drag the search around.
    2. Repeat passes (only neighbours are new by now) until a pass moves nothing.
    3. Interaction check: for the two knobs with the largest effects, try the diagonal
       neighbours (both changed at once) — what a coordinate search cannot see. If one
       wins, adopt it and go back to 2.
    """

    def __init__(self, knobs: Mapping[str, Sequence[Value]], start: Config, seed: int = 0,
                 max_configs: int | None = None, min_gain: float = 0.01, full_scan: int = 6,
                 max_rounds: int = 4, max_passes: int | None = None, interactions: bool = True) -> None:
        super().__init__(knobs, start, seed, max_configs)
        self.min_gain = min_gain
        self.full_scan = full_scan
        self.max_rounds = max_rounds
        self.max_passes = max_passes  # coordinate passes per round (None: until a pass moves nothing)
        self.interactions = interactions  # the diagonal check of the two strongest knobs

    def _knob_order(self) -> list[str]:
        names = list(self.knobs)
        random.Random(self.seed).shuffle(names)
        return names

    def _scan_indices(self, n: int, current: int, first_pass: bool) -> list[int]:
        if not first_pass:
            return [j for j in (current - 1, current + 1) if 0 <= j < n]
        if n <= self.full_scan:
            return list(range(n))
        step = math.ceil((n - 1) / 4)
        return sorted({*range(0, n, step), n - 1, current})

    def _better(self, new: float, old: float) -> bool:
        if not math.isfinite(old):  # nothing measured yet (its runs broke): anything measured is better
            return math.isfinite(new) or new > old
        return new > old + abs(old) * self.min_gain

    def _search(self, evaluate: Evaluate) -> object:
        cur = self.start
        cur_v = evaluate([cur])[0]
        effect: dict[str, float] = dict.fromkeys(self.knobs, 0.0)
        first = True
        for _ in range(self.max_rounds):
            passes = 0
            while True:  # coordinate passes
                moved = False
                passes += 1
                for knob in self._knob_order():
                    values = self.knobs[knob]
                    i = values.index(cur[knob])
                    idx = self._scan_indices(len(values), i, first)
                    if not idx:  # a knob with one value has no neighbours to try
                        continue
                    scores = dict(zip(idx, evaluate([cur.replace(knob, values[j]) for j in idx]), strict=True))
                    if len(values) > self.full_scan and first:  # refine around the coarse best
                        b = max(scores, key=lambda j: scores[j])
                        extra = [j for j in (b - 1, b + 1) if 0 <= j < len(values) and j not in scores]
                        scores.update(zip(extra, evaluate([cur.replace(knob, values[j]) for j in extra]), strict=True))
                    finite = [s for s in scores.values() if math.isfinite(s)]
                    if finite and cur_v:
                        effect[knob] = max(effect[knob], (max(finite) - min(finite)) / abs(cur_v))
                    b = max(scores, key=lambda j: scores[j])
                    if b != i and self._better(scores[b], cur_v):
                        cur, cur_v, moved = cur.replace(knob, values[b]), scores[b], True
                first = False
                if not moved or (self.max_passes is not None and passes >= self.max_passes):
                    break
            if len(self.knobs) < 2 or not self.interactions:
                break
            k1, k2 = sorted(self.knobs, key=lambda k: (-effect[k], k))[:2]
            i1, i2 = self.knobs[k1].index(cur[k1]), self.knobs[k2].index(cur[k2])
            diagonal = [
                cur.replace(k1, self.knobs[k1][a]).replace(k2, self.knobs[k2][b])
                for a in (i1 - 1, i1 + 1)
                for b in (i2 - 1, i2 + 1)
                if 0 <= a < len(self.knobs[k1]) and 0 <= b < len(self.knobs[k2])
            ]
            scores_d = evaluate(diagonal)
            if not diagonal:
                break
            j = max(range(len(diagonal)), key=lambda n: scores_d[n])
            if not self._better(scores_d[j], cur_v):
                break
            cur, cur_v = diagonal[j], scores_d[j]
        return cur

    def estimated_configs(self) -> int:
        first = 0
        for values in self.knobs.values():
            n = len(values)
            first += n - 1 if n <= self.full_scan else len(self._scan_indices(n, 0, True)) + 1
        # one more pass of neighbours (mostly known by then) and one interaction check
        n = 1 + first + len(self.knobs) + (4 if len(self.knobs) >= 2 else 0)
        n = min(n, self.grid_size)
        return n if self.max_configs is None else min(n, self.max_configs)


def make_strategy(plan: Plan, max_configs: int | None = None) -> GridStrategy | OneFactorStrategy | CoordinateStrategy:
    start = plan.start_config()
    if plan.strategy == "grid":
        return GridStrategy(plan.knobs, start, plan.seed, max_configs)
    if plan.strategy == "ofat":
        return OneFactorStrategy(plan.knobs, start, plan.seed, max_configs)
    # adaptive (and guided, whose refinement is this search over the knobs its screening kept):
    # a move must beat the noise the repeat policy accepts, or noise drags the search around
    return CoordinateStrategy(plan.knobs, start, plan.seed, max_configs, min_gain=plan.max_rel_stddev)


def run_offline(strategy: Strategy, measure: Callable[[Config], float | None], limit: int = 100_000) -> list[TrialResult]:
    """Drive a strategy to its end against a measuring function (benchmarks, tests)."""
    results: list[TrialResult] = []
    for _ in range(limit):
        todo = strategy.next_trials(results)
        if not todo:
            return results
        results.extend(TrialResult(c, measure(c)) for c in todo)
    raise RuntimeError("strategy did not finish")
