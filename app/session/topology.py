"""What the discovered facts say about a session's hosts: the export, the address, today's values.

Pure functions of HostFacts, so the CLI and the wizard read the same answers.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.facts.model import HostFacts, NfsMount
from app.knobs.listing import knob_rows
from app.knobs.values import BadValue, parse_value
from app.knobs.model import Value

TEST_MOUNT_ROOT = "/mnt/nfs-tuner"  # SweepSpec.mount_root: a sweep's own test mounts start so


def export_of(server: HostFacts, clients: Sequence[HostFacts]) -> str:
    """The export the clients mount (else the server's first; "" when it exports nothing)."""
    paths = [e.path for e in server.exports]
    mounted = [m.export for c in clients for m in c.nfs_mounts if m.export in paths]
    return mounted[0] if mounted else (paths[0] if paths else "")


def own_mounts(client: HostFacts, export: str) -> list[NfsMount]:
    """The client's own mounts of the export (not the test mounts of a sweep, ours or another's)."""
    return [m for m in client.nfs_mounts if m.export == export and not m.mount_point.startswith(TEST_MOUNT_ROOT)]


def server_address(server: HostFacts, clients: Sequence[HostFacts], export: str) -> str:
    """The server as the clients mount it; "" (its SSH name) when no client mounts it now."""
    found = [m.server for c in clients for m in own_mounts(c, export)]
    return found[0] if found else ""


def current_values(server: HostFacts, clients: Sequence[HostFacts], export: str | None) -> dict[str, str]:
    """Each knob's value today as text: the server's, and the first client's mount."""
    out: dict[str, str] = {}
    for row in knob_rows(server, list(clients), export or None):
        out.setdefault(row.knob, row.current)
    return out


def baseline_values(current: dict[str, str]) -> dict[str, Value]:
    """Today's values as the knobs' values (those not known today are left out)."""
    out: dict[str, Value] = {}
    for knob, text in current.items():
        try:
            out[knob] = parse_value(knob, text)
        except BadValue:
            pass  # "unknown": the strategy starts from the middle value
    return out


def offered_clients(server: HostFacts, aliases: Sequence[str]) -> list[str]:
    """The server's connected NFS clients, by SSH config alias where one matches the NFSv4 name."""
    out: list[str] = []
    for c in server.client_candidates:
        name = c.nfs4_name.split()[-1] if c.nfs4_name else ""
        match = next((a for a in aliases if name and (a == name or a.split(".")[0] == name or a.endswith("-" + name))),
                     None)  # fmt: skip
        out.append(match or c.address)
    return list(dict.fromkeys(out))
