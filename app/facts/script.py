"""The one shell script that gathers every fact in a single round trip.

It is fixed text fed to ``sh -s`` on stdin: nothing the admin typed is pasted into
it. Each section starts with a marker line; a missing file just leaves its section
empty, and the parsers say so.
"""

from __future__ import annotations

MARKER = "@@nfs-tuner-section:"

# Commands whose paths go into the sudoers line and the tool list.
TOOLS: tuple[str, ...] = (
    "rpc.nfsd", "exportfs", "sysctl", "mount", "umount", "ip", "tee", "python3", "fio", "ethtool",
)

GATHER_SCRIPT = r"""
PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
LC_ALL=C
export PATH LC_ALL
sec() { printf '\n@@nfs-tuner-section:%s@@\n' "$1"; }
sec os_release; cat /etc/os-release 2>/dev/null
sec uname; uname -n; uname -r; uname -m
sec cpu; nproc 2>/dev/null || grep -c '^processor' /proc/cpuinfo
sec meminfo; grep -E '^(MemTotal|MemAvailable):' /proc/meminfo
sec page_size; getconf PAGESIZE 2>/dev/null
sec ip_addr; ip -j addr 2>/dev/null
sec net_sys
for d in /sys/class/net/*; do
  [ -e "$d" ] || continue
  printf '%s|%s|%s|%s|%s\n' "${d##*/}" "$(cat "$d/mtu" 2>/dev/null)" "$(cat "$d/speed" 2>/dev/null)" "$(cat "$d/operstate" 2>/dev/null)" "$(cat "$d/address" 2>/dev/null)"
done
sec block
for b in /sys/block/*; do
  [ -e "$b" ] || continue
  printf '%s|%s|%s|%s|%s|%s\n' "${b##*/}" "$(cat "$b/dev" 2>/dev/null)" "$(cat "$b/size" 2>/dev/null)" "$(cat "$b/queue/rotational" 2>/dev/null)" "$(cat "$b/queue/read_ahead_kb" 2>/dev/null)" "$(cat "$b/queue/scheduler" 2>/dev/null)"
done
sec mdstat; cat /proc/mdstat 2>/dev/null
sec md_sysfs
for d in /sys/block/md*/md; do
  [ -d "$d" ] || continue
  n="${d%/md}"; n="${n##*/}"
  for f in level raid_disks chunk_size stripe_cache_size array_state sync_action; do
    [ -e "$d/$f" ] && printf '%s %s %s\n' "$n" "$f" "$(cat "$d/$f" 2>/dev/null)"
  done
  for m in "$d"/dev-*; do [ -e "$m" ] && printf '%s member %s\n' "$n" "${m##*/dev-}"; done
done
sec mountinfo; cat /proc/self/mountinfo 2>/dev/null
sec mountstats; cat /proc/self/mountstats 2>/dev/null
sec bdi
for f in /sys/class/bdi/*/read_ahead_kb; do
  [ -e "$f" ] || continue
  b="${f%/read_ahead_kb}"; printf '%s %s\n' "${b##*/}" "$(cat "$f" 2>/dev/null)"
done
sec exportfs; exportfs -v 2>/dev/null
sec etc_exports; cat /etc/exports 2>/dev/null
sec nfsd_present; [ -e /proc/fs/nfsd/threads ] && echo yes || echo no
sec nfsd_threads; cat /proc/fs/nfsd/threads 2>/dev/null
sec nfsd_versions; cat /proc/fs/nfsd/versions 2>/dev/null
sec nfsd_pool_stats; cat /proc/fs/nfsd/pool_stats 2>/dev/null
sec nfsd_max_block_size; cat /proc/fs/nfsd/max_block_size 2>/dev/null
sec nfsd_clients
for f in /proc/fs/nfsd/clients/*/info; do
  [ -r "$f" ] || continue
  printf '==> %s\n' "$f"; cat "$f" 2>/dev/null
done
sec tcp; cat /proc/net/tcp /proc/net/tcp6 2>/dev/null
sec nfs_utils
mount.nfs -V 2>&1 | head -n 1
if command -v dpkg-query >/dev/null 2>&1; then dpkg-query -W -f='dpkg ${Package} ${Version}\n' nfs-kernel-server nfs-common 2>/dev/null; fi
if command -v rpm >/dev/null 2>&1; then rpm -q nfs-utils 2>/dev/null; fi
sec python3
if command -v python3 >/dev/null 2>&1; then
  command -v python3; python3 -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null
fi
sec tools
for c in rpc.nfsd exportfs sysctl mount umount ip tee python3 fio ethtool; do
  printf '%s %s\n' "$c" "$(command -v "$c" 2>/dev/null)"
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
