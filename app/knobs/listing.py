"""Every knob of a server and its clients with its current value, from discovered facts.

Pure: built from HostFacts, so the CLI and the GUI's plan page show the same rows.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from app.facts import HostFacts
from app.facts.model import NETLINK, NfsMount
from app.knobs.catalog import SPECS
from app.knobs.client_sysctls import SYSCTL_FILES, SYSCTL_NAMES, in_force
from app.hosts.privilege import PrivilegeMode
from app.knobs.model import KnobSpec, Scope
from app.knobs.nfsd_netlink import NFSDCTL_FLOOR, NFSDCTL_THREADS
from app.knobs.nfsd_restart import BLOCK_SIZE_FILE, POOL_MODE_FILE
from app.knobs.targets import NFSD_THREADS_FILE, MountOptions, export_wdelay


@dataclass(frozen=True)
class KnobRow:
    knob: str
    title: str
    host: str
    where: str  # the catalog's Scope: "server", "test mount", "whole client", "link"
    target: str
    current: str
    valid: str
    safety: str
    safety_note: str
    can_change: bool
    why_not: str = ""

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _row(spec: KnobSpec, facts: HostFacts, target: str, current: object) -> KnobRow:
    writable = facts.privilege not in ("", PrivilegeMode.READ_ONLY.value)  # root, sudo, or the helper
    if writable:
        why = ""
    elif facts.privilege:
        why = f"read-only on this host; add with visudo: {facts.sudoers_line}"
    else:
        why = "privilege not checked yet"
    shown = "unknown" if current is None else str(current)
    return KnobRow(spec.name, spec.title, facts.host, spec.scope.value, target, shown, spec.validity.describe(),
                   spec.safety.value, spec.safety_note, writable, why)  # fmt: skip


def _mount_of(facts: HostFacts, export: str | None) -> NfsMount | None:
    mounts = [m for m in facts.nfs_mounts if export is None or m.export == export]
    return mounts[0] if mounts else None


def _routable(address: str) -> bool:
    return not address.startswith(("127.", "::1", "fe80:"))


def _facing_nic(facts: HostFacts) -> list[tuple[str, int | None]]:
    """NICs with an address other hosts can reach (not loopback, not link-local only)."""
    return [(n.name, n.mtu) for n in facts.nics if any(_routable(a) for a in n.addresses)]


def knob_rows(server: HostFacts, clients: list[HostFacts], export: str | None = None) -> list[KnobRow]:
    nfsd = server.nfsd
    netlink = nfsd.interface == NETLINK
    rows = [_row(SPECS["nfsd_threads"], server, NFSDCTL_THREADS if netlink else NFSD_THREADS_FILE, nfsd.threads)]
    if netlink and nfsd.min_threads is not None:  # a kernel whose threads scale themselves (Linux 7.0)
        rows.append(_row(SPECS["nfsd_min_threads"], server, NFSDCTL_FLOOR, nfsd.min_threads))
    rows.append(_row(SPECS["max_block_size"], server, BLOCK_SIZE_FILE, nfsd.max_block_size))
    if nfsd.pool_mode and (server.cpu_count or 1) > 1:  # one CPU: every mode makes the one pool
        rows.append(_row(SPECS["pool_mode"], server, POOL_MODE_FILE, nfsd.pool_mode))
    for e in server.exports:
        if export is None or e.path == export:
            rows.append(_row(SPECS["export_sync"], server, f"{e.client}:{e.path}", "async" if e.is_async else "sync"))
            wdelay = export_wdelay(e.path, e.client).mode_of(e.options)
            rows.append(_row(SPECS["export_wdelay"], server, f"{e.client}:{e.path}", wdelay))
    md_names = {fs.md_array for fs in server.export_filesystems if fs.md_array}
    for md in server.md_arrays:
        if md.stripe_cache_size is not None and (not md_names or md.name in md_names):
            rows.append(_row(SPECS["stripe_cache_size"], server, f"/sys/block/{md.name}/md/stripe_cache_size",
                             md.stripe_cache_size))  # fmt: skip
    for name, mtu in _facing_nic(server):
        rows.append(_row(SPECS["mtu"], server, name, mtu))
    for facts in clients:
        mount = _mount_of(facts, export)
        where = f"test mount (now: {mount.mount_point})" if mount else "test mount"
        values = {
            "rsize": mount.rsize if mount else None,
            "wsize": mount.wsize if mount else None,
            "nfsvers": mount.version if mount else None,
            "nconnect": (mount.nconnect or 1) if mount else None,
            "nocto": MountOptions.taken("nocto", mount.options) if mount else None,
            "actimeo": MountOptions.taken("actimeo", mount.options) if mount else None,
            "read_ahead_kb": mount.read_ahead_kb if mount else None,
        }
        for knob, value in values.items():
            rows.append(_row(SPECS[knob], facts, where, value))
        for knob, path in SYSCTL_FILES.items():
            rows.append(_row(SPECS[knob], facts, path, client_sysctl_now(facts.sysctls, knob)))
        for name, mtu in _facing_nic(facts):
            rows.append(_row(SPECS["mtu"], facts, name, mtu))
    return rows


def client_sysctl_now(sysctls: dict[str, int], knob: str) -> str | None:
    """A client kernel setting as it stands: a byte limit, or the ratio in force when the bytes are 0."""
    name = SYSCTL_NAMES[knob]
    if not name.endswith("_bytes"):
        value = sysctls.get(name)
        return None if value is None else str(value)
    in_bytes, ratio = sysctls.get(name), sysctls.get(name.removesuffix("_bytes") + "_ratio")
    if in_bytes is None or (not in_bytes and ratio is None):
        return None
    return str(in_force(in_bytes, ratio or 0))


def format_rows(rows: list[KnobRow]) -> str:
    header = ("HOST", "KNOB", "ACTS ON", "TARGET", "CURRENT", "VALID", "SAFETY", "MAY CHANGE")
    table = [header] + [
        (r.host, r.knob, r.where, r.target, r.current, r.valid, r.safety, "yes" if r.can_change else "no (read-only)")
        for r in rows
    ]
    widths = [min(max(len(str(row[i])) for row in table), 40) for i in range(len(header))]
    lines = ["  ".join(str(c)[:40].ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in table]
    notes = {r.knob: r.safety_note for r in rows if r.safety != "safe" or r.where == Scope.CLIENT.value}
    lines.append("")
    lines += [f"{k}: {v}" for k, v in notes.items()]
    hints = {r.host: r.why_not for r in rows if r.why_not}
    lines += [f"{h}: {why}" for h, why in hints.items()]
    return "\n".join(lines)
