"""The read model of a stored session: what every face shows of it.

The CLI (``sessions list|show``, ``report``), the review window and the wizard's Results
page all read a session here. The recommendation is the stored one when the sweep saved
it, else made now by ``recommend_session`` in the session's own context (its measured
ceilings, its async opt-in) and marked so. Both arrive in the recommendation's JSON form,
read through ``ObjectiveView``, so one code path serves old and new sessions and every
face shows the same configuration and figure for each objective.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.recommend.context import recommend_session
from app.recommend.objectives import OBJECTIVES, objective_of
from app.recommend.ranking import config_key
from app.snippets import context_for_session, render_all
from app.snippets.model import Snippet
from app.store.records import HostFactsRecord, JournalEntry, SessionRecord, TrialRecord
from app.store.states import TrialState
from app.store.store import Store
from app.vocabulary import BYTES, OPS, TIME_LIMITED, change_text, config_text, figure_text, gain_text, goal_text, latency_text, time_limited_text, unit_of, workload_id
from app.vocabulary.fairness import fairness_note
from app.vocabulary.figures import MISSING
from experiments.fairness import Fairness
from experiments.goals import Goal, GoalKind
from experiments.latency import Latency


def _mapping(value: Any, default: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    """``value`` when it is a mapping (stored JSON may hold anything), else ``default`` or {}."""
    return value if isinstance(value, Mapping) else (default if default is not None else {})


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def trial_figures(trial: TrialRecord) -> Mapping[str, Any]:
    """A summary's figures: flat, or under "throughput" (older summaries)."""
    s = trial.summary if isinstance(trial.summary, Mapping) else {}
    fig = s.get("throughput")
    return fig if isinstance(fig, Mapping) else s


def trial_mean(trial: TrialRecord) -> float | None:
    """The trial's figure (bytes/s, or ops/s: see trial_unit) from its summary; None when none was kept."""
    return _num(trial_figures(trial).get("mean"))


def trial_unit(trial: TrialRecord) -> str:
    """The unit of trial_mean: the trial's objective's (older phased trials stored bytes: their summary says so)."""
    s = trial.summary if isinstance(trial.summary, Mapping) else {}
    return OPS if s.get("unit") == OPS else BYTES


def trial_time_limited(trial: TrialRecord) -> tuple[str, ...]:
    """The phases that ended at their time limit (app.sweep.figures); () for a trial whose phases all ended,
    a streaming one, or an older session's. A stored summary may hold anything: only names are kept."""
    cut = trial_figures(trial).get("time_limited")
    return tuple(str(p)[:64] for p in cut[:64] if isinstance(p, str)) if isinstance(cut, list) else ()


def trial_limit_text(trial: TrialRecord) -> str:
    """'create and delete ended at their share of the 1 min 05 s limit: …'; '' when none did."""
    return time_limited_text(trial_time_limited(trial), _num(trial_figures(trial).get("time_limit_s")))


def trial_figure_text(trial: TrialRecord) -> str:
    """'1,234 ops/s', marked '(time-limited)' when a phase ended at its limit: the rate of what completed."""
    text = figure_text(trial_mean(trial), trial_unit(trial))
    return f"{text} ({TIME_LIMITED})" if trial_time_limited(trial) and trial_mean(trial) is not None else text


LATENCY_HEADERS = ("p50", "p99", "p99.9")  # the latency columns of every ranking and trials table


def trial_latency(trial: TrialRecord) -> Latency | None:
    """The trial's latency (its clients' merged histogram's figures); None for older sessions' trials."""
    s = trial.summary if isinstance(trial.summary, Mapping) else {}
    return Latency.from_json(s.get("latency"))


def trial_latency_json(trial: TrialRecord) -> dict[str, Any] | None:
    """The trial's latency figures for --json (the histogram stays in the summary); None when not kept."""
    lat = trial_latency(trial)
    return lat.figures() if lat is not None else None


def trial_latency_cells(trial: TrialRecord) -> tuple[str, str, str]:
    """p50, p99 and p99.9 as the trials tables show them ('—' each when the trial kept none)."""
    lat = trial_latency(trial)
    return (latency_text(lat.p50_ms), latency_text(lat.p99_ms), latency_text(lat.p999_ms)) if lat is not None \
        else (MISSING, MISSING, MISSING)


