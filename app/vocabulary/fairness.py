"""Fairness between clients as text (experiments.fairness): shares, ratios and the short cell.

Shares read as percents, largest first (``client1 69 %, client2 31 %``); a ratio is
``2.1×``; a table cell is the ratio and Jain's index (``2.2×, Jain 0.87``), with
``, last done 2.1× after first`` for fixed-size work; a missing figure is ``—``. A trial's
clients are worded only when they differ beyond the noise (experiments.fairness): the
note ``clients 2.2×, Jain 0.87`` on its line (a Run page tile, the sweep's progress,
``sessions show``), and in full the shares with the lowest client and the finish times.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from app.vocabulary.figures import MISSING, percent_text
from app.vocabulary.times import duration_text
from experiments.fairness import LATE_RULE, NOISE_RULE, Fairness


def ratio_text(x: float | None) -> str:
    """'2.1×', '2.0×', '12×'; '—' when missing or not finite."""
    if x is None or not math.isfinite(x):
        return MISSING
    return f"{x:.1f}×" if x < 9.95 else f"{x:.0f}×"


def shares_text(shares: Mapping[str, float]) -> str:
    """'client1 69 %, client2 31 %': largest share first, ties by name."""
    return ", ".join(f"{c} {percent_text(s)}" for c, s in sorted(shares.items(), key=lambda kv: (-kv[1], kv[0])))


def fairness_cell(ratio: float | None, jain: float | None, done_ratio: float | None = None) -> str:
    """A trials table's fairness cell: '2.2×, Jain 0.87' (largest/smallest share), '—' when not measured."""
    if jain is None or not math.isfinite(jain):
        return MISSING
    done = f", last done {ratio_text(done_ratio)} after first" if done_ratio is not None else ""
    return f"{ratio_text(ratio)}, Jain {jain:.2f}{done}"


def fairness_note(fair: Fairness | None) -> str | None:
    """A trial's cell ('2.2×, Jain 0.87', the finish ratio when late) when its clients differed beyond the
    noise; None when they did not or were not measured."""
    if fair is None or not (fair.uneven or fair.late):
        return None
    return fairness_cell(fair.ratio, fair.jain, fair.done_ratio if fair.late else None)


def clients_note(fair: Fairness | None) -> str | None:
    """'clients 2.2×, Jain 0.87': the note where it follows a trial's other figures on one line."""
    note = fairness_note(fair)
    return None if note is None else f"clients {note}"


def lowest_text(shares: Mapping[str, float], lowest: str | None) -> str:
    """'client1 67 %, client2 33 %, client2 lowest'."""
    return shares_text(shares) + (f", {lowest} lowest" if lowest is not None else "")


def late_text(done_ratio: float | None) -> str:
    """'the last client was done 2.1× after the first'."""
    return f"the last client was done {ratio_text(done_ratio)} after the first"


def beyond_noise_text(rule: str, noise_cv: float | None, runs: str = "") -> str:
    """'beyond the noise in 2 of 2 run(s) (rule: …, pooled CV 5.0 %)': why a difference is stated."""
    return f"beyond the noise{f' {runs}' if runs else ''} (rule: {rule}, pooled CV {percent_text(noise_cv)})"


def _seconds_text(s: float | None) -> str:
    """'0.4 s', '21.0 s' below a minute (phases can be short), else as a duration."""
    return f"{s:.1f} s" if s is not None and s < 60 else duration_text(s)


def fairness_sentences(fair: Fairness | None) -> list[str]:
    """One trial's difference in full (a tile's tooltip): the shares and the lowest client when uneven, the
    first and last finish when late; nothing when the clients were even."""
    if fair is None:
        return []
    lines = []
    if fair.uneven:
        lines.append(f"Clients' shares of the total: {lowest_text(fair.shares, fair.lowest)}: "
                     f"{beyond_noise_text(NOISE_RULE, fair.noise_cv)}.")  # fmt: skip
    if fair.late:
        lines.append(f"Fixed-size work: {late_text(fair.done_ratio)} ({_seconds_text(fair.last_done_s)} against "
                     f"{_seconds_text(fair.first_done_s)}): {beyond_noise_text(LATE_RULE, fair.noise_cv)}.")  # fmt: skip
    return lines
