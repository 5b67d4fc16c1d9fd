"""Which configuration to recommend when every figure carries noise.

The rule (one for every objective):

1. Noise is judged on the log scale, so it is relative (a 3 % wobble is the same at
   60 MB/s and at 120 MB/s) and a gain reads as a ratio. The session's noise is pooled
   over every configuration measured more than once: with two runs each, one
   configuration's own spread rests on one degree of freedom, the pool on as many as
   there are repeated configurations. A configuration whose own runs disagree more than
   the pool beyond chance (a variance-ratio F test at 1 %: with two or three runs, an
   ordinary configuration's spread exceeds the pool's half of the time) is judged on its
   own, larger spread: a noisy setting earns no confidence.
2. Every candidate with at least ``MIN_RUNS`` kept runs is compared with the baseline
   (what the hosts had) by a one-sided t-test, and the Holm step-down correction keeps
   the chance of any false "better" at ``1 - confidence`` across all of them, however
   many configurations the sweep measured.
3. The recommendation is the highest-ranked candidate among those beyond the noise;
   with none, the baseline stays. A configuration measured once is never chosen on its
   own word (it is named as worth repeating when it ranks above the choice).
4. When the baseline was not measured at all (its runs broke), nothing can be compared:
   the best-ranked candidate with full evidence is chosen, and the evidence says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.vocabulary import percent_text
from experiments.statistics import incomplete_beta, t_cdf, t_quantile

MIN_RUNS = 2  # kept runs a configuration needs before it can be recommended
_FLOOR = 1e-12  # log of a zero figure
WILD = 10.0  # a spread this many times the median one's is not the session's noise
NOISIER = 0.01  # F-test level at which a configuration counts as noisier than the session


@dataclass(frozen=True, slots=True)
class Noise:
    """One configuration's log figures: count, mean, variance (None with one run)."""

    n: int
    mean: float
    var: float | None


@dataclass(frozen=True, slots=True)
class Versus:
    """A candidate against the baseline, on the log scale."""

    key: str
    log_ratio: float  # log(candidate / baseline)
    se: float
    df: float
    p: float  # one-sided: the chance of a ratio this high if the candidate were no better
    beyond_noise: bool = False  # after the Holm correction

    def ratio_interval(self, confidence: float) -> tuple[float, float]:
        """The two-sided interval of candidate / baseline − 1 (uncorrected, for display)."""
        if not math.isfinite(self.se) or self.df <= 0:
            return (-math.inf, math.inf)
        half = t_quantile(0.5 + confidence / 2.0, self.df) * self.se if self.se > 0 else 0.0
        return (math.exp(self.log_ratio - half) - 1.0, math.exp(self.log_ratio + half) - 1.0)


@dataclass(frozen=True, slots=True)
class Choice:
    chosen: str | None  # None: keep the baseline
    versus: Mapping[str, Versus]  # every tested candidate, by key
    pooled_df: int
    rule: str  # in words, for the evidence
    groups: Mapping[str, Noise] = field(default_factory=dict)  # each configuration's log figures
    pool: float | None = None  # the pooled log variance (None: nothing measured twice)

    def within_noise(self, a: str, b: str, confidence: float) -> bool:
        """Whether two configurations differ by less than the noise, judged as the rule judges gains."""
        if self.pool is None or a not in self.groups or b not in self.groups:
            return False
        v = versus(b, self.groups[b], self.groups[a], self.pool, self.pooled_df)
        low, high = v.ratio_interval(confidence)
        return low <= 0.0 <= high


def noise_of(values: Sequence[float]) -> Noise:
    logs = [math.log(max(v, _FLOOR)) for v in values]
    n = len(logs)
    mean = math.fsum(logs) / n
    var = math.fsum((x - mean) ** 2 for x in logs) / (n - 1) if n > 1 else None
    return Noise(n, mean, var)


