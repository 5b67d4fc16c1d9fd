"""From a session's stored trials to a recommendation per objective, and back into the store."""

from __future__ import annotations

import math
import statistics as st
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from app.recommend import evidence as ev
from app.recommend.ceilings import cache_answered, ceiling_share
from app.recommend.choice import MIN_RUNS, Choice, choose
from app.recommend.model import (
    CeilingShare,
    Ceilings,
    ConfigResult,
    ExcludedTrial,
    Gain,
    Interval,
    Layer,
    ObjectiveRecommendation,
    SessionRecommendation,
    Stability,
    plain,
)
from app.recommend.goal_rule import config_latency, goal_claim, inverse_p99s, left_out, p99_gain
from app.recommend.objectives import OBJECTIVES, objective_of
from app.recommend.plan_choice import NOT_CHECKED, PlanRecommendation, plan_recommendation
from app.recommend.runs import runs_of
from app.recommend.ranking import config_key, numbered, rank, sustainable
from app.recommend.telemetry import TelemetryDigest, combine, digest_arrays, digest_mapping
from app.vocabulary import BYTES, OPS, coherence_text, config_text, figure_text, goal_text, latency_text, unit_of
from app.store.records import TrialRecord
from app.store.states import TrialState
from app.store.store import Store
from experiments.fairness import Fairness, config_fairness
from experiments.goals import Goal, GoalKind
from experiments.latency import Latency
from experiments.plan import Config, Plan
from experiments.statistics import RepeatPolicy, compare, estimate
from experiments.steps import GUIDED_MIN_RUNS

ASYNC_KNOB = "export_sync"


@dataclass(frozen=True, slots=True)
class TrialFigures:
    """What one ok trial contributes: its summary's figures, and its server telemetry."""

    trial_id: int
    order: int
    config: dict[str, Any]
    mean: float
    median: float
    p5: float
    cv: float
    deepest_dip: float
    dips: int
    telemetry: TelemetryDigest
    latency: Latency | None = None  # the clients' merged histogram's figures; None: not measured (older sessions)
    ops_per_s: float | None = None  # operations per second over every client (what a rate-capped load served)
    fairness: Fairness | None = None  # the clients' shares; None: one client, or older sessions
    time_limited: bool = False  # a phase ended at its time limit: the figure is the rate of what completed


def sustained(figs: Sequence[TrialFigures]) -> list[float]:
    """Each trial's mean under its configuration's dip penalty (see ranking).

    The penalty takes the configuration's median deepest dip: one trial's deepest dip is
    the single lowest of a few dozen samples, far noisier than its mean, and would widen
    every interval (two runs with dips of 64 % and 91 % made a 2.5x gain "noise").
    """
    factor = sustainable(1.0, float(st.median(f.deepest_dip for f in figs))) if figs else 1.0
    return [f.mean * factor for f in figs]


def _num(d: Mapping[str, Any], key: str, default: float | None = None) -> float | None:
    v = d.get(key, default)
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else default


def figures_of(trial: TrialRecord, telemetry: TelemetryDigest) -> TrialFigures | None:
    """The summary's figures (flat, or under "throughput"); None when it has no mean."""
    summary = trial.summary if isinstance(trial.summary, Mapping) else {}
    nested = summary.get("throughput")
    fig: Mapping[str, Any] = nested if isinstance(nested, Mapping) else summary
    mean = _num(fig, "mean")
    if mean is None:
        return None
    median = _num(fig, "median", mean) or mean
    return TrialFigures(
        trial_id=trial.id, order=trial.order_index, config=dict(trial.config), mean=mean, median=median,
        p5=_num(fig, "p5", mean) or 0.0, cv=_num(fig, "cv", 0.0) or 0.0,
        deepest_dip=_num(fig, "deepest_dip", 0.0) or 0.0, dips=int(_num(fig, "dips", 0) or 0),
        telemetry=telemetry, latency=Latency.from_json(summary.get("latency")),
        ops_per_s=_num(summary, "ops_per_s", _num(fig, "ops_per_s")), fairness=Fairness.from_json(summary.get("fairness")),
        time_limited=bool(fig.get("time_limited")),
    )


def _time_limited(figures: Sequence[TrialFigures]) -> dict[str, tuple[int, int]]:
    """Per configuration (as text): its runs that ended a phase at its time limit, and its runs."""
    out: dict[str, tuple[int, int]] = {}
    for f in figures:
        cut, n = out.get(what := config_text(f.config), (0, 0))
        out[what] = (cut + f.time_limited, n + 1)
    return out


