"""What a Results face shows of one objective, and what it can do with a finished session.

``objective_results`` gathers, for the objective the admin selected, everything that
must follow it: the recommendation, its snippets (rendered for that objective's own
configuration and key workload, each placed on the session's hosts) and one chart per
knob. A chart compares a knob's values with the other knobs held alike (KnobBars), and
marks a bar that could not be; its interval is that configuration's 95 % CI over its runs. ``export_report`` writes the HTML
report; ``saved_text`` says truthfully where the session is kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.output_files import OutputError
from app.recommend.objectives import objective_of
from app.recommend.ranking import config_key
from app.report import ObjectiveView, SessionData, write_report
from app.report.session_data import snippet_config
from app.snippets import Snippet, SnippetContext, context_for_session, context_from_facts, render_all
from app.snippets.context import mounted_as
from app.store import Store, StoreError
from app.store.records import TrialRecord
from app.vocabulary import workload_detail, workload_id, workload_label


@dataclass(frozen=True, slots=True)
class PlacedSnippet:
    """A snippet with where it goes in words: the file, the session's hosts, its caveat."""

    snippet: Snippet
    where: str  # "/etc/fstab", "a shell, as root", "nfs-tuner.yml (any folder)"
    hosts: tuple[str, ...]  # the session's hosts it belongs on; () for the admin's own machine
    on: str  # the hosts in words: "client1, client2 (every client)"
    caveat: str  # the snippet's safety note, or that it has none


@dataclass(frozen=True, slots=True)
class KnobBars:
    """One knob's values for one objective, each bar compared with the others held alike where it can be.

    The reference is the recommended configuration (else the ranking's first). At each value the bar is
    the reference with only this knob at that value, when it was measured: those bars differ in this knob
    alone. Where it was not, the bar is the best-ranked configuration with that value, marked not
    comparable: other knobs differ too (a value tried before the others were tuned reads worse than it is)."""

    knob: str
    objective: str
    workload: str  # what was measured, in short words: "seq_read (sequential read)"
    unit: str
    values: tuple[Any, ...]
    means: tuple[float, ...]
    half_widths: tuple[float | None, ...]  # 95 % CI over the repeated runs; None: one run
    ranks: tuple[int, ...]
    runs: tuple[int, ...]
    median_cv: tuple[float | None, ...]
    comparable: tuple[bool, ...] = ()  # the bar differs from the reference in this knob alone (empty: all)
    reference: Any = None  # this knob's value in the reference (the recommended configuration)

    @property
    def best(self) -> int:
        """The index of the highlighted bar: the recommended configuration's, else the ranking's best."""
        texts = [str(v) for v in self.values]
        if self.reference is not None and str(self.reference) in texts:
            return texts.index(str(self.reference))
        return min(range(len(self.ranks)), key=self.ranks.__getitem__)

    @property
    def title(self) -> str:
        return f"{self.workload}: each {self.knob} value, the other knobs as recommended"


@dataclass(frozen=True, slots=True)
class ObjectiveResults:
    view: ObjectiveView
    workload: str
    snippets: tuple[PlacedSnippet, ...]
    snippet_error: str  # why no snippets could be rendered, else ""
    knobs: tuple[KnobBars, ...]


def workload_text(trials: Sequence[TrialRecord], objective: str, *, detail: bool = False) -> str:
    """The workload(s) measured for ``objective``: 'seq_read (sequential read)', with ``detail``
    'seq_read (sequential read: 1 MiB reads, caches dropped first)'."""
    kinds = dict.fromkeys(_kind(t.workload) for t in trials if objective_of(t.workload) == objective)
    kinds.pop("", None)
    return "; ".join((workload_detail if detail else workload_label)(k) for k in kinds or (objective,))


def _kind(workload: Any) -> str:
    if isinstance(workload, Mapping):
        return workload_id(str(workload.get("kind") or workload.get("name") or ""))
    return workload_id(str(workload or ""))


def knob_bars(view: ObjectiveView, workload: str) -> tuple[KnobBars, ...]:
    """One chart per knob that took two values or more in the ranking (in first-seen order)."""
    out = []
    reference = dict(view.config) if view.recommended is not None else (dict(view.best.config) if view.best else {})
    by_key = {config_key(r.config): r for r in view.ranking}
    for knob in dict.fromkeys(k for r in view.ranking for k in r.config):
        best: dict[str, Any] = {}  # value as text -> its best-ranked row (the ranking is best first)
        for r in view.ranking:
            if knob in r.config:
                best.setdefault(str(r.config[knob]), r)
        if len(best) < 2:
            continue
        chosen: dict[str, tuple[Any, bool]] = {}
        for text, fallback in best.items():
            alike = by_key.get(config_key({**reference, knob: fallback.config[knob]})) if knob in reference else None
            chosen[text] = (alike, True) if alike is not None else (fallback, False)
        rows = sorted(chosen.values(), key=lambda rc: _order(rc[0].config[knob]))
        out.append(KnobBars(knob, view.objective, workload, view.unit, tuple(r.config[knob] for r, _ in rows),
                            tuple(r.mean for r, _ in rows), tuple(r.half_width for r, _ in rows),
                            tuple(r.rank for r, _ in rows), tuple(r.n for r, _ in rows),
                            tuple(r.median_cv for r, _ in rows), tuple(c for _, c in rows),
                            reference.get(knob)))  # fmt: skip
    return tuple(out)