def pooled(groups: Mapping[str, Noise]) -> tuple[float | None, int]:
    """The session's log variance over the repeated configurations, and its degrees of freedom.

    A configuration whose spread is over ``WILD`` times the median one's stays out of the
    pool (it is judged on its own spread anyway): one wild setting must not drown every
    other comparison in its noise.
    """
    repeated = [g for g in groups.values() if g.var is not None]
    if not repeated:
        return None, 0
    typical = sorted(g.var or 0.0 for g in repeated)[len(repeated) // 2]
    kept = [g for g in repeated if (g.var or 0.0) <= WILD * typical] or repeated
    df = sum(g.n - 1 for g in kept)
    return math.fsum((g.n - 1) * (g.var or 0.0) for g in kept) / df, df


def f_sf(x: float, d1: float, d2: float) -> float:
    """P(F > x) for Fisher's F with (d1, d2) degrees of freedom."""
    if x <= 0.0:
        return 1.0
    return 1.0 - incomplete_beta(d1 / 2.0, d2 / 2.0, d1 * x / (d1 * x + d2))


def noisier(g: Noise, pool: float, pool_df: int) -> bool:
    """Whether the configuration's own spread exceeds the session's beyond chance."""
    if g.var is None or g.var <= pool:
        return False
    return pool <= 0.0 or f_sf(g.var / pool, g.n - 1, pool_df) < NOISIER


def _side(g: Noise, pool: float, pool_df: int) -> tuple[float, float]:
    """(variance of the mean, its degrees of freedom): the pool's, or the group's own if it is noisier."""
    if g.var is not None and noisier(g, pool, pool_df):
        return g.var / g.n, float(g.n - 1)
    return pool / g.n, float(pool_df)


def versus(key: str, cand: Noise, base: Noise, pool: float, pool_df: int) -> Versus:
    (vc, dfc), (vb, dfb) = _side(cand, pool, pool_df), _side(base, pool, pool_df)
    se2 = vc + vb
    diff = cand.mean - base.mean
    if se2 <= 0.0:  # no noise at all: any difference is real
        return Versus(key, diff, 0.0, math.inf, 0.0 if diff > 0 else 1.0)
    df = se2**2 / (vc**2 / dfc + vb**2 / dfb)  # Welch–Satterthwaite
    se = math.sqrt(se2)
    return Versus(key, diff, se, df, 1.0 - t_cdf(diff / se, df))


def holm(tests: Sequence[Versus], alpha: float) -> dict[str, Versus]:
    """Holm's step-down: the smallest p against alpha/m, the next against alpha/(m−1), …"""
    out = {t.key: t for t in tests}
    m = len(tests)
    for i, t in enumerate(sorted(tests, key=lambda t: t.p)):
        if t.p > alpha / (m - i):
            break
        out[t.key] = Versus(t.key, t.log_ratio, t.se, t.df, t.p, beyond_noise=t.log_ratio > 0)
    return out


def choose(
    values: Mapping[str, Sequence[float]],
    order: Sequence[str],
    baseline: str | None,
    confidence: float = 0.95,
    claim: str = "gain over the current settings",
) -> Choice:
    """``values``: each configuration's kept figures, higher better; ``order``: the keys best first (the
    ranking). A lower-is-better figure (p99) goes in as its inverse: on the log scale the test is the same,
    and ``claim`` words what it shows ("p99 reduction against the current settings")."""
    groups = {k: noise_of(v) for k, v in values.items() if v}
    pool, pool_df = pooled(groups)
    eligible = [k for k in order if k in groups and groups[k].n >= MIN_RUNS]
    if baseline is None or baseline not in groups:
        pick = eligible[0] if eligible else next((k for k in order if k in groups), None)
        return Choice(pick, {}, pool_df, "the configuration the hosts had was not measured, so no gain can be "
                                         "tested: the best-ranked configuration with repeated runs is chosen")  # fmt: skip
    if pool is None:
        return Choice(None, {}, 0, "no configuration was measured twice, so the run-to-run noise is unknown "
                                   "and no change can be shown to beat the current settings")  # fmt: skip
    alpha = (1.0 - confidence) / 2.0  # one-sided, as the upper half of the two-sided interval
    tests = [versus(k, groups[k], groups[baseline], pool, pool_df) for k in eligible if k != baseline]
    judged = holm(tests, alpha) if tests else {}
    winners = [k for k in order if k in judged and judged[k].beyond_noise]
    rule = (f"the highest-ranked configuration whose {claim} is beyond the run-to-run "
            f"noise: {len(tests)} candidate(s) with ≥ {MIN_RUNS} runs each tested against them (one-sided t, "
            f"Holm-corrected, {percent_text(confidence)}; noise pooled over {pool_df} degree(s) of freedom)")
    return Choice(winners[0] if winners else None, judged, pool_df, rule, groups, pool)
