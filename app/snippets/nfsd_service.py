"""nfsd's max_block_size at every start: a systemd drop-in for nfs-server.

nfs.conf has no key for it, and the kernel takes it only while nfsd is stopped: the
service's own start is the one moment to write it (after /proc/fs/nfsd is mounted,
before rpc.nfsd starts the threads).
"""

from __future__ import annotations

from app.knobs.catalog import SPECS
from app.snippets.model import Knobs, Snippet, SnippetContext

DROPIN = "/etc/systemd/system/nfs-server.service.d/nfs-tuner-max-block-size.conf"
RESTART_SAFETY = ("Takes effect at the next start of nfs-server: `systemctl daemon-reload && systemctl restart "
                  "nfs-server`. Every NFSv4 client then waits out the grace period before it opens files: "
                  "restart in a quiet hour.")  # fmt: skip


def block_size(config: Knobs) -> int:
    value = config["max_block_size"]
    if problem := SPECS["max_block_size"].validity.problem(value):
        raise ValueError(f"max_block_size: {problem}")
    return int(value)


def dropin(config: Knobs) -> str:
    size = block_size(config)
    return ("# nfs-tuner: the largest read or write nfsd offers (caps the clients' rsize and wsize).\n"
            "# Written before the threads start: the kernel refuses it while nfsd runs.\n"
            "[Service]\n"
            f"ExecStartPre=/bin/sh -c 'echo {size} > /proc/fs/nfsd/max_block_size'\n")  # fmt: skip


def nfsd_service_snippets(config: Knobs, _ctx: SnippetContext | None = None) -> list[Snippet]:
    if "max_block_size" not in config:
        return []
    return [Snippet("nfsd-max-block-size", "nfsd max_block_size (systemd drop-in)", DROPIN, dropin(config),
                    RESTART_SAFETY, "server")]  # fmt: skip
