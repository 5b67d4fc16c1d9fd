"""The one shell script that gathers every fact in a single round trip.

It is fixed text fed to ``sh -s`` on stdin: nothing the admin typed is pasted into
it. Each section starts with a marker line; a missing file just leaves its section
empty, and the parsers say so.
"""

from __future__ import annotations

from app.hosts.privilege import PROBE_SCRIPT

MARKER = "@@nfs-tuner-section:"

# Commands whose paths go into the sudoers line and the tool list.
TOOLS: tuple[str, ...] = (
    "rpc.nfsd", "nfsdctl", "exportfs", "sysctl", "mount", "umount", "ip", "tee", "python3", "fio", "ethtool",
)

# Every fork costs ~0.1 s on slow hosts (and on the UML lab), so files are read with
# the shell's own `read` (functions rd/show) and external commands are few.
GATHER_SCRIPT = r"""
PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
LC_ALL=C
export PATH LC_ALL
sec() { printf '\n@@nfs-tuner-section:%s@@\n' "$1"; }
rd() { unset "$1"; { read -r "$1" < "$2"; } 2>/dev/null; }
show() {
  [ -r "$1" ] || return 0
  { while IFS= read -r l || [ -n "$l" ]; do printf '%s\n' "$l"; done < "$1"; } 2>/dev/null
}
sec privilege
""" + PROBE_SCRIPT + r"""
sec os_release; show /etc/os-release
sec uname; uname -n -r -m
sec cpu; rd c /sys/devices/system/cpu/online; printf '%s\n' "$c"
sec meminfo; show /proc/meminfo
sec page_size; getconf PAGESIZE 2>/dev/null
sec sysctl
# cat, not rd: dash reads a byte at a time, and a sysctl file read past offset 0 is empty
for f in vm/dirty_bytes vm/dirty_ratio vm/dirty_background_bytes vm/dirty_background_ratio \
         sunrpc/tcp_max_slot_table_entries; do
  v=$(cat "/proc/sys/$f" 2>/dev/null) && printf '%s %s\n' "$f" "$v"
done
sec ip_addr; ip -j addr 2>/dev/null
sec net_sys
for d in /sys/class/net/*; do
  [ -e "$d" ] || continue
  rd mtu "$d/mtu"; rd speed "$d/speed"; rd st "$d/operstate"; rd mac "$d/address"
  printf '%s|%s|%s|%s|%s\n' "${d##*/}" "$mtu" "$speed" "$st" "$mac"
done
sec block
for b in /sys/block/*; do
  [ -e "$b" ] || continue
  rd dev "$b/dev"; rd size "$b/size"; rd rota "$b/queue/rotational"
  rd ra "$b/queue/read_ahead_kb"; rd sched "$b/queue/scheduler"
  printf '%s|%s|%s|%s|%s|%s\n' "${b##*/}" "$dev" "$size" "$rota" "$ra" "$sched"
done
sec mdstat; show /proc/mdstat
sec md_sysfs
for d in /sys/block/md*/md; do
  [ -d "$d" ] || continue
  n="${d%/md}"; n="${n##*/}"
  for f in level raid_disks chunk_size stripe_cache_size array_state sync_action; do
    [ -e "$d/$f" ] && { rd v "$d/$f"; printf '%s %s %s\n' "$n" "$f" "$v"; }
  done
  for m in "$d"/dev-*; do [ -e "$m" ] && printf '%s member %s\n' "$n" "${m##*/dev-}"; done
done
sec mountinfo; show /proc/self/mountinfo
sec mountstats; show /proc/self/mountstats
sec bdi
for f in /sys/class/bdi/*/read_ahead_kb; do
  [ -e "$f" ] || continue
  b="${f%/read_ahead_kb}"; rd v "$f"; printf '%s %s\n' "${b##*/}" "$v"
done
sec exportfs; command -v exportfs >/dev/null 2>&1 && exportfs -v 2>/dev/null
sec etc_exports; show /etc/exports
sec nfsd_present; [ -e /proc/fs/nfsd/threads ] && echo yes || echo no
sec nfsd_threads; show /proc/fs/nfsd/threads
sec nfsd_versions; show /proc/fs/nfsd/versions
sec nfsd_pool_stats; show /proc/fs/nfsd/pool_stats
sec nfsd_max_block_size; show /proc/fs/nfsd/max_block_size
sec nfsd_pool_threads; show /proc/fs/nfsd/pool_threads
sec nfsd_portlist; show /proc/fs/nfsd/portlist
sec sunrpc_pool_mode; show /sys/module/sunrpc/parameters/pool_mode
# nfsd's netlink interface, read by nfs-utils' nfsdctl (any login may): only while nfsd is loaded,
# since nfsdctl loads the module otherwise. Where it does not answer the /proc files above stand.
if [ -e /proc/fs/nfsd/threads ] && command -v nfsdctl >/dev/null 2>&1; then
  sec nfsdctl_threads; nfsdctl threads 2>/dev/null
  sec nfsdctl_pool_mode; nfsdctl pool-mode 2>/dev/null
  sec nfsdctl_version; nfsdctl version 2>/dev/null
  sec nfsdctl_listener; nfsdctl listener 2>/dev/null
fi
sec nfsd_clients
for f in /proc/fs/nfsd/clients/*/info; do
  [ -r "$f" ] || continue
  printf '==> %s\n' "$f"; show "$f"
done
sec tcp; show /proc/net/tcp; show /proc/net/tcp6
sec nfs_utils
if command -v mount.nfs >/dev/null 2>&1; then mount.nfs -V 2>&1
elif command -v dpkg-query >/dev/null 2>&1; then dpkg-query -W -f='dpkg ${Package} ${Version}\n' nfs-common 2>/dev/null
elif command -v rpm >/dev/null 2>&1; then rpm -q nfs-utils 2>/dev/null
fi
sec python3
if command -v python3 2>/dev/null; then
  python3 -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null
fi
sec tools
for c in rpc.nfsd nfsdctl exportfs sysctl mount umount ip tee python3 fio ethtool; do
  printf '%s ' "$c"; command -v "$c" 2>/dev/null || echo
done
sec end
exit 0
"""


def split_sections(output: str) -> dict[str, str]:
    """Cut the script's output at its markers; text outside any section is dropped."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in output.splitlines():
        stripped = line.strip()
        if stripped.startswith(MARKER) and stripped.endswith("@@"):
            name = stripped[len(MARKER) : -2]
            current = sections.setdefault(name, [])
            continue
        if current is not None:
            current.append(line)
    return {name: "\n".join(lines).strip("\n") for name, lines in sections.items()}
