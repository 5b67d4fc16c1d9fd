"""An Ansible playbook applying the configuration to the server and a list of clients.

Written by hand as YAML (no YAML library in the core): every scalar is JSON-quoted,
which YAML reads as a double-quoted string, and every module argument is tagged
``!unsafe``: values are data, never Jinja. Each task is idempotent: files by copy /
lineinfile / mount, live sysfs values by a compare-then-write shell task whose
``changed_when`` tells Ansible whether it wrote. MTU is left out on purpose: a wrong
MTU can cut the SSH session Ansible runs over.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from app.snippets import nfs_files, nfsd_service, sysctl_conf, udev_rules
from app.snippets import quoting as q
from app.snippets.model import Knobs, Snippet, SnippetContext
from app.vocabulary import coherence_text


def _s(value: str) -> str:
    return json.dumps(value)


def _data(value: str) -> str:
    """A module argument that is data: tagged !unsafe, so Ansible never templates it (an export path
    holding ``{{ lookup('pipe', …) }}`` stays those characters, and no command runs)."""
    return f"!unsafe {json.dumps(value)}"


def _task(name: str, module: str, args: dict[str, Any], extra: dict[str, str] | None = None) -> list[str]:
    lines = [f"    - name: {_s(name)}", f"      {module}:"]
    for k, v in args.items():
        lines.append(f"        {k}: {_data(v) if isinstance(v, str) else json.dumps(v)}")
    for k, v in (extra or {}).items():
        lines.append(f"      {k}: {v}")
    return lines


def _sysfs_task(name: str, path_expr: str, value: int, register: str, before: str = "") -> list[str]:
    """Write a sysfs value only when it differs; report 'changed' only then."""
    script = (f"{before}f={path_expr}\n"
              f'if [ "$(cat "$f")" != {value} ]; then echo {value} > "$f"; echo changed; fi\n')
    return _task(name, "ansible.builtin.shell", {"cmd": script},
                 {"register": register, "changed_when": _s(f"'changed' in {register}.stdout")})


def _hosts(names: tuple[str, ...], fallback: str) -> str:
    for n in names:  # ':' separates an Ansible host pattern: one name must stay one host
        if ":" in q.plain_name(n, "an inventory host"):
            raise ValueError(f"an inventory host cannot contain ':', got {n!r}")
    return ":".join(names) if names else fallback


def server_play(config: Knobs, ctx: SnippetContext) -> list[str]:
    lines = ["- name: \"NFS server settings measured by nfs-tuner\"",
             f"  hosts: {_s(_hosts((ctx.server_host,), 'nfs_server'))}", "  become: true", "  tasks:"]
    handlers: list[str] = []
    if conf := nfs_files.conf_settings(config, ctx):
        lines += _task("nfsd settings in an nfs.conf drop-in", "ansible.builtin.copy",
                       {"dest": nfs_files.NFS_CONF_DROPIN, "content": nfs_files.nfs_conf(conf), "mode": "0644"},
                       {"notify": _s("apply nfsd threads")})
        cmd = nfs_files.threads_command(config, ctx) or "systemctl restart nfs-server"
        handlers += _task("apply nfsd threads", "ansible.builtin.command", {"cmd": cmd})
    if "pool_mode" in config and not ctx.nfsd_netlink:  # read when sunrpc loads: a restart, so the admin's to run
        option = nfs_files.sunrpc_pool_mode(config)
        lines += _task(option.title, "ansible.builtin.copy", {"dest": option.target, "content": option.text, "mode": "0644"})
    if "max_block_size" in config:  # at the next start of nfs-server: a restart, so the admin's to run
        lines += _task("nfsd max_block_size at every start", "ansible.builtin.copy",
                       {"dest": nfsd_service.DROPIN, "content": nfsd_service.dropin(config), "mode": "0644"},
                       {"notify": _s("reload systemd units")})
        handlers += _task("reload systemd units", "ansible.builtin.systemd", {"daemon_reload": True})
    path_re = '^\\s*"?' + re.escape(ctx.export_path) + '"?\\s'
    lines += _task("export line", "ansible.builtin.lineinfile",
                   {"path": "/etc/exports", "regexp": path_re, "line": nfs_files.exports_line(config, ctx)},
                   {"notify": _s("re-export")})
    handlers += _task("re-export", "ansible.builtin.command", {"cmd": "exportfs -ra"})
    if "stripe_cache_size" in config and ctx.md_device:
        md = q.plain_name(ctx.md_device, "the md device")
        value = int(config["stripe_cache_size"])
        lines += _task("md stripe cache udev rule", "ansible.builtin.copy",
                       {"dest": udev_rules.md_rule_path(md), "content": udev_rules.md_rule(md, value), "mode": "0644"})
        lines += _sysfs_task("md stripe cache now", f"/sys/block/{md}/md/stripe_cache_size", value, "stripe_cache")
    return lines + ["  handlers:", *handlers]


def client_play(config: Knobs, ctx: SnippetContext) -> list[str]:
    lines = ["- name: \"NFS client settings measured by nfs-tuner\"",
             f"  hosts: {_s(_hosts(ctx.client_hosts, 'nfs_clients'))}", "  become: true", "  tasks:"]
    if "read_ahead_kb" in config:
        kb = int(config["read_ahead_kb"])
        lines += _task("NFS readahead udev rule", "ansible.builtin.copy",
                       {"dest": udev_rules.READAHEAD_RULE_PATH, "content": udev_rules.readahead_rule(kb),
                        "mode": "0644"})
    if any(k in config for k in sysctl_conf.DIRTY):
        lines += _task("client write-back limits", "ansible.builtin.copy",
                       {"dest": sysctl_conf.SYSCTL_FILE, "content": sysctl_conf.sysctl_conf(config), "mode": "0644"},
                       {"register": "writeback"})
        lines += _task("client write-back limits now", "ansible.builtin.command",
                       {"cmd": f"sysctl -p {sysctl_conf.SYSCTL_FILE}"}, {"when": _s("writeback.changed")})
    if "rpc_slots" in config:  # before the mount below: it sizes connections made after it
        slots = int(config["rpc_slots"])
        lines += _task("RPC slot table at boot", "ansible.builtin.copy",
                       {"dest": sysctl_conf.MODPROBE_FILE, "content": sysctl_conf.modprobe_conf(config), "mode": "0644"})
        lines += _sysfs_task("RPC slot table now", "/proc/sys/sunrpc/tcp_max_slot_table_entries", slots, "slots")
    src = f"{q.host(ctx.server)}:{q.absolute_path(ctx.export_path, 'the export path')}"
    lines += _task("NFS mount in fstab, mounted", "ansible.posix.mount",
                   {"path": q.absolute_path(ctx.mount_point, "the mount point"), "src": src, "fstype": "nfs",
                    "opts": ",".join(nfs_files.mount_options(config, ctx)), "state": "mounted"})
    if "read_ahead_kb" in config:
        mp = shlex.quote(ctx.mount_point)
        lines += _sysfs_task("readahead of the mounted export now", '"/sys/class/bdi/$bdi/read_ahead_kb"',
                             int(config["read_ahead_kb"]), "readahead", before=f"bdi=$(mountpoint -d {mp})\n")
    return lines


def playbook(config: Knobs, ctx: SnippetContext) -> str:
    session = f" (session {ctx.session_id}, {ctx.objective})" if ctx.session_id is not None else ""
    head = [f"# nfs-tuner: apply the measured NFS configuration{session}",
            "# ansible-playbook -i INVENTORY nfs-tuner.yml   (needs the ansible.posix collection)",
            "# rsize/wsize/nconnect change only on a fresh mount: umount the clients' mount first if it is up.",
            *(f"# {caveat}" for caveat in [coherence_text(config)] if caveat),
            "---"]
    return "\n".join([*head, *server_play(config, ctx), "", *client_play(config, ctx)]) + "\n"


def ansible_snippets(config: Knobs, ctx: SnippetContext) -> list[Snippet]:
    is_async = str(config.get("export_sync", "sync")) == "async"
    risks = [r for r in (nfs_files.ASYNC_SAFETY if is_async else "", coherence_text(config)) if r]
    safety = " ".join(risks) or (
        "Run with --check --diff first. It changes /etc/exports, fstab and udev rules and applies "
        "the values at once; MTU is not in it (a wrong MTU can cut the SSH session).")
    return [Snippet("ansible", "Ansible playbook (server and clients)", "nfs-tuner.yml",
                    playbook(config, ctx), safety, "admin", risky=bool(risks))]
