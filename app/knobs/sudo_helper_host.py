"""nfs-tuner-helper: the one command a narrow sudoers rule lets nfs-tuner run as root.

python3 >= 3.6, stdlib only. Installed by the admin, root-owned, at
/usr/local/sbin/nfs-tuner-helper, with this as the login's only sudoers entry:

    tuner ALL=(root) NOPASSWD: /usr/local/sbin/nfs-tuner-helper

nfs-tuner sends exactly the commands it would run through full sudo, prefixed with
this helper. CONTRACT below is the helper's whole policy: each command it runs, each
argument's grammar, and what the command may touch. A command runs only if it has the
shape of one of CONTRACT's rows and every argument passes that row's check; anything
else (a shell, a bind mount, a mount over /, a write to /etc, a file name the row does
not name) is refused with ``refused: why`` and exit 2, before anything runs. Programs
are run by absolute path with a fixed PATH and environment. ``nfs-tuner helper
--contract`` prints CONTRACT as the table the README shows; the tests are made from it.

This module is only read as text (nfs-tuner renders the installable helper from it,
with the dead-man switch's source built in); importing it does nothing.
"""

import os
import re
import stat
import sys
from collections import namedtuple

DEADMAN_SOURCE = None  # filled in when the helper is rendered for installing
HELPER_DIGEST = "unrendered"
SERVERS = ()  # filled in by `nfs-tuner helper --server NAME`: NFS servers a test mount may name
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C", "LC_ALL": "C"}
BIN_DIRS = ("/usr/sbin", "/usr/bin", "/sbin", "/bin")
SWITCH_ROOT = "/run/nfs-tuner"
MIN_TIMEOUT = 10  # seconds; app.knobs.deadman.MIN_TIMEOUT, checked by a test
MAX_SWITCHES = 4  # live dead-man watchers one login may have on a host at once
MAX_SWITCH_DIRS = 32  # switch directories (live, or fired and not yet read) one login may leave
MAX_NUMBER_INPUT = 64  # bytes of stdin ``tee`` reads
MAX_RESTORE_INPUT = 4 * 1024 * 1024  # bytes of stdin ``deadman write`` reads (the switch's MAX_FILE)


class Refused(Exception):
    pass


# -- argument grammars --------------------------------------------------------------------
# One Arg per kind of argument: its name in the table, its grammar in words, its check
# (the value to pass on, or Refused). Digits are ASCII digits: str.isdigit takes "٣" and "²".

Arg = namedtuple("Arg", "name grammar check")


def _fullmatch(pattern, value):
    return re.fullmatch(pattern, value, re.ASCII) is not None


def _number(name, low, high, words=""):
    def check(value):
        if not _fullmatch(r"[0-9]{1,12}", value) or not low <= int(value) <= high:
            raise Refused("%s must be a whole number from %d to %d, got %r" % (name, low, high, value[:20]))
        return value
    return Arg(name, words or "%d–%d, ASCII digits" % (low, high), check)


def _pattern_arg(name, patterns, what, grammar=""):
    def check(value):
        if not any(re.fullmatch(p, value, re.ASCII) for p in patterns):
            raise Refused("%s %r is not one nfs-tuner may touch" % (what, value[:200]))
        return value
    return Arg(name, grammar or " or ".join("`%s`" % p for p in patterns), check)


