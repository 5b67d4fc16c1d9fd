"""``nfs-tuner helper``: the narrow sudo helper, printed for the admin to review and install."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from app.hosts.remote_args import UnsafeValue
from app.knobs.sudo_helper import contract_table, digest, install_instructions, render


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "helper", help="print nfs-tuner-helper, the one command a narrow sudoers rule needs",
        description="Print nfs-tuner-helper (python3, stdlib only) to stdout and how to install it to stderr. "
                    "With it as a login's only sudoers entry, nfs-tuner can tune the host, while a shell, a "
                    "write to /etc, a read of a root-only file or a mount over / stay refused.",
    )
    p.add_argument("--user", default="tuner", help="the login the sudoers line is for (default: tuner)")
    p.add_argument("--server", action="append", default=[], metavar="NAME",
                   help="an NFS server the helper's test mounts may name, as the clients mount it (repeatable); "
                        "the servers a host already mounts from, now or in /etc/fstab, need none")
    p.add_argument("--digest", action="store_true", help="print only the helper's digest (what the probe reports)")
    p.add_argument("--contract", action="store_true",
                   help="print the helper's contract: each command it runs, its arguments, what it may touch")
    p.set_defaults(func=cmd_helper)


def cmd_helper(args: argparse.Namespace) -> int:
    if args.digest:
        print(digest())
        return 0
    if args.contract:
        sys.stdout.write(contract_table())
        return 0
    try:
        text = render(args.server)
    except UnsafeValue as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    print(install_instructions(args.user, args.server), file=sys.stderr)
    return 0
