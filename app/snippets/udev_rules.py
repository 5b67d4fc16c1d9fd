"""Persistence through udev: NFS readahead and md stripe_cache_size survive reboots and remounts."""

from __future__ import annotations

from app.snippets import quoting as q
from app.snippets.model import Knobs, Snippet, SnippetContext

READAHEAD_RULE_PATH = "/etc/udev/rules.d/99-nfs-tuner-readahead.rules"
NFSRAHEAD_PATH = "/etc/nfs.conf.d/nfs-tuner-readahead.conf"


def md_rule_path(md: str) -> str:
    return f"/etc/udev/rules.d/60-nfs-tuner-{q.plain_name(md, 'the md device')}.rules"


def readahead_rule(kb: int) -> str:
    """Every NFS mount's bdi gets read_ahead_kb when it appears.

    An NFS mount's bdi is named after its anonymous device (e.g. 0:53); the kernel lists
    the devices of NFS mounts in field 4 of /proc/fs/nfsfs/volumes.
    """
    return (
        "# nfs-tuner: readahead for NFS mounts (their bdi appears when they are mounted)\n"
        'SUBSYSTEM=="bdi", ACTION=="add", '
        "PROGRAM=\"/usr/bin/awk -v bdi=$kernel 'BEGIN{ret=1} {if ($4 == bdi) {ret=0}} END{exit ret}' "
        '/proc/fs/nfsfs/volumes", '
        f'ATTR{{read_ahead_kb}}="{int(kb)}"\n'
    )


def nfsrahead_conf(kb: int) -> str:
    """nfs-utils ≥ 2.6.2 ships a udev rule calling nfsrahead, which reads this section."""
    return f"# nfs-tuner: readahead nfsrahead sets on new NFS mounts\n[nfsrahead]\nnfs={int(kb)}\nnfs4={int(kb)}\n"


def md_rule(md: str, stripe_cache_size: int) -> str:
    name = q.plain_name(md, "the md device")
    value = int(stripe_cache_size)
    if not 17 <= value <= 32768:
        raise ValueError(f"stripe_cache_size must be 17–32768, got {value}")
    return (
        f"# nfs-tuner: md stripe cache for {name} (RAID 4/5/6 only)\n"
        f'SUBSYSTEM=="block", KERNEL=="{name}", ACTION=="add|change", TEST=="md/stripe_cache_size", '
        f'ATTR{{md/stripe_cache_size}}="{value}"\n'
    )


def udev_snippets(config: Knobs, ctx: SnippetContext) -> list[Snippet]:
    out: list[Snippet] = []
    if "read_ahead_kb" in config:
        kb = int(config["read_ahead_kb"])
        out.append(Snippet("readahead-udev", "Client readahead (udev rule)", READAHEAD_RULE_PATH,
                           readahead_rule(kb), "Applies to NFS mounts made after `udevadm control --reload`; "
                           "set a mounted one with `echo N > /sys/class/bdi/$(mountpoint -d MNT)/read_ahead_kb`.",
                           "client"))
        out.append(Snippet("readahead-nfsrahead", "Client readahead (nfsrahead setting)", NFSRAHEAD_PATH,
                           nfsrahead_conf(kb), "Needs nfs-utils 2.6.2 or newer (it ships nfsrahead and its "
                           "udev rule); use the udev rule above otherwise, not both.", "client"))
    if "stripe_cache_size" in config and ctx.md_device:
        out.append(Snippet("md-udev", f"md stripe cache ({ctx.md_device}, udev rule)", md_rule_path(ctx.md_device),
                           md_rule(ctx.md_device, int(config["stripe_cache_size"])),
                           "Costs page size × member disks × value of server RAM.", "server"))
    return out
