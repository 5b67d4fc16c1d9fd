"""What a login may change on a host: root, sudo without a password, sudo with one, or nothing."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

# The commands nfs-tuner runs as root, and the only files it writes through tee.
# Narrow tee arguments keep the sudoers rule from granting a root shell in disguise.
SUDO_COMMANDS: tuple[str, ...] = (
    "/usr/sbin/rpc.nfsd",
    "/usr/sbin/exportfs",
    "/usr/sbin/sysctl",
    "/usr/bin/mount",
    "/usr/bin/umount",
    "/usr/sbin/ip link set *",
    "/usr/bin/tee /proc/fs/nfsd/threads",
    "/usr/bin/tee /sys/block/md*/md/stripe_cache_size",
    "/usr/bin/tee /sys/class/bdi/*/read_ahead_kb",
    "/usr/bin/tee /proc/sys/vm/drop_caches",
)

# Who am I, may I sudo without a password: shell builtins only where possible (the
# effective uid from /proc/self/status, the login name sshd puts in $LOGNAME).
# Fixed text, no input; also the first section of the discovery script.
PROBE_SCRIPT = r"""u=; while read -r k a b rest; do [ "$k" = "Uid:" ] && { u=$b; break; }; done < /proc/self/status
printf '%s\n%s\n' "${LOGNAME:-$(id -un 2>/dev/null)}" "$u"
if [ "$u" = 0 ]; then echo sudo:0
elif command -v sudo >/dev/null 2>&1; then sudo -n true >/dev/null 2>&1; echo "sudo:$?"
else echo sudo:absent; fi"""


class PrivilegeMode(enum.Enum):
    ROOT = "root"
    SUDO = "passwordless sudo"
    SUDO_PASSWORD = "sudo with password"
    READ_ONLY = "read-only"


@dataclass(frozen=True)
class Privilege:
    user: str
    uid: int | None
    passwordless_sudo: bool
    sudo_installed: bool
    sudo_password_accepted: bool = False

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
        return PrivilegeMode.READ_ONLY

    @property
    def can_change(self) -> bool:
        """Whether tunables needing root may be applied on this host."""
        return self.mode is not PrivilegeMode.READ_ONLY

    def sudoers_line(self, commands: Sequence[str] = SUDO_COMMANDS) -> str:
        return sudoers_line(self.user, commands)

    def describe(self) -> str:
        if self.can_change:
            return f"{self.user}: can change tunables ({self.mode.value})"
        return f"{self.user}: read-only; to allow changes add with visudo: {self.sudoers_line()}"


def sudoers_line(user: str, commands: Sequence[str] = SUDO_COMMANDS) -> str:
    return f"{user} ALL=(root) NOPASSWD: {', '.join(commands)}"


def parse_probe(output: str) -> Privilege:
    """Read PROBE_SCRIPT's output; unreadable parts count as "no privilege"."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    user = lines[0] if lines else "?"
    uid: int | None = None
    if len(lines) > 1 and lines[1].isdigit():
        uid = int(lines[1])
    sudo_state = next((ln.split(":", 1)[1] for ln in lines if ln.startswith("sudo:")), "absent")
    return Privilege(
        user=user,
        uid=uid,
        passwordless_sudo=sudo_state == "0",
        sudo_installed=sudo_state != "absent",
    )


def sudo_commands_for(tools: dict[str, str]) -> tuple[str, ...]:
    """SUDO_COMMANDS with each program at the path discovery found on that host."""
    out: list[str] = []
    for entry in SUDO_COMMANDS:
        program, _, args = entry.partition(" ")
        found = tools.get(program.rsplit("/", 1)[-1], "")
        out.append(f"{found or program}{' ' + args if args else ''}")
    return tuple(out)
