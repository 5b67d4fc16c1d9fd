"""What a plan's trials have shown so far, and what the noise lets it conclude.

A ``Run`` is one finished trial as the plan's steps see it: its step, configuration,
workload, the figure it scored (higher is better: throughput, or the inverse p99 for the
lowest-p99 goal) or None when it broke. A ``Board`` groups the runs of the search steps
(screening, search, refinement, the put-back checks) by configuration and workload and
judges them with one noise model (experiments.noise): per workload on the log scale,
and jointly over the plan's workloads as the geometric mean of their ratios, so two
configurations compare by how much they gain over all the workloads together. The
confirmation's paired runs are kept apart: they judge the choice afresh.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from experiments.noise import Noise, Versus, noise_of, noisier, pooled, versus
from experiments.plan import Config
from experiments.statistics import RepeatPolicy, repeat_decision, t_cdf

CONFIRM = "confirm"  # the step whose runs are paired and judged apart
MAX_BROKEN_IN_A_ROW = 2  # a configuration that breaks twice in a row is not run again
TOPUP_TRIES = 2  # trials a configuration may lose to broken ones and get back


@dataclass(frozen=True, slots=True)
class Run:
    """One finished trial as the steps see it."""

    step: str
    config: Config
    workload: str
    value: float | None  # the figure it scored (higher is better); None: the trial broke
    variant: tuple[tuple[str, Any], ...] = ()  # workload fields a study set: (("jobs", 4),)
    blamed: bool = False  # a host refused it or it broke a host: never run again
    p99_ms: float | None = None  # its clients' merged p99, where measured (a p99 cap leaves configurations out)


@dataclass(frozen=True, slots=True)
class Ask:
    """One trial a step wants: a configuration, a workload, and the step's words for it."""

    step: str
    config: Config
    workload: str
    variant: tuple[tuple[str, Any], ...] = ()
    label: str = ""


def joint_score(means: Mapping[str, float]) -> float:
    """The geometric mean of a configuration's per-workload figures: its ratios to another's multiply."""
    if not means:
        return -math.inf
    return math.exp(math.fsum(math.log(max(v, 1e-12)) for v in means.values()) / len(means))