def trial_fairness(trial: TrialRecord) -> Fairness | None:
    """The trial's fairness between clients (experiments.fairness); None for one client or older sessions."""
    return Fairness.from_json(_mapping(trial.summary).get("fairness"))


def trial_fairness_json(trial: TrialRecord) -> dict[str, Any] | None:
    """The figures for --json, always, whether beyond the noise or not; None when not kept."""
    return None if (fair := trial_fairness(trial)) is None else fair.to_json()


def trial_fairness_note(trial: TrialRecord) -> str | None:
    """'2.2×, Jain 0.87' when the clients differed beyond the noise (experiments.fairness); None otherwise."""
    return fairness_note(trial_fairness(trial))


def trial_fairness_cell(trial: TrialRecord) -> str:
    """The trials tables' fairness cell: the figures only when beyond the noise, 'even' when measured and not."""
    return trial_fairness_note(trial) or ("even" if trial_fairness(trial) is not None else MISSING)


def trial_ops(trial: TrialRecord) -> float | None:
    s = trial.summary if isinstance(trial.summary, Mapping) else {}
    return _num(s.get("ops_per_s", trial_figures(trial).get("ops_per_s")))


def workload_kind(workload: Any) -> str:
    """A trial's workload by its identifier (an older plan's alias, 'seqread', reads 'seq_read')."""
    if isinstance(workload, Mapping):
        return workload_id(str(workload.get("kind") or workload.get("name") or "?"))
    return workload_id(str(workload))


def plan_summary(plan: Any) -> str:
    """'rsize ×3, nfsd_threads ×2 · seq_read, seq_write · grid' (or '—')."""
    if not isinstance(plan, Mapping):
        return "—"
    knobs = _mapping(plan.get("knobs"))
    parts = [", ".join(f"{k} ×{len(v) if isinstance(v, list) else 1}" for k, v in knobs.items())]
    workloads = plan.get("workloads")
    if isinstance(workloads, list) and workloads:
        parts.append(", ".join(workload_id(str(w)) for w in workloads))
    if plan.get("strategy"):
        parts.append(str(plan["strategy"]))
    return " · ".join(p for p in parts if p) or "—"


def plan_goal(plan: Any) -> Goal:
    """The goal a stored plan chose (experiments.goals); throughput for older sessions."""
    sweep = _mapping(_mapping(plan).get("sweep"))
    return Goal.stored(sweep.get("goal"))


@dataclass(frozen=True, slots=True)
class RankedConfig:
    rank: int
    config: dict[str, Any]
    trial_ids: tuple[int, ...]
    n: int
    mean: float
    half_width: float | None  # None: one run, no interval
    sustainable: float
    sustainable_half_width: float | None
    median_cv: float | None
    deepest_dip: float | None
    p50_ms: float | None = None  # the configuration's latency over its runs; None: not measured
    p99_ms: float | None = None
    p999_ms: float | None = None
    meets_goal: bool = True  # False: the session's goal left it out of the choice

    def latency_cells(self) -> tuple[str, str, str]:
        """p50, p99 and p99.9 as every ranking table shows them ('—' when not measured)."""
        return latency_text(self.p50_ms), latency_text(self.p99_ms), latency_text(self.p999_ms)

    def config_cell(self) -> str:
        """The configuration, marked when the goal left it out of the choice."""
        return config_text(self.config) + ("" if self.meets_goal else " (left out by the goal)")


def _p99_change(inverse_gain: float | None) -> float | None:
    """A gain of 1/p99 as the change of p99 itself: +100 % of 1/p99 is p99 −50 %."""
    return None if inverse_gain is None else 1.0 / (1.0 + inverse_gain) - 1.0


