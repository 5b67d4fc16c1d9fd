"""``nfs-tuner sessions list|show|export``: review stored sessions without any host in reach."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from app.paths import resolve_db_path
from app.recommend import Ceilings, SessionRecommendation, recommend
from app.recommend.evidence import config_text, mbps
from app.snippets import context_for_session, render_all
from app.store.errors import NotFoundError, StoreError
from app.store.records import RecommendationRecord, SessionRecord, TrialRecord
from app.store.store import Store
from app.store.transfer import export_session
from app.store.csv_export import export_csv

MB = 1e6


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "sessions", help="list, show and export stored tuning sessions",
        description="Review the sessions kept in the session database (--db, $NFS_TUNER_DB or the default).",
    )
    sub = p.add_subparsers(dest="sessions_command", metavar="ACTION", required=True)
    ls = sub.add_parser("list", help="one line per session: date, hosts, state, best result per objective")
    ls.add_argument("--json", action="store_true", help="print JSON")
    ls.set_defaults(func=cmd_list)

    show = sub.add_parser("show", help="a session's trials, recommendation and snippets")
    show.add_argument("id", type=int, metavar="ID")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.add_argument("--objective", help="whose configuration the snippets render (default: the first)")
    show.add_argument("--no-snippets", action="store_true", help="leave the snippets out")
    show.add_argument("--allow-async", action="store_true",
                      help="when no recommendation is stored: consider async exports (data-loss risk)")
    show.add_argument("--network-mbps", type=float, help="network ceiling per client (MB/s, from a TCP test)")
    show.add_argument("--clients", type=int, default=1, help="clients that ran at once (default 1)")
    show.add_argument("--disk-read-mbps", type=float, help="server disk local read ceiling (MB/s)")
    show.add_argument("--disk-write-mbps", type=float, help="server disk local write ceiling (MB/s)")
    show.set_defaults(func=cmd_show)

    ex = sub.add_parser("export", help="write one session to a standalone file (and CSV)")
    ex.add_argument("id", type=int, metavar="ID")
    ex.add_argument("--to", required=True, metavar="FILE", help="new session file to write")
    ex.add_argument("--csv", metavar="DIR", help="also write the trials and samples as CSV into DIR")
    ex.set_defaults(func=cmd_export)


def _fail(message: str) -> int:
    print(f"nfs-tuner: {message}", file=sys.stderr)
    return 1


def _open(args: argparse.Namespace, *, readonly: bool) -> Store:
    return Store(resolve_db_path(getattr(args, "db", None)), readonly=readonly)


def _date(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t))


def _best_from_stored(recs: list[RecommendationRecord]) -> dict[str, float]:
    out: dict[str, float] = {}
    for r in recs:  # later rows replace earlier ones
        ev = r.evidence if isinstance(r.evidence, Mapping) else {}
        mean = ev.get("best", {}).get("throughput", {}).get("mean") if isinstance(ev.get("best"), Mapping) else None
        if isinstance(mean, int | float):
            out[r.objective] = float(mean)
    return out


def best_per_objective(store: Store, session: SessionRecord) -> dict[str, float]:
    """Stored recommendations' best figures, else computed from the ok trials' summaries."""
    stored = _best_from_stored(store.recommendations(session.id))
    if stored:
        return stored
    rec = recommend(store, session.id, allow_async=True, telemetry=False)
    return {o.objective: o.best.throughput.mean for o in rec.objectives}


def cmd_list(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    db = resolve_db_path(getattr(args, "db", None))
    if not db.exists():  # nothing recorded yet is not an error; never create the file here
        if args.json:
            out.write('{"sessions": []}\n')
        else:
            out.write(f"no sessions yet (no session database at {db})\n")
        return 0
    try:
        with _open(args, readonly=True) as store:
            rows = []
            for s in store.list_sessions():
                best = best_per_objective(store, s)
                rows.append({"id": s.id, "created": s.created, "date": _date(s.created), "hosts": list(s.hosts),
                             "state": s.state.value, "trials": len(store.trials(s.id)), "best_bps": best,
                             "origin": s.origin})
    except StoreError as e:
        return _fail(str(e))
    if args.json:
        json.dump({"sessions": rows}, out, indent=2)
        out.write("\n")
        return 0
    if not rows:
        out.write("no sessions yet\n")
        return 0
    for r in rows:
        best = ", ".join(f"{k} {mbps(v)}" for k, v in r["best_bps"].items()) or "no results"
        imported = "  (imported)" if r["origin"] else ""
        out.write(f"{r['id']:>4}  {r['date']}  {r['state']:<11}  {','.join(r['hosts']) or '-'}  "
                  f"{r['trials']} trial(s)  best: {best}{imported}\n")
    return 0


def _ceilings(args: argparse.Namespace) -> Ceilings:
    def bps(v: float | None) -> float | None:
        return v * MB if v is not None else None

    return Ceilings(network_per_client_bps=bps(args.network_mbps), clients=args.clients,
                    disk_read_bps=bps(args.disk_read_mbps), disk_write_bps=bps(args.disk_write_mbps))


def _trial_line(t: TrialRecord) -> str:
    s = t.summary if isinstance(t.summary, Mapping) else {}
    fig = s.get("throughput") if isinstance(s.get("throughput"), Mapping) else s
    mean = fig.get("mean")
    figure = f"{mbps(mean)} cv {fig.get('cv', 0):.1%} dip {fig.get('deepest_dip', 0):.0%}" \
        if isinstance(mean, int | float) else "no summary"
    work = t.workload.get("kind") or t.workload.get("name") if isinstance(t.workload, Mapping) else t.workload
    reason = f"  ({t.reason})" if t.reason else ""
    return f"  #{t.id:<5} {t.state.value:<8} {work!s:<12} {config_text(t.config)}: {figure}{reason}"


def _stored_view(recs: list[RecommendationRecord]) -> list[dict[str, Any]]:
    latest: dict[str, RecommendationRecord] = {r.objective: r for r in recs}
    return [{"objective": r.objective, "config": r.config, "evidence": r.evidence, "stored": True}
            for r in latest.values()]


def _computed_view(rec: SessionRecommendation) -> list[dict[str, Any]]:
    extras = {"excluded": rec.to_json()["excluded"]}
    return [{"objective": o.objective, "config": o.config, "evidence": o.to_json() | extras, "stored": False}
            for o in rec.objectives]


def cmd_show(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        with _open(args, readonly=True) as store:
            session = store.get_session(args.id)
            trials = store.trials(session.id)
            stored = store.recommendations(session.id)
            views = _stored_view(stored) if stored else _computed_view(
                recommend(store, session.id, ceilings=_ceilings(args), allow_async=args.allow_async))
            snippets: list[dict[str, str]] = []
            chosen = next((v for v in views if v["objective"] == args.objective), None) if args.objective \
                else (views[0] if views else None)
            if args.objective and chosen is None:
                return _fail(f"session {session.id} has no recommendation for {args.objective!r}")
            if chosen is not None and not args.no_snippets:
                ctx = context_for_session(store, session.id, chosen["objective"], _key_workload(trials, chosen))
                snippets = [s.to_json() for s in render_all(chosen["config"], ctx)]
    except NotFoundError:
        return _fail(f"no session {args.id} in {resolve_db_path(getattr(args, 'db', None))}")
    except StoreError as e:
        return _fail(str(e))
    except ValueError as e:  # a stored value that cannot go into a config file
        return _fail(f"cannot render snippets: {e}")
    if args.json:
        json.dump({"session": {"id": session.id, "created": session.created, "state": session.state.value,
                               "hosts": list(session.hosts), "notes": session.notes, "origin": session.origin},
                   "trials": [{"id": t.id, "state": t.state.value, "reason": t.reason, "config": t.config,
                               "workload": t.workload, "summary": t.summary} for t in trials],
                   "recommendations": views, "snippets": snippets}, out, indent=2)
        out.write("\n")
        return 0
    out.write(f"Session {session.id}  {_date(session.created)}  {session.state.value}  "
              f"hosts {', '.join(session.hosts) or '-'}\n")
    if session.origin:
        out.write(f"  {session.origin}\n")
    out.write(f"\nTrials ({len(trials)}):\n")
    for t in trials:
        out.write(_trial_line(t) + "\n")
    out.write("\nRecommendation" + ("" if not views or views[0]["stored"] else " (computed now, not stored)") + ":\n")
    if not views:
        out.write("  none: no ok trial informs an objective\n")
    for v in views:
        ev = v["evidence"] if isinstance(v["evidence"], Mapping) else {}
        out.write(f"  [{v['objective']}] {config_text(v['config'])}\n")
        for line in ev.get("evidence", []) if isinstance(ev.get("evidence"), list) else []:
            out.write(f"    - {line}\n")
        for w in ev.get("warnings", []) if isinstance(ev.get("warnings"), list) else []:
            out.write(f"    ! {w}\n")
        excluded = ev.get("excluded") or []
        if excluded:
            out.write(f"    excluded trials: {', '.join(f'#{e['trial_id']} ({e['reason']})' for e in excluded)}\n")
    for s in snippets:
        out.write(f"\n## {s['title']}  ->  {s['target']}\n")
        if s["safety"]:
            out.write(f"# note: {s['safety']}\n")
        out.write(s["text"] if s["text"].endswith("\n") else s["text"] + "\n")
    return 0


def _key_workload(trials: list[TrialRecord], view: Mapping[str, Any]) -> dict[str, Any] | None:
    """The workload of the chosen configuration's trials: what the fio job reproduces."""
    from app.recommend.objectives import objective_of

    for t in trials:
        if objective_of(t.workload) == view["objective"] and isinstance(t.workload, dict) and "kind" in t.workload:
            if all(str(t.config.get(k)) == str(v) for k, v in view["config"].items()):
                return t.workload
    return None


def cmd_export(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    dest = Path(args.to).expanduser()
    try:
        with _open(args, readonly=False) as store:
            path = export_session(store, args.id, dest)
            out.write(f"session {args.id} written to {path}\n")
            if args.csv:
                trials_csv, samples_csv = export_csv(store, args.id, Path(args.csv).expanduser())
                out.write(f"CSV: {trials_csv}, {samples_csv}\n")
    except NotFoundError:
        return _fail(f"no session {args.id} in {resolve_db_path(getattr(args, 'db', None))}")
    except StoreError as e:
        return _fail(str(e))
    return 0
