"""/etc/fstab, /etc/exports and /etc/nfs.conf for a recommended configuration."""

from __future__ import annotations

from app.snippets import quoting as q
from app.snippets.model import Knobs, Snippet, SnippetContext
from app.vocabulary import coherence_text

NFS_CONF_DROPIN = "/etc/nfs.conf.d/nfs-tuner.conf"  # nfs-utils ≥ 2.5 reads /etc/nfs.conf.d/*.conf
SUNRPC_DROPIN = "/etc/modprobe.d/nfs-tuner-nfsd.conf"
POOL_MODES = ("global", "percpu", "pernode", "auto")

ASYNC_SAFETY = (
    "async: the server acknowledges writes before they are on its disk. A server crash or "
    "power loss loses data the clients were told was safe. Keep sync unless the data can be recreated."
)


def mount_options(config: Knobs, ctx: SnippetContext) -> list[str]:
    """The measured client options first, then the context's others (no duplicates)."""
    opts: list[str] = []
    if "nfsvers" in config:
        opts.append(f"vers={config['nfsvers']}")
    for knob in ("rsize", "wsize", "nconnect", "actimeo"):
        if knob in config:
            opts.append(f"{knob}={int(config[knob])}")
    if "nocto" in config:  # cto is the default; either is written, so the admin's own choice is replaced
        opts.append(_nocto(config["nocto"]))
    measured = {o.split("=", 1)[0] for o in opts} | {"nfsvers", "cto", "nocto"}
    opts += [o for o in ctx.mount_options if o.split("=", 1)[0] not in measured]
    return [q.option(o) for o in opts]


def _nocto(value: object) -> str:
    if str(value) not in ("cto", "nocto"):
        raise ValueError(f"nocto must be cto or nocto, got {value!r}")
    return str(value)


def fstab_line(config: Knobs, ctx: SnippetContext) -> str:
    source = f"{q.host(ctx.server)}:{q.absolute_path(ctx.export_path, 'the export path')}"
    point = q.absolute_path(ctx.mount_point, "the mount point")
    opts = ",".join(mount_options(config, ctx)) or "defaults"
    return f"{q.fstab_field(source)} {q.fstab_field(point)} nfs {opts} 0 0"


def export_options(config: Knobs, ctx: SnippetContext) -> list[str]:
    mode = str(config.get("export_sync", "sync"))
    if mode not in ("sync", "async"):
        raise ValueError(f"export_sync must be sync or async, got {mode!r}")
    others = [q.option(o) for o in ctx.export_options if o not in ("sync", "async", "wdelay", "no_wdelay")]
    if "export_wdelay" in config:
        delay = str(config["export_wdelay"])
        if delay not in ("wdelay", "no_wdelay"):
            raise ValueError(f"export_wdelay must be wdelay or no_wdelay, got {delay!r}")
        others.append(delay)
    else:  # the admin's own, kept
        others += [q.option(o) for o in ctx.export_options if o in ("wdelay", "no_wdelay")]
    return [*others[:1], mode, *others[1:]] if others else [mode]


def exports_line(config: Knobs, ctx: SnippetContext) -> str:
    opts = ",".join(export_options(config, ctx))
    return f"{q.exports_path(ctx.export_path)} {q.client_spec(ctx.export_clients)}({opts})"


def nfs_conf(config: Knobs) -> str:
    """The [nfsd] settings measured: threads (on a self-scaling nfsd the most, with min-threads the floor),
    and the NFS version the clients mount with."""
    lines = ["# nfs-tuner: nfsd settings measured to be best", "[nfsd]"]
    if "nfsd_threads" in config:
        lines.append(f"threads={int(config['nfsd_threads'])}")
    if "nfsd_min_threads" in config:  # read by nfsdctl autostart (nfs-utils with `nfsdctl threads -m`)
        lines.append(f"min-threads={int(config['nfsd_min_threads'])}")
    if "pool_mode" in config:  # read by nfsdctl autostart; rpc.nfsd does not (sunrpc_pool_mode: modprobe.d)
        lines.append(f"pool-mode={_pool_mode(config['pool_mode'])}")
    if "nfsvers" in config:
        # enable the measured version; others stay as they are (other clients may need them)
        lines.append(f"vers{config['nfsvers']}=y")
    return "\n".join(lines) + "\n"


