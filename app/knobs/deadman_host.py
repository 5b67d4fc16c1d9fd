"""The dead-man switch that runs on a tuned host (python3 >= 3.6, stdlib only).

Sent as ``python3 -c <this source> VERB DIR [ARG]`` and always run as root (the
controller starts it through the same sudo as the changes it guards):

- ``arm DIR TIMEOUT``: make DIR, detach (double fork, new session, no stdio) and
  watch ``DIR/heartbeat``, which the controller refreshes every few seconds. If it is
  older than TIMEOUT, the controller is gone (killed, or its network cut by a bad
  MTU): replay the restore steps of ``DIR/restore.json`` newest first, write
  ``DIR/fired.json`` and exit. ``DIR/disarm`` makes it clean up and exit instead.
- ``write DIR restore.json`` (stdin), ``read DIR fired.json``, ``beat DIR``,
  ``disarm DIR``, ``pending DIR``, ``forget DIR``: the controller's only ways to touch
  DIR. No other file name is taken: the switch's files are a fixed set.
- ``serve DIR restore.json``: ``write`` for each line of stdin (a restore list as one
  line of JSON, or ``beat``), each answered on stdout with a line (``ok``, or
  ``refused: why`` / ``failed: why``) and checked as ``write`` checks it, until EOF: one
  python start for a run's restore lists instead of one each (0.5 s of a slow host's CPU).

DIR's parent is a root-owned directory nobody else may write (``/run/nfs-tuner``);
DIR itself is made fresh for each run (an existing one is refused: someone may have
planted it). DIR is reached one component at a time from ``/``, each opened with
O_NOFOLLOW, and every file is opened relative to DIR's descriptor with O_NOFOLLOW
(regular files only, never a FIFO or a device, at most MAX_FILE bytes) and written
through O_EXCL temporaries, so no path can be swapped under the switch. Restore
steps are replayed with a fixed environment. A refusal prints ``refused: why`` and
exits 2; nothing is run.

This module is only read as text and sent to hosts; importing it does nothing.
"""

import json
import math
import os
import re
import stat
import sys
import time

NAMES = ("restore.json", "heartbeat", "disarm", "pid", "fired.json", "owner")  # every file the switch makes
READ_NAMES = ("fired.json",)  # what ``read`` returns
WRITE_NAMES = ("restore.json",)  # what ``write`` takes
MAX_FILE = 4 * 1024 * 1024
MAX_TIMEOUT = 600  # seconds; app.knobs.deadman.MAX_TIMEOUT, checked by a test
TIMEOUT_TEXT = re.compile(r"[0-9]{1,3}(\.[0-9]{1,6})?")  # ASCII digits: never nan, inf or 1e9
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C", "LC_ALL": "C"}  # what a replayed step runs with
# Set by nfs-tuner-helper (sudo_helper_host.py) when the switch runs inside it: the
# caller is then not root, so it may only write its restore steps and ask to disarm,
# and every step must be one the helper would run itself: STEP_GUARD(argv, input)
# returns the argv to run or raises. CALLER is then the login's uid (sudo's SUDO_UID):
# a switch answers only the login that armed it.
STEP_GUARD = None
CALLER = None


class Refused(Exception):
    pass


def _check_private(st, what):
    if not stat.S_ISDIR(st.st_mode):
        raise Refused("%s is not a directory" % what)
    if st.st_uid != os.geteuid():
        raise Refused("%s belongs to uid %d, not to root" % (what, st.st_uid))
    if st.st_mode & 0o022:
        raise Refused("%s can be written by others (mode %o)" % (what, stat.S_IMODE(st.st_mode)))


def _open_component(fd, name, shown):
    """``name`` under the directory ``fd``, as a directory, never through a symlink."""
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
    except FileNotFoundError:
        raise Refused("%s does not exist" % shown)
    except OSError as exc:  # a symlink (ELOOP), a file (ENOTDIR)
        raise Refused("%s cannot be opened as a directory: %s" % (shown, exc.strerror))


def _open_dir(path, create=False):
    """A descriptor of a private directory at ``path``; its parent must be private too."""
    if os.geteuid() != 0:
        raise Refused("the switch must run as root")
    parts = path.split("/")
    if not path.startswith("/") or len(parts) < 3 or any(p in ("", ".", "..") for p in parts[1:]):
        raise Refused("%r is not an absolute directory path" % path)
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, name in enumerate(parts[1:-1], 1):
            shown = "/".join(parts[:i + 1])
            if i == len(parts) - 2:  # the parent (/run/nfs-tuner) is made if it is missing
                try:
                    os.mkdir(name, 0o700, dir_fd=fd)
                except FileExistsError:
                    pass
            nxt = _open_component(fd, name, shown)
            os.close(fd)
            fd = nxt
        _check_private(os.fstat(fd), "/".join(parts[:-1]))
        if create:
            try:
                os.mkdir(parts[-1], 0o700, dir_fd=fd)
            except FileExistsError:
                raise Refused("%s exists already: a switch of this run cannot exist yet" % path)
        dfd = _open_component(fd, parts[-1], path)
    finally:
        os.close(fd)
    try:
        _check_private(os.fstat(dfd), path)
        if CALLER is not None and not create and _owner(dfd) != CALLER:
            raise Refused("%s was armed by another login" % path)
    except Refused:
        os.close(dfd)
        raise
    return dfd