@dataclass(frozen=True, slots=True)
class PlanView:
    """The plan's one configuration (app.recommend.plan_choice), read from its JSON form."""

    config: dict[str, Any]
    changes: dict[str, tuple[Any, Any]]  # knob -> (today, recommended)
    status: str
    evidence: tuple[str, ...]
    knob_lines: tuple[Mapping[str, Any], ...]
    confirmation: Mapping[str, Any] | None
    alternatives: tuple[Mapping[str, Any], ...]
    rule: str

    @classmethod
    def from_json(cls, data: Any) -> PlanView | None:
        if not isinstance(data, Mapping) or not isinstance(data.get("config"), Mapping):
            return None
        changes = {}
        for k, pair in _mapping(data.get("changes")).items():
            if isinstance(pair, list | tuple) and len(pair) == 2:
                changes[str(k)] = (pair[0], pair[1])
        conf = data.get("confirmation")
        return cls(dict(data["config"]), changes, str(data.get("status") or ""),
                   tuple(str(e) for e in data.get("evidence") or ()),
                   tuple(k for k in data.get("knobs") or () if isinstance(k, Mapping)),
                   conf if isinstance(conf, Mapping) else None,
                   tuple(a for a in data.get("alternatives") or () if isinstance(a, Mapping)), str(data.get("rule") or ""))

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    def change_text(self) -> str:
        """'nfsd_threads 8 → 64, read_ahead_kb 128 → 4096'; '' when nothing changes."""
        return ", ".join(change_text(k, a, b) for k, (a, b) in self.changes.items())

    @property
    def confirmed_gain(self) -> tuple[float, float | None, float | None] | None:
        """(gain, low, high) of the confirmation's paired estimate on the joint figure; None without one."""
        gain = _mapping(_mapping(self.confirmation).get("gain"))
        rel = _num(gain.get("rel"))
        return (rel, _num(gain.get("low")), _num(gain.get("high"))) if rel is not None else None

    def to_json(self) -> dict[str, Any]:
        return {"config": self.config, "changes": {k: list(v) for k, v in self.changes.items()}, "status": self.status,
                "evidence": list(self.evidence), "knobs": [dict(k) for k in self.knob_lines],
                "confirmation": dict(self.confirmation) if self.confirmation is not None else None,
                "alternatives": [dict(a) for a in self.alternatives], "rule": self.rule}  # fmt: skip


