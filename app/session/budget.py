"""The admin's time budget in both faces' words: how a plan was fitted to it, or why it cannot be.

The fitting is experiments.budget's; the budget is typed as ``45m`` or ``1h30m`` on the
command line (``--budget``) and in the Plan page's field (app.vocabulary.parse_duration).
"""

from __future__ import annotations

from collections.abc import Sequence

from experiments.budget import LONGEST_PLAN_S, Fit
from app.vocabulary import duration_text, parse_duration, span_text

DEFAULT_BUDGET_S = 30 * 60.0  # a proposed plan's: an afternoon's first look, connect to confirmed change within the hour


def budget_text(seconds: float) -> str:
    """A budget as the admin types it: '45m', '1h30m', '90s', '2h'."""
    whole = max(1, round(seconds))
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    return "".join(f"{n}{unit}" for n, unit in ((h, "h"), (m, "m"), (s, "s")) if n) or "0s"


def parse_budget(text: str) -> float | None:
    """A typed budget in seconds; None when empty (no budget); ValueError in the faces' words."""
    if not text.strip():
        return None
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise ValueError(f"time budget: {exc}") from None


def _lean_words(fit: Fit) -> list[str]:
    words = []
    if fit.measure_s is not None:
        words.append(f"{fit.measure_s:g} s measured per trial")
    if fit.runs is not None:
        low, high = fit.runs
        words.append(f"{low} run{'s' if low > 1 else ''} per configuration" + (f" (up to {high} while noisy)" if high > low else ""))
    return words


def fit_text(fit: Fit) -> str:
    """What fitting did, for a plan that fits: '' when it changed nothing."""
    if not fit.changed or fit.budget_s is None:
        return ""
    words = _lean_words(fit)
    if fit.dropped:
        words.append(f"left out {', '.join(reversed(fit.dropped))} (lowest priority)")
    return f"to fit {span_text(fit.budget_s)}: " + "; ".join(words)


def unfit_text(fit: Fit, workloads: Sequence[str]) -> str:
    """Why a plan cannot start, and what to drop: '' when it fits."""
    if fit.fits:
        return ""
    needs = duration_text(fit.estimate.seconds)
    fewer = f"fewer workloads ({len(workloads)} now: {', '.join(workloads)})" if len(workloads) > 1 else "fewer values"
    if fit.budget_s is None or fit.budget_s > LONGEST_PLAN_S:
        return (f"this plan takes about {needs}, far beyond any run (at most {duration_text(LONGEST_PLAN_S)}): "
                "give a time budget to fit it to, or choose fewer knobs or values, or the guided strategy")
    lean = [*_lean_words(fit), f"only {next(iter(fit.plan.knobs))}" if fit.dropped else ""]
    how = ", ".join(w for w in lean if w)
    return (f"the plan does not fit {span_text(fit.budget_s)}" + (f" even with {how}" if how else "")
            + f": it needs about {needs}; give at least that much time, or {fewer}")
