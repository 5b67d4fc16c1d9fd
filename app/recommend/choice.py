"""Which configuration to recommend when every figure carries noise.

The rule (one for every objective):

1. Noise is judged on the log scale (experiments.noise), so it is relative (a 3 % wobble is the same at
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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.vocabulary import percent_text
from experiments.noise import Noise, Versus, holm, noise_of, pooled, versus

MIN_RUNS = 2  # kept runs a configuration needs before it can be recommended


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
    pool, pool_df = pooled(list(groups.values()))
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
