"""nfs-tuner-helper as the admin installs it: rendered from sudo_helper_host.py with the
dead-man switch built in, its digest, and how to install it.

The digest names the exact text; the host's probe reports the installed helper's, so
nfs-tuner can say when the helper on a host is older than this nfs-tuner.
"""

from __future__ import annotations

import hashlib
from importlib import resources

from app.hosts.privilege import HELPER_PATH, sudoers_line


def _read(name: str) -> str:
    return resources.files("app.knobs").joinpath(name).read_text(encoding="utf-8")


def _body() -> str:
    return _read("sudo_helper_host.py").replace(
        "DEADMAN_SOURCE = None  # filled in when the helper is rendered for installing",
        f"DEADMAN_SOURCE = {_read('deadman_host.py')!r}",
        1,
    )


def digest() -> str:
    return hashlib.sha256(_body().encode("utf-8")).hexdigest()[:16]


def render() -> str:
    """The helper's installable text: a python3 script, root-owned once installed."""
    body = _body().replace('HELPER_DIGEST = "unrendered"', f'HELPER_DIGEST = "{digest()}"', 1)
    return "#!/usr/bin/python3 -IS\n" + body  # isolated, no site module: half the start-up


def install_instructions(user: str = "tuner") -> str:
    return (
        f"Review the helper, then as root on each host:\n"
        f"  install -o root -g root -m 0755 nfs-tuner-helper {HELPER_PATH}\n"
        f"  echo '{sudoers_line(user)}' > /etc/sudoers.d/nfs-tuner\n"
        f"  chmod 0440 /etc/sudoers.d/nfs-tuner && visudo -c\n"
        f"It runs only the commands nfs-tuner uses, each argument checked; anything else is refused."
    )
