"""Which recommended configuration to apply when the objectives recommend different ones.

A host takes one configuration: the server's settings serve every client, and a client
mounts the export with one fstab line. So when, say, seq_read and seq_write each
recommend their own configuration, the report must say which to paste. The rule:

- Recommended is the configuration that stays closest to the best for every objective
  the session measured: for each objective, its mean as a share of that objective's
  best mean; the configuration with the highest worst share wins (measured for every
  objective before measured for some; the first objective's on a tie).
- Any other is an alternative for clients that mostly do the work it is best for,
  applied as a whole (server and clients): a mix of two configurations was not measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.recommend.ranking import config_key
from app.report.session_data import ObjectiveView, SessionData, SnippetGroup
from app.vocabulary import percent_text, workload_label

# What clients do most, per objective: "if the clients mostly …"
ACTIVITY: dict[str, str] = {
    "seq_read": "read large files",
    "seq_write": "write large files",
    "small_files": "create and write small files",
    "tree": "unpack, walk and remove trees of files",
    "dir_scaling": "fill very large directories",
    "mixed": "do random reads and writes",
}


@dataclass(frozen=True, slots=True)
class GroupAdvice:
    group: SnippetGroup
    recommended: bool
    shares: dict[str, float | None]  # objective -> this configuration's mean / that objective's best (None: not measured)
    words: str  # what to do with it, one sentence

    @property
    def badge(self) -> str:
        if self.recommended:
            return "recommended: server and every client"
        return f"only if the clients mostly {_activity(self.group.objectives)}"


@dataclass(frozen=True, slots=True)
class ConfigAdvice:
    rule: str  # the rule, in words ("" when every objective shares one configuration)
    groups: tuple[GroupAdvice, ...]  # in the snippet groups' order; exactly one is recommended

    def of(self, group: SnippetGroup) -> GroupAdvice | None:
        return next((g for g in self.groups if g.group is group), None)


def _activity(objectives: Sequence[str]) -> str:
    return " or ".join(ACTIVITY.get(o, f"do {o} work") for o in objectives)


def _shares(config: dict[str, object], objectives: Sequence[ObjectiveView]) -> dict[str, float | None]:
    key = config_key(config)
    out: dict[str, float | None] = {}
    for o in objectives:
        best = max((r.mean for r in o.ranking), default=0.0)
        row = next((r for r in o.ranking if config_key(r.config) == key), None)
        out[o.objective] = row.mean / best if row is not None and best > 0 else None
    return out


def _score(shares: dict[str, float | None]) -> tuple[bool, float]:
    known = [s for s in shares.values() if s is not None]
    return len(known) == len(shares), min(known, default=0.0)


def _below(share: float) -> str:
    return "the best" if share >= 1.0 else f"{percent_text(1.0 - share)} below the best"


def _words(recommended: bool, objectives: Sequence[str], shares: dict[str, float | None], single: bool) -> str:
    if single:
        return "Every objective measured recommends this configuration: apply it on the server and every client."
    known = {o: s for o, s in shares.items() if s is not None}
    scope = "every objective measured" if len(known) == len(shares) else "the objectives it was measured for"
    if recommended:
        worst, share = min(known.items(), key=lambda kv: kv[1]) if known else ("", 1.0)
        where = "it is the best measured for each" if share >= 1.0 else f"at worst {_below(share)}, for {workload_label(worst)}"
        return f"Recommended for the server and every client: of these configurations it stays closest to the " \
               f"best for {scope}; {where}."
    others = ", ".join(f"{_below(s)} for {workload_label(o)}" for o, s in known.items() if o not in objectives)
    return (f"Only if the clients mostly {_activity(objectives)}: the best for {', '.join(objectives)}"
            + (f", but {others}" if others else "") + ". Apply it instead, as a whole, on the server and every "
            "client (a mix of two configurations was not measured).")


def config_advice(data: SessionData) -> ConfigAdvice | None:
    """The advice for the session's snippet groups; None when it has no recommendation."""
    groups = data.snippet_groups
    if not groups:
        return None
    shares = [_shares(g.config, data.objectives) for g in groups]
    pick = max(range(len(groups)), key=lambda i: (*_score(shares[i]), -i))
    single = len(groups) == 1
    advice = tuple(GroupAdvice(g, i == pick, shares[i], _words(i == pick, g.objectives, shares[i], single))
                   for i, g in enumerate(groups))  # fmt: skip
    if single:
        return ConfigAdvice("", advice)
    knobs = sorted({k for g in groups for k in g.config if len({str(h.config.get(k)) for h in groups}) > 1})
    rule = (f"The objectives recommend {len(groups)} different configurations, and a host takes one: the server's "
            "settings serve every client, and a client mounts with one fstab line. Apply the recommended one: "
            "for each objective, each configuration's mean is taken as a share of that objective's best, and "
            "the recommended configuration has the highest worst share. Take another only where the clients "
            "mostly do the work it is best for."
            + (f" They differ in: {', '.join(knobs)}." if knobs else ""))
    return ConfigAdvice(rule, advice)