def _pool_mode(value: object) -> str:
    if str(value) not in POOL_MODES:
        raise ValueError(f"pool_mode must be one of {', '.join(POOL_MODES)}, got {value!r}")
    return str(value)


def sunrpc_pool_mode(config: Knobs) -> Snippet:
    """pool_mode where nfsd is started by rpc.nfsd: sunrpc's module option, read when the module loads."""
    return Snippet("sunrpc-pool-mode", "nfsd pool mode (sunrpc module option)", SUNRPC_DROPIN,
                   f"# nfs-tuner: nfsd's pool mode measured to be best\noptions sunrpc pool_mode={_pool_mode(config['pool_mode'])}\n",
                   "Takes effect when the sunrpc module loads (a reboot), or with nfsd stopped: "
                   "echo MODE > /sys/module/sunrpc/parameters/pool_mode, then start nfs-server.", "server")


def conf_settings(config: Knobs, ctx: SnippetContext) -> Knobs:
    """What of ``config`` goes into nfs.conf's [nfsd] on this server: pool-mode only where nfsdctl starts nfsd."""
    keys = ("nfsd_threads", "nfsd_min_threads", "nfsvers", *(("pool_mode",) if ctx.nfsd_netlink else ()))
    return {k: config[k] for k in keys if k in config}


def threads_command(config: Knobs, ctx: SnippetContext) -> str | None:
    """What changes nfsd's threads at once, through the interface the server has; None: only a restart."""
    if "nfsd_threads" not in config:
        return None
    threads = int(config["nfsd_threads"])
    if not ctx.nfsd_netlink:
        return f"rpc.nfsd {threads}"
    floor = f"-m {int(config['nfsd_min_threads'])} " if "nfsd_min_threads" in config else ""
    return f"nfsdctl threads {floor}{threads}"


NFS_CONF_PROCFS = ("Takes effect when nfs-server restarts; `rpc.nfsd N` changes the thread count at once. "
                   "On nfs-utils older than 2.5, put the lines into /etc/nfs.conf itself.")
NFS_CONF_NETLINK = ("Takes effect when nfs-server restarts (`nfsdctl autostart` reads threads=, the most threads, "
                    "min-threads=, the floor of a self-scaling nfsd, and pool-mode=; without threads= it starts 16); "
                    "`nfsdctl threads N` (`-m MIN N` with a floor) changes them at once.")
WDELAY_NOTE = "wdelay/no_wdelay only matters on a sync export: on an async one the server does not wait anyway."
FSTAB_STEP = ("rsize/wsize/nconnect take effect on a fresh mount only (umount, then mount); "
              "the server may cap rsize/wsize: check /proc/mounts after mounting. nconnect belongs to the "
              "connection to the server: every mount of that server shares the first mount's.")


def fstab_snippet(config: Knobs, ctx: SnippetContext) -> Snippet:
    """The fstab line; with nocto or a long actimeo its cache-coherence caveat beside it, as a comment too."""
    line = fstab_line(config, ctx) + "\n"
    caveat = coherence_text(config)
    if not caveat:
        return Snippet("fstab", "Client mount (/etc/fstab line)", "/etc/fstab", line, FSTAB_STEP, "client")
    return Snippet("fstab", "Client mount (/etc/fstab line)", "/etc/fstab", f"# nfs-tuner: {caveat}\n{line}",
                   f"{caveat} {FSTAB_STEP}", "client", risky=True)


def nfs_snippets(config: Knobs, ctx: SnippetContext) -> list[Snippet]:
    is_async = str(config.get("export_sync", "sync")) == "async"
    out = [
        fstab_snippet(config, ctx),
        Snippet("exports", "Export (/etc/exports line)", "/etc/exports", exports_line(config, ctx) + "\n",
                ASYNC_SAFETY if is_async else "Replace the existing line for this path, then run `exportfs -ra`."
                + (f" {WDELAY_NOTE}" if "export_wdelay" in config else ""),
                "server", risky=is_async),
    ]
    conf = conf_settings(config, ctx)
    if conf:
        out.append(Snippet("nfs.conf", "nfsd settings (/etc/nfs.conf drop-in)", NFS_CONF_DROPIN, nfs_conf(conf),
                           NFS_CONF_NETLINK if ctx.nfsd_netlink else NFS_CONF_PROCFS, "server"))
    if "pool_mode" in config and not ctx.nfsd_netlink:
        out.append(sunrpc_pool_mode(config))
    return out
