"""How configurations are ranked: by a sustainable figure, not by the raw mean.

Rule (the same for every objective): each trial's sustainable throughput is its mean,
reduced by half of how far its configuration's deepest dip (the median over its
trials) went below the normal noise band:

    sustainable = mean × (1 − DIP_WEIGHT × max(0, deepest_dip − DIP_TOLERANCE))

``deepest_dip`` is 1 − min/median of a trial. Dips to 80 % of the median are ordinary
noise (the same 0.8 the stability summary counts dips with), so they cost nothing; a
trial that fell to 40 % of its median (dip 0.6) loses 0.5 × 0.4 = 20 %. A setting that
bursts higher but collapses now and then therefore ranks below a steady one with a
slightly lower mean. Configurations are ordered by the mean of their trials'
sustainable figures; ties go to the lower median coefficient of variation. Under the
goal "lowest p99" (experiments.goals) they are ordered by p99 instead, lowest first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from app.recommend.model import ConfigResult

DIP_TOLERANCE = 0.2
DIP_WEIGHT = 0.5


def sustainable(mean: float, deepest_dip: float) -> float:
    excess = max(0.0, deepest_dip - DIP_TOLERANCE)
    return mean * max(0.0, 1.0 - DIP_WEIGHT * excess)


def config_key(config: Mapping[str, object]) -> str:
    """A stable text key for a configuration (for grouping and tie-breaks); values compared as text ("8" == 8)."""
    return ",".join(f"{k}={config[k]}" for k in sorted(config))


def rank(results: Sequence[ConfigResult], *, by_p99: bool = False) -> tuple[ConfigResult, ...]:
    """Best first, with rank numbers filled in. ``by_p99`` (the goal lowest_p99): the lowest p99 of
    the merged histogram first, ties to the higher sustainable figure; unmeasured latency last."""
    if by_p99:
        ordered = sorted(results, key=lambda r: (r.latency is None, r.latency.p99_ms if r.latency else 0.0,
                                                 -r.sustainable.mean, config_key(r.config)))  # fmt: skip
    else:
        ordered = sorted(results, key=lambda r: (-r.sustainable.mean, r.stability.median_cv, config_key(r.config)))
    return numbered(ordered)


def numbered(results: Sequence[ConfigResult]) -> tuple[ConfigResult, ...]:
    """The results in this order, ranked 1, 2, …"""
    return tuple(replace(r, rank=i + 1) for i, r in enumerate(results))
