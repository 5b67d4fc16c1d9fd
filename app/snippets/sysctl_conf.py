"""The clients' kernel settings: a sysctl.d file for the dirty-page limits, a modprobe.d line for sunrpc's slot table.

The slot table goes to modprobe.d, not sysctl.d: sunrpc's sysctls exist only once the
module is loaded, which at boot is usually after systemd-sysctl has run.
"""

from __future__ import annotations

from app.knobs.client_sysctls import SYSCTL_NAMES
from app.snippets.model import Knobs, Snippet

SYSCTL_FILE = "/etc/sysctl.d/90-nfs-tuner.conf"
MODPROBE_FILE = "/etc/modprobe.d/nfs-tuner-sunrpc.conf"
DIRTY = ("dirty_bytes", "dirty_background")


def _count(config: Knobs, knob: str, low: int, high: int) -> int:
    value = config[knob]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{knob} must be a whole number {low}–{high}, got {value!r}")
    return value


def sysctl_conf(config: Knobs) -> str:
    lines = ["# nfs-tuner: client write-back limits measured to be best (setting one zeroes its *_ratio)"]
    lines += [f"{SYSCTL_NAMES[knob]} = {_count(config, knob, 1 << 20, 64 << 30)}" for knob in DIRTY if knob in config]
    return "\n".join(lines) + "\n"


def modprobe_conf(config: Knobs) -> str:
    slots = _count(config, "rpc_slots", 2, 65536)
    return f"# nfs-tuner: RPC requests in flight per connection, at most\noptions sunrpc tcp_max_slot_table_entries={slots}\n"


def sysctl_snippets(config: Knobs, _ctx: object = None) -> list[Snippet]:
    out: list[Snippet] = []
    if any(k in config for k in DIRTY):
        out.append(Snippet("sysctl", "Client write-back limits (/etc/sysctl.d)", SYSCTL_FILE, sysctl_conf(config),
                           f"`sysctl -p {SYSCTL_FILE}` applies it at once. Host-wide: every filesystem on the "
                           "client writes back under these limits, not only the NFS mount.", "client"))  # fmt: skip
    if "rpc_slots" in config:
        out.append(Snippet("modprobe-sunrpc", "Client RPC slot table (/etc/modprobe.d)", MODPROBE_FILE,
                           modprobe_conf(config),
                           "Read when sunrpc loads (at boot); now: `sysctl -w sunrpc.tcp_max_slot_table_entries=N`. "
                           "Either way it sizes connections made after it: unmount every mount of the server, "
                           "then mount again.", "client"))  # fmt: skip
    return out
