"""nfs-tuner-helper: the one command a narrow sudoers rule lets nfs-tuner run as root.

python3 >= 3.6, stdlib only. Installed by the admin, root-owned, at
/usr/local/sbin/nfs-tuner-helper, with this as the login's only sudoers entry:

    tuner ALL=(root) NOPASSWD: /usr/local/sbin/nfs-tuner-helper

nfs-tuner sends exactly the commands it would run through full sudo, prefixed with
this helper, and the helper runs a command only if it has one of the few shapes
nfs-tuner uses, with every argument checked:

- ``tee FILE`` with a number on stdin, for the tunables' kernel files only (the dirty-page
  limits' ratio files too: writing a byte limit displaces its ratio, which is put back);
- ``cat -- FILE`` for nfsd's and the tunables' kernel files (root may read them);
- ``exportfs -v``, and ``exportfs -o OPTIONS CLIENT:PATH`` for an export that is
  already exported, with options it already has plus sync/async and (no_)wdelay;
- ``mkdir -p -m 0755 MP``, ``mount -t nfs -o OPTIONS SERVER:/PATH MP``,
  ``umount [-l] MP``, ``rmdir MP`` for nfs-tuner's own test mount points
  (/mnt/nfs-tuner-*), NFS only, always nosuid,nodev, known mount options only
  (cto/nocto without a value, actimeo in whole seconds up to 600);
- ``ip link set dev IFACE mtu N`` for an interface that exists, and the MTU check's
  ``ping -n -c N -W N -M do -s SIZE ADDRESS``;
- ``sync``; ``version``;
- ``deadman VERB /run/nfs-tuner/TOKEN …``: the dead-man switch built in below, whose
  restore steps pass these same checks when written and again when replayed.

Anything else, a shell, a bind mount, a mount over /, a write to /etc, is refused
with ``refused: why`` and exit 2, before anything runs. Programs are run by absolute
path with a fixed PATH and environment.

This module is only read as text (nfs-tuner renders the installable helper from it,
with the dead-man switch's source built in); importing it does nothing.
"""

import os
import re
import stat
import sys

DEADMAN_SOURCE = None  # filled in when the helper is rendered for installing
HELPER_DIGEST = "unrendered"
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C", "LC_ALL": "C"}
BIN_DIRS = ("/usr/sbin", "/usr/bin", "/sbin", "/bin")

WRITABLE = [re.compile(p) for p in (
    r"/proc/fs/nfsd/threads",
    r"/proc/fs/nfsd/max_block_size",
    r"/sys/block/md[0-9]{1,4}/md/stripe_cache_size",
    r"/sys/class/bdi/[0-9]{1,5}:[0-9]{1,7}/read_ahead_kb",
    r"/sys/block/[a-z][a-z0-9]{0,31}/queue/read_ahead_kb",
    r"/proc/sys/vm/drop_caches",
    r"/proc/sys/vm/dirty_(background_)?(bytes|ratio)",
    r"/proc/sys/sunrpc/tcp_(max_)?slot_table_entries",
)]
READABLE = WRITABLE + [re.compile(p) for p in (
    r"/proc/fs/nfsd/[a-z][a-z0-9_]{0,31}",  # v4_end_grace, nfsv4gracetime: digits too
    r"/proc/fs/nfsd/clients/[0-9]{1,10}/(info|states)",
    r"/proc/net/rpc/nfsd",
    r"/var/lib/nfs/etab",
)]
NUMBER = re.compile(r"[0-9]{1,12}\n?")
MOUNT_POINT = re.compile(r"/mnt/nfs-tuner(-[A-Za-z0-9_]{1,64}){0,4}")
SOURCE = re.compile(r"(\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9][A-Za-z0-9._-]{0,252}):(/[A-Za-z0-9._+-]{0,255}){1,32}")
ADDRESS = re.compile(r"[0-9]{1,3}(\.[0-9]{1,3}){3}|[0-9A-Fa-f]{0,4}(:[0-9A-Fa-f]{0,4}){2,7}")
IFACE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@-]{0,14}")
TOKEN_DIR = re.compile(r"/run/nfs-tuner/[0-9a-f]{1,64}")
OPTION_VALUE = re.compile(r"[A-Za-z0-9._:-]{0,64}")
# Mount options an NFS test mount may carry: the tunables and the transport's own.
MOUNT_OPTIONS = frozenset((
    "vers", "nfsvers", "minorversion", "rsize", "wsize", "nconnect", "max_connect", "proto", "port", "mountport",
    "mountproto", "addr", "clientaddr", "hard", "soft", "softreval", "timeo", "retrans", "ro", "rw", "noatime",
    "relatime", "nodiratime", "actimeo", "acregmin", "acregmax", "acdirmin", "acdirmax", "noac", "cto", "nocto",
    "sec", "lookupcache", "local_lock", "resvport", "noresvport", "sharecache", "nosharecache", "intr", "nointr",
    "nosuid", "nodev", "noexec", "fg", "bg", "retry", "lock", "nolock", "defaults",
))
# Mount options that take no value, and those that take seconds (at most ACTIMEO_MAX)
FLAG_OPTIONS = frozenset(("cto", "nocto"))
SECONDS_OPTIONS = frozenset(("actimeo",))
ACTIMEO_MAX = 600
SECONDS = re.compile(r"[0-9]{1,3}")
EXPORT_TOGGLES = frozenset(("sync", "async", "wdelay", "no_wdelay"))