WRITABLE = (  # drop_caches has a row of its own
    r"/proc/fs/nfsd/threads",
    r"/proc/fs/nfsd/max_block_size",
    r"/sys/block/md[0-9]{1,4}/md/stripe_cache_size",
    r"/sys/class/bdi/[0-9]{1,5}:[0-9]{1,7}/read_ahead_kb",
    r"/sys/block/[a-z][a-z0-9]{0,31}/queue/read_ahead_kb",
    r"/proc/sys/vm/dirty_(background_)?(bytes|ratio)",
    r"/proc/sys/sunrpc/tcp_(max_)?slot_table_entries",
)
READ_ONLY = (
    r"/proc/fs/nfsd/[a-z][a-z0-9_]{0,31}",  # v4_end_grace, nfsv4gracetime: digits too
    r"/proc/fs/nfsd/clients/[0-9]{1,10}/(info|states)",
    r"/proc/net/rpc/nfsd",
    r"/var/lib/nfs/etab",
)
READABLE = WRITABLE + READ_ONLY
WRITABLE_FILE = _pattern_arg("TUNABLE", WRITABLE, "file")
READABLE_FILE = _pattern_arg("KERNEL_FILE", READABLE, "file",
                             "a TUNABLE, or " + " or ".join("`%s`" % p for p in READ_ONLY))


def _tee_input(text):
    if not _fullmatch(r"[0-9]{1,12}\n?", text):
        raise Refused("the value to write must be a whole number, got %r" % text[:40])
    return text


NUMBER_INPUT = Arg("NUMBER", "a whole number, ASCII digits, at most 12", _tee_input)
DROP_INPUT = Arg("1|2|3", "1, 2 or 3", lambda v: v if _fullmatch(r"[123]\n?", v) else _refuse("drop_caches takes 1, 2 or 3"))
THREADS = _number("THREADS", 1, 1024)
POOL_MODE_INPUT = Arg("POOL_MODE", "global, percpu, pernode or auto",
                      lambda v: v if _fullmatch(r"(global|percpu|pernode|auto)\n?", v) else _refuse("not a pool mode"))
MIN_THREADS = _number("MIN_THREADS", 0, 1024)


# -- exports ------------------------------------------------------------------------------
EXPORT_TOGGLES = ("sync", "async", "wdelay", "no_wdelay")


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


def _export_target(value):
    client, sep, path = value.partition(":")
    if not sep or not client or client.startswith("-") or not path.startswith("/"):
        raise Refused("%r is not CLIENT:/PATH" % value[:200])
    if (client, path) not in _exported():
        raise Refused("%s is not exported to %s now: nfs-tuner only changes existing exports" % (path, client))
    return value


def _export_options(value):
    if not _fullmatch(r"[A-Za-z0-9_=:,./@-]{1,1024}", value):
        raise Refused("export options %r hold characters exportfs options never do" % value[:200])
    return value


EXPORT_OPTIONS = Arg("EXPORT_OPTIONS", "the export's own options, with sync/async and (no_)wdelay toggled",
                     _export_options)
EXPORT_TARGET = Arg("CLIENT:/PATH", "an export that is exported now (/var/lib/nfs/etab)", _export_target)


def _exportfs(options, target):
    """Only sync/async and (no_)wdelay may differ from what the export already has."""
    current = _exported()[tuple(target.split(":", 1))]
    for opt in options.split(","):
        if opt not in EXPORT_TOGGLES and opt not in current:
            raise Refused("export option %r is neither sync/async/(no_)wdelay nor one %s already has" % (opt, target))
    return [_tool("exportfs"), "-o", options, target]


# -- test mounts --------------------------------------------------------------------------
MOUNT_POINT_RE = r"/mnt/nfs-tuner(-[A-Za-z0-9_]{1,64}){0,4}"


def _root_dir(path):
    """``path`` must be a real directory (not a symlink) that only root can write."""
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
        raise Refused("%s is not a root-owned directory that only root can write" % path)


def _mount_point(path, must_exist=False):
    if not _fullmatch(MOUNT_POINT_RE, path):
        raise Refused("mount point %r is not one of nfs-tuner's own (/mnt/nfs-tuner-*)" % path[:200])
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


def _nfs_mount_point(path):
    point = _mount_point(path)
    kinds = [fstype for mp, fstype, _ in _mounts() if mp == point]
    if kinds and not kinds[-1].startswith("nfs"):
        raise Refused("%s is a %s mount, not NFS" % (point, kinds[-1]))
    return point


