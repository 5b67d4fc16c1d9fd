"""One self-contained HTML file per session: inline CSS and SVG, no script, no external resource.

Every stored text (host names, notes, facts, evidence) goes through html.escape; a
Content-Security-Policy forbids the page from loading anything, so opening a report
received from someone else makes no network connection.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from app import __version__
from app.output_files import OutputExists, write_text
import numpy as np

from app.report.charts import knob_charts, over_time_charts
from app.report.dirs import DirsResult, load_dirs
from app.report.ladder import STEP_COLUMNS, STEP_NUMERIC, LadderResult, load_ladder, step_cells
from app.report.svg import Series, line_chart
from app.report.session_data import (
    LATENCY_HEADERS,
    SessionData,
    load_session_data,
    plan_goal,
    plan_summary,
    trial_fairness_cell,
    trial_figure_text,
    trial_latency_cells,
    trial_ops,
    workload_kind,
)
from app.report.config_advice import ConfigAdvice, config_advice
from app.report.severity import LEGEND, SYMBOL, Mark, journal_mark, snippet_mark, trial_mark, trial_warnings
from app.report.tables import workload_table
from app.store.sample_blocks import SampleArrays
from app.store.store import Store
from app.vocabulary import (
    OPS,
    config_text,
    data_text,
    date_text,
    figure_text,
    goal_text,
    held_text,
    interval_text,
    knob_value_text,
    memory_text,
    percent_text,
)
from app.vocabulary.dirs import create_rate_text

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

STYLE = """
body{font:14px/1.45 'DejaVu Sans',Arial,sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 16px}
h1{font-size:22px;margin-bottom:4px}h2{border-bottom:2px solid #1f77b4;padding-bottom:3px;margin-top:32px}
h3{margin-bottom:6px}
table{border-collapse:collapse;margin:8px 0 16px}th,td{border:1px solid #ccc;padding:3px 8px;vertical-align:top}
th{background:#eef3f8;text-align:center}td.num{text-align:right;font-variant-numeric:tabular-nums}
table.meta th{text-align:left;background:none;border:none;padding-right:16px}table.meta td{border:none}
pre{background:#f6f6f6;border:1px solid #ddd;padding:8px;overflow-x:auto;font:12px/1.35 'DejaVu Sans Mono',monospace}
.chosen{font-size:16px;font-weight:bold}.muted{color:#666}
.warn{color:#8a4b00}.error{color:#b00020;font-weight:bold}tr.warn td{background:#fff3dc}tr.error td{background:#fde4e4}
.step{border-left:3px solid #bbb;padding-left:8px;color:#333}ul.legend{list-style:none;padding-left:0}
.badge{display:inline-block;padding:0 6px;border-radius:3px;background:#e8e8e8;font-size:12px}
.badge.recommended{background:#d4edd4;font-weight:bold}
section.recommended{border-left:4px solid #2e7d32;padding-left:12px}section.alternative{padding-left:16px}
svg.chart{display:block;margin:8px 0;font:11px 'DejaVu Sans',Arial,sans-serif}
svg.chart text.legend{font-size:11px}
"""


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def _table(head: Sequence[str], rows: Iterable[Sequence[Any]], numeric: Iterable[int] = (), cls: str = "",
           marks: Sequence[Mark] = ()) -> str:
    """``marks``: each row's severity (app.report.severity), its CSS class."""
    nums = set(numeric)
    out = [f'<table class="{_e(cls)}">' if cls else "<table>",
           "<tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>"]
    for i, r in enumerate(rows):
        out.append((f'<tr class="{marks[i]}">' if i < len(marks) else "<tr>") + "".join(
            f'<td class="num">{_e(v)}</td>' if i in nums else f"<td>{_e(v)}</td>" for i, v in enumerate(r)) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _meta(data: SessionData) -> str:
    s = data.session
    rows = [("Date", date_text(s.created)), ("State", s.state.value), ("Hosts", ", ".join(s.hosts) or "—"),
            ("Plan", plan_summary(s.plan)), ("Goal", goal_text(plan_goal(s.plan))), ("Trials", str(len(data.trials))),
            ("Samples", f"{data.sample_count:,}")]
    if s.origin:
        rows.append(("Origin", s.origin))
    if s.notes:
        rows.append(("Notes", s.notes))
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return f'<table class="meta">{body}</table>'


def results_table(data: SessionData) -> str:
    """Configuration rows × workload columns (the mean ± CI, ops/s), like the bonnie++ tables."""
    table = workload_table(data.trials)
    if not table.workloads:
        return "<p>No trial finished ok: there is nothing to tabulate.</p>"
    head1 = "<tr><th rowspan=\"2\">Configuration</th>" + "".join(
        f'<th colspan="2">{_e(w)}</th>' for w in table.workloads) + "</tr>"
    head2 = "<tr>" + "<th>Mean (95 % CI)</th><th>ops/s</th>" * len(table.workloads) + "</tr>"
    rows = []
    for i, config in enumerate(table.configs):
        cells = [f"<td>{_e(config_text(config))}</td>"]
        for w in table.workloads:
            c = table.cell(i, w)
            if c is None:
                cells.append('<td class="num">—</td><td class="num">—</td>')
                continue
            cells.append(f'<td class="num" title="{c.n} run(s)">{_e(interval_text(c.mean, c.half_width, c.unit))}</td>'
                         f'<td class="num">{_e(figure_text(c.ops, OPS))}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table class="results">{head1}{head2}{"".join(rows)}</table>' \
           '<p class="muted">Mean over the ok runs of each configuration, ± the 95 % confidence interval.</p>'


def _recommendations(data: SessionData) -> str:
    if not data.objectives:
        return "<p>No recommendation: no ok trial informs an objective.</p>"
    out = [f'<p class="muted">{_e(n)}</p>' for n in data.notes]
    for o in data.objectives:
        out.append(f'<h3>{_e(o.objective)}</h3><p class="chosen">{_e(o.verdict())}</p>')
        if o.evidence:
            out.append("<ul class=\"evidence\">" + "".join(f"<li>{_e(e)}</li>" for e in o.evidence) + "</ul>")
        for w in o.warnings:
            out.append(f'<p class="warn">⚠ {_e(w)}</p>')
        out.append(_table(
            ("Rank", "Configuration", "Sustainable", "Mean", *LATENCY_HEADERS, "Runs", "Median CV", "Deepest dip", "Trials"),
            [(r.rank, r.config_cell(), interval_text(r.sustainable, r.sustainable_half_width, o.unit),
              interval_text(r.mean, r.half_width, o.unit), *r.latency_cells(), r.n, percent_text(r.median_cv),
              percent_text(r.deepest_dip), ", ".join(f"#{t}" for t in r.trial_ids)) for r in o.ranking],
            numeric=(0, *range(2, 10)), cls="ranking"))
    if data.excluded:
        out.append("<h3>Excluded trials</h3>" + _table(
            ("Trial", "Configuration", "State", "Reason"),
            [(f"#{e.get('trial_id')}", config_text(dict(e.get("config") or {})), e.get("state", ""), e.get("reason", ""))
             for e in data.excluded]))
    return "\n".join(out)


def _advice(advice: ConfigAdvice) -> str:
    """Which of several recommended configurations to apply: the rule, then one line per configuration."""
    if not advice.rule:
        return ""
    items = "".join(f"<li><strong>{_e(', '.join(a.group.objectives))}</strong> ({_e(config_text(a.group.shown))}): "
                    f"{_e(a.words)}</li>" for a in advice.groups)
    return f'<h3 id="which">Which configuration to apply</h3><p>{_e(advice.rule)}</p><ul class="advice">{items}</ul>'


def _snippets(data: SessionData) -> str:
    advice = config_advice(data)
    if advice is None:
        return "<p>No snippets: there is no recommendation.</p>"
    out = [_advice(advice)]
    for a in advice.groups:
        g, kind = a.group, "recommended" if a.recommended else "alternative"
        out.append(f'<section class="group {kind}"><h3>For {_e(", ".join(g.objectives))}: {_e(config_text(g.shown))} '
                   f'<span class="badge {kind}">{_e(a.badge)}</span></h3>')
        if not advice.rule:  # one configuration for every objective: say so beside it
            out.append(f'<p class="muted">{_e(a.words)}</p>')
        if g.error:
            out.append(f'<p class="warn">⚠ {_e(g.error)}</p>')
        for s in g.snippets:
            role = f' <span class="badge">{_e(s.host_role)}</span>' if s.host_role else ""
            out.append(f"<h4>{_e(s.title)} → <code>{_e(s.target)}</code>{role}</h4>")
            if s.safety:  # a risk is a warning; how to apply it (remount, exportfs -ra) is a plain step
                mark = snippet_mark(s)
                out.append(f'<p class="{"warn" if mark == "warn" else "step"}">{SYMBOL[mark]}{_e(s.safety)}</p>')
            out.append(f'<pre class="snippet">{_e(s.text)}</pre>')
        out.append("</section>")
    return "\n".join(out)


def _safety(data: SessionData) -> str:
    notes = list(data.safety_notes) + [
        "Apply changes in a maintenance window and one host at a time; keep a second SSH session open.",
        "Every change nfs-tuner made during the sweep was journaled and put back (see the journal below); "
        "the snippets make the recommended values permanent only where you paste them.",
    ]
    return "<ul class=\"safety\">" + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>"


def _facts_summary(facts: Any) -> list[tuple[str, str]]:
    if not isinstance(facts, Mapping):
        return []
    os_name = facts.get("os", {}).get("pretty_name") if isinstance(facts.get("os"), Mapping) else None
    rows = [("Hostname", facts.get("hostname")), ("OS", os_name), ("Kernel", facts.get("kernel")),
            ("CPUs", facts.get("cpu_count")),
            ("Memory", memory_text(facts["mem_total_kb"]) if isinstance(facts.get("mem_total_kb"), int | float) else None),
            ("nfs-utils", facts.get("nfs_utils_version"))]
    nics = [n for n in facts.get("nics") or [] if isinstance(n, Mapping) and n.get("name") != "lo"]
    if nics:
        rows.append(("NICs", "; ".join(f"{n.get('name')} mtu {n.get('mtu')} {data_text(n.get('addresses'))}" for n in nics)))
    exports = [e for e in facts.get("exports") or [] if isinstance(e, Mapping)]
    if exports:
        rows.append(("Exports", "; ".join(f"{e.get('path')} {e.get('client')}({data_text(e.get('options'))})"
                                          for e in exports)))
    md = [m for m in facts.get("md_arrays") or [] if isinstance(m, Mapping)]
    if md:
        rows.append(("md arrays", "; ".join(f"{m.get('name')} {m.get('level')} stripe_cache_size "
                                            f"{m.get('stripe_cache_size')}" for m in md)))
    mounts = [m for m in facts.get("nfs_mounts") or [] if isinstance(m, Mapping)]
    if mounts:
        rows.append(("NFS mounts", "; ".join(f"{m.get('export')} on {m.get('mount_point')}" for m in mounts)))
    return [(k, str(v)) for k, v in rows if v not in (None, "")]


def _host_facts(data: SessionData) -> str:
    if not data.host_facts:
        return "<p>No host facts were stored with this session.</p>"
    out = []
    for r in data.host_facts:
        out.append(f"<h3>{_e(r.host)} <span class=\"badge\">{_e(r.role)}</span> "
                   f"<span class=\"muted\">as seen {_e(date_text(r.taken_at))}</span></h3>")
        rows = _facts_summary(r.facts)
        if rows:
            out.append('<table class="meta">' + "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
                       + "</table>")
        out.append(f"<details><summary>All facts</summary><pre>{_e(json.dumps(r.facts, indent=2, sort_keys=True))}"
                   "</pre></details>")
    return "\n".join(out)


def _legend() -> str:
    return '<p class="muted">The colours in this report:</p><ul class="legend">' + "".join(f'<li class="{m}">{_e(words)}</li>' for m, words in LEGEND) + "</ul>"


def _journal(data: SessionData) -> str:
    if not data.journal:
        return "<p>No host change was recorded.</p>"
    marks = [journal_mark(j) for j in data.journal]
    flagged = {m: marks.count(m) for m in ("warn", "error") if m in marks}
    said = "; ".join(f"{n} marked {SYMBOL[m].strip()}" for m, n in flagged.items())
    head = (f"<p>{len(marks)} change(s): " + (f"{marks.count('routine')} applied and put back as planned; {_e(said)}."
            if flagged else "each applied and put back as planned.") + "</p>")
    return head + _table(("When", "Host", "Knob", "Target", "Old", "New", "State", "Detail"),
                         [(date_text(j.created_at), j.host, j.knob, j.target, knob_value_text(j.knob, j.old_value),
                           knob_value_text(j.knob, j.new_value), SYMBOL[m] + j.state.value, j.detail)
                          for j, m in zip(data.journal, marks, strict=True)], cls="journal", marks=marks)


def _trials(data: SessionData) -> str:
    marks = [trial_mark(t) for t in data.trials]
    return _table(("Trial", "Workload", "Rep", "Configuration", "State", "Mean", "ops/s", *LATENCY_HEADERS,
                   "Fairness", "Reason, warnings"),
                  [(f"#{t.id}", workload_kind(t.workload), t.repetition, config_text(t.config),
                    SYMBOL[m] + t.state.value, trial_figure_text(t), figure_text(trial_ops(t), OPS),
                    *trial_latency_cells(t), trial_fairness_cell(t),
                    "; ".join(x for x in (t.reason, *trial_warnings(t)) if x))
                   for t, m in zip(data.trials, marks, strict=True)], numeric=(2, *range(5, 10)), cls="trials", marks=marks)


def _ladder(ladder: LadderResult) -> str:
    """The load ladder's section: the knee sentence, throughput and p99 against load, and the steps' table."""
    ok = [st for st in ladder.steps if st.throughput_bps is not None]
    x = np.array([st.load for st in ok], dtype=float)
    charts = [line_chart([Series("throughput", x, np.array([st.throughput_bps for st in ok], dtype=float))],
                         title="Throughput against offered load", x_label="streams", y_label="MB/s", y_scale=1e6),
              line_chart([Series("p99", x, np.array([st.p99_ms if st.p99_ms is not None else np.nan for st in ok]))],
                         title="p99 against offered load", x_label="streams", y_label="ms")]  # fmt: skip
    held = held_text(ladder.config)
    return "\n".join([f"<p>{_e(ladder.workload)} at {_e(held)}.</p>", f"<p><strong>{_e(ladder.sentence)}</strong></p>",
                      *charts, _table(STEP_COLUMNS, map(step_cells, ladder.steps), numeric=STEP_NUMERIC, cls="ladder")])  # fmt: skip


def _dirs(result: DirsResult) -> str:
    """The directory study's section: the collapse sentence, create rate against entries per layout, the points."""
    curves = result.drawn()
    chart = line_chart([Series(result.label(c), np.array([p.entries for p in c.points], dtype=float),
                               np.array([p.rate for p in c.points], dtype=float)) for c in curves],
                       title="Create rate against entries in the directory", x_label="entries",
                       y_label="creates/s") if curves else "<p>No curve was measured.</p>"  # fmt: skip
    rows = [(result.label(c), f"{p.entries:,}", create_rate_text(p.rate)) for c in result.curves for p in c.points]
    held = held_text(result.config)
    broke = [f"<p>{_e(result.label(c))} broke: {_e(c.reason)}</p>" for c in result.curves if c.reason]
    return "\n".join([f"<p>{result.entries:,} entries at {_e(held)}.</p>", f"<p><strong>{_e(result.sentence)}</strong></p>",
                      *broke, chart, _table(("Layout", "Entries", "Creates/s"), rows, numeric=(1, 2), cls="dirs")])


def render_html(data: SessionData, samples: SampleArrays, ladder: LadderResult | None = None,
                dirs: DirsResult | None = None) -> str:
    s = data.session
    title = f"nfs-tuner session {s.id} — {date_text(s.created)} — {', '.join(s.hosts) or 'no hosts'}"
    charts = over_time_charts(data.trials, samples) + knob_charts(data.trials, data.knobs)
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_e(CSP)}">',
        f"<meta name=\"generator\" content=\"nfs-tuner {_e(__version__)}\">",
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>", _meta(data), _legend(),
        *(('<h2 id="ladder">Load ladder</h2>', _ladder(ladder)) if ladder is not None else ()),
        *(('<h2 id="dirs">Directory scaling</h2>', _dirs(dirs)) if dirs is not None else ()),
        '<h2 id="results">Results</h2>', results_table(data),
        '<h2 id="recommendation">Recommendation</h2>', _recommendations(data),
        '<h2 id="plots">Plots</h2>', "\n".join(charts) or "<p>No samples were stored.</p>",
        '<h2 id="snippets">Configuration snippets</h2>', _snippets(data),
        '<h2 id="safety">Safety notes</h2>', _safety(data),
        '<h2 id="facts">Host facts (as they were)</h2>', _host_facts(data),
        '<h2 id="journal">Journal of host changes</h2>', _journal(data),
        '<h2 id="trials">Every trial</h2>', _trials(data),
        f'<p class="muted">Written by nfs-tuner {_e(__version__)}.</p>', "</body></html>",
    ]
    return "\n".join(parts)


REPORT = "the report"  # as messages name it


def write_report(store: Store, session_id: int, dest: str | Path, *, data: SessionData | None = None,
                 replace: bool = False) -> Path:
    """Render a session's report to ``dest`` by app.output_files' rules (``replace``: over an existing file)."""
    dest = Path(dest)
    if not replace and dest.exists():  # said before the rendering's work
        raise OutputExists(dest, REPORT)
    return write_text(dest, render_report(store, session_id, data=data), REPORT, replace=replace)


def render_report(store: Store, session_id: int, *, data: SessionData | None = None) -> str:
    """A session's report as one HTML text."""
    data = data or load_session_data(store, session_id)
    return render_html(data, store.load_session_samples(session_id), load_ladder(store, session_id),
                       load_dirs(store, session_id))
