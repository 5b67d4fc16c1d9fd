"""``nfs-tuner knobs``: every tunable of a server and its clients, now."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from app.commands import arguments
from app.commands.json_out import write_json
from app.commands.common import add_ssh_options, ssh_config_path
from app.commands.discover import run_discovery, ask_tty
from app.discovery import require_server
from app.hosts import HostError, SshSettings
from app.knobs.listing import format_rows, knob_rows
from app.vocabulary import about_host


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "knobs",
        help="list every tunable with its current value, valid values, safety class and whether it may change",
    )
    add_ssh_options(p)
    p.add_argument("--server", type=arguments.host_name, required=True, metavar="HOST", help="the NFS server")
    p.add_argument("--client", type=arguments.host_name, action="append", default=[], metavar="HOST",
                   help="an NFS client (repeatable)")
    p.add_argument("--export", type=arguments.export_path, metavar="PATH", help="only this export (default: all)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    config = ssh_config_path(args.ssh_config)
    hosts = [args.server, *args.client]
    results = asyncio.run(run_discovery(SshSettings(config_file=config), hosts, args.trust_new_keys, ask=ask_tty))
    failed = [r for r in results if r.facts is None]
    for r in failed:
        print(f"nfs-tuner: {about_host(r.host, str(r.error))}", file=sys.stderr)
    if failed:
        return 1
    server, *clients = [r.facts for r in results]
    assert server is not None
    try:
        require_server(server)
    except HostError as exc:
        print(f"nfs-tuner: {exc}", file=sys.stderr)
        return 1
    rows = knob_rows(server, [c for c in clients if c is not None], args.export)
    if args.json:
        write_json("knobs", {"knobs": [r.to_dict() for r in rows]}, sys.stdout)
    else:
        print(format_rows(rows))
    return 0