class Board:
    def __init__(self, runs: Iterable[Run], workloads: Sequence[str], policy: RepeatPolicy = RepeatPolicy(),
                 noise_from: Board | None = None) -> None:  # fmt: skip
        """``noise_from``: another board whose groups join this one's in the pooled run-to-run noise (a step's
        own few runs compared among themselves, with the noise the whole sweep has shown)."""
        self.workloads = tuple(workloads)
        self.policy = policy
        self.runs = [r for r in runs if r.step != CONFIRM]
        self._by: dict[tuple[Config, str], list[Run]] = {}
        for r in self.runs:
            self._by.setdefault((r.config, r.workload), []).append(r)
        self._pools: dict[str, tuple[float | None, int]] = {}
        self._noise_from = noise_from

    # -- what was measured ------------------------------------------------------------
    def values(self, config: Config, workload: str) -> list[float]:
        return [r.value for r in self._by.get((config, workload), []) if r.value is not None]

    def tried(self, config: Config, workload: str) -> int:
        return len(self._by.get((config, workload), []))

    def configs(self) -> list[Config]:
        return list(dict.fromkeys(c for c, _ in self._by))

    def blamed(self, config: Config) -> bool:
        return any(r.blamed for w in self.workloads for r in self._by.get((config, w), []))

    def given_up(self, config: Config, workload: str) -> bool:
        """Broken ``MAX_BROKEN_IN_A_ROW`` times in a row at its end, or blamed: not run again."""
        runs = self._by.get((config, workload), [])
        tail = 0
        for r in reversed(runs):
            if r.value is not None:
                break
            tail += 1
        return tail >= MAX_BROKEN_IN_A_ROW or any(r.blamed for r in runs)

    def needs(self, config: Config, workload: str) -> bool:
        """Whether the noise rule wants one more run of ``config`` on ``workload`` (RepeatPolicy)."""
        if self.given_up(config, workload) or self.blamed(config):
            return False
        values = self.values(config, workload)
        if len(values) < self.policy.min_runs:
            # runs lost to broken trials are given back, up to TOPUP_TRIES beyond the most a configuration runs
            return self.tried(config, workload) < self.policy.max_runs + TOPUP_TRIES
        return repeat_decision(values, self.policy).more

    def unsettled(self, config: Config, workload: str) -> bool:
        """``needs``, or its runs disagree beyond the pooled noise so that a comparison would rest on their own
        spread (one degree of freedom from two runs): one more, up to the policy's most. The put-back checks
        measure each configuration afresh, so they cannot borrow runs from earlier steps to settle it."""
        if self.needs(config, workload):
            return True
        if self.given_up(config, workload) or self.blamed(config):
            return False
        g, (pool, df) = self.noise(config, workload), self.pool(workload)
        return (g is not None and pool is not None and g.n < self.policy.max_runs
                and self.tried(config, workload) < self.policy.max_runs + TOPUP_TRIES and noisier(g, pool, df))  # fmt: skip

    def measured(self, config: Config, runs: int | None = None) -> bool:
        """Every workload has at least ``runs`` ok runs (the policy's minimum), or was given up."""
        want = self.policy.min_runs if runs is None else runs
        return all(len(self.values(config, w)) >= want or self.given_up(config, w) or self.blamed(config)
                   for w in self.workloads)  # fmt: skip

    def usable(self, config: Config, runs: int = 2) -> bool:
        """Every workload has at least ``runs`` ok runs: it can be judged against another."""
        return all(len(self.values(config, w)) >= runs for w in self.workloads)

    def p99(self, config: Config) -> float | None:
        """The median p99 over the configuration's ok runs (every workload); None when none measured it."""
        got = sorted(r.p99_ms for w in self.workloads for r in self._by.get((config, w), [])
                     if r.value is not None and r.p99_ms is not None)  # fmt: skip
        return got[len(got) // 2] if got else None

    def mean(self, config: Config, workload: str) -> float | None:
        values = self.values(config, workload)
        return math.exp(math.fsum(math.log(max(v, 1e-12)) for v in values) / len(values)) if values else None

    def score(self, config: Config) -> float:
        """The joint figure (geometric mean over workloads); -inf when a workload has no ok run."""
        means = {w: self.mean(config, w) for w in self.workloads}
        if any(m is None for m in means.values()):
            return -math.inf
        return joint_score({w: m for w, m in means.items() if m is not None})

    # -- what the noise allows ---------------------------------------------------------
    def noise(self, config: Config, workload: str) -> Noise | None:
        values = self.values(config, workload)
        return noise_of(values) if values else None

    def groups(self, workload: str) -> list[Noise]:
        """Each configuration's runs on ``workload`` as a group, with those of ``noise_from``'s board."""
        own = [g for c in self.configs() if (g := self.noise(c, workload)) is not None]
        return own + (self._noise_from.groups(workload) if self._noise_from is not None else [])

    def pool(self, workload: str) -> tuple[float | None, int]:
        if workload not in self._pools:
            self._pools[workload] = pooled(self.groups(workload))
        return self._pools[workload]

    def versus(self, cand: Config, ref: Config, workload: str, key: str = "") -> Versus | None:
        """``cand`` against ``ref`` on one workload, or None when either has no run or no noise is known."""
        a, b = self.noise(cand, workload), self.noise(ref, workload)
        pool, df = self.pool(workload)
        if a is None or b is None or pool is None:
            return None
        return versus(key or str(cand), a, b, pool, df)

    def joint(self, cand: Config, ref: Config, key: str = "") -> Versus | None:
        """``cand`` against ``ref`` over every workload: the mean of the log ratios, its variance the mean's."""
        parts = [self.versus(cand, ref, w) for w in self.workloads]
        if not parts or any(p is None for p in parts):
            return None
        got = [p for p in parts if p is not None]
        n = len(got)
        log_ratio = math.fsum(p.log_ratio for p in got) / n
        var = math.fsum(p.se**2 for p in got) / n**2
        if var <= 0.0:
            return Versus(key or str(cand), log_ratio, 0.0, math.inf, 0.0 if log_ratio > 0 else 1.0)
        df_den = math.fsum((p.se**2 / n**2) ** 2 / p.df for p in got if math.isfinite(p.df) and p.df > 0)
        df = var**2 / df_den if df_den > 0 else math.inf
        se = math.sqrt(var)
        return Versus(key or str(cand), log_ratio, se, df, 1.0 - t_cdf(log_ratio / se, df))

    def loses(self, cand: Config, ref: Config, confidence: float) -> list[str]:
        """The workloads on which ``cand`` is worse than ``ref`` beyond the noise (two-sided at ``confidence``)."""
        out = []
        for w in self.workloads:
            v = self.versus(cand, ref, w)
            if v is not None and v.ratio_interval(confidence)[1] < 0.0:
                out.append(w)
        return out
