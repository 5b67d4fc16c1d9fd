"""``nfs-tuner helper``: the narrow sudo helper, printed for the admin to review and install."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from app.knobs.sudo_helper import digest, install_instructions, render


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "helper", help="print nfs-tuner-helper, the one command a narrow sudoers rule needs",
        description="Print nfs-tuner-helper (python3, stdlib only) to stdout and how to install it to stderr. "
                    "With it as a login's only sudoers entry, nfs-tuner can tune the host, while a shell, a "
                    "write to /etc or a mount over / stay refused.",
    )
    p.add_argument("--user", default="tuner", help="the login the sudoers line is for (default: tuner)")
    p.add_argument("--digest", action="store_true", help="print only the helper's digest (what the probe reports)")
    p.set_defaults(func=cmd_helper)


def cmd_helper(args: argparse.Namespace) -> int:
    if args.digest:
        print(digest())
        return 0
    sys.stdout.write(render())
    print(install_instructions(args.user), file=sys.stderr)
    return 0
