"""The one configuration a plan recommends: only the changes that earned their place, confirmed.

Drawn from the session's runs by the verdicts its steps acted on (experiments.verdicts):
the candidate (the best on the joint figure that loses on no workload), its changes put
back one by one until each one left gains beyond the noise, and the minimal change run
again alternately with today's configuration. The figure the admin sees is the
confirmation's paired estimate, with the sweep's own estimate beside it (the sweep's best
is picked from noisy runs, so it tends to read high). Without a confirmation beyond the
noise today's settings stay, and the evidence says why. Each knob gets one line: its
own gain in the chosen configuration's context, and whether it stays.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from app.recommend.model import plain
from app.recommend.telemetry import TelemetryDigest
from app.vocabulary import change_text, config_text, knob_value_text, percent_text, workload_label
from app.vocabulary.figures import signed_percent_text
from experiments.board import Board, Run
from experiments.noise import Paired, Versus
from experiments.plan import Config
from experiments.statistics import RepeatPolicy
from experiments.steps import SEARCH_STEPS, decide
from experiments.verdicts import MIN_PAIRS, WORTH, Confirmation, KnobCheck, Outcome, Screened, changed_knobs

CONFIRMED, NOT_CONFIRMED, UNCONFIRMED, NOTHING_EARNED, NOT_CHECKED = (
    "confirmed", "not confirmed", "unconfirmed", "nothing earned", "not checked")  # fmt: skip
RULE = ("one configuration for every workload: the best on the geometric mean of the workloads' figures that "
        "is worse on none beyond the noise; each change put back alone, the weakest dropped until every one "
        "left gains beyond the noise (one-sided, Holm-corrected); then run again alternately with today's "
        "settings, at least three pairs, and kept only if that gain is beyond the noise on the whole and no "
        "workload loses")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Ratio:
    """A ratio less one with its 95 % interval (None: too few runs for one)."""

    rel: float
    low: float | None
    high: float | None

    @classmethod
    def of(cls, v: Versus | Paired | None, confidence: float) -> Ratio | None:
        if v is None:
            return None
        if isinstance(v, Paired):
            rel, (low, high) = v.gain, v.interval(confidence)
        else:
            rel, (low, high) = v.ratio, v.ratio_interval(confidence)
        return cls(rel, low if math.isfinite(low) else None, high if math.isfinite(high) else None)

    @property
    def beyond_noise(self) -> bool:
        return self.low is not None and self.low > 0.0

    def text(self) -> str:
        if self.low is None or self.high is None:
            return f"{signed_percent_text(self.rel)} (too few runs for an interval)"
        return f"{signed_percent_text(self.rel)} ({signed_percent_text(self.low)} … {signed_percent_text(self.high)})"


@dataclass(frozen=True, slots=True)
class KnobLine:
    """One knob of the plan: what today's value is, what was tried, its own gain, and whether it changes."""

    knob: str
    today: Any
    tried: Any
    kept: bool
    gain: Ratio | None  # its own gain on the joint figure, in the chosen configuration's context
    per_workload: Mapping[str, Ratio | None] = field(default_factory=dict)
    telemetry: str = ""  # what the server's telemetry says of it, where it says something
    text: str = ""


@dataclass(frozen=True, slots=True)
class ConfirmedGain:
    pairs: int
    gain: Ratio | None  # the paired estimate on the joint figure
    per_workload: Mapping[str, Ratio | None]
    sweep: Ratio | None  # the sweep's own estimate of the same change, before it was measured again
    confirmed: bool
    broken: int = 0


@dataclass(frozen=True, slots=True)
class Alternative:
    """A workload's own best configuration, and what it would cost the others against today's."""

    workload: str
    config: dict[str, Any]
    gain: Ratio | None  # on this workload, over the recommendation
    costs: Mapping[str, Ratio | None]  # each other workload, against today's


@dataclass(frozen=True, slots=True)
class PlanRecommendation:
    config: dict[str, Any]  # the whole configuration to run: today's values and the changes
    changes: dict[str, tuple[Any, Any]]  # knob -> (today, recommended): only these change
    status: str  # CONFIRMED, NOT_CONFIRMED, UNCONFIRMED, NOTHING_EARNED, NOT_CHECKED
    knobs: tuple[KnobLine, ...]
    confirmation: ConfirmedGain | None
    candidate: dict[str, Any] | None  # the sweep's best before the put-back checks
    alternatives: tuple[Alternative, ...]
    evidence: tuple[str, ...]
    rule: str = RULE
    workloads: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    def change_text(self) -> str:
        """'nfsd_threads 8 → 64, read_ahead_kb 128 → 4096', or that today's settings stay."""
        if not self.changes:
            return "keep today's settings"
        return ", ".join(change_text(k, a, b) for k, (a, b) in self.changes.items())

    def to_json(self) -> dict[str, Any]:
        return dict(plain(asdict(self)))


Digests = Callable[[Config], TelemetryDigest | None]


