"""Pure parsers for what nfsdctl (nfs-utils 2.7+) prints of nfsd's netlink state, and for the
/proc and /sys files that say the same on a host without it.

``nfsdctl threads`` prints ``key: value`` lines; ``pool-threads:`` holds one count per pool and
``min-threads:`` appears only when the kernel reported a floor (self-scaling threads, Linux 7.0).
``nfsdctl pool-mode`` prints ``pool-mode: global`` and ``npools: 1``; ``nfsdctl listener`` one
``tcp:0.0.0.0:2049`` per socket. Any other text is counted as a problem, never trusted.
"""

from __future__ import annotations

import re

from app.facts.model import Parsed
from app.facts.parse_system import to_int

POOL_MODES = ("global", "percpu", "pernode", "auto")
_KEY_VALUE = re.compile(r"([a-z][a-z-]{0,31}):\s*(.*)")
_LISTENER = re.compile(r"(tcp|udp|rdma|tcp6|udp6):(\[[0-9A-Fa-f:.]{2,45}\]|[0-9.]{7,15}|[A-Za-z0-9.-]{1,253}):[0-9]{1,5}")


def key_values(text: str) -> dict[str, str]:
    """``key: value`` lines (the first of each key); other lines are ignored."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if m := _KEY_VALUE.fullmatch(line.strip()):
            out.setdefault(m.group(1), m.group(2).strip())
    return out


def counts(text: str) -> tuple[int, ...] | None:
    """Whole numbers separated by white space (pool-threads, /proc/fs/nfsd/pool_threads), or None."""
    numbers = [to_int(w) for w in text.split()]
    if not numbers or any(n is None or n < 0 for n in numbers):
        return None
    return tuple(n for n in numbers if n is not None)


def parse_threads(text: str) -> Parsed[tuple[tuple[int, ...], int | None]]:
    """``nfsdctl threads``: (threads per pool, the min-threads floor or None); ((), None) when it did not answer."""
    kv = key_values(text)
    if "pool-threads" not in kv:
        return Parsed(((), None))
    pools = counts(kv["pool-threads"])
    problems: tuple[str, ...] = () if pools is not None else (f"odd nfsdctl pool-threads: {kv['pool-threads'][:40]!r}",)
    floor = to_int(kv["min-threads"]) if "min-threads" in kv else None
    if "min-threads" in kv and (floor is None or floor < 0):
        problems += (f"odd nfsdctl min-threads: {kv['min-threads'][:40]!r}",)
        floor = None
    return Parsed((pools or (), floor), problems)


def parse_pool_mode(text: str) -> Parsed[tuple[str | None, int | None]]:
    """``nfsdctl pool-mode`` (pool-mode:, npools:) or sunrpc's pool_mode parameter (the mode alone)."""
    kv = key_values(text)
    mode = kv.get("pool-mode", text.strip() if "\n" not in text.strip() else "")
    if not mode:
        return Parsed((None, None))
    if mode not in POOL_MODES:
        return Parsed((None, None), (f"odd nfsd pool mode: {mode[:40]!r}",))
    npools = to_int(kv.get("npools", ""))
    return Parsed((mode, npools if npools and npools > 0 else None))


def parse_listeners(text: str) -> Parsed[tuple[str, ...]]:
    """``nfsdctl listener`` lines, or /proc/fs/nfsd/portlist's ("tcp 2049"), each once."""
    found: list[str] = []
    problems: list[str] = []
    for line in (ln.strip() for ln in text.splitlines()):
        if not line:
            continue
        words = line.split()
        if _LISTENER.fullmatch(line) or (len(words) == 2 and words[0] in ("tcp", "udp", "rdma") and words[1].isdigit()):
            if line not in found:
                found.append(line)
        else:
            problems.append(f"odd nfsd listener: {line[:60]!r}")
    return Parsed(tuple(found), tuple(problems))
