"""Every snippet for a recommended configuration, in the order an admin applies them."""

from __future__ import annotations

from collections.abc import Callable

from app.snippets.ansible_playbook import ansible_snippets
from app.snippets.fio_job import fio_snippets
from app.snippets.model import Knobs, Snippet, SnippetContext
from app.snippets.network import mtu_snippets
from app.snippets.nfs_files import nfs_snippets
from app.snippets.nfsd_service import nfsd_service_snippets
from app.snippets.sysctl_conf import sysctl_snippets
from app.snippets.tuned_profile import tuned_snippets
from app.snippets.udev_rules import udev_snippets


_BUILDERS: tuple[tuple[str, str, Callable[[Knobs, SnippetContext], list[Snippet]]], ...] = (
    ("nfs", "/etc/fstab, /etc/exports and nfs.conf", nfs_snippets),
    ("nfsd", "nfs-server drop-in", nfsd_service_snippets),
    ("udev", "udev rules", udev_snippets),
    ("sysctl", "client kernel settings", sysctl_snippets),
    ("mtu", "MTU settings", mtu_snippets),
    ("tuned", "tuned profile", tuned_snippets),
    ("ansible", "Ansible playbook", ansible_snippets),
    ("fio", "fio job", lambda _config, ctx: fio_snippets(ctx)),
)


def render_all(config: Knobs, ctx: SnippetContext) -> list[Snippet]:
    """Each file format encodes or refuses its own values (app/snippets/quoting.py, fio_line, the
    playbook's !unsafe); a format that refuses a value is said in place of its snippets, the rest stay."""
    out: list[Snippet] = []
    for key, title, build in _BUILDERS:
        try:
            out += build(config, ctx)
        except ValueError as exc:
            out.append(Snippet(f"refused:{key}", f"{title}: not written", "", "",
                               f"nfs-tuner will not write this: {exc}. Fix the value (a path, a host or workload "
                               "name holding characters this file would read as syntax) and export again.",
                               "admin", risky=True))  # fmt: skip
    return out