def _telemetry(store: Store, trial: TrialRecord, server: str | None) -> TelemetryDigest:
    summary = trial.summary if isinstance(trial.summary, Mapping) else {}
    if isinstance(summary.get("telemetry"), Mapping):
        return digest_mapping(summary["telemetry"])
    return digest_arrays(store.load_telemetry(trial.id), server)


def config_result(figs: Sequence[TrialFigures], confidence: float = 0.95) -> ConfigResult:
    return ConfigResult(
        config=dict(figs[0].config),
        trial_ids=tuple(f.trial_id for f in figs),
        throughput=Interval.of(estimate([f.mean for f in figs], confidence)),
        sustainable=Interval.of(estimate(sustained(figs), confidence)),
        stability=Stability(
            median_cv=float(st.median(f.cv for f in figs)),
            p5_floor=min(f.p5 for f in figs),
            deepest_dip=float(st.median(f.deepest_dip for f in figs)),
            dips=float(st.median(f.dips for f in figs)),
        ),
        latency=config_latency([f.latency for f in figs]),
    )


def gain_of(base: Sequence[TrialFigures], best: Sequence[TrialFigures], confidence: float = 0.95) -> Gain:
    c = compare(sustained(base), sustained(best), confidence)
    # an interval needs two runs on each side; a zero baseline has no relative gain (JSON has no inf)
    finite = c.a.n >= 2 and c.b.n >= 2 and math.isfinite(c.rel_low) and math.isfinite(c.rel_high)
    return Gain(
        diff=c.diff, rel=c.rel_diff if math.isfinite(c.rel_diff) else 0.0,
        rel_low=c.rel_low if finite else None, rel_high=c.rel_high if finite else None,
        beyond_noise=c.beyond_noise,
    )


def _matches(config: Mapping[str, Any], baseline: Mapping[str, Any]) -> bool:
    # plans may hold "8" where trials hold 8: compare as text; every knob the trial set must agree
    keys = [k for k in config if k in baseline]
    return bool(keys) and len(keys) == len(config) and all(str(config[k]) == str(baseline[k]) for k in keys)


def _is_async(config: Mapping[str, Any]) -> bool:
    return str(config.get(ASYNC_KNOB, "sync")) == "async"


def _find_baseline(
    groups: Mapping[str, list[TrialFigures]], baseline: Mapping[str, Any] | None
) -> str | None:
    """The configuration the hosts had; None when it was known but not measured.

    Only a session that recorded no baseline at all (older ones) falls back to what ran
    first: a sweep starts from the current configuration.
    """
    if baseline:
        return next((k for k, figs in groups.items() if _matches(figs[0].config, baseline)), None)
    return min(groups, key=lambda k: min(f.order for f in groups[k])) if groups else None


