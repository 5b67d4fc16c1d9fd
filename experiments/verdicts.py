"""What a plan's runs let it conclude: which knobs move the figure, the candidate, which of its
changes earned their place, and whether the choice holds when measured again.

Pure functions of a Board (experiments.board) and the confirmation's runs; the plan's
steps (experiments.steps) ask for trials from them, and the recommendation
(app.recommend) states them, so both read the same verdicts.

The rules, in words the evidence repeats:

- Screening: a knob moves the figure when one of its probes (today's configuration with
  that knob alone at another value) differs from today's beyond the run-to-run noise on
  the joint figure or on one workload (two-sided, uncorrected: screening must not miss
  a knob; the put-back checks below are the strict part).
- Candidate: of the configurations measured with at least two ok runs per workload,
  the best on the joint figure (the geometric mean of its workloads' figures) on which
  no workload is worse than today's beyond the noise.
- Put-back checks (backward elimination): the candidate and each configuration with one
  changed knob put back to today's value are measured afresh, side by side in the same
  rounds (the runs that made the candidate the best read high; earlier runs drifted since);
  a knob's own gain is the candidate's joint figure over its put-back configuration's. Every
  changed knob must gain at least WORTH (1 %) beyond the noise (one-sided, Holm over the
  changed knobs at the plan's confidence); while one does not, the weakest is put back for good and the
  rest checked again. What stays is the minimal change.
- Confirmation: the minimal change and today's configuration run alternately, one
  after the other, at least three pairs; the gain is the mean of the pairs' log ratios
  with its t interval (a pair's spread at least the sweep's pooled noise of two runs). Beyond the noise (its interval above no change) and no workload
  worse beyond the noise: confirmed. Otherwise today's settings stay.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from experiments.board import CONFIRM, Board, Run
from experiments.noise import Paired, Versus, holm, log_ratio, paired
from experiments.plan import Config, Value
from experiments.statistics import t_cdf

MIN_PAIRS = 3
MAX_PAIRS = 8  # while the interval straddles no change with a gain in view: one stalled run among five pairs
USABLE_RUNS = 2  # ok runs per workload a configuration needs before it can be chosen
WORTH = 0.01  # the least gain a kept change must show beyond the noise


@dataclass(frozen=True, slots=True)
class Probe:
    """Today's configuration with one knob at another value, against today's."""

    value: Value
    joint: Versus | None
    per_workload: Mapping[str, Versus | None]


@dataclass(frozen=True, slots=True)
class Screened:
    knob: str
    moves: bool
    probes: tuple[Probe, ...]

    @property
    def strongest(self) -> Probe | None:
        got = [p for p in self.probes if p.joint is not None]
        return max(got, key=lambda p: abs(p.joint.log_ratio) if p.joint else 0.0) if got else None


def probe_values(values: Sequence[Value], today: Value) -> tuple[Value, ...]:
    """The values a knob is screened at: its extremes (for a choice knob, every other choice), never today's.

    A number knob whose value today is in the host's own form (a dirty ratio, "20%") is screened at the
    extremes of its numbers."""
    numbers = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    if numbers and len(numbers) >= len(values) - (0 if today in numbers else 1):
        ends = (min(numbers), max(numbers))
        return tuple(v for v in dict.fromkeys(ends) if str(v) != str(today))
    return tuple(v for v in values if str(v) != str(today))


def _moves(v: Versus | None, confidence: float) -> bool:
    if v is None:
        return False
    low, high = v.ratio_interval(confidence)
    return low > 0.0 or high < 0.0


def screen(board: Board, knobs: Mapping[str, Sequence[Value]], today: Config, confidence: float) -> dict[str, Screened]:
    """Each knob's probes against today's configuration, and whether the knob moves the figure."""
    out: dict[str, Screened] = {}
    for knob, values in knobs.items():
        probes = []
        for v in probe_values(values, today[knob]):
            c = today.replace(knob, v)
            probes.append(Probe(v, board.joint(c, today), {w: board.versus(c, today, w) for w in board.workloads}))
        moves = any(_moves(p.joint, confidence) or any(_moves(x, confidence) for x in p.per_workload.values())
                    for p in probes)  # fmt: skip
        out[knob] = Screened(knob, moves, tuple(probes))
    return out


def candidate(board: Board, today: Config, confidence: float, among: Sequence[Config] | None = None,
              p99_cap: float | None = None) -> Config | None:  # fmt: skip
    """The best usable configuration on the joint figure that loses on no workload (None: nothing usable);
    under a p99 cap, only configurations whose median p99 stays within it (today's settings always stay a choice)."""
    configs = among if among is not None else board.configs()
    # measured twice on every workload; a sweep of single runs offers its best measured once (the checks repeat it)
    pool = [c for c in configs if board.usable(c, USABLE_RUNS)] or [c for c in configs if board.usable(c, 1)]
    fit = [c for c in pool if c == today or not board.loses(c, today, confidence)]
    if p99_cap is not None:
        fit = [c for c in fit if c == today or (p := board.p99(c)) is None or p <= p99_cap]
    if not fit:
        return None
    return max(fit, key=lambda c: (board.score(c), c == today))


def changed_knobs(config: Config, today: Config) -> list[str]:
    return [k for k in config if str(config[k]) != str(today.get(k))]


def put_back(config: Config, knob: str, today: Config) -> Config:
    return config.replace(knob, today[knob])


@dataclass(frozen=True, slots=True)
class KnobCheck:
    """One changed knob's own gain: the configuration with it against the same with it put back."""

    knob: str
    today: Value
    value: Value
    joint: Versus | None  # None: not measured (yet)
    per_workload: Mapping[str, Versus | None]
    earned: bool = False


@dataclass(frozen=True, slots=True)
class Elimination:
    """The put-back checks, round by round, and the minimal change they leave."""

    candidate: Config
    final: Config
    checks: Mapping[str, KnobCheck]  # each changed knob's last check
    wanted: tuple[Config, ...] = ()  # configurations the next round needs measured (empty: done)
    rounds: int = 0

    @property
    def done(self) -> bool:
        return not self.wanted


def _check(board: Board, config: Config, knob: str, today: Config) -> KnobCheck:
    back = put_back(config, knob, today)
    return KnobCheck(knob, today[knob], config[knob], board.joint(config, back, key=knob),
                     {w: board.versus(config, back, w) for w in board.workloads})  # fmt: skip


def _settled(board: Board, config: Config, legacy: bool) -> bool:
    """Measured as the noise rule wants: runs repeated while they disagree (a stalled run among two would
    otherwise be judged on a spread of one degree of freedom), or given up (Board.unsettled; ``legacy``: the
    rule sessions recorded before the checks ran on their own were measured by, Board.needs)."""
    wants = board.needs if legacy else board.unsettled
    return not any(wants(config, w) for w in board.workloads)


def eliminate(board: Board, start: Config, today: Config, confidence: float, legacy: bool = False) -> Elimination:
    """Backward elimination from ``start``: put back the weakest knob while one gains less than WORTH beyond
    the noise (``legacy``: the rules sessions recorded before the checks ran on their own were decided by, so a
    stored session keeps its verdict: any gain beyond the noise, runs settled by Board.needs)."""
    worth = 0.0 if legacy else WORTH
    current = start
    checks: dict[str, KnobCheck] = {}
    alpha = (1.0 - confidence) / 2.0
    for rounds in range(1, len(start) + 2):
        changed = changed_knobs(current, today)
        if not changed:
            return Elimination(start, current, checks, (), rounds)
        needed = [back for k in changed if not _settled(board, back := put_back(current, k, today), legacy)]
        if not _settled(board, current, legacy):
            needed.insert(0, current)
        if needed:
            return Elimination(start, current, checks, tuple(dict.fromkeys(needed)), rounds)
        round_checks = {k: _check(board, current, k, today) for k in changed}
        judged = holm([_worth(v, worth) for ch in round_checks.values() if (v := ch.joint) is not None], alpha)
        for k, ch in round_checks.items():
            # a configuration with the knob put back that could not be measured (its runs broke) keeps the knob
            earned = ch.joint is None or judged[k].beyond_noise
            checks[k] = KnobCheck(ch.knob, ch.today, ch.value, ch.joint, ch.per_workload, earned)
        weak = [k for k in changed if not checks[k].earned]
        if not weak:
            return Elimination(start, current, checks, (), rounds)
        current = put_back(current, min(weak, key=lambda k: _gain(checks[k])), today)
    return Elimination(start, current, checks, (), len(start) + 1)


def _worth(v: Versus, worth: float) -> Versus:
    """The check against "the knob gains less than ``worth``": a change an admin makes must pay for itself, and
    an inert knob whose twin happened to read low seldom clears that bar as well as the noise (on the scored
    grids, inert knobs kept went from 3 % to 0 of 510)."""
    if not worth or v.se <= 0.0 or not math.isfinite(v.se):
        return v
    return replace(v, p=1.0 - t_cdf((v.log_ratio - math.log1p(worth)) / v.se, v.df))


def _gain(check: KnobCheck) -> float:
    return check.joint.log_ratio if check.joint is not None else -math.inf


@dataclass(frozen=True, slots=True)
class Confirmation:
    """The chosen configuration and today's, run alternately: the gain measured again."""

    chosen: Config
    today: Config
    joint: Paired
    per_workload: Mapping[str, Paired]
    confidence: float
    broken: int = 0  # confirmation runs that broke

    @property
    def pairs(self) -> int:
        return self.joint.n

    @property
    def losing(self) -> list[str]:
        return [w for w, p in self.per_workload.items() if p.worse_beyond_noise(self.confidence)]

    @property
    def confirmed(self) -> bool:
        return self.pairs >= MIN_PAIRS and self.joint.beyond_noise(self.confidence) and not self.losing

    @property
    def decided(self) -> bool:
        """Enough pairs: the minimum, and more only while the interval straddles no change with a gain in view."""
        if self.pairs < MIN_PAIRS:
            return False
        if self.pairs >= MAX_PAIRS:
            return True
        low, high = self.joint.interval(self.confidence)
        return not (low <= 0.0 <= high and self.joint.log_ratio > 0.0)


def confirm_runs(runs: Sequence[Run]) -> list[Run]:
    return [r for r in runs if r.step == CONFIRM]


def confirmation(runs: Sequence[Run], chosen: Config, today: Config, workloads: Sequence[str],
                 confidence: float) -> Confirmation:  # fmt: skip
    """Pair the confirmation's ok runs per workload in order (the i-th of today's with the i-th of the
    choice's); the joint pair is the mean of the workloads' log ratios of that pair. A pair's spread is
    taken to be at least what the sweep's pooled noise gives two independent runs."""
    mine = [r for r in confirm_runs(runs) if r.config in (chosen, today)]
    sweep = Board(runs, workloads)
    pools = {w: sweep.pool(w) for w in workloads}
    floors = {w: (2.0 * var, df) if var is not None else (0.0, 0) for w, (var, df) in pools.items()}
    joint_floor = math.fsum(f for f, _ in floors.values()) / len(workloads) ** 2 if workloads else 0.0
    joint_df = min((df for _, df in floors.values()), default=0)
    per: dict[str, list[float]] = {}
    for w in workloads:
        base = [r.value for r in mine if r.workload == w and r.config == today and r.value is not None]
        cand = [r.value for r in mine if r.workload == w and r.config == chosen and r.value is not None]
        per[w] = [log_ratio(c, b) for b, c in zip(base, cand, strict=False)]
    n = min((len(v) for v in per.values()), default=0)
    joint = [math.fsum(per[w][i] for w in workloads) / len(workloads) for i in range(n)]
    broken = sum(1 for r in mine if r.value is None)
    return Confirmation(chosen, today, paired(joint, joint_floor, joint_df),
                        {w: paired(v, *floors[w]) for w, v in per.items()}, confidence, broken)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Outcome:
    """Every verdict of a plan's runs, for the recommendation to state."""

    today: Config
    screened: Mapping[str, Screened] = field(default_factory=dict)
    candidate: Config | None = None
    elimination: Elimination | None = None
    confirmation: Confirmation | None = None

    @property
    def chosen(self) -> Config | None:
        """What the put-back checks left (None while they run)."""
        e = self.elimination
        return e.final if e is not None and e.done else None

    @property
    def recommended(self) -> Config:
        """The configuration to hand the admin: the confirmed change, else today's."""
        c = self.confirmation
        return c.chosen if c is not None and c.confirmed else self.today