@dataclass(frozen=True, slots=True)
class ObjectiveView:
    """One objective's recommendation, read from its JSON form."""

    objective: str
    config: dict[str, Any]
    changed: bool
    evidence: tuple[str, ...]
    warnings: tuple[str, ...]
    ranking: tuple[RankedConfig, ...]
    gain_rel: float | None
    gain_beyond_noise: bool | None
    stored: bool  # False: computed now from the trials, not what the sweep saved
    goal: Goal = field(default_factory=Goal)  # what the choice optimised (older recommendations: throughput)
    met_goal: bool = True  # False: no configuration met the goal; nothing is recommended
    plan: PlanView | None = None  # the plan's one configuration; None in sessions recorded before plans chose one
    recorded_unit: str | None = None  # the unit the recommendation states (None: older records: the objective's)

    @classmethod
    def from_json(cls, objective: str, data: Mapping[str, Any], *, stored: bool) -> ObjectiveView:
        ranking = []
        for i, r in enumerate(data.get("ranking") or []):
            if not isinstance(r, Mapping):
                continue
            tp = _mapping(r.get("throughput"))
            su = _mapping(r.get("sustainable"), tp)
            stab = _mapping(r.get("stability"))
            lat = _mapping(r.get("latency"))
            ranking.append(RankedConfig(
                rank=int(r.get("rank") or i + 1), config=dict(r.get("config") or {}),
                trial_ids=tuple(int(t) for t in r.get("trial_ids") or ()), n=int(tp.get("n") or 0),
                mean=_num(tp.get("mean")) or 0.0, half_width=_num(tp.get("half_width")),
                sustainable=_num(su.get("mean")) or 0.0, sustainable_half_width=_num(su.get("half_width")),
                median_cv=_num(stab.get("median_cv")), deepest_dip=_num(stab.get("deepest_dip")),
                p50_ms=_num(lat.get("p50_ms")), p99_ms=_num(lat.get("p99_ms")), p999_ms=_num(lat.get("p999_ms")),
                meets_goal=r.get("meets_goal") is not False,
            ))
        gain = data.get("gain") if isinstance(data.get("gain"), Mapping) else None
        return cls(
            objective=objective, config=dict(data.get("config") or {}), changed=bool(data.get("changed", True)),
            evidence=tuple(str(e) for e in data.get("evidence") or ()),
            warnings=tuple(str(w) for w in data.get("warnings") or ()),
            ranking=tuple(ranking),
            gain_rel=_num(gain.get("rel")) if gain else None,
            gain_beyond_noise=bool(gain.get("beyond_noise")) if gain else None,
            stored=stored, goal=Goal.stored(data.get("goal")), met_goal=data.get("met_goal") is not False,
            plan=PlanView.from_json(data.get("plan")),
            recorded_unit=data["unit"] if data.get("unit") in (BYTES, OPS) else None,
        )

    @property
    def best(self) -> RankedConfig | None:
        return self.ranking[0] if self.ranking else None

    @property
    def recommended(self) -> RankedConfig | None:
        """The ranking's row of the recommended configuration (not always the best: a gain
        within the noise keeps today's)."""
        key = config_key(self.config)
        return next((r for r in self.ranking if config_key(r.config) == key), None)

    @property
    def figure(self) -> float | None:
        """The recommended configuration's mean throughput: the figure every face shows."""
        row = self.recommended or self.best
        return row.mean if row is not None else None

    @property
    def unit(self) -> str:
        """The unit its figures were recorded in: B/s, or ops/s for small files, tree and directory scaling
        (an older session's small-file trials recorded bytes/s: their figures stay in it)."""
        return self.recorded_unit or unit_of(self.objective)

    def figure_text(self, value: float | None = None) -> str:
        """A figure of this objective in its unit; the recommended one when none is given."""
        return figure_text(self.figure if value is None else value, self.unit)

    @property
    def p99_ms(self) -> float | None:
        """The recommended configuration's p99 over its runs (None: not measured)."""
        row = self.recommended or self.best
        return row.p99_ms if row is not None else None

    def verdict(self) -> str:
        """One line: what to do, and the figures it stands on (under a latency goal, its p99 too)."""
        if not self.met_goal:
            return f"Nothing meets the goal ({goal_text(self.goal)}): keep the current settings"
        figure = f" — {self.figures_text()}" if self.figure is not None else ""
        if self.plan is not None and self.plan.status != "not checked":
            if not self.plan.changed:
                return f"Keep today's settings{figure}"
            gain = self.plan_gain_text()
            return f"Change {self.plan.change_text()}{figure}{f', {gain} confirmed' if gain else ''}"
        what = "Change to" if self.changed else "Keep the current settings"
        return f"{what}: {config_text(self.config)}{figure}"

    @property
    def own_evidence(self) -> tuple[str, ...]:
        """The lines of this objective's own (its stability, its latency), without the plan's shared ones."""
        shared = set(self.plan.evidence) if self.plan is not None else set()
        return tuple(line for line in self.evidence if line not in shared)

    def plan_gain_text(self) -> str:
        """This workload's confirmed gain: '+41 % (+35 % … +47 %)'; '' without a confirmation."""
        if self.gain_rel is None or self.plan is None or self.plan.confirmation is None:
            return ""
        per = _mapping(_mapping(self.plan.confirmation.get("per_workload")).get(self.objective))
        if not per:
            return ""
        rel, low, high = _num(per.get("rel")), _num(per.get("low")), _num(per.get("high"))
        if self.goal.kind is GoalKind.LOWEST_P99 and rel is not None:  # scored as 1/p99: say it as p99's change
            return "p99 " + gain_text(_p99_change(rel), _p99_change(high), _p99_change(low))
        return gain_text(rel, low, high)

    def figures_text(self) -> str:
        """The recommended figure, and under a latency goal its p99: '95.2 MB/s, p99 4.12 ms'."""
        p99 = f", p99 {latency_text(self.p99_ms)}" if self.goal.latency and self.p99_ms is not None else ""
        return self.figure_text() + p99

    def to_json(self) -> dict[str, Any]:
        return {"objective": self.objective, "config": self.config, "figure_bps": self.figure, "unit": self.unit,
                "p99_ms": self.p99_ms, "goal": self.goal.to_json(), "met_goal": self.met_goal,
                "changed": self.changed, "gain_rel": self.gain_rel, "gain_beyond_noise": self.gain_beyond_noise,
                "evidence": list(self.evidence), "warnings": list(self.warnings), "stored": self.stored,
                "plan": self.plan.to_json() if self.plan is not None else None,
                "ranking": [{"rank": r.rank, "config": r.config, "trial_ids": list(r.trial_ids), "n": r.n,
                             "mean_bps": r.mean, "half_width_bps": r.half_width, "median_cv": r.median_cv,
                             "p50_ms": r.p50_ms, "p99_ms": r.p99_ms, "p999_ms": r.p999_ms, "meets_goal": r.meets_goal}
                            for r in self.ranking]}  # fmt: skip