def recommend_objective(
    objective: str,
    figures: Sequence[TrialFigures],
    *,
    ceilings: Ceilings = Ceilings(),
    allow_async: bool = False,
    baseline: Mapping[str, Any] | None = None,
    confidence: float = 0.95,
    goal: Goal = Goal(),
    unit: str | None = None,
) -> ObjectiveRecommendation | None:
    """The recommendation for one objective from its ok trials' figures (the rule: app.recommend.choice;
    the goal's part: app.recommend.goal_rule). ``unit``: the one its trials recorded (default: the objective's)."""
    unit = unit or unit_of(objective)
    groups: dict[str, list[TrialFigures]] = {}
    for f in figures:
        groups.setdefault(config_key(f.config), []).append(f)
    warnings: list[str] = []
    candidates = {k: g for k, g in groups.items() if allow_async or not _is_async(g[0].config)}
    if len(candidates) < len(groups):
        warnings.append("async configurations were measured but left out: the admin did not opt in to async.")
    if not candidates:
        return None
    by_p99 = goal.kind is GoalKind.LOWEST_P99
    results = {k: config_result(g, confidence) for k, g in candidates.items()}
    served = {k: _mean_or_none([f.ops_per_s for f in g]) for k, g in candidates.items()}
    out = left_out(goal, results, served, ceilings.clients)
    results = {k: replace(r, meets_goal=k not in out) for k, r in results.items()}
    fit = {k: g for k, g in candidates.items() if k not in out}
    ranking = numbered([*rank([results[k] for k in fit], by_p99=by_p99),
                        *rank([results[k] for k in out], by_p99=by_p99)])  # fmt: skip
    best = ranking[0]
    by_key = {config_key(r.config): r for r in ranking}
    base_key = _find_baseline(candidates, baseline)
    base = by_key.get(base_key) if base_key else None
    lines = [ev.goal_line(goal)] if goal.latency else []
    if out:
        lines.append(ev.left_out_text(out, {k: by_key[k].config for k in out}))
    if not fit:
        kept = dict(base.config) if base is not None else dict(baseline or {})
        warnings.append(f"No configuration meets the goal ({goal_text(goal)}): nothing is recommended.")
        return ObjectiveRecommendation(
            objective=objective, config=kept, best=best, baseline=base, gain=None,
            ceiling=CeilingShare(None, None, Layer.UNKNOWN), evidence=(ev.nothing_meets(objective, goal, kept), *lines),
            ranking=ranking, changed=False, warnings=tuple(warnings), unit=unit,
            rule="no configuration met the goal", goal=goal, met_goal=False,
        )  # fmt: skip
    base_in = base_key if base_key in fit else None
    values = {k: inverse_p99s([f.latency for f in g]) if by_p99 else sustained(g) for k, g in fit.items()}
    order = [config_key(r.config) for r in ranking if r.meets_goal]
    verdict = choose(values, order, base_in, confidence, claim=goal_claim(goal))
    if base_key is not None and base_in is None:  # measured, but the goal left it out: anything that meets it is better
        verdict = replace(verdict, rule=(f"the current settings miss the goal ({out[base_key]}), so no gain over "
                                         "them needs testing: the best-ranked configuration that meets it, with "
                                         "repeated runs where there are any, is chosen"))  # fmt: skip
    chosen_key = verdict.chosen or base_in or order[0]
    chosen = by_key[chosen_key]
    changed = chosen_key != base_key
    # the gain shown: of the change made, or, when the baseline stays, of the best that did not make it
    contender = chosen if changed else best
    contender_key = config_key(contender.config)
    if not base_key:
        gain = None
    elif by_p99:
        gain = p99_gain([f.latency for f in candidates[base_key]], [f.latency for f in candidates[contender_key]],
                        verdict.versus.get(contender_key), confidence)  # fmt: skip
    else:
        gain = _gain(candidates, base_key, contender_key, verdict, confidence)
    runner_up = _runner_up(ranking, chosen, base_key, verdict, confidence)

    best_sync: ConfigResult | None = None
    async_gain: Gain | None = None
    if _is_async(chosen.config):
        sync = [r for r in ranking if not _is_async(r.config) and r.meets_goal]
        if sync:
            best_sync = sync[0]
            async_gain = gain_of(candidates[config_key(best_sync.config)], candidates[chosen_key], confidence)
        warnings.append(ev.ASYNC_RISK)
    if coherence := coherence_text(chosen.config):
        warnings.append(coherence)

    tel = {k: combine([f.telemetry for f in g]) for k, g in candidates.items()}
    chosen_tel = tel.get(chosen_key)
    base_tel = tel.get(base_key) if base_key else None
    share = ceiling_share(objective, chosen.throughput.mean, ceilings, chosen_tel) if unit == BYTES \
        else CeilingShare(None, None, Layer.UNKNOWN)  # the ceilings are byte rates
    what = "Recommended" if changed else "Kept"
    head = ev.latency_headline(objective, chosen, unit, what=what) if by_p99 else ev.headline(objective, chosen, unit, what=what)
    if base is not None and base_key is not None and base_in is None:
        versus = ev.versus_missed(contender, base, gain, out[base_key], unit, by_p99)
    elif by_p99:
        versus = ev.latency_versus_baseline(contender, base, gain, changed)
    else:
        versus = ev.versus_baseline(contender, base, gain, changed, unit)
    lines = [head, *lines, f"Chosen by the rule: {verdict.rule}.", versus]
    if base is not None and changed:
        for sentence in (
            None if by_p99 else ev.latency_change(chosen, base),
            ev.threads_sentence(chosen, base, gain, chosen_tel, base_tel),
            ev.stability_change(chosen, base, unit),
            ev.stripe_cache_sentence(chosen, base, chosen_tel, base_tel),
            ev.wdelay_sentence(chosen, base),
            ev.block_size_sentence(chosen, base),
        ):
            if sentence:
                lines.append(sentence)
    if best is not chosen and (changed or best.throughput.n < MIN_RUNS):
        lines.append(_why_not_top(best, chosen, verdict, unit, by_p99))
    if runner_up is not None:
        lines.append(f"Runner-up, within the noise of it: {config_text(runner_up.config)} "
                     f"({_shown(runner_up, unit, by_p99)}); either will do.")
    lines.append(ev.stability_text(chosen, unit))
    if (limited := ev.time_limited_line(_time_limited(figures))) is not None:
        lines.append(limited)
    if (latency := ev.latency_line(chosen)) is not None:
        lines.append(latency)
    lines += ev.fairness_lines(config_fairness([f.fairness for f in candidates[chosen_key]]))
    if unit == BYTES:
        lines.append(ev.ceiling_text(share, ceilings, chosen_tel))
    if best_sync is not None:
        lines.append(ev.async_text(chosen, best_sync, async_gain, unit))
    if base is None and baseline:
        warnings.append("The configuration the hosts had was not measured: the gain of this change is unknown.")
    if chosen.throughput.n < 2:
        warnings.append("Only one run of this configuration: its figure has no confidence interval.")
    return ObjectiveRecommendation(
        objective=objective, config=dict(chosen.config), best=best, baseline=base, gain=gain,
        ceiling=share, evidence=tuple(lines), ranking=ranking, changed=changed,
        best_sync=best_sync, async_gain=async_gain, warnings=tuple(warnings),
        unit=unit, rule=verdict.rule, runner_up=runner_up, goal=goal,
    )


