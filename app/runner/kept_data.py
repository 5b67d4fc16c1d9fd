"""A read's data set kept on the export from one trial to the next, and removed at the end of the run.

A read trial lays out its files before measuring (256 MiB a client by default: 17 s on the lab's gigabit);
what it reads does not depend on the configuration it was written under, and the caches of every host are
dropped before each trial, so the next read trial reads the same files from the server's disk as it would
fresh ones. The agent keeps them in a directory of its own name beside its work directory (config
keep_data: experiments/agent.py checks the name and that the directory is this login's); the run removes
them through a client whose test mount stands, as the login that made them. Names carry the run's journal
token: a session resumed after its controller died removes its earlier runs' kept data too (their tokens are
in its journal entries).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from app.hosts import HostError, HostPool
from app.hosts.remote_args import absolute_path

KEPT_PREFIX = ".nfs-tuner-kept-"  # experiments/agent.py's; the agent is standalone on the hosts
REMOVE_BOUND = 60.0  # seconds a removal may take over NFS before the client counts as not answering


def kept_names(tokens: Iterable[str], clients: int) -> list[str]:
    """Every kept directory the runs of ``tokens`` may have made, one per client."""
    return [kept_name(t, i) for t in sorted(set(tokens)) for i in range(clients)]


def kept_name(token: str, index: int) -> str:
    """The kept directory of the run whose journal is ``token``, for its ``index``-th client (the clients write
    in the same export: one directory each)."""
    if not token.isalnum():
        raise ValueError(f"a journal token is letters and digits, not {token!r}")
    return f"{KEPT_PREFIX}{token}-{index}"


async def remove_kept(pool: HostPool, through: Sequence[str], mount_point: str, names: Sequence[str]) -> str | None:
    """Remove the kept directories ``names`` under the test mount at ``mount_point`` through the first client of
    ``through`` that does it; None when gone, else why not (every client tried)."""
    paths = [absolute_path(f"{mount_point.rstrip('/')}/{name}", "kept data set") for name in names]
    why = "no client's test mount stands"
    for client in through:
        try:
            result = await pool[client].run(["rm", "-rf", "--", *paths], timeout=REMOVE_BOUND)
        except HostError as exc:
            why = str(exc)
            continue
        if result.ok:
            return None
        why = f"`rm -rf` on {client}: {result.stderr.strip() or f'exit {result.exit_status}'}"
    return why