TEST_MOUNT_POINT = Arg("MOUNT_POINT", "`%s`, a real directory in a root-owned /mnt" % MOUNT_POINT_RE, _mount_point)
MOUNTED_POINT = Arg("MOUNT_POINT", "as MOUNT_POINT, and it exists", lambda p: _mount_point(p, must_exist=True))
NFS_MOUNT_POINT = Arg("MOUNT_POINT", "as MOUNT_POINT, and NFS if mounted", _nfs_mount_point)


def _unescape(field):
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _mounts():
    """(mount point, fstype, source) of every mount, from /proc/self/mountinfo."""
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) >= 5 and len(tail) >= 2:
                out.append((_unescape(fields[4]), tail[0], _unescape(tail[1])))
    return out


def _server_of(source):
    """The server part of SERVER:/PATH (an IPv6 address without its brackets)."""
    m = re.match(r"\[([0-9A-Fa-f:.]{2,45})\]:/|([^:/\[\]]{1,253}):/", source)
    return (m.group(1) or m.group(2)) if m else None


def _fstab():
    """(source, fstype) of every /etc/fstab entry."""
    out = []
    try:
        with open("/etc/fstab") as f:
            for line in f:
                fields = line.split()
                if len(fields) >= 3 and not fields[0].startswith("#"):
                    out.append((fields[0], fields[2]))
    except OSError:
        pass
    return out


def _known_servers():
    """The NFS servers this host already mounts from (now, or in /etc/fstab), and those the helper was rendered for."""
    sources = [src for _, fstype, src in _mounts() if fstype in ("nfs", "nfs4")]
    sources += [src for src, fstype in _fstab() if fstype in ("nfs", "nfs4")]
    return set(SERVERS) | set(s for s in map(_server_of, sources) if s)


def _mount_source(value):
    if not _fullmatch(r"(\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9][A-Za-z0-9._-]{0,252}):(/|(/[A-Za-z0-9._+-]{1,255}){1,32}/?)", value) \
            or "/../" in value + "/" or "/./" in value + "/":
        raise Refused("%r is not SERVER:/PATH" % value[:200])
    server = _server_of(value)
    if server not in _known_servers():
        raise Refused(
            "%s is not an NFS server this host mounts (now or in /etc/fstab), nor one this helper was rendered for: "
            "render it with `nfs-tuner helper --server %s`" % (server, server))
    return value


MOUNT_SOURCE = Arg("SERVER:/PATH", "a server this host mounts from (now or in /etc/fstab) or one the helper was "
                                   "rendered for (`nfs-tuner helper --server`)", _mount_source)
# Each option a test mount may carry: exactly what nfs-tuner renders (app.knobs.targets.MountOptions).
MOUNT_OPTION_RES = (
    r"vers=(3|4|4\.0|4\.1|4\.2)", r"rsize=[0-9]{4,7}", r"wsize=[0-9]{4,7}", r"nconnect=([1-9]|1[0-6])",
    r"actimeo=([0-9]|[1-9][0-9]|[1-5][0-9][0-9]|600)", r"nocto", r"defaults", r"nosuid", r"nodev",
)
MAX_IO_SIZE = 4 * 1024 * 1024  # the largest rsize/wsize a Linux client takes (nfsd offers up to 4 MiB since 6.16)


def _mount_options(text):
    options = text.split(",")
    for opt in options:
        if not any(re.fullmatch(p, opt, re.ASCII) for p in MOUNT_OPTION_RES):
            raise Refused("mount option %r is not one nfs-tuner uses" % opt[:64])
        if opt.startswith(("rsize=", "wsize=")) and int(opt.split("=")[1]) > MAX_IO_SIZE:
            raise Refused("mount option %s is above %d" % (opt, MAX_IO_SIZE))
    if len(set(o.split("=")[0] for o in options)) != len(options):
        raise Refused("mount options %r name an option twice" % text[:200])
    for forced in ("nosuid", "nodev"):  # a hostile export must not bring setuid files or devices
        if forced not in options:
            options.append(forced)
    return ",".join(options)


