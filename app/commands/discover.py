"""``nfs-tuner discover``: connect to hosts, print what they are (summary or JSON)."""

from __future__ import annotations

import argparse
import dataclasses
import asyncio
import sys
from collections.abc import Callable
from typing import Any, TextIO

from app.commands import arguments
from app.commands.json_out import write_json
from app.commands.common import ssh_config_path
from app.discovery import Discovery, discover_many, hosts_from_ssh_config, read_only_hint
from app.knobs.sudo_helper import with_helper_check
from app.facts import HostFacts
from app.hosts import HostPool, SshSettings, UnknownHostKey
from app.vocabulary import memory_text
from app.vocabulary.knobs import nfsd_threads_text


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "discover",
        help="connect to hosts over SSH and show their NFS-relevant facts",
        description=(
            "Connect to each HOST (a Host of the SSH config, or a hostname) and show its "
            "OS, CPU, RAM, NICs, disks and md arrays, exports, nfsd state, connected "
            "clients and NFS mounts. Host keys are checked strictly; unknown keys are "
            "offered for trust on a terminal."
        ),
    )
    p.add_argument("hosts", nargs="*", type=arguments.host_name, metavar="HOST", help="hosts to discover")
    p.add_argument("--ssh-config", type=arguments.ssh_config, metavar="FILE", help="OpenSSH config (default ~/.ssh/config)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a summary")
    p.add_argument(
        "--trust-new-keys",
        action="store_true",
        help="trust host keys seen for the first time (for scripts); prints each fingerprint",
    )
    p.add_argument(
        "--list-hosts", action="store_true", help="list the Host entries of the SSH config and exit"
    )
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    config = ssh_config_path(args.ssh_config)
    if args.list_hosts:
        for name in hosts_from_ssh_config(config):
            print(name)
        return 0
    if not args.hosts:
        print("nfs-tuner discover: name at least one HOST (or use --list-hosts)", file=sys.stderr)
        return 2
    settings = SshSettings(config_file=config)
    results = asyncio.run(run_discovery(settings, args.hosts, args.trust_new_keys, ask=ask_tty))
    if args.json:
        write_json("discover", {"hosts": [to_json(r) for r in results]}, sys.stdout)
    else:
        for r in results:
            if r.facts is not None:
                sys.stdout.write(summary(r.facts, r.seconds))
    for r in results:
        if r.error is not None:
            print(f"nfs-tuner: {r.error}", file=sys.stderr)
    return 0 if all(r.ok for r in results) else 1


async def run_discovery(
    settings: SshSettings,
    hosts: list[str],
    trust_new: bool,
    ask: Callable[[UnknownHostKey], bool] | None,
    out: TextIO | None = None,
) -> list[Discovery]:
    """Discover all hosts; hosts with an unknown key are trusted (if allowed) and retried."""
    report = out or sys.stderr
    async with HostPool(settings) as pool:
        results = {r.host: r for r in await discover_many(pool, hosts)}
        retry: list[str] = []
        for name, r in results.items():
            if not isinstance(r.error, UnknownHostKey):
                continue
            key = r.error
            if trust_new or (ask is not None and ask(key)):
                path = await pool.get(name).trust(key)
                print(
                    f"trusted {name}: {key.key_type} {key.fingerprint} (added to {path})",
                    file=report,
                )
                retry.append(name)
        for r in await discover_many(pool, retry):
            results[r.host] = r
        return [checked(results[h]) for h in dict.fromkeys(hosts)]


def checked(r: Discovery) -> Discovery:
    """A discovery with the installed helper's version checked against this nfs-tuner's."""
    return dataclasses.replace(r, facts=with_helper_check(r.facts)) if r.facts is not None else r


def ask_tty(key: UnknownHostKey) -> bool:
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        print(
            f"nfs-tuner: {key.host}: unknown host key {key.key_type} {key.fingerprint}; "
            "not trusted (no terminal to ask on; use --trust-new-keys in scripts)",
            file=sys.stderr,
        )
        return False
    where = key.host if key.port == 22 else f"[{key.host}]:{key.port}"
    sys.stderr.write(
        f"The authenticity of host {where} can't be established.\n"
        f"{key.key_type} key fingerprint is {key.fingerprint}.\n"
        "Trust it and remember it for nfs-tuner? [y/N] "
    )
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")


def to_json(r: Discovery) -> dict[str, Any]:
    out: dict[str, Any] = {"host": r.host, "ok": r.ok, "seconds": round(r.seconds, 3)}
    if r.facts is not None:
        out["facts"] = r.facts.to_dict()
    if r.error is not None:
        out["error"] = {"type": type(r.error).__name__, "message": str(r.error)}
    return out


def summary(f: HostFacts, seconds: float) -> str:
    """A readable block per host, the things an admin checks first."""
    roles = ", ".join(f.roles) or "no NFS role seen"
    lines = [
        f"{f.host} ({f.hostname}): {f.os.pretty_name or f.os.name or 'unknown OS'}, "
        f"kernel {f.kernel or '?'} {f.arch}  [{roles}; {f.privilege or '?'} as {f.user or '?'}]"
        f"  ({seconds:.2f} s)",
        f"  CPUs {f.cpu_count or '?'}, RAM {memory_text(f.mem_total_kb)}, nfs-utils "
        f"{f.nfs_utils_version or '?'}, python3 {f.python3.version or 'MISSING'}",
    ]
    for nic in f.nics:
        if nic.name == "lo":
            continue
        speed = f"{nic.speed_mbps} Mb/s" if nic.speed_mbps else "speed ?"
        lines.append(
            f"  nic {nic.name}: mtu {nic.mtu}, {speed}, {nic.state} {' '.join(nic.addresses)}".rstrip()
        )
    for md in f.md_arrays:
        lines.append(
            f"  {md.name}: {md.level} {md.state}, members {','.join(md.members) or '?'}, "
            f"chunk {md.chunk_kb if md.chunk_kb is not None else '?'} KiB, "
            f"stripe_cache_size {md.stripe_cache_size if md.stripe_cache_size is not None else '-'}"
        )
    fs = {e.export_path: e for e in f.export_filesystems}
    for ex in f.exports:
        on = fs.get(ex.path)
        where = f" on {on.fstype} {on.source}" if on else ""
        lines.append(f"  export {ex.path} -> {ex.client} ({','.join(ex.options)}){where}")
    if f.nfsd.running:
        vers = " ".join(("+" if on else "-") + v for v, on in f.nfsd.versions.items())
        lines.append(f"  nfsd: {nfsd_threads_text(f.nfsd)}, versions {vers or '?'}, max block size "
                     f"{f.nfsd.max_block_size or '?'} (read through {f.nfsd.interface})")
    for c in f.client_candidates:
        named = f" ({c.nfs4_name})" if c.nfs4_name else ""
        lines.append(f"  connected client {c.address}{named}")
    for m in f.nfs_mounts:
        lines.append(
            f"  mount {m.mount_point} <- {m.source} {m.fstype} vers {m.version or '?'}, "
            f"rsize {m.rsize}, wsize {m.wsize}, proto {m.proto or '?'}, "
            f"nconnect {m.nconnect or 1}, read_ahead_kb {m.read_ahead_kb}"
        )
    hint = read_only_hint(f)
    if hint:
        lines.append(f"  {hint}")
    for p in f.problems:
        lines.append(f"  note: {p}")
    return "\n".join(lines) + "\n\n"