def _telemetry_note(knob: str, with_it: TelemetryDigest | None, without: TelemetryDigest | None,
                    per_mib: Callable[[TelemetryDigest], float | None]) -> str:  # fmt: skip
    """What the server's telemetry shows of one change: round trips, thread waits, disk busy."""
    if with_it is None or without is None:
        return ""
    if knob in ("read_ahead_kb", "rsize", "wsize", "nconnect"):
        a, b = per_mib(without), per_mib(with_it)
        return f"server requests per MiB {a:.1f} → {b:.1f}" if a is not None and b is not None else ""
    if knob == "nfsd_threads" and with_it.waiting_share is not None and without.waiting_share is not None:
        return f"requests waiting for a thread {percent_text(without.waiting_share)} → {percent_text(with_it.waiting_share)}"
    if knob in ("stripe_cache_size", "export_sync", "export_wdelay") and with_it.disk_util is not None \
            and without.disk_util is not None:
        return f"export disk busy {percent_text(without.disk_util)} → {percent_text(with_it.disk_util)}"
    return ""


def _knob_line(check: KnobCheck, kept: bool, confidence: float, telemetry: str) -> KnobLine:
    gain = Ratio.of(check.joint, confidence)
    per = {w: Ratio.of(v, confidence) for w, v in check.per_workload.items()}
    move = change_text(check.knob, check.today, check.value)
    figure = gain.text() if gain is not None else "not measured (the configuration without it broke)"
    if kept:
        verdict = "beyond the noise: changed"
    elif gain is not None and gain.low is not None and gain.low > 0:
        verdict = f"under the {WORTH * 100:.0f} % a change must earn beyond the noise: left at {knob_value_text(check.knob, check.today)}"
    elif gain is not None and gain.rel > 0:
        verdict = f"within the noise: left at {knob_value_text(check.knob, check.today)}"
    else:
        verdict = f"no gain: left at {knob_value_text(check.knob, check.today)}"
    tail = f"; {telemetry}" if telemetry else ""
    return KnobLine(check.knob, check.today, check.value, kept, gain, per, telemetry, f"{move}: {figure}, {verdict}{tail}")


def _screen_line(s: Screened, today: Config, confidence: float) -> str:
    probe = s.strongest
    if probe is None:
        return f"{s.knob}: not screened (its runs broke)"
    figure = Ratio.of(probe.joint, confidence)
    what = f"{s.knob} {knob_value_text(s.knob, today[s.knob])} → {knob_value_text(s.knob, probe.value)}"
    left = knob_value_text(s.knob, today[s.knob])
    tail = f"moved the figure: tuned, and the search kept {left}" if s.moves else f"within the noise: left at {left}"
    return f"Screening {what}: {figure.text() if figure else '—'}, {tail}"


def _alternatives(board: Board, chosen: Config, today: Config, confidence: float) -> tuple[Alternative, ...]:
    out = []
    for w in board.workloads:
        usable = [c for c in board.configs() if len(board.values(c, w)) >= 2]
        if not usable or len(board.workloads) < 2:
            continue
        best = max(usable, key=lambda c: board.mean(c, w) or 0.0)
        if best == chosen or not board.usable(best):
            continue
        gain = Ratio.of(board.versus(best, chosen, w), confidence)
        if gain is None or not gain.beyond_noise:
            continue  # the choice serves this workload as well as its own best does
        costs = {o: Ratio.of(board.versus(best, today, o), confidence) for o in board.workloads if o != w}
        out.append(Alternative(w, dict(best), gain, costs))
    return tuple(out)


def _alternative_line(a: Alternative, today: Config) -> str:
    costs = "; ".join(f"{workload_label(o)} {r.text() if r else '—'} against today's" for o, r in a.costs.items())
    changes = ", ".join(change_text(k, today[k], v) for k, v in a.config.items() if k in today and str(v) != str(today[k]))
    return (f"For {workload_label(a.workload)} alone, {changes or config_text(a.config)} would gain "
            f"{a.gain.text() if a.gain else '—'} over the recommendation, at a cost to the others: {costs}.")


def _confirmed(conf: Confirmation, sweep: Versus | None, confidence: float) -> ConfirmedGain:
    return ConfirmedGain(conf.pairs, Ratio.of(conf.joint, confidence),
                         {w: Ratio.of(p, confidence) for w, p in conf.per_workload.items()},
                         Ratio.of(sweep, confidence), conf.confirmed, conf.broken)  # fmt: skip


def _status(outcome: Outcome, checked: bool) -> str:
    if outcome.candidate is None or outcome.candidate == outcome.today:
        return NOTHING_EARNED
    if not checked:
        return NOT_CHECKED
    if outcome.chosen is None or outcome.chosen == outcome.today:
        return NOTHING_EARNED if outcome.chosen is not None else UNCONFIRMED
    c = outcome.confirmation
    if c is None or (c.pairs < MIN_PAIRS and not c.confirmed):
        return UNCONFIRMED
    return CONFIRMED if c.confirmed else NOT_CONFIRMED


