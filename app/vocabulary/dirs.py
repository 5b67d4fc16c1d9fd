"""A directory-scaling curve's collapse as text (experiments.knee, ``find_collapse``).

One clause per layout and one sentence for them all: ``flat fell to 38 % of its early
rate at 720,000 entries; hashed held 91 %``.
"""

from __future__ import annotations

from collections.abc import Mapping

from app.vocabulary.figures import percent_text
from experiments.knee import COLLAPSE_RULE, Collapse


def entries_text(n: int | None) -> str:
    return "—" if n is None else f"{n:,} entr{'y' if n == 1 else 'ies'}"


def create_rate_text(rate: float | None) -> str:
    """Creates per second in a table whose column names the unit: '1,234', or '—'."""
    return "—" if rate is None else f"{rate:,.0f}"


def collapse_clause(layout: str, c: Collapse) -> str:
    """'flat fell to 38 % of its early rate at 720,000 entries', 'hashed held 91 % up to 1,000,000 entries'."""
    if c.last_entries is None:
        return f"{layout}: too few points to judge"
    if c.index is None:
        return f"{layout} held {percent_text(c.end_share)} of its early rate up to {entries_text(c.last_entries)}"
    return f"{layout} fell to {percent_text(c.share)} of its early rate at {entries_text(c.entries)}"


def collapse_sentence(curves: Mapping[str, Collapse]) -> str:
    """Every layout's clause in one sentence, with the rule."""
    if not curves:
        return "No curve was measured."
    return "; ".join(collapse_clause(k, c) for k, c in curves.items()) + f" ({COLLAPSE_RULE})."