class Refused(Exception):
    pass


def _tool(name):
    for d in BIN_DIRS:
        path = os.path.join(d, name)
        try:
            st = os.stat(path)
        except OSError:
            continue
        if st.st_uid == 0 and not st.st_mode & 0o022 and os.access(path, os.X_OK):
            return path
    raise Refused("%s was not found in %s (root-owned, not writable by others)" % (name, ", ".join(BIN_DIRS)))


def _match(patterns, path, what):
    if not any(p.fullmatch(path) for p in patterns):
        raise Refused("%s %r is not one nfs-tuner may touch" % (what, path))
    return path


def _root_dir(path):
    """``path`` must be a real directory (not a symlink) that only root can write."""
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
        raise Refused("%s is not a root-owned directory that only root can write" % path)


def _mount_point(path, must_exist=False):
    if not MOUNT_POINT.fullmatch(path):
        raise Refused("mount point %r is not one of nfs-tuner's own (/mnt/nfs-tuner-*)" % path)
    _root_dir("/mnt")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if must_exist:
            raise Refused("%s does not exist" % path)
        return path
    if not stat.S_ISDIR(st.st_mode):
        raise Refused("%s is not a directory (a symlink or a file was put there)" % path)
    return path


def _mounts():
    """(mount point, fstype) of every mount, from /proc/self/mountinfo."""
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fields = left.split()
            if len(fields) >= 5 and right:
                point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
                out.append((point, right.split()[0]))
    return out


def _mount_options(text):
    options = []
    for opt in text.split(","):
        key, eq, value = opt.partition("=")
        if key not in MOUNT_OPTIONS or not OPTION_VALUE.fullmatch(value):
            raise Refused("mount option %r is not one nfs-tuner uses" % opt)
        if key in FLAG_OPTIONS and eq:
            raise Refused("mount option %s takes no value" % key)
        if key in SECONDS_OPTIONS and not (SECONDS.fullmatch(value) and int(value) <= ACTIMEO_MAX):
            raise Refused("mount option %s takes whole seconds from 0 to %d, got %r" % (key, ACTIMEO_MAX, value))
        options.append(opt)
    for forced in ("nosuid", "nodev"):  # a hostile export must not bring setuid files or devices
        if forced not in options:
            options.append(forced)
    return ",".join(options)


def _exported():
    """{(client, path): set of options} of the current exports, from /var/lib/nfs/etab."""
    out = {}
    try:
        with open("/var/lib/nfs/etab") as f:
            for line in f:
                m = re.match(r"(\S+)\s+(\S+?)\((.*)\)\s*$", line)
                if m:
                    out[(m.group(2), m.group(1))] = set(m.group(3).split(","))
    except OSError:
        pass
    return out


def _export_command(options, target):
    client, sep, path = target.partition(":")
    if not sep or client.startswith("-") or not path.startswith("/"):
        raise Refused("%r is not CLIENT:/PATH" % target)
    current = _exported().get((client, path))
    if current is None:
        raise Refused("%s is not exported to %s now: nfs-tuner only changes existing exports" % (path, client))
    for opt in options.split(","):
        if opt not in EXPORT_TOGGLES and opt not in current:
            raise Refused("export option %r is neither sync/async/(no_)wdelay nor one %s already has" % (opt, target))
    return [_tool("exportfs"), "-o", options, target]


