"""Which configurations get runs back after broken trials, in what order, and how many in all.

A configuration that lost runs to broken trials and kept fewer ok runs than the plan's
minimum is run again at the end of its workload: the current configuration first
(everything is judged against it), then the best figures (a top configuration one run
short is where a lost run costs the most). Each gets at most ``TOPUP_TRIES`` more
trials, and a workload's top-ups together at most ``TOPUP_SHARE`` of its trials (and at
least ``TOPUP_TRIES``). A configuration blamed for breaking a host is never tried again.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

from experiments.plan import Config
from experiments.strategies import TrialResult

TOPUP_TRIES = 2
TOPUP_SHARE = 0.25


def short_of_runs(config: Config, results: Sequence[TrialResult], min_runs: int) -> bool:
    runs = [r for r in results if r.config == config]
    ok = sum(1 for r in runs if r.value is not None)
    return ok < min_runs and ok < len(runs)


def topup_budget(results: Sequence[TrialResult]) -> int:
    return max(TOPUP_TRIES, math.ceil(TOPUP_SHARE * len(results)))


def topup_order(results: Sequence[TrialResult], start: Config, min_runs: int,
                blamed: Collection[Config] = ()) -> list[Config]:  # fmt: skip
    """The configurations to top up, in the order they get their runs back."""

    def best(config: Config) -> float:
        return max((r.value for r in results if r.config == config and r.value is not None), default=0.0)

    short = [c for c in dict.fromkeys(r.config for r in results)
             if c not in blamed and short_of_runs(c, results, min_runs)]  # fmt: skip
    return sorted(short, key=lambda c: (c != start, -best(c)))
