"""The dead-man switch that runs on a tuned host (python3 >= 3.6, stdlib only).

Started by the controller as ``python3 -c <this source> DIR TIMEOUT``. It detaches
(double fork, new session, no stdio), so it outlives the SSH session that started
it, then watches ``DIR/heartbeat``: the controller touches it every few seconds.
If the heartbeat is older than TIMEOUT seconds, the controller is gone (killed, or
its network cut by a bad MTU): the switch replays the restore steps in
``DIR/restore.json`` newest first, writes ``DIR/fired.json`` and exits. A
``DIR/disarm`` file makes it clean up and exit without touching anything.

This module is only read as text and sent to hosts; importing it does nothing.
"""

import json
import os
import subprocess
import sys
import time


def _atomic_write(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(data)
    os.rename(tmp, path)


def _run_step(step):
    argv = list(step["argv"])
    if os.geteuid() != 0:
        argv = ["sudo", "-n", "--"] + argv
    try:
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


def fire(d):
    try:
        with open(os.path.join(d, "restore.json")) as f:
            entries = json.load(f)
    except (OSError, ValueError):
        entries = []
    results = []
    for entry in reversed(entries):
        steps = [_run_step(s) for s in entry.get("steps", [])]
        results.append({"id": entry.get("id"), "label": entry.get("label", ""),
                        "ok": all(s["ok"] for s in steps), "steps": steps})
    _atomic_write(os.path.join(d, "fired.json"), json.dumps({"fired_at": time.time(), "results": results}))


def watch(d, timeout):
    heartbeat = os.path.join(d, "heartbeat")
    while True:
        if os.path.exists(os.path.join(d, "disarm")):
            for name in ("restore.json", "heartbeat", "disarm", "pid", "fired.json"):
                try:
                    os.unlink(os.path.join(d, name))
                except OSError:
                    pass
            try:
                os.rmdir(d)
            except OSError:
                pass
            return
        try:
            age = time.time() - os.stat(heartbeat).st_mtime
        except OSError:
            age = timeout + 1  # the heartbeat file vanished: treat as silence
        if age > timeout:
            fire(d)
            return
        time.sleep(1)


def main(argv):
    d, timeout = argv[1], float(argv[2])
    if not os.path.isdir(d):
        os.makedirs(d, 0o700)
    with open(os.path.join(d, "heartbeat"), "a"):
        pass
    os.utime(os.path.join(d, "heartbeat"), None)
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
    with open(os.path.join(d, "pid"), "w") as f:
        f.write(str(os.getpid()))
    os.write(w, str(os.getpid()).encode())
    os.close(w)
    try:
        watch(d, timeout)
    finally:
        os._exit(0)


if __name__ == "__main__" and len(sys.argv) == 3:
    sys.exit(main(sys.argv))
