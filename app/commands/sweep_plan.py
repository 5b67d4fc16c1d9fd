"""``nfs-tuner sweep``'s plan: proposed from a diagnosis without ``--knob``, said before anything changes.

Without ``--knob`` the sweep measures the baseline, reads the diagnosis and runs the plan
it proposes (app.session.proposal) for what the server is for (``--use``), fitted to
``--budget``. Either way the plan is printed first, each knob beside its reason;
``--dry-run`` prints the diagnosis, the plan, each host's changes and the estimate, and
stops there: nothing on any host is changed (without ``--knob`` the baseline still puts
load on them). ``--json`` carries all of it as data.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, TextIO

from app.commands import arguments
from app.session import BaselineStepStarted, PlanChoices, PlanError, TuningSession
from app.session.budget import DEFAULT_BUDGET_S, budget_text, fit_text
from app.session.diagnosis import Diagnosis
from app.session.preview import RunPreview
from app.session.proposal import KnobAdvice, Proposal
from app.session.uses import DEFAULT_USES, USES, use_label, workloads_of
from app.sweep.spec import SweepSpec
from app.vocabulary import bounds_text, duration_text, knob_label, span_text
from experiments.budget import Fit

REASON_COLUMN = 44  # where a knob's reason starts on its line


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--use", choices=list(USES), action="append", metavar="USE",
                   help="what the server is for, which sets the workloads (repeat for several): "
                        + "; ".join(f"{name}: {use_label(name)}" for name in USES)
                        + f" (default {', '.join(DEFAULT_USES)} without --knob)")  # fmt: skip
    p.add_argument("--budget", type=arguments.budget, metavar="TIME",
                   help="the time from connect to the confirmed recommendation, e.g. 45m, 1h30m, 2h: shorter "
                        "trials and fewer runs first, then the lowest-priority knobs are left out, each said, also "
                        "while it runs if the trials are slower than planned; a plan that cannot fit is "
                        f"refused (default {budget_text(DEFAULT_BUDGET_S)} without --knob, none with it; "
                        f"{arguments.NO_BUDGET}: no budget)")  # fmt: skip
    p.add_argument("--dry-run", action="store_true",
                   help="print the diagnosis, the plan with its reasons, each host's changes and the estimate, then "
                        "stop: nothing on any host is changed (without --knob the baseline still loads them)")


def workloads_from_args(args: argparse.Namespace, given_default: Sequence[str]) -> tuple[str, ...]:
    """--workload as given, else --use's workloads, else a proposed plan's (DEFAULT_USES') or, with --knob,
    ``given_default``."""
    if args.workload:
        return tuple(args.workload)
    if args.use or proposed(args):
        return workloads_of(args.use or DEFAULT_USES)
    return tuple(given_default)


def proposed(args: argparse.Namespace) -> bool:
    return not args.knob


MIN_PLAN_S = 60.0  # what is left of a budget the baseline overran: the fit then says what the plan needs


def budget_from_args(args: argparse.Namespace) -> float | None:
    """--budget in seconds; not given: a proposed plan's default, none for one given by --knob."""
    if args.budget is None:
        return DEFAULT_BUDGET_S if proposed(args) else None
    return None if math.isinf(args.budget) else float(args.budget)


@dataclass(frozen=True, slots=True)
class Planned:
    """What a sweep is about to run, and why: what the faces print before the first change."""

    proposal: Proposal  # the diagnosis and each knob's reason (also beside knobs given by --knob)
    choices: PlanChoices
    fit: Fit
    preview: RunPreview
    spec: SweepSpec  # what the run gets: the fitted plan
    before_s: float = 0.0  # of the admin's budget, what connecting and the baseline took (the plan has the rest)

    def to_json(self) -> dict[str, Any]:
        chosen = set(self.fit.plan.knobs)
        return {
            "diagnosis": self.proposal.diagnosis.to_json(),
            "plan": {"proposed": list(self.choices.knobs) == [a.knob for a in self.proposal.ticked],
                     "workloads": list(self.choices.workloads), "strategy": self.choices.strategy,
                     "budget_s": self.choices.budget_s, "before_s": self.before_s,
                     "knobs": [{**a.to_json(), "in_plan": a.knob in chosen,
                                "values": list(self.fit.plan.knobs.get(a.knob, a.values))}
                               for a in _in_order(self.proposal, self.choices)],
                     "left_out_to_fit": list(self.fit.dropped), "measure_s": self.fit.plan.timing.max_measure_s,
                     "runs": [self.fit.plan.min_runs, self.fit.plan.max_runs]},
            "changes": [{"host": h.host, "role": h.role, "test_mount": h.test_mount,
                         "changes": [{"knob": c.knob, "target": c.target, "today": c.today, "values": c.values}
                                     for c in h.changes]} for h in self.preview.hosts],
            "estimate": {"trials": self.fit.estimate.trials, "seconds": self.fit.estimate.seconds,
                         "worst_seconds": self.fit.estimate.worst_seconds,
                         "least_seconds": self.fit.estimate.least_seconds},
        }  # fmt: skip


def _in_order(proposal: Proposal, choices: PlanChoices) -> list[KnobAdvice]:
    """The plan's knobs in its order, then the rest in the proposal's."""
    first = [proposal.advice(k) for k in choices.knobs]
    return first + [a for a in proposal.knobs if a.knob not in choices.knobs]


def diagnosis_lines(diagnosis: Diagnosis) -> list[str]:
    return ["Diagnosis:", f"  {diagnosis.headline}", *(f"  {f.subject}: {f.text}" for f in diagnosis.findings)]


def plan_lines(planned: Planned) -> list[str]:
    choices, fit = planned.choices, planned.fit
    source = "proposed" if proposed_plan(planned) else "as given by --knob"
    budget = "" if choices.budget_s is None else f"; budget {span_text(choices.budget_s)}" if not planned.before_s \
        else f"; budget {span_text(choices.budget_s)} (of {span_text(choices.budget_s + planned.before_s)}: " \
             f"connecting and the baseline took about {span_text(planned.before_s)})"  # fmt: skip
    lines = [f"Plan ({source}): {', '.join(choices.workloads)}; {choices.strategy}{budget}"]
    for a in _in_order(planned.proposal, choices):
        mark = "x" if a.knob in fit.plan.knobs else "-" if a.knob in fit.dropped else " " if a.offered else "/"
        values = f" = {', '.join(map(str, fit.plan.knobs[a.knob]))}" if a.knob in fit.plan.knobs else ""
        head = f"  [{mark}] {a.knob}{values}"
        why = "left out to fit the budget; " + a.reason if a.knob in fit.dropped else a.reason
        lines.append(f"{head:<{REASON_COLUMN}} {why}" if len(head) < REASON_COLUMN else f"{head}\n{'':<{REASON_COLUMN}} {why}")
    lines.append("  ([x] in the plan, [-] left out to fit the budget, [ ] not ticked, [/] not offered: the hosts lack it)")
    return lines


def proposed_plan(planned: Planned) -> bool:
    return list(planned.choices.knobs) == [a.knob for a in planned.proposal.ticked]


def change_lines(preview: RunPreview) -> list[str]:
    lines = ["Changes, host by host (every one put back at the end):"]
    for h in preview.hosts:
        lines.append(f"  {h.host} ({h.role})" + (f": test mount {h.test_mount}" if h.test_mount else ""))
        lines += [f"    {knob_label(c.knob)}{f' at {c.target}' if c.target else ''}: today {c.today}, tries {c.values}"
                  for c in h.changes]  # fmt: skip
        if not h.changes:
            lines.append("    nothing changed here")
    return lines


def estimate_lines(fit: Fit) -> list[str]:
    est = fit.estimate
    line = f"Estimate: {est.trials} trials, about {duration_text(est.seconds)} ({bounds_text(est)})"
    return [line + (f"; {words}" if (words := fit_text(fit)) else "")]


async def plan_for(session: TuningSession, args: argparse.Namespace, choices: PlanChoices, out: TextIO,
                   began: float | None = None) -> Planned:  # fmt: skip
    """The plan to run on the connected hosts, printed on ``out`` (text; JSON is the caller's): without
    --knob measured, diagnosed and proposed. PlanError when it makes no plan, before any change. The budget
    counts from ``began`` (time.monotonic(); default now): the plan is fitted to what is left of it."""
    began = time.monotonic() if began is None else began
    if proposed(args) and choices.measure_ceilings:
        say(out, f"Measuring the baseline for the diagnosis ({', '.join(choices.workloads)}): load on the hosts, "
                 "no setting changed")  # fmt: skip
        step = session.bus.subscribe(lambda e: say(out, f"  step {e.index + 1} of {e.total}: {e.step.what}"),
                                     BaselineStepStarted)  # fmt: skip
        try:
            await session.baseline(choices.workloads)
        finally:
            step()
    before_s = 60.0 * round((time.monotonic() - began) / 60.0)  # in whole minutes, as the admin reads a budget
    if choices.budget_s is not None:  # the admin's time runs from connect to the confirmed recommendation
        choices = replace(choices, budget_s=max(choices.budget_s - before_s, MIN_PLAN_S))
    proposal = session.proposal(choices.workloads, allow_async=choices.allow_async,
                                allow_restart=choices.allow_restart, budget_s=choices.budget_s)  # fmt: skip
    if proposed(args):
        choices = proposal.choices(choices)
        if not choices.knobs:
            raise PlanError({"knobs": "the diagnosis proposes no knob for these workloads; name some with "
                                      "--knob NAME=V1,V2, or choose other workloads (--use, --workload)"})  # fmt: skip
    if problems := session.problems(choices):
        raise PlanError({k: _cli_words(k, v) for k, v in problems.items()})
    spec = session.plan(choices, export=args.export, server_address=args.server_address)
    planned = Planned(proposal, choices, session.fit(choices), session.preview(spec), spec,
                      before_s if choices.budget_s is not None else 0.0)  # fmt: skip
    if not args.json or not args.dry_run:
        for line in [*diagnosis_lines(proposal.diagnosis), *plan_lines(planned),
                     *(change_lines(planned.preview) if args.dry_run else []), *estimate_lines(planned.fit)]:
            say(out, line)
    return planned


def _cli_words(field: str, problem: str) -> str:
    return f"{problem} (here: --budget TIME for the time, --use or --workload for the workloads)" if field == "budget" \
        else problem


def say(out: TextIO, line: str) -> None:
    out.write(line + "\n")
    out.flush()


def no_dry_resume(show: str) -> str:
    """The refusal of --dry-run beside --resume; ``show`` is the command that shows the session's plan."""
    return f"--dry-run cannot go with --resume: a resumed session carries on with its stored plan; `{show}` says what it is"
DRY_RUN_DONE = "Dry run: nothing was changed on any host. Run the same command without --dry-run to start it."

