"""``nfs-tuner report ID --to FILE``: a session's self-contained HTML report, with no host in reach."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from app.commands import arguments
from app.paths import resolve_db_path
from app.report import write_report
from app.store.errors import NotFoundError, StoreError
from app.store.store import Store


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "report", help="write a session's HTML report (one file, no external resources)",
        description="Write one stored session as a self-contained HTML report: tables, plots as inline SVG, "
                    "the recommendation with its evidence, the snippets, host facts and the journal.",
    )
    p.add_argument("id", type=arguments.session_id, metavar="ID", help="session id (see `nfs-tuner sessions list`)")
    p.add_argument("--to", type=arguments.report_file, required=True, metavar="FILE", help="HTML file to write")
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    db = resolve_db_path(getattr(args, "db", None))
    if not db.exists():
        print(f"nfs-tuner: no session database at {db}", file=sys.stderr)
        return 1
    try:
        with Store(db, readonly=True) as store:
            path = write_report(store, args.id, Path(args.to).expanduser())
    except NotFoundError:
        print(f"nfs-tuner: no session {args.id} in {db}", file=sys.stderr)
        return 1
    except (StoreError, OSError) as e:
        print(f"nfs-tuner: {e}", file=sys.stderr)
        return 1
    out.write(f"report of session {args.id} written to {path}\n")
    return 0