MOUNT_OPTIONS = Arg("OPTIONS", "comma-separated, each once: " + ", ".join("`%s`" % p for p in MOUNT_OPTION_RES)
                    + "; nosuid,nodev always added", _mount_options)
NFS_TYPE = Arg("TYPE", "`nfs` or `nfs4`", lambda v: v if v in ("nfs", "nfs4") else _refuse("type %r is not NFS" % v[:20]))


def _refuse(why):
    raise Refused(why)


# -- network ------------------------------------------------------------------------------
def _iface(value):
    if not _fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.@-]{0,14}", value) or not os.path.isdir("/sys/class/net/" + value):
        raise Refused("%r is not a network interface of this host" % value[:20])
    return value


IFACE = Arg("IFACE", "an interface of this host (/sys/class/net)", _iface)
MTU = _number("MTU", 576, 65535)
PING_COUNT = _number("COUNT", 1, 10)
PING_WAIT = _number("WAIT", 1, 10)
PING_SIZE = _number("SIZE", 0, 65507)
IP = Arg("IP", "an IPv4 or IPv6 address", lambda v: v if _fullmatch(
    r"[0-9]{1,3}(\.[0-9]{1,3}){3}|[0-9A-Fa-f]{0,4}(:[0-9A-Fa-f]{0,4}){2,7}", v) else _refuse("%r is not an IP address" % v[:64]))


# -- the dead-man switch ------------------------------------------------------------------
def _switch_dir(value):
    if not _fullmatch(re.escape(SWITCH_ROOT) + r"/[0-9a-f]{12,64}", value):
        raise Refused("the switch's directory must be %s/TOKEN (12 to 64 hex digits), got %r" % (SWITCH_ROOT, value[:100]))
    return value


def _timeout(value):
    if not _fullmatch(r"[0-9]{1,3}(\.[0-9]{1,6})?", value) or not MIN_TIMEOUT <= float(value) <= 600:
        raise Refused("the switch's timeout must be %d to 600 seconds in ASCII digits, got %r" % (MIN_TIMEOUT, value[:20]))
    return value


SWITCH = Arg("SWITCH_DIR", "`%s/[0-9a-f]{12,64}`, armed by this login" % SWITCH_ROOT, _switch_dir)
TIMEOUT = Arg("TIMEOUT", "%d–600 seconds, ASCII digits" % MIN_TIMEOUT, _timeout)


def _restore_input(text):
    if len(text) > MAX_RESTORE_INPUT:
        raise Refused("the restore steps are larger than %d bytes" % MAX_RESTORE_INPUT)
    return text  # parsed, and each step checked against this table, by the switch (STEP_GUARD)


RESTORE_STEPS = Arg("RESTORE_JSON", "restore entries whose every step is a command of this table", _restore_input)


# -- the contract -------------------------------------------------------------------------
Row = namedtuple("Row", "program args stdin touches")


def _row(program, args, touches, stdin=None):
    return Row(program, tuple(args), stdin, touches)