def _order(value: Any) -> tuple[int, float, str]:
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def _key_workload(trials: Sequence[TrialRecord], objective: str, config: Mapping[str, Any]) -> dict[str, Any] | None:
    """The workload spec the recommended configuration was measured with (for the fio job)."""
    key = config_key(config)
    for t in trials:
        if objective_of(t.workload) == objective and isinstance(t.workload, dict) and "kind" in t.workload \
                and config_key({k: t.config.get(k) for k in config}) == key:
            return t.workload
    return None


def place(snippet: Snippet, ctx: SnippetContext) -> PlacedSnippet:
    """Where ``snippet`` goes on this session's hosts (a per-host snippet's key ends in ':host')."""
    _, _, own_host = snippet.key.partition(":")
    if own_host and not snippet.key.startswith("refused:"):
        hosts: tuple[str, ...] = (own_host,)
        on = f"{own_host} ({snippet.host_role or 'host'})"
    elif snippet.host_role == "server":
        hosts, on = (ctx.server_host,), f"{ctx.server_host} (the NFS server)"
    elif snippet.host_role == "client":
        hosts = tuple(sorted(ctx.client_hosts, key=_natural))
        on = f"{', '.join(hosts)} ({'every client' if len(hosts) > 1 else 'the client'})"
    else:
        hosts, on = (), "your own machine (where you run nfs-tuner or Ansible), not a tuned host"
    if snippet.target == "shell":
        where = "commands for a root shell (nothing to save)"
    elif snippet.target.startswith("/"):
        where = snippet.target
    elif snippet.target:
        where = f"{snippet.target} (a new file, in any folder)"
    else:
        where = "—"
    return PlacedSnippet(snippet, where, hosts, on, snippet.safety or "none: safe to apply as it is")


def _natural(name: str) -> tuple[tuple[int, str], ...]:
    """client2 before client10."""
    return tuple((int(part), "") if part.isdigit() else (-1, part) for part in re.split(r"(\d+)", name))


def placed_snippets(data: SessionData, snippets: Sequence[Snippet]) -> tuple[PlacedSnippet, ...]:
    """``snippets`` (of a stored snippet group) placed on the session's hosts, as its stored facts name them."""
    ctx = context_from_facts([(r.host, r.role, r.facts) for r in data.host_facts], session_id=data.session.id,
                             mounted_as=mounted_as(data.session.plan))
    return tuple(place(s, ctx) for s in snippets)


def objective_snippets(store: Store, data: SessionData, view: ObjectiveView) -> tuple[tuple[PlacedSnippet, ...], str]:
    """The snippets of ``view``'s configuration, rendered for its own objective and key workload."""
    workload = _key_workload(data.trials, view.objective, view.config)
    ctx = context_for_session(store, data.session.id, view.objective, workload)
    config = snippet_config(view)
    if not config:
        return (), ""  # today's settings stay: nothing to paste
    try:
        snippets = render_all(config, ctx)
    except ValueError as e:  # a stored value that cannot go into a config file
        return (), f"cannot render snippets: {e}"
    return tuple(place(s, ctx) for s in snippets), ""


def objective_results(store: Store, data: SessionData, objective: str) -> ObjectiveResults | None:
    """What follows the selected objective; None when the session has no such objective."""
    view = data.objective(objective)
    if view is None:
        return None
    snippets, error = objective_snippets(store, data, view)
    return ObjectiveResults(view, workload_text(data.trials, objective, detail=True), snippets, error,
                            knob_bars(view, workload_text(data.trials, objective)))


class ExportError(Exception):
    """The report was not written; the words say why."""


def export_report(store: Store, data: SessionData, dest: Path) -> Path:
    """The session's self-contained HTML report at ``dest`` (the same report as ``nfs-tuner report``)."""
    try:
        return write_report(store, data.session.id, dest, data=data, replace=True)  # the save dialog asked
    except OutputError as e:  # names the file already
        raise ExportError(str(e)) from e
    except StoreError as e:
        raise ExportError(f"The report was not written to {dest}: {e}") from e


def saved_text(store: Store, session_id: int | None, *, demo: bool, throwaway: bool = False) -> str:
    """Where the finished session is kept, in true words (``throwaway``: the demo's own database, gone at exit)."""
    try:
        stored = session_id is not None and store.get_session(session_id).id == session_id
    except StoreError:  # not there (or the database is gone)
        stored = False
    if not stored:
        return "Demo: not saved." if demo else "Nothing was saved: no session was recorded."
    if demo and throwaway:
        return (f"Demo: session {session_id} is in the demo's throwaway database {store.path}, not with your sessions; "
                "it is removed when nfs-tuner quits (--db keeps the demo's sessions in a file you name).")
    if demo:
        return f"Demo: session {session_id} (simulated hosts) is saved in {store.path}."
    return f"Session {session_id} is saved in {store.path}."
