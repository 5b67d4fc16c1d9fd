"""``nfs-tuner report ID --to FILE``: a session's self-contained HTML report, with no host in reach."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from app.commands import arguments
from app.commands.common import force_argument, open_store
from app.output_files import STDOUT, is_stdout
from app.paths import resolve_db_path
from app.report import render_report, write_report
from app.store.errors import NotFoundError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "report", help="write a session's HTML report (one file, no external resources)",
        description="Write one stored session as a self-contained HTML report: tables, plots as inline SVG, "
                    "the recommendation with its evidence, the snippets, host facts and the journal.",
    )
    p.add_argument("id", type=arguments.session_id, metavar="ID", help="session id (see `nfs-tuner sessions list`)")
    p.add_argument("--to", type=arguments.report_file, required=True, metavar="FILE",
                   help=f"HTML file to write ({STDOUT}: standard output)")
    force_argument(p, "the file")
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        with open_store(args, readonly=True) as store:
            if is_stdout(args.to):
                out.write(render_report(store, args.id))
                return 0
            path = write_report(store, args.id, Path(args.to).expanduser(), replace=args.force)
    except NotFoundError:
        print(f"nfs-tuner: no session {args.id} in {resolve_db_path(getattr(args, 'db', None))}", file=sys.stderr)
        return 1
    out.write(f"report of session {args.id} written to {path}\n")
    return 0