CONTRACT = (
    _row("version", (), "nothing: prints the helper's digest"),
    _row("sync", (), "flushes dirty pages to disk"),
    _row("tee", ("/proc/sys/vm/drop_caches",), "drops the page cache (before each trial)", DROP_INPUT),
    _row("tee", ("/sys/module/sunrpc/parameters/pool_mode",), "nfsd's pool mode, while nfsd is stopped (its restart)",
         POOL_MODE_INPUT),
    _row("tee", (WRITABLE_FILE,), "one tunable's kernel file: writes the number on stdin", NUMBER_INPUT),
    _row("cat", ("--", READABLE_FILE), "reads one of nfsd's or a tunable's kernel files"),
    _row("rpc.nfsd", (THREADS,), "starts nfsd with this many threads (after a max_block_size change)"),
    _row("nfsdctl", ("threads", THREADS), "nfsd's thread count, through its netlink interface (nfs-utils 2.7+)"),
    _row("nfsdctl", ("threads", "-m", MIN_THREADS, THREADS),
         "a self-scaling nfsd's floor (Linux 7.0), set with the thread count nfsd has"),
    _row("exportfs", ("-v",), "lists the exports"),
    _row("exportfs", ("-o", EXPORT_OPTIONS, EXPORT_TARGET),
         "re-exports an export that exists, with its own options and sync/async, (no_)wdelay toggled"),
    _row("mkdir", ("-p", "-m", "0755", TEST_MOUNT_POINT), "makes nfs-tuner's test mount point"),
    _row("rmdir", (TEST_MOUNT_POINT,), "removes nfs-tuner's test mount point"),
    _row("mount", ("-t", NFS_TYPE, "-o", MOUNT_OPTIONS, MOUNT_SOURCE, MOUNTED_POINT),
         "mounts a known server's export on nfs-tuner's test mount point, nosuid,nodev"),
    _row("umount", (NFS_MOUNT_POINT,), "unmounts nfs-tuner's test mount"),
    _row("umount", ("-l", NFS_MOUNT_POINT), "detaches nfs-tuner's test mount when it is busy"),
    _row("ping", ("-n", "-c", PING_COUNT, "-i", "0.2", "-W", PING_WAIT, "-M", "do", "-s", PING_SIZE, IP),
         "a few don't-fragment pings of one size, 0.2 s apart (the MTU check)"),
    _row("ip", ("link", "set", "dev", IFACE, "mtu", MTU), "one interface's MTU"),
    _row("deadman", ("arm", SWITCH, TIMEOUT),
         "makes the switch's directory and starts its watcher (at most %d live per login)" % MAX_SWITCHES),
    _row("deadman", ("write", SWITCH, "restore.json"), "the switch's restore steps, each checked by this table, and its heartbeat file",
         RESTORE_STEPS),
    _row("deadman", ("serve", SWITCH, "restore.json"),
         "write's restore lists (and beat's heartbeat), one line of stdin each, every one checked as write checks it, "
         "until stdin ends: one helper start for a run's lists"),
    _row("deadman", ("read", SWITCH, "fired.json"), "reads the switch's report of what it put back"),
    _row("deadman", ("beat", SWITCH), "the switch's heartbeat file"),
    _row("deadman", ("disarm", SWITCH), "tells the switch's watcher to stop and clean up"),
    _row("deadman", ("pending", SWITCH), "reads whether the switch's watcher is alive"),
    _row("deadman", ("forget", SWITCH), "removes a fired switch's directory"),
)


# How much of stdin a row's input may hold: read no further.
STDIN_LIMITS = {"NUMBER": MAX_NUMBER_INPUT, "1|2|3": MAX_NUMBER_INPUT, "POOL_MODE": MAX_NUMBER_INPUT, "RESTORE_JSON": MAX_RESTORE_INPUT + 1}


def _shape(row, argv):
    return (argv[:1] == [row.program] and len(argv) == 1 + len(row.args)
            and all(isinstance(a, Arg) or a == v for a, v in zip(row.args, argv[1:])))


def usage(row):
    """A row as a command line: its literal words, and each argument's name."""
    return " ".join([row.program] + [a.name if isinstance(a, Arg) else a for a in row.args])


def row_of(argv):
    """The first row of CONTRACT that argv has the shape of (program, arity, literal words), or Refused."""
    a = list(argv)
    for row in CONTRACT:
        if _shape(row, a):
            return row
    # the same program (and the switch's verb): say the forms it takes
    near = [usage(r) for r in CONTRACT if a[:1] == [r.program] and (r.program != "deadman" or r.args[0] in a[1:2])]
    if near:
        raise Refused("%r is not a command nfs-tuner runs; it runs only: %s" % (" ".join(a)[:200], "; ".join(near)))
    raise Refused("%r is not a command nfs-tuner runs" % " ".join(a)[:200])


