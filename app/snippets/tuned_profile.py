"""A tuned profile for the server: tuned applies it at boot and rolls it back on switch."""

from __future__ import annotations

from app.snippets import quoting as q
from app.snippets.model import Knobs, Snippet, SnippetContext

PROFILE = "nfs-tuner-server"


def tuned_conf(config: Knobs, ctx: SnippetContext) -> str:
    session = f" (session {ctx.session_id})" if ctx.session_id is not None else ""
    lines = [
        f"# nfs-tuner: server settings measured{session}",
        "[main]",
        f"summary=NFS server settings measured by nfs-tuner{session}",
        "include=throughput-performance",
    ]
    sysfs: list[str] = []
    if "stripe_cache_size" in config and ctx.md_device:
        md = q.plain_name(ctx.md_device, "the md device")
        sysfs.append(f"/sys/block/{md}/md/stripe_cache_size={int(config['stripe_cache_size'])}")
    if sysfs:
        lines += ["", "[sysfs]", *sysfs]
    if "nfsd_threads" in config:
        # tuned has no nfsd plugin; nfs.conf keeps the thread count
        lines += ["", f"# nfsd threads ({int(config['nfsd_threads'])}) persist in /etc/nfs.conf, not here"]
    return "\n".join(lines) + "\n"


def tuned_snippets(config: Knobs, ctx: SnippetContext) -> list[Snippet]:
    return [Snippet("tuned", "tuned profile (server)", f"/etc/tuned/{PROFILE}/tuned.conf", tuned_conf(config, ctx),
                    f"Activate with `tuned-adm profile {PROFILE}`; `tuned-adm verify` checks it, and switching "
                    "profile puts the old values back.", "server")]
