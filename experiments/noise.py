"""Run-to-run noise on the log scale: one model for every judgment nfs-tuner makes.

Noise is judged on the log scale, so it is relative (a 3 % wobble is the same at 60 MB/s
and at 120 MB/s) and a gain reads as a ratio. A session's noise is pooled over every
configuration measured more than once; a configuration whose own runs disagree more
than the pool beyond chance (a variance-ratio F test at 1 %) is judged on its own,
larger spread. Comparisons are Welch t-tests on the log figures; several at once are
Holm-corrected. Paired runs (the confirmation's A B A B …) are judged on their per-pair
log ratios, which cancel the drift two runs of a pair share.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from experiments.statistics import incomplete_beta, t_cdf, t_quantile

FLOOR = 1e-12  # log of a zero figure
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
    """A candidate against a reference, on the log scale."""

    key: str
    log_ratio: float  # log(candidate / reference)
    se: float
    df: float
    p: float  # one-sided: the chance of a ratio this high if the candidate were no better
    beyond_noise: bool = False  # after the Holm correction

    def ratio_interval(self, confidence: float) -> tuple[float, float]:
        """The two-sided interval of candidate / reference − 1 (uncorrected, for display)."""
        if not math.isfinite(self.se) or self.df <= 0:
            return (-math.inf, math.inf)
        half = t_quantile(0.5 + confidence / 2.0, self.df) * self.se if self.se > 0 else 0.0
        return (math.exp(self.log_ratio - half) - 1.0, math.exp(self.log_ratio + half) - 1.0)

    @property
    def ratio(self) -> float:
        return math.exp(self.log_ratio) - 1.0

    def p_lower(self) -> float:
        """One-sided: the chance of a ratio this low if the candidate were no worse."""
        return 1.0 - self.p


def noise_of(values: Sequence[float]) -> Noise:
    logs = [math.log(max(v, FLOOR)) for v in values]
    n = len(logs)
    mean = math.fsum(logs) / n
    var = math.fsum((x - mean) ** 2 for x in logs) / (n - 1) if n > 1 else None
    return Noise(n, mean, var)


def pooled(groups: Sequence[Noise]) -> tuple[float | None, int]:
    """The log variance over the repeated configurations, and its degrees of freedom.

    A configuration whose spread is over ``WILD`` times the median one's stays out of the
    pool (it is judged on its own spread anyway): one wild setting must not drown every
    other comparison in its noise.
    """
    repeated = [g for g in groups if g.var is not None]
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


@dataclass(frozen=True, slots=True)
class Paired:
    """Pairs of runs (reference, candidate) taken one after the other: the gain from their log ratios."""

    n: int  # pairs
    log_ratio: float  # mean of log(candidate / reference) over the pairs
    se: float  # its standard error (inf with one pair)
    df: int

    @property
    def gain(self) -> float:
        return math.exp(self.log_ratio) - 1.0

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        if self.df < 1 or not math.isfinite(self.se):
            return (-math.inf, math.inf)
        half = t_quantile(0.5 + confidence / 2.0, self.df) * self.se
        return (math.exp(self.log_ratio - half) - 1.0, math.exp(self.log_ratio + half) - 1.0)

    def beyond_noise(self, confidence: float = 0.95) -> bool:
        """The interval excludes no change, above it."""
        return self.interval(confidence)[0] > 0.0

    def worse_beyond_noise(self, confidence: float = 0.95) -> bool:
        return self.interval(confidence)[1] < 0.0


def paired(log_ratios: Sequence[float], floor: float = 0.0, floor_df: int = 0) -> Paired:
    """The paired estimate from each pair's log(candidate / reference).

    ``floor``: the least variance one pair's log ratio is taken to have, known from elsewhere with
    ``floor_df`` degrees of freedom (the session's pooled noise): three pairs that happen to agree
    closely would otherwise read as a precise estimate, and a 1 % difference as beyond the noise."""
    n = len(log_ratios)
    if n == 0:
        return Paired(0, 0.0, math.inf, 0)
    mean = math.fsum(log_ratios) / n
    if n < 2:
        return Paired(1, mean, math.inf, 0)
    var = math.fsum((x - mean) ** 2 for x in log_ratios) / (n - 1)
    if var < floor:
        return Paired(n, mean, math.sqrt(floor / n), max(n - 1, floor_df))
    return Paired(n, mean, math.sqrt(var / n), n - 1)


def log_ratio(candidate: float, reference: float) -> float:
    return math.log(max(candidate, FLOOR)) - math.log(max(reference, FLOOR))