def checked(argv, stdin=""):
    """(row, checked arguments, checked stdin) for argv, or Refused: the one place the contract is applied."""
    a = list(argv)
    row = row_of(a)
    args = [spec.check(value) if isinstance(spec, Arg) else value for spec, value in zip(row.args, a[1:])]
    data = row.stdin.check(stdin) if row.stdin is not None else ""
    return row, args, data


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


def check(argv, stdin=""):
    """The absolute argv to run for one of nfs-tuner's commands, or Refused."""
    row, args, _ = checked(argv, stdin)
    if row.program in ("deadman", "version"):
        raise Refused("%s is not a command to run" % row.program)
    if row.program == "exportfs" and args[0] == "-o":
        return _exportfs(args[1], args[2])
    return [_tool(row.program)] + args


def _guard_step(argv, stdin):
    """The dead-man switch's restore steps run only what check() allows."""
    return check(argv, stdin or "")


def _caller():
    """The login sudo ran the helper for: sudo sets SUDO_UID (a login cannot pass its own through sudo)."""
    uid = os.environ.get("SUDO_UID", "0")
    return int(uid) if _fullmatch(r"[0-9]{1,10}", uid) else 0


def _switch_module():
    if DEADMAN_SOURCE is None:
        raise Refused("this helper was not rendered with its dead-man switch")
    switch = {"__name__": "nfs_tuner_deadman"}
    exec(compile(DEADMAN_SOURCE, "nfs-tuner-deadman", "exec"), switch)
    switch["STEP_GUARD"] = _guard_step
    switch["CALLER"] = _caller()
    return switch


def _room_to_arm(switch):
    """At most MAX_SWITCHES live watchers and MAX_SWITCH_DIRS directories per login."""
    try:
        names = [n for n in os.listdir(SWITCH_ROOT) if _fullmatch(r"[0-9a-f]{12,64}", n)]
    except FileNotFoundError:
        return
    mine = live = 0
    for name in names:
        try:
            dfd = switch["_open_dir"](SWITCH_ROOT + "/" + name)  # refused unless this login armed it
        except (switch["Refused"], OSError):
            continue
        try:
            mine += 1
            live += switch["watcher_alive"](dfd)
        finally:
            os.close(dfd)
    if live >= MAX_SWITCHES:
        raise Refused("this login has %d dead-man switches armed on this host already (at most %d)" % (live, MAX_SWITCHES))
    if mine >= MAX_SWITCH_DIRS:
        raise Refused("this login has left %d switch directories in %s (at most %d): `nfs-tuner journal` reads "
                      "and forgets them" % (mine, SWITCH_ROOT, MAX_SWITCH_DIRS))


def _deadman(args, data):
    switch = _switch_module()
    verb, path, rest = args[0], args[1], args[2:]
    if verb == "arm":
        _room_to_arm(switch)
    return switch["run_verb"](verb, path, rest, data)


def main(argv):
    if os.geteuid() != 0:
        sys.stderr.write("refused: nfs-tuner-helper must run as root (through its sudoers rule)\n")
        return 2
    args = argv[1:]
    try:
        row = row_of(args)
        stdin = sys.stdin.read(STDIN_LIMITS[row.stdin.name]) if row.stdin is not None else ""
        row, checked_args, data = checked(args, stdin)
        if row.program == "version":
            sys.stdout.write(HELPER_DIGEST + "\n")
            return 0
        if row.program == "deadman":
            return _deadman(checked_args, data)
        command = check(args, stdin)
    except Refused as exc:
        sys.stderr.write("refused: %s\n" % exc)
        return 2
    import subprocess  # not for version or deadman: a quarter of the start-up on a slow host

    if row.program == "tee":
        return subprocess.run(command, input=stdin.encode(), env=ENV).returncode
    return subprocess.run(command, stdin=subprocess.DEVNULL, env=ENV).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
