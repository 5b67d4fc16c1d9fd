"""``nfs-tuner sessions list|show|export|import``: review and share stored sessions without any host in reach."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from app.commands import arguments
from app.commands.common import UsageError, force_argument, open_store
from app.commands.json_out import write_json
from app.commands.study import dirs_lines, ladder_lines
from app.paths import resolve_db_path
from app.report.dirs import load_dirs
from app.report.ladder import load_ladder
from app.report.session_data import (
    NOT_STORED,
    not_stored,
    load_session_data,
    objective_views,
    plan_goal,
    trial_fairness,
    trial_fairness_json,
    trial_figure_text,
    trial_figures,
    trial_latency,
    trial_latency_json,
    trial_limit_text,
    trial_mean,
    workload_kind,
)
from app.store.csv_export import export_csv
from app.output_files import STDOUT, is_stdout
from app.store.errors import MissingDatabaseError, NotFoundError, StoreError
from app.store.records import TrialRecord
from app.store.transfer import export_session, import_sessions
from app.vocabulary import (
    clients_note,
    change_text,
    config_text,
    date_text,
    figure_text,
    goal_text,
    latencies_text,
    latency_text,
    percent_text,
)
from app.vocabulary.ladder import knee_short_text


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "sessions", help="list, show and export stored tuning sessions",
        description="Review the sessions kept in the session database (--db, $NFS_TUNER_DB or the default).",
    )
    sub = p.add_subparsers(dest="sessions_command", metavar="ACTION", required=True)
    ls = sub.add_parser("list", help="one line per session: date, hosts, state, the recommendation per objective")
    ls.add_argument("--json", action="store_true", help="print JSON")
    ls.set_defaults(func=cmd_list)

    show = sub.add_parser("show", help="a session's trials, recommendation and snippets")
    show.add_argument("id", type=arguments.session_id, metavar="ID", help="session id (see `nfs-tuner sessions list`)")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.add_argument("--objective", help="whose configuration the snippets render (default: the first)")
    show.add_argument("--no-snippets", action="store_true", help="leave the snippets out")
    show.set_defaults(func=cmd_show)

    ex = sub.add_parser("export", help="write one session to a standalone file (and CSV)")
    ex.add_argument("id", type=arguments.session_id, metavar="ID", help="session id (see `nfs-tuner sessions list`)")
    ex.add_argument("--to", type=arguments.session_file, required=True, metavar="FILE",
                    help=f"session file to write ({STDOUT}: standard output, not a terminal)")
    ex.add_argument("--csv", type=arguments.output_dir, metavar="DIR",
                    help="also write the trials and samples as CSV into DIR")
    force_argument(ex, "the files")
    ex.set_defaults(func=cmd_export)

    im = sub.add_parser("import", help="copy the sessions of a received session file into the database, with new ids",
                        description="The file is checked on a private copy first: a damaged or hostile file "
                                    "imports nothing and is never written.")
    im.add_argument("file", metavar="FILE", help="a session file (from `sessions export` or the review window)")
    im.add_argument("--again", action="store_true",
                    help="import a session this database holds already as a second copy (else it is named and left)")
    im.set_defaults(func=cmd_import)


def _fail(message: str) -> int:
    print(f"nfs-tuner: {message}", file=sys.stderr)
    return 1


def cmd_list(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        with open_store(args, readonly=True) as store:
            rows: list[dict[str, Any]] = []
            for s in store.list_sessions():
                ladder = load_ladder(store, s.id)  # a ladder recommends no knob: its knee instead
                dirs = load_dirs(store, s.id)  # nor a directory study: its collapse
                views = () if ladder or dirs else objective_views(store, s.id, telemetry=False)[0]
                rows.append({"id": s.id, "created": s.created, "date": date_text(s.created), "hosts": list(s.hosts),
                             "state": s.state.value, "trials": len(store.trials(s.id)),
                             "recommendation_stored": not not_stored(views),
                             "recommended": {v.objective: {"config": v.config, "figure_bps": v.figure, "unit": v.unit,
                                                           "p99_ms": v.p99_ms, "goal": v.goal.to_json(),
                                                           "met_goal": v.met_goal,
                                                           "changes": {k: list(c) for k, c in v.plan.changes.items()}
                                                           if v.plan is not None and v.plan.status != "not checked"
                                                           else None}
                                             for v in views},
                             "origin": s.origin, **({"ladder": ladder.to_json()["knee"]} if ladder else {}),
                             **({"dirs": {"summary": dirs.summary}} if dirs else {})})
    except MissingDatabaseError as e:  # nothing recorded yet is not an error
        rows = []
        if not args.json:
            out.write(f"no sessions yet (no session database at {e.path})\n")
            return 0
    if args.json:
        write_json("sessions list", {"sessions": rows}, out)
        return 0
    if not rows:
        out.write("no sessions yet\n")
        return 0
    for r in rows:
        recommended: dict[str, dict[str, Any]] = r["recommended"]
        figures = [f"{o} {figure_text(v['figure_bps'], v['unit'])}"
                   + (f" (p99 {latency_text(v['p99_ms'])})" if v["p99_ms"] is not None else "")
                   for o, v in recommended.items() if v["figure_bps"] is not None]
        changes = next((v["changes"] for v in recommended.values() if v.get("changes") is not None), None)
        if changes is not None:  # the plan's one configuration: what changes, then each workload's figure
            what = ", ".join(change_text(k, a, b) for k, (a, b) in changes.items()) or "keep today's settings"
            rec = f"{what} ({', '.join(figures)})" if figures else what
        else:
            rec = ", ".join(f"{o} {config_text(v['config'])} {f.split(' ', 1)[1]}"
                            for (o, v), f in zip(((o, v) for o, v in recommended.items() if v["figure_bps"] is not None),
                                                 figures, strict=True)) or "no results"  # fmt: skip
        if "ladder" in r:
            rec = f"(load ladder) {knee_short_text(r['ladder'])}"
        if "dirs" in r:
            rec = f"(directory scaling) {r['dirs']['summary']}"
        imported = "  (imported)" if r["origin"] else ""
        head = "" if "ladder" in r or "dirs" in r else "recommended: " if r["recommendation_stored"] else f"{NOT_STORED}: "
        out.write(f"{r['id']:>4}  {r['date']}  {r['state']:<11}  {','.join(r['hosts']) or '-'}  "
                  f"{r['trials']} trial(s)  {head}{rec}{imported}\n")
    return 0


def _share(value: Any) -> float | None:
    """A summary's share (cv, dip) as a number: a summary may hold null (or, from elsewhere, anything)."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _trial_line(t: TrialRecord) -> str:
    fig, mean, lat = trial_figures(t), trial_mean(t), trial_latency(t)
    latency = f" {latencies_text(lat.p50_ms, lat.p99_ms, lat.p999_ms)}" if lat is not None else ""
    if (fair := clients_note(trial_fairness(t))) is not None:  # the clients' spread, only when beyond the noise
        latency += f", {fair}"
    figure = (f"{trial_figure_text(t)} cv {percent_text(_share(fig.get('cv')))} "
              f"dip {percent_text(_share(fig.get('deepest_dip')))}{latency}") if mean is not None else "no summary"
    if mean is not None and (limit := trial_limit_text(t)):  # the rate of what completed, said as such
        figure += f"; {limit}"
    reason = f"  ({t.reason})" if t.reason else ""
    return f"  #{t.id:<5} {t.state.value:<8} {workload_kind(t.workload):<12} {config_text(t.config)}: {figure}{reason}"