def recorded_unit(trial: TrialRecord) -> str:
    """The unit a trial's figure was recorded in: its summary says (bytes/s before phase figures were kept)."""
    summary = trial.summary if isinstance(trial.summary, Mapping) else {}
    return OPS if summary.get("unit") == OPS else BYTES


def _one_unit(recorded: Sequence[str], objective: str) -> str:
    """An objective's figures are shown in the unit they were recorded in: an older session's small-file trials
    measured bytes/s, and 1.5 MB/s must never read as 1,548,873 ops/s. Mixed units: the objective's own."""
    return recorded[0] if len(set(recorded)) == 1 else unit_of(objective)


def _mean_or_none(values: Sequence[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return sum(got) / len(got) if got else None


def _shown(r: ConfigResult, unit: str, by_p99: bool) -> str:
    """The figure a configuration is ranked by, in words."""
    if by_p99:
        return f"p99 {latency_text(r.latency.p99_ms if r.latency else None)}"
    return figure_text(r.sustainable.mean, unit)


def _gain(candidates: Mapping[str, list[TrialFigures]], base_key: str, chosen_key: str, verdict: Choice,
          confidence: float) -> Gain:  # fmt: skip
    """The chosen configuration over the baseline; beyond_noise is the rule's verdict, not a lone test."""
    plain_gain = gain_of(candidates[base_key], candidates[chosen_key], confidence)
    v = verdict.versus.get(chosen_key)
    if v is None:
        return plain_gain
    low, high = v.ratio_interval(confidence)
    finite = math.isfinite(low) and math.isfinite(high)
    return Gain(diff=plain_gain.diff, rel=plain_gain.rel, rel_low=low if finite else None,
                rel_high=high if finite else None, beyond_noise=v.beyond_noise)


def _runner_up(ranking: Sequence[ConfigResult], chosen: ConfigResult, base_key: str | None,
               verdict: Choice, confidence: float) -> ConfigResult | None:  # fmt: skip
    """The next configuration the rule also accepted, when it is within the noise of the choice."""
    chosen_key = config_key(chosen.config)
    for r in ranking:
        key = config_key(r.config)
        if r is chosen or key == base_key:
            continue
        v = verdict.versus.get(key)
        if v is not None and v.beyond_noise:  # tested, so measured at least MIN_RUNS times
            return r if verdict.within_noise(chosen_key, key, confidence) else None
    return None


def _why_not_top(best: ConfigResult, chosen: ConfigResult, verdict: Choice, unit: str, by_p99: bool = False) -> str:
    top = f"{config_text(best.config)} ranks first ({_shown(best, unit, by_p99)})"
    if best.throughput.n < MIN_RUNS:
        return (f"{top} but was kept from only {best.throughput.n} run(s): too few to recommend; "
                "a further sweep should repeat it.")
    v = verdict.versus.get(config_key(best.config))
    if v is not None and not v.beyond_noise:
        what = "its p99 reduction against" if by_p99 else "its gain over"
        return f"{top} but {what} the current settings is within the noise (its runs disagree too much)."
    return f"{top} but is not the choice."


def _plan_baseline(store: Store, session_id: int) -> dict[str, Any] | None:
    """The configuration the sweep started from: the hosts' values (a knob not known today: the
    plan's middle value, where the strategies start too). None for a session with no baseline."""
    plan = store.get_session(session_id).plan
    if not (isinstance(plan, Mapping) and isinstance(plan.get("baseline"), Mapping) and plan["baseline"]):
        return None
    try:
        return dict(plan["baseline"]) | dict(Plan.from_json(plan).start_config())
    except (KeyError, TypeError, ValueError):  # a plan from an older or damaged file: its baseline as written
        return dict(plan["baseline"])


def recommend(
    store: Store,
    session_id: int,
    *,
    ceilings: Ceilings = Ceilings(),
    allow_async: bool = False,
    baseline: Mapping[str, Any] | None = None,
    server_host: str | None = None,
    confidence: float = 0.95,
    telemetry: bool = True,
    goal: Goal = Goal(),
) -> SessionRecommendation:
    """Rank a session's ok trials per objective; broken and suspicious ones are reported, not used.

    ``baseline`` defaults to the plan's baseline (the hosts' values before the sweep),
    else to the configuration that ran first. ``telemetry=False`` skips loading the
    stored telemetry (a quick listing needs only the summaries).
    """
    excluded: list[ExcludedTrial] = []
    by_objective: dict[str, list[TrialFigures]] = {}
    units: dict[str, list[str]] = {}  # the unit each ok trial recorded its figure in
    link = ceilings.network_bps
    for trial in store.trials(session_id):
        objective = objective_of(trial.workload)
        if objective is None:
            continue  # baselines and telemetry inform no objective
        if trial.state != TrialState.OK:
            excluded.append(ExcludedTrial(trial.id, dict(trial.config), trial.state.value,
                                          trial.reason or f"trial is {trial.state.value}"))
            continue
        figs = figures_of(trial, _telemetry(store, trial, server_host) if telemetry else TelemetryDigest())
        if figs is None:
            excluded.append(ExcludedTrial(trial.id, dict(trial.config), trial.state.value, "no summary stored"))
            continue
        if link is not None and cache_answered(figs.mean, link, measured=True):  # Ceilings hold measured figures
            excluded.append(ExcludedTrial(
                trial.id, dict(trial.config), trial.state.value,
                f"{figure_text(figs.mean)} is beyond the network ceiling of {figure_text(link)}: a cache answered",
            ))
            continue
        by_objective.setdefault(objective, []).append(figs)
        units.setdefault(objective, []).append(recorded_unit(trial))
    base = dict(baseline) if baseline else _plan_baseline(store, session_id)
    recs = [
        r for objective in OBJECTIVES if objective in by_objective
        for r in [recommend_objective(objective, by_objective[objective], ceilings=ceilings,
                                      allow_async=allow_async, baseline=base, confidence=confidence,
                                      goal=goal, unit=_one_unit(units[objective], objective))]
        if r is not None
    ]
    plan = session_plan(store, session_id, goal, confidence, by_objective)
    if plan is not None and plan.status != NOT_CHECKED:
        recs = [with_plan(r, plan, by_objective[r.objective], ceilings) for r in recs]
    elif plan is not None:
        recs = [replace(r, plan=plan, warnings=(*r.warnings, plan.evidence[0])) for r in recs]
    notes = (f"{len(excluded)} trial(s) excluded: see 'excluded'.",) if excluded else ()
    return SessionRecommendation(session_id, tuple(recs), tuple(excluded), ceilings, allow_async, notes)


def session_plan(store: Store, session_id: int, goal: Goal, confidence: float,
                 figures: Mapping[str, Sequence[TrialFigures]]) -> PlanRecommendation | None:  # fmt: skip
    """The session's one configuration from its runs (app.recommend.plan_choice); None for a study or an unreadable plan."""
    stored = store.get_session(session_id).plan
    if not isinstance(stored, Mapping) or not isinstance(stored.get("knobs"), Mapping):
        return None
    sweep = stored.get("sweep")
    if isinstance(sweep, Mapping) and (sweep.get("ladder") or sweep.get("dirs")):
        return None
    try:
        plan = Plan.from_json(stored)
    except (KeyError, TypeError, ValueError):
        return None
    trials = store.trials(session_id)
    runs = runs_of(trials, goal)
    workloads = tuple(dict.fromkeys(r.workload for r in runs))
    today = plan.start_config()
    if not runs or any(set(r.config) != set(today) for r in runs):
        return None  # trials of knobs the plan does not name (a hand-made or damaged file): no plan to judge
    low = max(plan.min_runs, GUIDED_MIN_RUNS) if plan.strategy == "guided" else plan.min_runs
    policy = RepeatPolicy(plan.max_rel_stddev, low, max(low, plan.max_runs))
    digests: dict[str, TelemetryDigest] = {}
    for figs in figures.values():
        for f in figs:
            digests.setdefault(config_key(f.config), f.telemetry)
    per_mib = {config_key(f.config): f.mean for figs in figures.values() for f in figs}

    def digest(config: Config) -> TelemetryDigest | None:
        d = digests.get(config_key(config))
        return d if d is not None and d.host is not None else None

    def requests_per_mib(d: TelemetryDigest) -> float | None:
        key = next((k for k, v in digests.items() if v is d), None)
        mean = per_mib.get(key) if key else None
        return d.arrived_per_s / (mean / (1 << 20)) if d.arrived_per_s and mean else None

    return plan_recommendation(runs, today, workloads, policy, confidence,
                               knobs=plan.knobs if plan.strategy == "guided" else None, digest=digest,
                               per_mib=requests_per_mib, p99_cap=goal.p99_max_ms,
                               checked=any(t.step for t in trials))  # older sessions' trials name no step


def with_plan(rec: ObjectiveRecommendation, plan: PlanRecommendation, figures: Sequence[TrialFigures],
              ceilings: Ceilings) -> ObjectiveRecommendation:  # fmt: skip
    """One objective's record carrying the plan's configuration: its ranking stays this workload's own; its
    configuration and shared evidence are the plan's; its gain is this workload's share of the confirmed one;
    its own lines (stability, latency, fairness, the ceilings) describe the plan's configuration on it."""
    key = config_key(plan.config)
    row = next((r for r in rec.ranking if config_key(r.config) == key), None)
    conf = plan.confirmation
    ratio = conf.per_workload.get(rec.objective) if conf is not None else None
    gain = None
    if ratio is not None:
        diff = (row.throughput.mean - rec.baseline.throughput.mean) if row is not None and rec.baseline is not None else 0.0
        gain = Gain(diff, ratio.rel, ratio.low, ratio.high, ratio.beyond_noise and plan.changed)
    own = [line for line in rec.evidence if line.startswith(("Goal:", "Left out of the choice"))]
    share = rec.ceiling
    if row is not None:
        figs = [f for f in figures if config_key(f.config) == key]
        tel = combine([f.telemetry for f in figs])
        own.append(ev.stability_text(row, rec.unit))
        if (limited := ev.time_limited_line(_time_limited(figures))) is not None:
            own.append(limited)
        if (line := ev.latency_line(row)) is not None:
            own.append(line)
        own += ev.fairness_lines(config_fairness([f.fairness for f in figs]))
        if rec.unit == BYTES:
            share = ceiling_share(rec.objective, row.throughput.mean, ceilings, tel)
            own.append(ev.ceiling_text(share, ceilings, tel))
    return replace(rec, config=dict(plan.config), changed=plan.changed, gain=gain, runner_up=None, ceiling=share,
                   evidence=(*plan.evidence, *own), rule=plan.rule, plan=plan)  # fmt: skip


def save(store: Store, rec: SessionRecommendation) -> list[int]:
    """One stored recommendation per objective; the evidence column holds the whole record."""
    ids = []
    for o in rec.objectives:
        payload = o.to_json() | {
            "excluded": [plain(asdict(e)) for e in rec.excluded],
            "ceilings": plain(asdict(rec.ceilings)),
            "allow_async": rec.allow_async,
        }
        ids.append(store.add_recommendation(rec.session_id, o.objective, o.config, payload))
    return ids