def plan_recommendation(runs: Sequence[Run], today: Config, workloads: Sequence[str], policy: RepeatPolicy,
                        confidence: float = 0.95, *, knobs: Mapping[str, Sequence[Any]] | None = None,
                        digest: Digests | None = None, p99_cap: float | None = None, checked: bool = True,
                        per_mib: Callable[[TelemetryDigest], float | None] = lambda d: None) -> PlanRecommendation:  # fmt: skip
    """The plan's one recommendation from its runs (see the module's docstring). ``checked``: the session's plan
    had the put-back checks and the confirmation (False: recorded before nfs-tuner made them)."""
    w = tuple(workloads)
    outcome = decide(runs, today, w, policy, confidence, knobs, p99_cap)
    status = _status(outcome, checked)
    recommended = outcome.recommended
    changes = {k: (today[k], recommended[k]) for k in changed_knobs(recommended, today)}
    board = Board(runs, w, policy)
    lines: list[KnobLine] = []
    if outcome.elimination is not None:
        final = outcome.elimination.final
        for knob, check in outcome.elimination.checks.items():
            kept = knob in changed_knobs(final, today) and status == CONFIRMED
            back = final.replace(knob, today[knob]) if knob in changed_knobs(final, today) else final
            got = final if knob in changed_knobs(final, today) else final.replace(knob, check.value)
            note = _telemetry_note(knob, digest(got), digest(back), per_mib) if digest is not None else ""
            lines.append(_knob_line(check, kept, confidence, note))
    confirmation = None
    if outcome.confirmation is not None and outcome.chosen is not None:
        sweep = Board([r for r in runs if r.step in SEARCH_STEPS], w, policy).joint(outcome.chosen, today)
        confirmation = _confirmed(outcome.confirmation, sweep, confidence)
    alternatives = _alternatives(board, recommended, today, confidence) if outcome.candidate is not None else ()
    evidence = _evidence(status, outcome, changes, confirmation, lines, today, confidence, alternatives)
    return PlanRecommendation(dict(recommended), changes, status, tuple(lines), confirmation,
                              dict(outcome.candidate) if outcome.candidate is not None else None, alternatives,
                              tuple(evidence), workloads=w)  # fmt: skip


def _evidence(status: str, outcome: Outcome, changes: Mapping[str, tuple[Any, Any]], conf: ConfirmedGain | None,
              lines: Sequence[KnobLine], today: Config, confidence: float,
              alternatives: Sequence[Alternative]) -> list[str]:  # fmt: skip
    out: list[str] = []
    chosen = outcome.chosen
    if status == CONFIRMED and conf is not None and conf.gain is not None:
        out.append(f"Change {', '.join(change_text(k, a, b) for k, (a, b) in changes.items())}: "
                   f"{conf.gain.text()} over today's settings, measured again in {conf.pairs} alternating pairs.")
    elif status == NOT_CONFIRMED and conf is not None:
        out.append(f"Keep today's settings: the change the sweep found ({config_text(_diff(chosen, today))}) did not "
                   f"hold when measured again ({conf.gain.text() if conf.gain else '—'} in {conf.pairs} pairs"
                   + (f"; worse on {', '.join(workload_label(w) for w, r in conf.per_workload.items() if r and r.high is not None and r.high < 0)}"
                      if any(r and r.high is not None and r.high < 0 for r in conf.per_workload.values()) else "")
                   + ").")  # fmt: skip
    elif status == UNCONFIRMED:
        what = config_text(_diff(chosen or outcome.candidate, today))
        out.append(f"Keep today's settings for now: the session ended before {what} was confirmed against them; "
                   "resume it to finish the checks.")
    elif status == NOT_CHECKED:
        out.append(f"This session was recorded before nfs-tuner checked and confirmed its choices: its best, "
                   f"{config_text(_diff(outcome.candidate, today))}, is the sweep's own figure, not measured again.")
    else:
        out.append("Keep today's settings: no change gained beyond the run-to-run noise.")
    if conf is not None and conf.sweep is not None and conf.gain is not None:
        out.append(f"The sweep's own estimate of the same change was {conf.sweep.text()}; the figure above is the "
                   "one measured again (a sweep's best reads high: it was picked among noisy runs).")
    if conf is not None and conf.broken:
        out.append(f"{conf.broken} confirmation run(s) broke and were not counted.")
    checked = {line.knob for line in lines}
    best = outcome.candidate
    for s in outcome.screened.values():
        # every screened knob keeps a line: one that moved but the search left at today's value has no put-back check
        left_today = best is not None and s.knob not in checked and s.knob not in changed_knobs(best, today)
        if not s.moves or left_today:
            out.append(_screen_line(s, today, confidence))
    out += [line.text for line in lines]
    out += [_alternative_line(a, today) for a in alternatives]
    return out


def _diff(config: Config | None, today: Config) -> dict[str, Any]:
    return {k: config[k] for k in changed_knobs(config, today)} if config is not None else {}

