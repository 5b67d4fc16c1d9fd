"""A snippet context from the host facts a session stored; placeholders where facts are missing."""

from __future__ import annotations

import ipaddress
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from app.hosts.remote_args import UnsafeValue, address
from app.snippets.model import SnippetContext
from app.store.store import Store


def _list(d: Mapping[str, Any], key: str) -> list[Any]:
    v = d.get(key)
    return [x for x in v if isinstance(x, Mapping)] if isinstance(v, list) else []


def _in_spec(address: str, spec: str) -> bool:
    try:
        return ipaddress.ip_interface(address).ip in ipaddress.ip_network(spec, strict=False)
    except ValueError:
        return False


def _nic_for(facts: Mapping[str, Any], spec: str) -> tuple[str | None, str | None]:
    """(NIC name, its address) of the NIC inside the export's client network, else the first one up."""
    nics = [n for n in _list(facts, "nics") if n.get("name") != "lo" and n.get("addresses")]
    for n in nics:
        for a in n["addresses"]:
            if _in_spec(str(a), spec):
                return str(n["name"]), str(a).split("/")[0]
    if nics:
        return str(nics[0]["name"]), str(nics[0]["addresses"][0]).split("/")[0]
    return None, None


def context_from_facts(
    facts: Sequence[tuple[str, str, Mapping[str, Any]]],
    *,
    session_id: int | None = None,
    objective: str = "seq_read",
    workload: Mapping[str, Any] | None = None,
    mounted_as: str = "",
) -> SnippetContext:
    """facts: (host, role, HostFacts.to_dict()) per host; the last snapshot of a host wins.

    Only server and client snapshots count: a sweep also stores its measured ceilings
    as facts of the same hosts (role "ceiling"), which must not hide the host's role.
    The server is named as the clients mount the export already (their mounts' own word,
    the most of them), else as the sweep's test mounts did (``mounted_as``), else by its
    address in the export's network, else by its SSH name.
    """
    latest: dict[str, tuple[str, Mapping[str, Any]]] = {
        h: (r, f) for h, r, f in facts if isinstance(f, Mapping) and r in ("server", "client")
    }
    servers = [h for h, (r, _) in latest.items() if r == "server"]
    clients = tuple(h for h, (r, _) in latest.items() if r == "client")
    base = SnippetContext(session_id=session_id, objective=objective, workload=workload)
    if not servers:
        return base if not clients else _with(base, client_hosts=clients)
    server = servers[0]
    sfacts = latest[server][1]
    exports = _list(sfacts, "exports")
    export = exports[0] if exports else {}
    path = str(export.get("path") or base.export_path)
    spec = str(export.get("client") or base.export_clients)
    options = tuple(str(o) for o in export.get("options", ()) if o not in ("sync", "async")) or base.export_options
    md = next((str(e["md_array"]) for e in _list(sfacts, "export_filesystems")
               if e.get("export_path") == path and e.get("md_array")), None)
    nics: dict[str, str] = {}
    server_nic, server_addr = _nic_for(sfacts, spec)
    if server_nic:
        nics[server] = server_nic
    mount_point = base.mount_point
    names: list[str] = []  # the server as each client's own mount of the export names it
    for c in clients:
        nic, _ = _nic_for(latest[c][1], spec)
        if nic:
            nics[c] = nic
        for m in _list(latest[c][1], "nfs_mounts"):
            if m.get("export") == path and m.get("mount_point"):
                mount_point = str(m["mount_point"])
                names += [n for n in [_address(m.get("server"))] if n]
    named = Counter(names).most_common(1)[0][0] if names else _address(mounted_as)
    nfsd = sfacts.get("nfsd")
    netlink = isinstance(nfsd, Mapping) and nfsd.get("interface") == "netlink"
    return _with(base, server=named or server_addr or server, export_path=path, export_clients=spec,
                 export_options=options, mount_point=mount_point, md_device=md, server_host=server,
                 client_hosts=clients or base.client_hosts, nics=nics, nfsd_netlink=netlink)


def _with(ctx: SnippetContext, **changes: Any) -> SnippetContext:
    from dataclasses import replace

    return replace(ctx, **changes)


def _address(value: object) -> str:
    """A server name or address as a mount takes it; "" for anything else (a host's report is untrusted)."""
    try:
        return address(value, "server") if isinstance(value, str) and value else ""
    except UnsafeValue:
        return ""


def mounted_as(plan: object) -> str:
    """The server as a stored sweep's test mounts named it, when the session says (its server address)."""
    sweep = plan.get("sweep") if isinstance(plan, Mapping) else None
    named = sweep.get("server_address") if isinstance(sweep, Mapping) else None
    return named if isinstance(named, str) else ""


def context_for_session(
    store: Store, session_id: int, objective: str = "seq_read", workload: Mapping[str, Any] | None = None
) -> SnippetContext:
    rows = [(r.host, r.role, r.facts) for r in store.host_facts(session_id)]
    return context_from_facts(rows, session_id=session_id, objective=objective, workload=workload,
                              mounted_as=mounted_as(store.get_session(session_id).plan))
