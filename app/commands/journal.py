"""``nfs-tuner journal``: changes that may still be on hosts after a crash, and setting them right."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

from app.commands import arguments
from app.commands.common import open_store, ssh_config_path
from app.hosts import HostError, HostPool, SshSettings
from app.knobs import recovery
from app.knobs.model import KnobError
from app.store import MissingDatabaseError, Store
from app.store.records import JournalEntry
from app.vocabulary import knob_value_text


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "journal",
        help="show changes not yet put back (after a crash) and revert or dismiss them",
        description=(
            "Every change nfs-tuner makes on a host is journaled first. After a crash, "
            "`check` asks the hosts whether their dead-man switch already restored the "
            "values; `revert` writes the old values back; `dismiss` closes entries you "
            "have checked by hand."
        ),
    )
    p.add_argument("action", choices=("list", "check", "revert", "dismiss"), nargs="?", default="list",
                   help="list (the default): the open entries; check: ask their hosts; revert: put the old values "
                        "back; dismiss: close entries checked by hand")
    p.add_argument("ids", nargs="*", type=arguments.journal_id, metavar="ID",
                   help="journal entries (default for revert: all open)")
    p.add_argument("--ssh-config", type=arguments.ssh_config, metavar="FILE", help="OpenSSH config (default ~/.ssh/config)")
    p.set_defaults(func=main)


def describe(e: JournalEntry) -> str:
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e.created_at))
    return f"#{e.id:<5} {when}  {e.host:<16} {e.knob:<18} {e.target:<40} {knob_value_text(e.knob, e.old_value):>10} → {knob_value_text(e.knob, e.new_value):<10} {e.state.value}"


NOTHING_OPEN = "no changes are waiting to be put back"


def main(args: argparse.Namespace) -> int:
    try:
        store = open_store(args)  # never made here: a journal that does not exist holds nothing
    except MissingDatabaseError as exc:
        return _nothing_open(args, f" (no session database at {exc.path})")
    with store:
        open_entries = store.unreverted_journal()
        chosen = [e for e in open_entries if not args.ids or e.id in args.ids]
        if not open_entries:
            return _nothing_open(args, "")
        missing = set(args.ids) - {e.id for e in open_entries}
        if missing:
            print(f"nfs-tuner: no open journal entries {sorted(missing)}", file=sys.stderr)
            return 2
        if args.action == "list":
            for e in open_entries:
                print(describe(e))
            return 0
        if args.action == "dismiss":
            if not args.ids:
                print("nfs-tuner: name the entries to dismiss (after checking their hosts)", file=sys.stderr)
                return 2
            for e in chosen:
                recovery.dismiss(store, e)
                print(f"dismissed #{e.id}")
            return 0
        config = ssh_config_path(args.ssh_config)
        return asyncio.run(_connected(args.action, store, chosen, SshSettings(config_file=config)))


def _nothing_open(args: argparse.Namespace, why: str) -> int:
    """Every action says so when the journal holds nothing open; entries named that are not open are an error."""
    if args.ids:
        print(f"nfs-tuner: no open journal entries {sorted(set(args.ids))}; {NOTHING_OPEN}{why}", file=sys.stderr)
        return 2
    print(f"{NOTHING_OPEN}{why}" + ("" if args.action == "list" else f"; nothing to {args.action}"))
    return 0


async def _connected(action: str, store: Store, entries: list[JournalEntry], settings: SshSettings) -> int:
    rc = 0
    async with HostPool(settings) as pool:
        if action == "check":
            for p in await recovery.inspect(store, pool):
                print(f"{describe(p.entry)}  [{p.status}]")
            return 0
        for e in entries:  # revert, newest first
            try:
                await recovery.revert_entry(store, pool, e)
                print(f"reverted #{e.id}: {e.knob} on {e.host} is {knob_value_text(e.knob, e.old_value)} again")
            except (KnobError, HostError) as exc:
                print(f"nfs-tuner: #{e.id}: {exc}", file=sys.stderr)
                rc = 1
    return rc
