"""Directory scaling on the lab: `nfs-tuner study dirs` to a million entries, flat and hashed.

Drives the real command against the lab's guests (its SSH config, lab-server's /srv/nfs
export, lab-client1) and prints each layout's curve (create rate against entries, every
point) with the collapse figures and sentence; the session stays in the database for
`nfs-tuner sessions show` and `nfs-tuner report`.

    .venv/bin/python benchmarks/dir_scaling.py                       # 1,000,000 entries, both layouts
    .venv/bin/python benchmarks/dir_scaling.py --entries 2000000 --layout flat --db /tmp/dirs.db

The lab must be up (make lab-up); a million creates over NFS take a while on its guests.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.cli import main as nfs_tuner  # noqa: E402

MIN_ENTRIES = 1_000_000  # what the issue asks the lab to reach


def study(args: argparse.Namespace) -> dict[str, Any]:
    argv = [*(["--db", str(args.db)] if args.db else []), "study", "dirs", "--ssh-config", str(args.ssh_config),
            "--server", args.server, "--client", args.client, "--export", args.export,
            "--entries", str(args.entries), "--layout", args.layout, "--json"]  # fmt: skip
    out = io.StringIO()
    with contextlib.redirect_stdout(out):  # progress goes to stderr under --json
        code = nfs_tuner(argv)
    if code != 0 and not out.getvalue().strip():
        raise SystemExit(f"nfs-tuner study dirs failed ({code}); see above")
    data: dict[str, Any] = json.loads(out.getvalue())
    data["exit_code"] = code
    return data


def print_figures(data: dict[str, Any]) -> None:
    print(f"session {data['session']} ({data['state']}, exit {data['exit_code']}): {data['entries']:,} entries")
    for c in data["curves"]:
        col = c["collapse"]
        print(f"\n{c['layout']} on {c['client']}: {len(c['points'])} points"
              + (f", broke: {c['reason']}" if c["reason"] else ""))  # fmt: skip
        early = f"{col['early_rate']:,.0f}/s" if col["early_rate"] is not None else "—"
        at = f"{col['entries']:,} entries ({col['share']:.0%})" if col["entries"] is not None else "none"
        end = f"{col['end_share']:.0%}" if col["end_share"] is not None else "—"
        print(f"  early rate {early}; collapse at {at}; end holds {end} of the early rate")
        print(f"  {'entries':>12}  {'creates/s':>10}")
        for p in c["points"]:
            print(f"  {p['entries']:>12,}  {p['rate']:>10,.0f}")
    print(f"\n{data['sentence']}")
    if data["revert_problems"]:
        print("NOT put back: " + "; ".join(data["revert_problems"]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ssh-config", type=Path, default=REPO / ".lab" / "ssh_config")
    ap.add_argument("--server", default="lab-server")
    ap.add_argument("--client", default="lab-client1")
    ap.add_argument("--export", default="/srv/nfs")
    ap.add_argument("--entries", type=int, default=MIN_ENTRIES, help=f"at least {MIN_ENTRIES:,}")
    ap.add_argument("--layout", choices=("flat", "hashed", "both"), default="both")
    ap.add_argument("--db", type=Path, help="the session database (default: nfs-tuner's own)")
    args = ap.parse_args()
    if args.entries < MIN_ENTRIES:
        ap.error(f"--entries must be at least {MIN_ENTRIES:,}: the benchmark measures a directory that large")
    data = study(args)
    print_figures(data)
    return int(data["exit_code"])


if __name__ == "__main__":
    sys.exit(main())