def cmd_show(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        with open_store(args, readonly=True) as store:
            data = load_session_data(store, args.id)
            ladder = load_ladder(store, args.id)
            dirs = load_dirs(store, args.id)
    except NotFoundError:
        return _fail(f"no session {args.id} in {resolve_db_path(getattr(args, 'db', None))}")
    views = data.objectives
    chosen = data.objective(args.objective) if args.objective else (views[0] if views else None)
    if args.objective and chosen is None:
        return _fail(f"session {args.id} has no recommendation for {args.objective!r}")
    group = data.snippet_group(chosen.objective) if chosen is not None and not args.no_snippets else None
    if group is not None and group.error:
        return _fail(group.error)
    snippets = [s.to_json() for s in group.snippets] if group is not None else []
    session, trials = data.session, data.trials
    if args.json:
        write_json("sessions show", {"session": {"id": session.id, "created": session.created, "state": session.state.value,
                               "hosts": list(session.hosts), "notes": session.notes, "origin": session.origin},
                   "goal": plan_goal(session.plan).to_json(),
                   "trials": [{"id": t.id, "state": t.state.value, "reason": t.reason, "config": t.config,
                               "workload": t.workload, "summary": t.summary, "latency": trial_latency_json(t),
                               "fairness": trial_fairness_json(t)}
                              for t in trials],
                   "recommendations": [v.to_json() for v in views], "excluded": list(data.excluded),
                   "snippets": snippets, **({"ladder": ladder.to_json()} if ladder else {}),
                   **({"dirs": dirs.to_json()} if dirs else {})}, out)  # fmt: skip
        return 0
    out.write(f"Session {session.id}  {date_text(session.created)}  {session.state.value}  "
              f"hosts {', '.join(session.hosts) or '-'}  goal: {goal_text(plan_goal(session.plan))}\n")
    if session.origin:
        out.write(f"  {session.origin}\n")
    out.write(f"\nTrials ({len(trials)}):\n")
    for t in trials:
        out.write(_trial_line(t) + "\n")
    if ladder is not None:  # a ladder recommends no knob: its knee instead
        out.writelines(f"{line}\n" for line in ["", *ladder_lines(ladder)])
        return 0
    if dirs is not None:  # nor a directory study: its curves and collapse
        out.writelines(f"{line}\n" for line in ["", *dirs_lines(dirs)])
        return 0
    out.write("\nRecommendation" + (f" ({NOT_STORED})" if not_stored(views) else "") + ":\n")
    if not views:
        out.write("  none: no ok trial informs an objective\n")
    if (plan := data.plan) is not None:  # one configuration for every workload (its first line says which)
        out.writelines(f"  {'' if i == 0 else '  - '}{line}\n" for i, line in enumerate(plan.evidence))
    for v in views:
        figure = f": {v.figures_text()}" if v.figure is not None else ""
        if plan is not None:
            gain = v.plan_gain_text()
            out.write(f"  [{v.objective}]{figure}{f', {gain} confirmed' if gain else ''}\n")
            out.writelines(f"    - {line}\n" for line in v.own_evidence)
        else:
            out.write(f"  [{v.objective}] {config_text(v.config)}{figure}\n")
            out.writelines(f"    - {line}\n" for line in v.evidence)
        out.writelines(f"    ! {w}\n" for w in v.warnings)
    if data.excluded:
        out.write(f"  excluded trials: {', '.join(f'#{e.get("trial_id")} ({e.get("reason")})' for e in data.excluded)}\n")
    for sn in snippets:
        out.write(f"\n## {sn['title']}  ->  {sn['target']}\n")
        if sn["safety"]:
            out.write(f"# note: {sn['safety']}\n")
        out.write(sn["text"] if sn["text"].endswith("\n") else sn["text"] + "\n")
    return 0


def cmd_export(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    to_stdout = is_stdout(args.to)
    if to_stdout and sys.stdout.isatty():
        raise UsageError("a session file is binary: give a file name to --to, or send standard output to a file "
                         "or a pipe")  # fmt: skip
    try:
        with open_store(args) as store:
            if to_stdout:
                with tempfile.TemporaryDirectory(prefix="nfs-tuner-export-") as tmp:
                    path = export_session(store, args.id, Path(tmp) / "session.db")
                    with path.open("rb") as f:
                        shutil.copyfileobj(f, sys.stdout.buffer)
                    sys.stdout.buffer.flush()
                out = sys.stderr  # standard output holds the file
                out.write(f"session {args.id} written to standard output\n")
            else:
                path = export_session(store, args.id, Path(args.to).expanduser(), replace=args.force)
                out.write(f"session {args.id} written to {path}\n")
            if args.csv:
                trials_csv, samples_csv = export_csv(store, args.id, Path(args.csv).expanduser(), replace=args.force)
                out.write(f"CSV: {trials_csv}, {samples_csv}\n")
    except NotFoundError:
        return _fail(f"no session {args.id} in {resolve_db_path(getattr(args, 'db', None))}")
    return 0


def cmd_import(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    src = Path(args.file).expanduser()
    try:
        with open_store(args, create=True) as store:
            done = import_sessions(store, src, again=args.again)
    except StoreError as e:  # every import failure: the database and the file are as they were
        return _fail(str(e))
    if done.ids or not done.already:
        out.write(f"imported {len(done.ids)} session(s) from {src}: {', '.join(str(i) for i in done.ids)}\n")
    for theirs, here in done.already.items():
        out.write(f"session {theirs} of {src} is here already as session {here}: not imported again "
                  "(--again imports a second copy)\n")
    return 0
