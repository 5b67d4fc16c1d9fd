"""Which charts a session gets: throughput over time per workload, and throughput against each knob."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from app.recommend.objectives import objective_of
from app.recommend.ranking import config_key
from app.report.session_data import trial_mean, workload_kind
from app.report.svg import CiPoint, Series, ci_chart, colour, line_chart
from app.store.records import TrialRecord
from app.store.sample_blocks import SampleArrays
from app.store.states import TrialState
from app.vocabulary import BYTES, OPS, config_text, knob_value_text, unit_of, unit_word
from experiments.statistics import estimate


def total_throughput(samples: SampleArrays) -> tuple[np.ndarray, np.ndarray]:
    """All clients together: throughput summed over samples ending at the same moment."""
    if not len(samples):
        return np.empty(0), np.empty(0)
    t = np.round(samples.t, 3)
    times, inverse = np.unique(t, return_inverse=True)
    return times, np.bincount(inverse, weights=samples.throughput_bps, minlength=len(times))


def over_time_charts(trials: Sequence[TrialRecord], samples: SampleArrays) -> list[str]:
    """One chart per workload: each trial's total throughput over its time, coloured by configuration."""
    charts = []
    by_kind: dict[str, list[TrialRecord]] = {}
    for t in trials:
        by_kind.setdefault(workload_kind(t.workload), []).append(t)
    for kind, group in by_kind.items():
        colours: dict[str, str] = {}
        series = []
        for t in group:
            x, y = total_throughput(samples.for_trial(t.id))
            c = colours.setdefault(config_key(t.config), colour(len(colours)))
            label = config_text(t.config) + ("" if t.state == TrialState.OK else f" ({t.state.value})")
            series.append(Series(label, x, y, c))
        if any(len(s.x) for s in series):
            charts.append(line_chart(series, title=f"{kind}: throughput over time, every trial",
                                     x_label="seconds since the trial's start", y_label=unit_word(BYTES), y_scale=1e6))
    return charts


def _sort_key(value: Any) -> tuple[int, float, str]:
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def knob_points(trials: Sequence[TrialRecord], objective: str, knob: str) -> list[CiPoint]:
    """Mean and 95 % CI of the ok trials' means at each value of one knob (other knobs pooled)."""
    groups: dict[str, list[float]] = {}
    raw: dict[str, Any] = {}
    for t in trials:
        m = trial_mean(t)
        if t.state != TrialState.OK or m is None or objective_of(t.workload) != objective or knob not in t.config:
            continue
        groups.setdefault(str(t.config[knob]), []).append(m)
        raw.setdefault(str(t.config[knob]), t.config[knob])
    points = []
    for label in sorted(groups, key=lambda k: _sort_key(raw[k])):
        e = estimate(groups[label])
        finite = np.isfinite(e.half_width)
        points.append(CiPoint(knob_value_text(knob, raw[label]), e.mean, e.low if finite else None, e.high if finite else None, e.n))
    return points


def knob_charts(trials: Sequence[TrialRecord], knobs: Sequence[str]) -> list[str]:
    charts = []
    objectives = list(dict.fromkeys(o for o in (objective_of(t.workload) for t in trials) if o))
    for objective in objectives:
        for i, knob in enumerate(knobs):
            points = knob_points(trials, objective, knob)
            if len(points) < 2:
                continue
            unit = unit_of(objective)
            charts.append(ci_chart(points, title=f"{objective}: throughput against {knob} (mean, 95 % CI)",
                                   x_label=knob, y_label=unit_word(unit), y_scale=1.0 if unit == OPS else 1e6,
                                   line_colour=colour(i)))
    return charts