def _owner(dfd):
    try:
        text = _read(dfd, "owner")
    except (OSError, Refused):
        return None
    return int(text) if re.fullmatch(r"[0-9]{1,10}", text) else None


def _write(dfd, name, data):
    if name not in NAMES:
        raise Refused("%r is not a file of the switch" % name)
    tmp = "%s.%d.tmp" % (name, os.getpid())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd)
    try:
        os.write(fd, data.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)


def _read(dfd, name):
    """One of the switch's own files: a regular file of root's, read to at most MAX_FILE bytes."""
    if name not in NAMES:
        raise Refused("%r is not a file of the switch" % name)
    st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    if not stat.S_ISREG(st.st_mode):  # never open a FIFO (it would hang) or a device (opening may act)
        raise Refused("%s is not a regular file" % name)
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, dir_fd=dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
            raise Refused("%s is not a private file of root" % name)
        if st.st_size > MAX_FILE:
            raise Refused("%s is larger than %d bytes" % (name, MAX_FILE))
        chunks, size = [], 0
        while size <= MAX_FILE:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_FILE:
            raise Refused("%s is larger than %d bytes" % (name, MAX_FILE))
        return b"".join(chunks).decode("utf-8", "replace")
    finally:
        os.close(fd)


def _exists(dfd, name):
    try:
        os.stat(name, dir_fd=dfd, follow_symlinks=False)
        return True
    except OSError:
        return False


def _guarded(steps):
    """Refuse restore entries that are not entries, and steps the helper would not run (inside it)."""
    if not isinstance(steps, list):
        raise Refused("restore.json must be a list of entries")
    for entry in steps:
        if not isinstance(entry, dict) or not isinstance(entry.get("steps"), list):
            raise Refused("restore entries must be objects with steps")
        for step in entry["steps"]:
            if not isinstance(step, dict) or not isinstance(step.get("argv"), list):
                raise Refused("a restore step must be an object with an argv list")
            if STEP_GUARD is not None:
                try:
                    STEP_GUARD([str(a) for a in step["argv"]], str(step.get("input") or ""))
                except Exception as exc:  # the helper's own refusal: the switch's, so `serve` answers it and goes on
                    raise Refused(str(exc))


def _run_step(step):
    import subprocess  # only when replaying: its import is a quarter of a write's cost on a slow host

    argv = [str(a) for a in step.get("argv") or []]  # run as root, which the switch is: never through sudo
    try:
        if STEP_GUARD is not None:
            argv = STEP_GUARD(argv, str(step.get("input") or ""))
        proc = subprocess.run(
            argv,
            input=str(step.get("input") or "").encode(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=ENV,
            timeout=30,
        )
        out = proc.stdout.decode("utf-8", "replace").strip()[-400:]
        return {"argv": argv, "rc": proc.returncode, "ok": proc.returncode == 0 or not step.get("check", True),
                "output": out}
    except Exception as exc:  # the next step must still run
        return {"argv": argv, "rc": None, "ok": False, "output": str(exc)}


def fire(dfd):
    try:
        entries = json.loads(_read(dfd, "restore.json"))
        _guarded(entries)
    except (OSError, ValueError, Refused):
        entries = []
    results = []
    for entry in reversed(entries):
        steps = [_run_step(s) for s in entry["steps"]]
        results.append({"id": entry.get("id"), "label": str(entry.get("label", "")),
                        "ok": all(s["ok"] for s in steps), "steps": steps})
    _write(dfd, "fired.json", json.dumps({"fired_at": time.time(), "results": results}))


def _forget(path):
    dfd = _open_dir(path)
    try:
        for name in os.listdir(dfd):
            os.unlink(name, dir_fd=dfd)
    finally:
        os.close(dfd)
    os.rmdir(path)


def watch(dfd, path, timeout):
    while True:
        if _exists(dfd, "disarm"):
            os.close(dfd)
            _forget(path)
            return
        try:
            age = time.time() - os.stat("heartbeat", dir_fd=dfd, follow_symlinks=False).st_mtime
        except OSError:
            age = timeout + 1  # the heartbeat file vanished: treat as silence
        if age > timeout:
            fire(dfd)
            return
        time.sleep(1)


def timeout_of(text):
    """A finite watch time in seconds, up to MAX_TIMEOUT: nan or inf would make a watcher that never ends."""
    if not TIMEOUT_TEXT.fullmatch(text):
        raise Refused("the timeout must be seconds in ASCII digits, got %r" % text[:20])
    value = float(text)
    if not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT):
        raise Refused("the timeout must be more than 0 and at most %d s, got %s" % (MAX_TIMEOUT, text))
    return value