@dataclass(frozen=True, slots=True)
class SnippetGroup:
    """The snippets for one recommended configuration, and the objectives it serves."""

    objectives: tuple[str, ...]
    config: dict[str, Any]  # the whole configuration the objectives recommend
    snippets: tuple[Snippet, ...]
    error: str = ""  # why they could not be rendered (a stored value no config file takes)
    sets: dict[str, Any] | None = None  # what the snippets set: the plan's changes only (None: the whole config)

    @property
    def shown(self) -> dict[str, Any]:
        """What a face names beside the snippets: the changes they make, or the whole configuration."""
        return self.sets if self.sets is not None else self.config


@dataclass(frozen=True, slots=True)
class SessionData:
    session: SessionRecord
    trials: tuple[TrialRecord, ...]
    objectives: tuple[ObjectiveView, ...]
    excluded: tuple[Mapping[str, Any], ...]  # {"trial_id", "config", "state", "reason"}
    snippet_groups: tuple[SnippetGroup, ...]
    host_facts: tuple[HostFactsRecord, ...]
    journal: tuple[JournalEntry, ...]
    sample_count: int
    notes: tuple[str, ...] = field(default_factory=tuple)

    def objective(self, name: str) -> ObjectiveView | None:
        return next((o for o in self.objectives if o.objective == name), None)

    @property
    def plan(self) -> PlanView | None:
        """The plan's one configuration (the same on every objective); None for older sessions and studies."""
        return next((o.plan for o in self.objectives if o.plan is not None and o.plan.status != "not checked"), None)

    def snippet_group(self, objective: str) -> SnippetGroup | None:
        """The snippets of the configuration recommended for ``objective``."""
        return next((g for g in self.snippet_groups if objective in g.objectives), None)

    @property
    def knobs(self) -> tuple[str, ...]:
        """Every knob the trials set, in first-seen order."""
        return tuple(dict.fromkeys(k for t in self.trials for k in t.config))

    @property
    def safety_notes(self) -> tuple[str, ...]:
        notes = [w for o in self.objectives for w in o.warnings]
        # a snippet's routine step (remount, exportfs -ra) stands beside the snippet; only its risks come here
        notes += [f"{s.title}: {s.safety}" for g in self.snippet_groups for s in g.snippets if s.safety and s.risky]
        return tuple(dict.fromkeys(notes))


def objective_views(
    store: Store, session_id: int, *, telemetry: bool = True
) -> tuple[tuple[ObjectiveView, ...], tuple[Mapping[str, Any], ...]]:
    """Stored recommendations (latest per objective), else made now in the session's context.

    ``telemetry=False`` (a listing) skips loading telemetry: it words some evidence, it
    changes no ranking, no configuration and no figure.
    """
    stored = store.recommendations(session_id)
    if stored:
        latest = {r.objective: r for r in stored}
        views = tuple(
            ObjectiveView.from_json(o, r.evidence if isinstance(r.evidence, Mapping) else {"config": r.config},
                                    stored=True)
            for o in sorted(latest, key=lambda x: OBJECTIVES.index(x) if x in OBJECTIVES else len(OBJECTIVES))
            for r in [latest[o]]
        )
        ev = latest[next(iter(latest))].evidence
        excluded = tuple(e for e in (ev.get("excluded") or []) if isinstance(e, Mapping)) \
            if isinstance(ev, Mapping) else ()
        return views, excluded
    data = recommend_session(store, session_id, telemetry=telemetry).to_json()
    views = tuple(ObjectiveView.from_json(o["objective"], o, stored=False) for o in data["objectives"])
    return views, tuple(data["excluded"])


