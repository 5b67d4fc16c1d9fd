"""nfs-tuner-helper as the admin installs it: rendered from sudo_helper_host.py with the
dead-man switch built in, its digest, the servers its test mounts may name, and how to
install it; and its contract (the helper's CONTRACT table) in words, for the README.

The digest names the exact program, whatever servers it was rendered for; the host's
probe reports the installed helper's, so nfs-tuner can say when the helper on a host is
not this nfs-tuner's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from importlib import resources
from typing import Any

import dataclasses

from app.facts.model import HostFacts
from app.hosts.privilege import HELPER_PATH, PrivilegeMode, sudoers_line
from app.hosts.remote_args import address

_SERVERS_LINE = "SERVERS = ()  # filled in by `nfs-tuner helper --server NAME`: NFS servers a test mount may name"


def _read(name: str) -> str:
    return resources.files("app.knobs").joinpath(name).read_text(encoding="utf-8")


def _body() -> str:
    return _read("sudo_helper_host.py").replace(
        "DEADMAN_SOURCE = None  # filled in when the helper is rendered for installing",
        f"DEADMAN_SOURCE = {_read('deadman_host.py')!r}",
        1,
    )


def digest() -> str:
    return hashlib.sha256(_body().encode("utf-8")).hexdigest()[:16]


def render(servers: Sequence[str] = ()) -> str:
    """The helper's installable text: a python3 script, root-owned once installed.

    ``servers``: NFS servers its test mounts may name besides those the host already mounts
    from (now or in /etc/fstab); each must be a host name or an IP address.
    """
    named = tuple(dict.fromkeys(address(s, "NFS server") for s in servers))
    body = _body().replace('HELPER_DIGEST = "unrendered"', f'HELPER_DIGEST = "{digest()}"', 1)
    body = body.replace(_SERVERS_LINE, f"SERVERS = {named!r}  # rendered by `nfs-tuner helper --server`", 1)
    return "#!/usr/bin/python3 -IS\n" + body  # isolated, no site module: half the start-up


def helper_namespace() -> dict[str, Any]:
    """The helper's definitions (its CONTRACT, its checks), executed here without running it."""
    ns: dict[str, Any] = {"__name__": "nfs_tuner_helper"}
    exec(compile(_read("sudo_helper_host.py"), "sudo_helper_host.py", "exec"), ns)
    return ns


def contract_table() -> str:
    """CONTRACT as a Markdown table: each command the helper runs, its arguments' grammar, what it touches."""
    ns = helper_namespace()
    arg = ns["Arg"]
    rows = ["| command | arguments | stdin | what it may touch |", "|---|---|---|---|"]
    for row in ns["CONTRACT"]:
        grammar = "; ".join(f"{a.name}: {a.grammar}" for a in row.args if isinstance(a, arg)) or "—"
        stdin = f"{row.stdin.name}: {row.stdin.grammar}" if row.stdin is not None else "—"
        rows.append(f"| `{ns['usage'](row)}` | {_cell(grammar)} | {_cell(stdin)} | {_cell(row.touches)} |")
    return "\n".join(rows) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def with_helper_check(facts: HostFacts) -> HostFacts:
    """The facts, with a problem when the login tunes through an nfs-tuner-helper that is not this version's."""
    if facts.privilege != PrivilegeMode.HELPER.value or not facts.helper or facts.helper == digest():
        return facts
    problem = (f"nfs-tuner-helper on {facts.host} is not this nfs-tuner's (its digest {facts.helper}, this version's "
               f"{digest()}): install this version's (`nfs-tuner helper`); a helper older than this one may let the "
               "login read root-only files through its dead-man switch")
    return dataclasses.replace(facts, problems=(*facts.problems, problem))


def install_instructions(user: str = "tuner", servers: Sequence[str] = ()) -> str:
    where = (f" Its test mounts may name {', '.join(servers)} and the NFS servers a host already mounts from."
             if servers else " Its test mounts may name only the NFS servers a host already mounts from (now or in "
                             "/etc/fstab); add others with --server NAME.")
    return (
        f"Review the helper, then as root on each host:\n"
        f"  install -o root -g root -m 0755 nfs-tuner-helper {HELPER_PATH}\n"
        f"  echo '{sudoers_line(user)}' > /etc/sudoers.d/nfs-tuner\n"
        f"  chmod 0440 /etc/sudoers.d/nfs-tuner && visudo -c\n"
        f"It runs only the commands nfs-tuner uses, each argument checked; anything else is refused "
        f"(`nfs-tuner helper --contract` lists them).{where}"
    )
