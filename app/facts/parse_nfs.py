"""Pure parsers for the NFS side: exports, nfsd state, connected clients, NFS mounts."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping

from app.facts.model import (
    ClientCandidate,
    ExportEntry,
    MountEntry,
    Nfs4Client,
    NfsdState,
    NETLINK,
    PROCFS,
    NfsMount,
    Parsed,
    PoolStats,
    TcpPeer,
)
from app.facts.parse_nfsdctl import counts, parse_listeners, parse_pool_mode, parse_threads
from app.facts.parse_storage import unescape_mount_field
from app.facts.parse_system import to_int

NFS_PORT = 2049
_CLIENT_OPTS = re.compile(r"^(\S*?)\(([^)]*)\)$")


def _split_client(word: str) -> tuple[str, tuple[str, ...]] | None:
    m = _CLIENT_OPTS.match(word)
    if m:
        client = m.group(1) or "*"
        return ("*" if client == "<world>" else client), tuple(o for o in m.group(2).split(",") if o)
    return None


def parse_exportfs(text: str) -> Parsed[tuple[ExportEntry, ...]]:
    """``exportfs -v``: "path client(opts)", long paths put the client on the next line."""
    entries: list[ExportEntry] = []
    problems: list[str] = []
    pending: str | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        words = line.split()
        if not line[0].isspace():
            path = unescape_mount_field(words[0])
            clients = words[1:]
            if not clients:
                pending = path  # the client is on the next line
                continue
        elif pending is not None:
            path, clients = pending, words
        else:
            problems.append(f"odd exportfs line: {line[:80]!r}")
            continue
        pending = None
        for word in clients:
            parsed = _split_client(word)
            if parsed is None:
                problems.append(f"odd exportfs client: {word[:80]!r}")
                continue
            entries.append(ExportEntry(path, parsed[0], parsed[1]))
    if pending is not None:
        problems.append(f"export {pending!r} has no client")
    return Parsed(tuple(entries), tuple(problems))


def parse_etc_exports(text: str) -> Parsed[tuple[ExportEntry, ...]]:
    """/etc/exports as a fallback (configured, not necessarily active, exports)."""
    entries: list[ExportEntry] = []
    problems: list[str] = []
    joined = re.sub(r"\\\n", " ", text)
    for line in joined.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        path = words[0].strip('"')
        for word in words[1:] or ["*()"]:
            parsed = _split_client(word) or (word, ())
            entries.append(ExportEntry(path, parsed[0], parsed[1]))
    return Parsed(tuple(entries), tuple(problems))


def parse_versions(text: str) -> Parsed[dict[str, bool]]:
    """/proc/fs/nfsd/versions ("-2 +3 +4 +4.1 +4.2") or ``nfsdctl version`` ("+3.0 -4.0 +4.1 +4.2";
    its "3.0" is /proc's "3")."""
    out: dict[str, bool] = {}
    problems: list[str] = []
    for word in text.split():
        if len(word) > 1 and word[0] in "+-" and re.fullmatch(r"[0-9]{1,2}(\.[0-9]{1,2})?", word[1:]):
            version = word[1:].removesuffix(".0") if word[1:] in ("2.0", "3.0") else word[1:]
            out[version] = word[0] == "+"
        else:
            problems.append(f"odd nfsd version word: {word[:20]!r}")
    return Parsed(out, tuple(problems))


def parse_pool_stats(text: str) -> Parsed[tuple[PoolStats, ...]]:
    """/proc/fs/nfsd/pool_stats: a '# pool name name…' header, then one row per pool."""
    header: list[str] = []
    pools: list[PoolStats] = []
    problems: list[str] = []
    for line in text.splitlines():
        if line.startswith("#"):
            header = line.lstrip("# ").split()
            continue
        numbers = [to_int(w) for w in line.split()]
        if not numbers:
            continue
        if any(n is None for n in numbers) or not header:
            problems.append(f"odd pool_stats line: {line[:80]!r}")
            continue
        values = {name: n for name, n in zip(header[1:], numbers[1:], strict=False) if n is not None}
        pools.append(PoolStats(pool=numbers[0] or 0, values=values))
    return Parsed(tuple(pools), tuple(problems))


def parse_nfsd(sections: Mapping[str, str]) -> Parsed[NfsdState]:
    """nfsd's state from the gather script's sections: nfsdctl's (netlink) where it answered,
    else /proc/fs/nfsd's and sunrpc's pool_mode parameter (app/facts/script.py)."""
    g = sections.get
    if g("nfsd_present", "").strip() != "yes":
        return Parsed(NfsdState(running=False))
    problems: list[str] = []
    netlink = parse_threads(g("nfsdctl_threads", ""))
    pool_threads, min_threads = netlink.value
    threads: int | None
    if pool_threads:
        interface, threads = NETLINK, sum(pool_threads)
        vers = parse_versions(g("nfsdctl_version", "").strip() or g("nfsd_versions", ""))
        mode = parse_pool_mode(g("nfsdctl_pool_mode", ""))
        ports = parse_listeners(g("nfsdctl_listener", ""))
    else:
        interface, threads = PROCFS, to_int(g("nfsd_threads", ""))
        pool_threads = counts(g("nfsd_pool_threads", "")) or ()
        vers = parse_versions(g("nfsd_versions", ""))
        mode = parse_pool_mode(g("sunrpc_pool_mode", ""))
        ports = parse_listeners(g("nfsd_portlist", ""))
        if threads is None:
            problems.append("could not read /proc/fs/nfsd/threads")
    pools = parse_pool_stats(g("nfsd_pool_stats", ""))
    pool_mode, npools = mode.value
    return Parsed(
        NfsdState(
            running=True,
            threads=threads,
            versions=vers.value,
            pools=pools.value,
            max_block_size=to_int(g("nfsd_max_block_size", "")),
            interface=interface,
            pool_threads=pool_threads,
            min_threads=min_threads,
            pool_mode=pool_mode,
            npools=npools or (len(pool_threads) if pool_threads else None),
            listeners=ports.value,
        ),
        tuple(problems) + netlink.problems + vers.problems + pools.problems + mode.problems + ports.problems,
    )


def parse_nfsd_clients(text: str) -> Parsed[tuple[Nfs4Client, ...]]:
    """``==> path`` blocks of /proc/fs/nfsd/clients/*/info (YAML-like key: value)."""
    clients: list[Nfs4Client] = []
    block: dict[str, str] = {}

    def flush() -> None:
        if block.get("address"):
            address = block["address"].strip('"')
            host = address.rsplit(":", 1)[0].strip("[]") if ":" in address else address
            clients.append(
                Nfs4Client(
                    address=host,
                    name=block.get("name", "").strip('"'),
                    minor_version=to_int(block.get("minor version")),
                    status=block.get("status", ""),
                    callback_state=block.get("callback state", ""),
                )
            )
        block.clear()

    for line in text.splitlines():
        if line.startswith("==> "):
            flush()
            continue
        key, sep, value = line.partition(":")
        if sep:
            block[key.strip()] = value.strip()
    flush()
    return Parsed(tuple(clients))


def _hex_address(text: str) -> str | None:
    """/proc/net/tcp addresses: host-order 32-bit words in hex."""
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        return None
    if len(raw) == 4:
        return str(ipaddress.IPv4Address(raw[::-1]))
    if len(raw) == 16:
        words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
        addr = ipaddress.IPv6Address(words)
        return str(addr.ipv4_mapped or addr)
    return None


def _endpoint(text: str) -> tuple[str, int] | None:
    host, sep, port = text.partition(":")
    addr = _hex_address(host)
    try:
        number = int(port, 16)
    except ValueError:
        return None
    return (addr, number) if sep and addr else None


def _join(addr: str, port: int) -> str:
    return f"[{addr}]:{port}" if ":" in addr else f"{addr}:{port}"


def parse_tcp(text: str, *, local_port: int | None = NFS_PORT, remote_port: int | None = None) -> Parsed[tuple[TcpPeer, ...]]:
    """Established connections from /proc/net/tcp{,6} with the given local or remote port."""
    peers: list[TcpPeer] = []
    problems: list[str] = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 4 or not fields[0].endswith(":") or fields[0] == "sl":
            continue
        local, remote = _endpoint(fields[1]), _endpoint(fields[2])
        if local is None or remote is None:
            problems.append(f"odd /proc/net/tcp line: {line[:80]!r}")
            continue
        if fields[3] != "01":  # TCP_ESTABLISHED
            continue
        if (local_port is not None and local[1] != local_port) or (
            remote_port is not None and remote[1] != remote_port
        ):
            continue
        peers.append(TcpPeer(_join(*local), _join(*remote), remote[0]))
    return Parsed(tuple(dict.fromkeys(peers)), tuple(problems))


def client_candidates(
    peers: tuple[TcpPeer, ...], v4: tuple[Nfs4Client, ...]
) -> tuple[ClientCandidate, ...]:
    """One candidate per client address, named from its NFSv4 client record when known."""
    named = {c.address: c for c in v4}
    order = list(dict.fromkeys([p.remote_address for p in peers] + [c.address for c in v4]))
    return tuple(
        ClientCandidate(
            address=a,
            nfs4_name=named[a].name if a in named else "",
            minor_version=named[a].minor_version if a in named else None,
        )
        for a in order
    )


def parse_mountstats(text: str) -> Parsed[dict[str, dict[str, str]]]:
    """Per NFS mount point: its ``opts`` and ``age`` (and the xprt protocol)."""
    out: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in text.splitlines():
        if line.startswith("device "):
            m = re.match(r"device (\S+) mounted on (\S+) with fstype (\S+)", line)
            if m and m.group(3).startswith("nfs"):
                current = out.setdefault(unescape_mount_field(m.group(2)), {"source": m.group(1)})
            else:
                current = None
            continue
        if current is None:
            continue
        key, sep, value = line.strip().partition(":")
        if sep and key in ("opts", "age"):
            current[key] = value.strip()
        elif sep and key == "xprt" and value.split():
            current["xprt"] = value.split()[0]
    return Parsed(out)


def parse_options(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in text.split(","):
        if item:
            key, _, value = item.partition("=")
            out[key] = value
    return out


def nfs_mounts(
    mounts: tuple[MountEntry, ...], stats: dict[str, dict[str, str]], bdi: dict[str, int]
) -> Parsed[tuple[NfsMount, ...]]:
    """NFS mounts with their negotiated options and their bdi's read_ahead_kb."""
    found: list[NfsMount] = []
    problems: list[str] = []
    for entry in mounts:
        if entry.fstype not in ("nfs", "nfs4"):
            continue
        opts = parse_options(entry.super_options)
        extra = stats.get(entry.mount_point, {})
        for key, value in parse_options(extra.get("opts", "")).items():
            opts.setdefault(key, value)
        server, _, export = entry.source.rpartition(":")
        if not server:
            problems.append(f"{entry.mount_point}: odd NFS source {entry.source!r}")
        version = opts.get("vers", "")
        if not version and entry.fstype == "nfs4":
            version = "4"
        read_ahead = bdi.get(entry.dev)
        if read_ahead is None:
            problems.append(f"{entry.mount_point}: no read_ahead_kb for bdi {entry.dev}")
        found.append(
            NfsMount(
                mount_point=entry.mount_point,
                source=entry.source,
                server=server.strip("[]"),
                export=export,
                fstype=entry.fstype,
                dev=entry.dev,
                version=version,
                rsize=to_int(opts.get("rsize")),
                wsize=to_int(opts.get("wsize")),
                proto=opts.get("proto", extra.get("xprt", "")),
                nconnect=to_int(opts.get("nconnect")),
                read_ahead_kb=read_ahead,
                options=opts,
                age_seconds=to_int(extra.get("age")),
            )
        )
    return Parsed(tuple(found), tuple(problems))
