"""What a login may change on a host: root, sudo without a password, sudo with one, or nothing."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

# The one program a narrow sudoers rule grants (app/knobs/sudo_helper_host.py): it runs
# only the commands nfs-tuner uses, each argument checked. A list of programs with
# "any arguments" (mount, exportfs, sysctl, tee …) would be root in disguise.
HELPER_PATH = "/usr/local/sbin/nfs-tuner-helper"
# A user name as useradd accepts it: nothing a host reports goes into a rule unchecked.
_USER = re.compile(r"[a-z_][a-z0-9_-]{0,31}")
_DIGEST = re.compile(r"[0-9a-f]{8,64}|unrendered")

# Who am I, may I sudo without a password: shell builtins only where possible (the
# effective uid from /proc/self/status, the login name sshd puts in $LOGNAME).
# Fixed text, no input; also the first section of the discovery script.
PROBE_SCRIPT = r"""u=; while read -r k a b rest; do [ "$k" = "Uid:" ] && { u=$b; break; }; done < /proc/self/status
printf '%s\n%s\n' "${LOGNAME:-$(id -un 2>/dev/null)}" "$u"
if [ "$u" = 0 ]; then echo sudo:0
elif command -v sudo >/dev/null 2>&1; then sudo -n true >/dev/null 2>&1; echo "sudo:$?"
else echo sudo:absent; fi
if [ "$u" != 0 ] && [ -x /usr/local/sbin/nfs-tuner-helper ]; then
  h=$(sudo -n /usr/local/sbin/nfs-tuner-helper version 2>/dev/null </dev/null) && echo "helper:$h"; fi"""


class PrivilegeMode(enum.Enum):
    ROOT = "root"
    SUDO = "passwordless sudo"
    SUDO_PASSWORD = "sudo with password"
    HELPER = "sudo through nfs-tuner-helper"
    READ_ONLY = "read-only"


@dataclass(frozen=True)
class Privilege:
    user: str
    uid: int | None
    passwordless_sudo: bool
    sudo_installed: bool
    sudo_password_accepted: bool = False
    helper: str = ""  # the installed nfs-tuner-helper's digest, when sudo lets this login run it

    @property
    def is_root(self) -> bool:
        return self.uid == 0

    @property
    def mode(self) -> PrivilegeMode:
        if self.is_root:
            return PrivilegeMode.ROOT
        if self.passwordless_sudo:
            return PrivilegeMode.SUDO
        if self.sudo_password_accepted:
            return PrivilegeMode.SUDO_PASSWORD
        if self.helper:
            return PrivilegeMode.HELPER
        return PrivilegeMode.READ_ONLY

    @property
    def via_helper(self) -> bool:
        return self.mode is PrivilegeMode.HELPER

    @property
    def can_change(self) -> bool:
        """Whether tunables needing root may be applied on this host."""
        return self.mode is not PrivilegeMode.READ_ONLY

    def sudoers_line(self) -> str:
        return sudoers_line(self.user)

    def describe(self) -> str:
        if self.can_change:
            return f"{self.user}: can change tunables ({self.mode.value})"
        return f"{self.user}: read-only; to allow changes add with visudo: {self.sudoers_line()}"


def sudoers_line(user: str) -> str:
    """The one sudoers entry nfs-tuner asks for: its helper, for this login only.

    A user name the host reported that is not a plain user name is not pasted into a
    rule; the admin fills it in.
    """
    who = user if _USER.fullmatch(user) else "YOUR_LOGIN"
    return f"{who} ALL=(root) NOPASSWD: {HELPER_PATH}"


def parse_probe(output: str) -> Privilege:
    """Read PROBE_SCRIPT's output; unreadable parts count as "no privilege"."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    user = lines[0] if lines else "?"
    uid: int | None = None
    if len(lines) > 1 and lines[1].isdigit():
        uid = int(lines[1])
    sudo_state = next((ln.split(":", 1)[1] for ln in lines if ln.startswith("sudo:")), "absent")
    helper = next((ln.split(":", 1)[1] for ln in lines if ln.startswith("helper:")), "")
    return Privilege(
        user=user,
        uid=uid,
        passwordless_sudo=sudo_state == "0",
        sudo_installed=sudo_state != "absent",
        helper=helper if _DIGEST.fullmatch(helper) else "",
    )
