"""The dead-man switch that runs on a tuned host (python3 >= 3.6, stdlib only).

Sent as ``python3 -c <this source> VERB DIR [ARG]`` and always run as root (the
controller starts it through the same sudo as the changes it guards):

- ``arm DIR TIMEOUT``: make DIR, detach (double fork, new session, no stdio) and
  watch ``DIR/heartbeat``, which the controller refreshes every few seconds. If it is
  older than TIMEOUT, the controller is gone (killed, or its network cut by a bad
  MTU): replay the restore steps of ``DIR/restore.json`` newest first, write
  ``DIR/fired.json`` and exit. ``DIR/disarm`` makes it clean up and exit instead.
- ``write DIR NAME`` (stdin), ``read DIR NAME``, ``beat DIR``, ``disarm DIR``,
  ``pending DIR``, ``forget DIR``: the controller's only ways to touch DIR.

DIR's parent is a root-owned directory nobody else may write (``/run/nfs-tuner``);
DIR itself is made fresh for each run (an existing one is refused: someone may have
planted it). Every file is opened relative to DIR's descriptor with O_NOFOLLOW and
written through O_EXCL temporaries, so no path can be swapped under the switch.
A refusal prints ``refused: why`` and exits 2; nothing is run.

This module is only read as text and sent to hosts; importing it does nothing.
"""

import json
import os
import stat
import sys
import time

NAMES = ("restore.json", "heartbeat", "disarm", "pid", "fired.json")
MAX_FILE = 4 * 1024 * 1024
# Set by nfs-tuner-helper (sudo_helper_host.py) when the switch runs inside it: the
# caller is then not root, so it may only write its restore steps and ask to disarm,
# and every step must be one the helper would run itself: STEP_GUARD(argv, input)
# returns the argv to run or raises.
STEP_GUARD = None


class Refused(Exception):
    pass


def _check_private(st, what):
    if not stat.S_ISDIR(st.st_mode):
        raise Refused("%s is not a directory" % what)
    if st.st_uid != os.geteuid():
        raise Refused("%s belongs to uid %d, not to root" % (what, st.st_uid))
    if st.st_mode & 0o022:
        raise Refused("%s can be written by others (mode %o)" % (what, stat.S_IMODE(st.st_mode)))


def _open_dir(path, create=False):
    """A descriptor of a private directory at ``path``; its parent must be private too."""
    if os.geteuid() != 0:
        raise Refused("the switch must run as root")
    parent, name = os.path.split(path.rstrip("/"))
    if not parent.startswith("/") or name in ("", ".", ".."):
        raise Refused("%r is not an absolute directory path" % path)
    try:
        os.mkdir(parent, 0o700)
    except FileExistsError:
        pass
    try:
        pfd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:  # a symlink (ELOOP, ENOTDIR) or a file
        raise Refused("%s cannot be opened as a directory: %s" % (parent, exc.strerror))
    try:
        _check_private(os.fstat(pfd), parent)
        if create:
            try:
                os.mkdir(name, 0o700, dir_fd=pfd)
            except FileExistsError:
                raise Refused("%s exists already: a switch of this run cannot exist yet" % path)
        try:
            dfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=pfd)
        except FileNotFoundError:
            raise Refused("%s does not exist" % path)
        except OSError as exc:  # a symlink (ELOOP) or not a directory
            raise Refused("%s cannot be opened as a directory: %s" % (path, exc.strerror))
    finally:
        os.close(pfd)
    try:
        _check_private(os.fstat(dfd), path)
    except Refused:
        os.close(dfd)
        raise
    return dfd


def _write(dfd, name, data):
    if name not in NAMES:
        raise Refused("%r is not a file of the switch" % name)
    tmp = "%s.%d.tmp" % (name, os.getpid())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dfd)
    try:
        os.write(fd, data.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)


def _read(dfd, name):
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
            raise Refused("%s is not a private file of root" % name)
        return os.read(fd, MAX_FILE).decode("utf-8", "replace")
    finally:
        os.close(fd)


def _exists(dfd, name):
    try:
        os.stat(name, dir_fd=dfd, follow_symlinks=False)
        return True
    except OSError:
        return False


def _guarded(steps):
    """Refuse restore steps the helper would not run (only inside the helper)."""
    if STEP_GUARD is not None:
        for entry in steps if isinstance(steps, list) else [None]:
            if not isinstance(entry, dict) or not isinstance(entry.get("steps"), list):
                raise Refused("restore entries must be objects with steps")
            for step in entry["steps"]:
                if not isinstance(step, dict) or not isinstance(step.get("argv"), list):
                    raise Refused("a restore step must be an object with an argv list")
                STEP_GUARD([str(a) for a in step["argv"]], str(step.get("input") or ""))


def _run_step(step):
    import subprocess  # only when replaying: its import is a quarter of a write's cost on a slow host

    argv = [str(a) for a in step["argv"]]  # run as root, which the switch is: never through sudo
    try:
        if STEP_GUARD is not None:
            argv = STEP_GUARD(argv, step.get("input") or "")
        proc = subprocess.run(
            argv,
            input=(step.get("input") or "").encode(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
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
    except (OSError, ValueError, Refused):
        entries = []
    results = []
    for entry in reversed(entries if isinstance(entries, list) else []):
        steps = [_run_step(s) for s in entry.get("steps", [])]
        results.append({"id": entry.get("id"), "label": entry.get("label", ""),
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


def arm(path, timeout):
    dfd = _open_dir(path, create=True)
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


def main(argv):
    verb, path, rest = argv[1], argv[2], argv[3:]
    try:
        if verb == "arm":
            return arm(path, float(rest[0]))
        if verb == "pending":  # armed and its watcher alive
            dfd = _open_dir(path)
            pid = int(_read(dfd, "pid"))
            os.kill(pid, 0)
            return 0
        dfd = _open_dir(path)
        if verb == "write":
            if STEP_GUARD is not None and rest[0] not in ("restore.json", "disarm"):
                raise Refused("through the helper only restore.json may be written")
            data = sys.stdin.read(MAX_FILE)
            if rest[0] == "restore.json":
                _guarded(json.loads(data))
            _write(dfd, rest[0], data)
        elif verb == "read":
            sys.stdout.write(_read(dfd, rest[0]))
        elif verb == "beat":
            os.utime("heartbeat", dir_fd=dfd, follow_symlinks=False)
        elif verb == "disarm":
            _write(dfd, "disarm", "")
        elif verb == "forget":
            os.close(dfd)
            _forget(path)
        else:
            raise Refused("unknown verb %r" % verb)
        return 0
    except Refused as exc:
        sys.stderr.write("refused: %s\n" % exc)
        return 2
    except (OSError, ValueError) as exc:
        sys.stderr.write("failed: %s\n" % exc)
        return 1


if __name__ == "__main__" and len(sys.argv) >= 3:
    sys.exit(main(sys.argv))