def check(argv, stdin=""):
    """The absolute argv to run for one of nfs-tuner's commands, or Refused."""
    a = list(argv)
    n = len(a)
    if a == ["sync"]:
        return [_tool("sync")]
    if n == 2 and a[0] == "rpc.nfsd":
        # nfsd started again after a max_block_size change, with this many threads (nfs.conf gives the rest)
        if not a[1].isdigit() or not 1 <= int(a[1]) <= 1024:
            raise Refused("rpc.nfsd takes a thread count from 1 to 1024, got %r" % a[1][:20])
        return [_tool("rpc.nfsd"), a[1]]
    if n == 2 and a[0] == "tee":
        path = _match(WRITABLE, a[1], "file")
        if not NUMBER.fullmatch(stdin):
            raise Refused("the value for %s must be a whole number, got %r" % (path, stdin[:40]))
        if path == "/proc/sys/vm/drop_caches" and stdin.strip() not in ("1", "2", "3"):
            raise Refused("drop_caches takes 1, 2 or 3")
        return [_tool("tee"), path]
    if n == 3 and a[:2] == ["cat", "--"]:
        return [_tool("cat"), "--", _match(READABLE, a[2], "file")]
    if a == ["exportfs", "-v"]:
        return [_tool("exportfs"), "-v"]
    if n == 4 and a[:2] == ["exportfs", "-o"]:
        return _export_command(a[2], a[3])
    if n == 5 and a[:4] == ["mkdir", "-p", "-m", "0755"]:
        return [_tool("mkdir"), "-p", "-m", "0755", _mount_point(a[4])]
    if n == 2 and a[0] == "rmdir":
        # not must_exist: the switch's restore steps are checked when written, before the mount exists
        return [_tool("rmdir"), _mount_point(a[1])]
    if n == 7 and a[0] == "mount" and a[1] == "-t" and a[2] in ("nfs", "nfs4") and a[3] == "-o":
        if not SOURCE.fullmatch(a[5]) or "/../" in a[5] + "/" or "/./" in a[5] + "/":
            raise Refused("%r is not SERVER:/PATH" % a[5])
        point = _mount_point(a[6], must_exist=True)
        return [_tool("mount"), "-t", a[2], "-o", _mount_options(a[4]), a[5], point]
    if a[:1] == ["umount"] and (n == 2 or (n == 3 and a[1] == "-l")):
        point = _mount_point(a[-1])
        kinds = [fstype for mp, fstype in _mounts() if mp == point]
        if kinds and not kinds[-1].startswith("nfs"):
            raise Refused("%s is a %s mount, not NFS" % (point, kinds[-1]))
        return [_tool("umount"), *a[1:-1], point]
    if n == 11 and a[:3] == ["ping", "-n", "-c"] and a[4] == "-W" and a[6:9] == ["-M", "do", "-s"]:
        # the MTU check: a few don't-fragment pings of one size to one address
        if not (a[3].isdigit() and 0 < int(a[3]) <= 10 and a[5].isdigit() and 0 < int(a[5]) <= 10):
            raise Refused("ping count and wait must be 1 to 10")
        if not (a[9].isdigit() and int(a[9]) <= 65507) or not ADDRESS.fullmatch(a[10]):
            raise Refused("ping needs a size up to 65507 and an IP address")
        return [_tool("ping"), *a[1:]]
    if n == 7 and a[:4] == ["ip", "link", "set", "dev"] and a[5] == "mtu":
        if not IFACE.fullmatch(a[4]) or not os.path.isdir("/sys/class/net/" + a[4]):
            raise Refused("%r is not a network interface of this host" % a[4])
        if not a[6].isdigit() or not 576 <= int(a[6]) <= 65535:
            raise Refused("MTU %r is not between 576 and 65535" % a[6])
        return [_tool("ip"), "link", "set", "dev", a[4], "mtu", a[6]]
    raise Refused("%r is not a command nfs-tuner runs" % " ".join(a)[:200])


def _guard_step(argv, stdin):
    """The dead-man switch's restore steps run only what check() allows."""
    return check(argv, stdin or "")


def _deadman(args):
    if DEADMAN_SOURCE is None:
        raise Refused("this helper was not rendered with its dead-man switch")
    if len(args) < 2 or not TOKEN_DIR.fullmatch(args[1]):
        raise Refused("the switch's directory must be /run/nfs-tuner/TOKEN")
    switch = {"__name__": "nfs_tuner_deadman"}
    exec(compile(DEADMAN_SOURCE, "nfs-tuner-deadman", "exec"), switch)
    switch["STEP_GUARD"] = _guard_step
    return switch["main"](["deadman"] + list(args))


def main(argv):
    if os.geteuid() != 0:
        sys.stderr.write("refused: nfs-tuner-helper must run as root (through its sudoers rule)\n")
        return 2
    args = argv[1:]
    try:
        if args == ["version"]:
            sys.stdout.write(HELPER_DIGEST + "\n")
            return 0
        if args[:1] == ["deadman"]:
            return _deadman(args[1:])
        stdin = sys.stdin.read(64) if args[:1] == ["tee"] else ""
        command = check(args, stdin)
    except Refused as exc:
        sys.stderr.write("refused: %s\n" % exc)
        return 2
    import subprocess  # not for version or deadman: a quarter of the start-up on a slow host

    if args[:1] == ["tee"]:
        return subprocess.run(command, input=stdin.encode(), env=ENV).returncode
    return subprocess.run(command, stdin=subprocess.DEVNULL, env=ENV).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
