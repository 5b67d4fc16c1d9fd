"""Statistics across repetitions: confidence intervals, when to stop repeating, comparisons.

The Student-t quantile is computed here (no scipy): the t CDF through the regularised
incomplete beta function (Lentz's continued fraction), inverted by bisection. Good to
about 1e-10, far beyond what a handful of NFS runs can resolve.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(ln_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` (> 0, not necessarily whole) degrees of freedom."""
    if df <= 0:
        raise ValueError("degrees of freedom must be positive")
    if math.isinf(df):
        return 0.5 * math.erfc(-t / math.sqrt(2.0))
    tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The t value with P(T <= t) = p; e.g. t_quantile(0.975, 4) = 2.776."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must lie strictly between 0 and 1")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:  # widen until the quantile is bracketed
        lo, hi = hi, hi * 2.0
        if hi > 1e12:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean with its Student-t confidence interval."""

    n: int
    mean: float
    stddev: float  # sample stddev (ddof=1); 0 for one value
    half_width: float  # inf when n < 2: one run says nothing about noise
    confidence: float

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    @property
    def rel_stddev(self) -> float:
        return self.stddev / abs(self.mean) if self.mean else math.inf

    @property
    def rel_half_width(self) -> float:
        return self.half_width / abs(self.mean) if self.mean else math.inf


def _mean_sd(values: Sequence[float]) -> tuple[int, float, float]:
    n = len(values)
    if n == 0:
        raise ValueError("no values")
    mean = math.fsum(values) / n
    if n < 2:
        return n, mean, 0.0
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    return n, mean, math.sqrt(var)


def estimate(values: Sequence[float], confidence: float = 0.95) -> Estimate:
    n, mean, sd = _mean_sd(values)
    if n < 2:
        return Estimate(n, mean, 0.0, math.inf, confidence)
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * sd / math.sqrt(n)
    return Estimate(n, mean, sd, half, confidence)


@dataclass(frozen=True, slots=True)
class RepeatPolicy:
    """Repeat a configuration until its relative stddev is under the limit (Phoronix: 3.5 %)."""

    max_rel_stddev: float = 0.035
    min_runs: int = 3
    max_runs: int = 10

    def __post_init__(self) -> None:
        if not 1 <= self.min_runs <= self.max_runs:
            raise ValueError("need 1 <= min_runs <= max_runs")


@dataclass(frozen=True, slots=True)
class RepeatDecision:
    more: bool
    reason: str


def repeat_decision(values: Sequence[float], policy: RepeatPolicy = RepeatPolicy()) -> RepeatDecision:
    """Whether to run a configuration once more, and why (in words for the progress view)."""
    n = len(values)
    if n < policy.min_runs:
        return RepeatDecision(True, f"{n} of at least {policy.min_runs} runs")
    rel = estimate(values).rel_stddev
    if rel <= policy.max_rel_stddev:
        return RepeatDecision(False, f"stddev {rel:.1%} ≤ {policy.max_rel_stddev:.1%} after {n} runs")
    if n >= policy.max_runs:
        return RepeatDecision(False, f"stddev {rel:.1%} still above {policy.max_rel_stddev:.1%} at the cap of {n} runs")
    return RepeatDecision(True, f"stddev {rel:.1%} > {policy.max_rel_stddev:.1%} after {n} runs")


@dataclass(frozen=True, slots=True)
class Comparison:
    """b minus a, with a Welch confidence interval."""

    a: Estimate
    b: Estimate
    diff: float
    low: float
    high: float
    df: float

    @property
    def rel_diff(self) -> float:
        return self.diff / abs(self.a.mean) if self.a.mean else math.inf

    @property
    def rel_low(self) -> float:
        return self.low / abs(self.a.mean) if self.a.mean else -math.inf

    @property
    def rel_high(self) -> float:
        return self.high / abs(self.a.mean) if self.a.mean else math.inf

    @property
    def beyond_noise(self) -> bool:
        """The interval excludes zero: the difference is not explained by run-to-run noise."""
        return self.low > 0.0 or self.high < 0.0


def compare(a: Sequence[float], b: Sequence[float], confidence: float = 0.95) -> Comparison:
    """How much b differs from a (Welch's t, unequal variances), with its interval."""
    ea, eb = estimate(a, confidence), estimate(b, confidence)
    diff = eb.mean - ea.mean
    if ea.n < 2 or eb.n < 2:
        return Comparison(ea, eb, diff, -math.inf, math.inf, 0.0)
    va, vb = ea.stddev**2 / ea.n, eb.stddev**2 / eb.n
    se2 = va + vb
    if se2 == 0.0:  # both perfectly repeatable: the difference is exact
        return Comparison(ea, eb, diff, diff, diff, math.inf)
    df = se2**2 / ((va**2 / (ea.n - 1) if va else 0.0) + (vb**2 / (eb.n - 1) if vb else 0.0))
    half = t_quantile(0.5 + confidence / 2.0, df) * math.sqrt(se2)
    return Comparison(ea, eb, diff, diff - half, diff + half, df)