def arm(path, timeout):
    dfd = _open_dir(path, create=True)
    _write(dfd, "owner", str(CALLER if CALLER is not None else os.geteuid()))
    _write(dfd, "heartbeat", "")
    r, w = os.pipe()
    if os.fork() > 0:
        os.close(w)
        pid = os.read(r, 32).decode()
        sys.stdout.write("armed %s\n" % pid)
        sys.stdout.flush()
        return 0
    os.close(r)
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    _write(dfd, "pid", str(os.getpid()))
    os.write(w, str(os.getpid()).encode())
    os.close(w)
    try:
        watch(dfd, path, timeout)
    finally:
        os._exit(0)


def watcher_alive(dfd):
    """Whether the switch in ``dfd`` still has its watcher (armed, not yet fired or disarmed)."""
    try:
        text = _read(dfd, "pid")
        if not re.fullmatch(r"[0-9]{1,10}", text):
            return False
        os.kill(int(text), 0)
        return True
    except (OSError, Refused):
        return False


# verb: the file-name arguments it takes (the only ones), or the number of other arguments
VERBS = {"arm": 1, "write": WRITE_NAMES, "serve": WRITE_NAMES, "read": READ_NAMES, "beat": 0, "disarm": 0, "pending": 0,
         "forget": 0}


def _checked_verb(verb, rest):
    if verb not in VERBS:
        raise Refused("unknown verb %r" % verb[:20])
    takes = VERBS[verb]
    if len(rest) != (takes if isinstance(takes, int) else 1):
        raise Refused("%s takes %s" % (verb, "a file name" if not isinstance(takes, int) else "%d argument(s)" % takes))
    if not isinstance(takes, int) and rest[0] not in takes:
        raise Refused("%r is not a file of the switch that %s takes (%s)" % (rest[0][:40], verb, ", ".join(takes)))


def _in_dir(verb, path, rest, data):
    """The verbs that act in DIR (raises Refused, OSError or ValueError); returns the exit status."""
    dfd = _open_dir(path)
    try:
        if verb == "pending":  # armed and its watcher alive
            return 0 if watcher_alive(dfd) else 1
        if verb == "write":
            if len(data.encode()) > MAX_FILE:
                raise Refused("restore.json is larger than %d bytes" % MAX_FILE)
            _guarded(json.loads(data))
            _write(dfd, rest[0], data)
            try:  # its controller is alive: the write is a heartbeat too (one python start fewer)
                os.utime("heartbeat", dir_fd=dfd, follow_symlinks=False)
            except OSError:
                pass
        elif verb == "read":
            sys.stdout.write(_read(dfd, rest[0]))
        elif verb == "beat":
            os.utime("heartbeat", dir_fd=dfd, follow_symlinks=False)
        elif verb == "disarm":
            _write(dfd, "disarm", "")
    finally:
        os.close(dfd)
    return 0


def serve(path, name, stdin, stdout):
    """``write`` (or ``beat``) for each line of stdin, each answered with a line; ends at EOF, or after a line
    longer than a restore list may be (refused: the rest of it is not read as lines of its own)."""
    while True:
        line = stdin.readline(MAX_FILE + 2)
        if not line:
            return 0
        if not line.endswith("\n"):
            stdout.write("refused: a line is at most %d bytes; no more lines are read\n" % MAX_FILE)
            stdout.flush()
            return 2
        data = line[:-1]
        try:
            if data == "beat":
                _in_dir("beat", path, [], "")
            else:
                _in_dir("write", path, [name], data)
            answer = "ok"
        except Refused as exc:
            answer = "refused: %s" % exc
        except (OSError, ValueError) as exc:
            answer = "failed: %s" % exc
        stdout.write(answer.replace("\n", " ") + "\n")
        stdout.flush()


def run_verb(verb, path, rest, data=""):
    """One verb with its arguments checked; ``data`` is what ``write`` writes. Returns the exit status."""
    try:
        _checked_verb(verb, rest)
        if verb == "arm":
            return arm(path, timeout_of(rest[0]))
        if verb == "serve":
            return serve(path, rest[0], sys.stdin, sys.stdout)
        status = _in_dir(verb, path, rest, data)
        if verb == "forget":
            _forget(path)
        return status
    except Refused as exc:
        sys.stderr.write("refused: %s\n" % exc)
        return 2
    except (OSError, ValueError) as exc:
        sys.stderr.write("failed: %s\n" % exc)
        return 1


def main(argv):
    if len(argv) < 3:
        sys.stderr.write("refused: usage: VERB DIR [ARG]\n")
        return 2
    verb, path, rest = argv[1], argv[2], argv[3:]
    data = sys.stdin.read(MAX_FILE + 1) if verb == "write" else ""
    return run_verb(verb, path, rest, data)


if __name__ == "__main__" and len(sys.argv) >= 3:
    sys.exit(main(sys.argv))
