"""Discovering hosts: privilege probe plus one gather script per host, hosts concurrently."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from app.facts import GATHER_SCRIPT, HostFacts, build_host_facts, split_sections
from app.facts.build import CUT_SHORT
from app.facts.script import MARKER
from app.hosts import HostConnection, HostError, HostPool, NoPython3, NotAnNfsServer, UnreadableReply
from app.hosts.privilege import PrivilegeMode, sudoers_line
from app.hosts.ssh_config import config_hosts

GATHER_TIMEOUT = 60.0


@dataclass(frozen=True)
class Discovery:
    """One host's outcome: facts, or the typed error that stopped discovery."""

    host: str
    facts: HostFacts | None
    error: HostError | None
    seconds: float

    @property
    def ok(self) -> bool:
        return self.facts is not None


async def _gather(conn: HostConnection, sudo: bool) -> tuple[HostFacts, str]:
    result = await conn.run(["sh", "-s"], sudo=sudo, input=GATHER_SCRIPT, timeout=GATHER_TIMEOUT)
    return build_host_facts(conn.name, result.stdout), result.stdout


# nfsd's files that only root may read, by the gather script's section names.
ROOT_ONLY_NFSD = {
    "nfsd_threads": "/proc/fs/nfsd/threads",
    "nfsd_versions": "/proc/fs/nfsd/versions",
    "nfsd_pool_stats": "/proc/fs/nfsd/pool_stats",
    "nfsd_max_block_size": "/proc/fs/nfsd/max_block_size",
    "nfsd_pool_threads": "/proc/fs/nfsd/pool_threads",
}


async def _root_only_sections(conn: HostConnection, output: str) -> str:
    """The gather output with nfsd's root-only files read one by one through sudo.

    For a login whose sudo rule will not run a shell (nfs-tuner-helper reads these
    files and nothing else): without them a running server reads as "0 threads".
    """
    sections = split_sections(output)
    if sections.get("nfsd_present", "").strip() != "yes":
        return output
    added = []
    for name, path in ROOT_ONLY_NFSD.items():
        if sections.get(name, "").strip():
            continue
        result = await conn.run(["cat", "--", path], sudo=True, timeout=GATHER_TIMEOUT)
        if result.ok:
            added.append(f"\n{MARKER}{name}@@\n{result.stdout}")
    return output + "".join(added)


async def discover_host(conn: HostConnection) -> HostFacts:
    """One round trip for root (the script also probes privilege), two for sudoers.

    A sudo-capable login runs the script again through sudo to read root-only files
    (NFSv4 client records); where the rule refuses ``sh`` (nfs-tuner-helper, or a
    narrow rule of the admin's), nfsd's root-only files are read one by one instead.
    """
    facts, output = await _gather(conn, False)
    conn.adopt_probe(split_sections(output).get("privilege", ""))
    priv = await conn.privilege()
    if priv.can_change and not priv.is_root:
        with_sudo = None if priv.via_helper else (await _gather(conn, True))[0]
        if with_sudo is not None and CUT_SHORT not in with_sudo.problems:
            facts = with_sudo
        else:
            facts = build_host_facts(conn.name, await _root_only_sections(conn, output))
    line = "" if priv.can_change else sudoers_line(priv.user)
    return dataclasses.replace(
        facts, user=priv.user, privilege=priv.mode.value, sudoers_line=line, helper=priv.helper
    )


async def discover_one(pool: HostPool, name: str) -> Discovery:
    start = time.perf_counter()
    try:
        facts = await discover_host(pool.get(name))
    except HostError as exc:
        return Discovery(name, None, exc, time.perf_counter() - start)
    except (ValueError, TypeError, KeyError, IndexError, ArithmeticError, RecursionError) as exc:
        # The parsers are total (tests/unit/app/facts/test_facts_fuzz.py); should one still trip on
        # what a host sent, that host fails alone: discover_many gathers every host.
        error = UnreadableReply(name, f"{exc.__class__.__name__}: {exc}")
        return Discovery(name, None, error, time.perf_counter() - start)
    return Discovery(name, facts, None, time.perf_counter() - start)


async def discover_many(pool: HostPool, names: Iterable[str]) -> list[Discovery]:
    """Discover every host concurrently; results in the order given (duplicates once)."""
    order = list(dict.fromkeys(names))
    return list(await asyncio.gather(*(discover_one(pool, n) for n in order)))


def require_server(facts: HostFacts) -> None:
    """Raise NotAnNfsServer unless the host runs nfsd with threads and exports."""
    if not facts.nfsd.running:
        raise NotAnNfsServer(facts.host, "no /proc/fs/nfsd: the nfsd kernel service is not loaded")
    if not facts.nfsd.threads:
        raise NotAnNfsServer(facts.host, "nfsd has 0 threads: the NFS server is stopped")
    if not facts.exports:
        raise NotAnNfsServer(facts.host, "nothing is exported (exportfs -v is empty)")


def require_client(facts: HostFacts) -> None:
    """Raise NoPython3 when the load agent cannot run on this client."""
    if not facts.python3.usable_for_agent:
        raise NoPython3(facts.host, facts.python3.version if facts.python3.present else "")


def read_only_hint(facts: HostFacts) -> str:
    """What the admin could do so nfs-tuner may change this host's tunables."""
    if facts.privilege == PrivilegeMode.READ_ONLY.value:
        return f"read-only on this host; to allow changes add with visudo: {facts.sudoers_line}"
    return ""


def hosts_from_ssh_config(config_file: Path | None = None) -> list[str]:
    """Concrete Host aliases of an SSH config, to pick from."""
    return config_hosts(config_file)