def _key_workload(trials: Sequence[TrialRecord], objective: str, config: Mapping[str, Any]) -> dict[str, Any] | None:
    for t in trials:
        if objective_of(t.workload) == objective and isinstance(t.workload, dict) and "kind" in t.workload \
                and all(str(t.config.get(k)) == str(v) for k, v in config.items()):
            return t.workload
    return None


def snippet_groups(store: Store, session_id: int, trials: Sequence[TrialRecord],
                   objectives: Sequence[ObjectiveView]) -> tuple[SnippetGroup, ...]:
    """One group per distinct recommended configuration (objectives sharing one share its snippets)."""
    by_config: dict[str, list[ObjectiveView]] = {}
    for o in objectives:
        if o.plan is not None and o.plan.status != "not checked" and not o.plan.changed:
            continue  # today's settings stay: nothing to paste
        by_config.setdefault(repr(sorted(snippet_config(o).items(), key=lambda kv: kv[0])), []).append(o)
    groups = []
    for views in by_config.values():
        first = views[0]
        config = snippet_config(first)
        ctx = context_for_session(store, session_id, first.objective, _key_workload(trials, first.objective, first.config))
        try:
            snippets = tuple(render_all(config, ctx))
            error = ""
        except ValueError as e:  # a stored value that cannot go into a config file
            snippets, error = (), f"cannot render snippets: {e}"
        sets = config if first.plan is not None and first.plan.status != "not checked" else None
        groups.append(SnippetGroup(tuple(v.objective for v in views), dict(first.config), snippets, error, sets))
    return tuple(groups)


def snippet_config(view: ObjectiveView) -> dict[str, Any]:
    """What the snippets set: only the plan's changes (every other knob stays as the hosts have it);
    older sessions' whole recommended configuration."""
    if view.plan is not None and view.plan.status != "not checked":
        return {k: new for k, (_, new) in view.plan.changes.items()}
    return dict(view.config)


def study_sweep(plan: Any, study: str) -> Mapping[str, Any] | None:
    """The stored sweep record of a study's plan ("ladder": app.report.ladder, "dirs":
    app.report.dirs); None for any other session."""
    sweep = plan.get("sweep") if isinstance(plan, Mapping) else None
    return sweep if isinstance(sweep, Mapping) and sweep.get(study) else None


def ladder_sweep(plan: Any) -> Mapping[str, Any] | None:
    """The stored sweep record of a load ladder's plan (app.report.ladder); None for any other session."""
    return study_sweep(plan, "ladder")


NOT_STORED_NOTE = "No recommendation was stored with this session: it was computed now from the trials' summaries."
NOT_STORED = "computed now, none stored"  # how a listing marks such a recommendation, wherever it is listed


def not_stored(views: Sequence[ObjectiveView]) -> bool:
    """A recommendation computed now from the trials (a cancelled or interrupted session), none stored with it."""
    return any(not v.stored for v in views)


def load_session_data(store: Store, session_id: int) -> SessionData:
    """Everything but the samples (those load separately: they can be a million rows). A load
    ladder recommends no knob: its knee is app.report.ladder's."""
    session = store.get_session(session_id)
    trials = tuple(store.trials(session_id))
    ladder = any(study_sweep(session.plan, k) is not None for k in ("ladder", "dirs"))  # studies recommend none
    views, excluded = ((), ()) if ladder else objective_views(store, session_id)
    notes = () if ladder or all(v.stored for v in views) else (NOT_STORED_NOTE,)
    return SessionData(
        session=session, trials=trials, objectives=views, excluded=excluded,
        snippet_groups=snippet_groups(store, session_id, trials, views),
        host_facts=tuple(store.host_facts(session_id)), journal=tuple(store.journal(session_id)),
        sample_count=store.sample_count(session_id), notes=notes,
    )


def ok_means(trials: Sequence[TrialRecord], objective: str, key: str) -> list[float]:
    """Per-repetition means of the ok trials of one objective and configuration."""
    out = []
    for t in trials:
        if t.state != TrialState.OK or objective_of(t.workload) != objective or config_key(t.config) != key:
            continue
        m = trial_mean(t)
        if m is not None:
            out.append(m)
    return out
