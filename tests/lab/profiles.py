"""The lab's profiles: what the network and the server's disks cost.

Each profile is built to make certain knobs matter as they do in the field; the
lab's page (docs/lab.md) gives the size of each effect, measured without nfs-tuner by
``benchmarks/lab_profiles.py``. A profile is three independent settings:

- ``rate``: a token bucket on each guest's tap on the host (the switch port);
- ``rtt_ms``: a round trip added inside the guests, half on each one's *ingress*
  (vec0 → ifb0 → netem). Delaying on egress instead would hold a sender's own
  packets in its qdisc, where TCP small queues count them as unsent and cap a
  20 ms stream near 20 MB/s; on ingress the sender sees a plain long path;
- ``disk_ms``: read, write and flush latency of each md RAID member, a dm-delay
  device over its ubd disk (created at boot with 0 ms), reloaded in place.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    name: str
    rate: str | None
    shows: str
    rtt_ms: float = 0.0
    disk_ms: tuple[int, int, int] = (0, 0, 0)  # read, write, flush


DEFAULT_RTT_MS = 20.0
# dm-delay waits in whole kernel ticks: 1 ms becomes one to two ticks of the UML
# guest, about 10-20 ms per delayed I/O (measured: a 4 KiB O_DSYNC write on the md
# file system takes 21 ms with flushes delayed, 61 ms with writes delayed, as md's
# read-modify-write and the journal pay it several times). That is a busy 7200 rpm
# disk; a finer delay cannot be had. So a profile delays a class of I/O or not.
HDD_MS = (0, 1, 1)  # writes and flushes wait: journal commits, read-modify-write
CONTENTION_MS = (1, 0, 0)  # reads wait: an nfsd thread blocks on the disk per request

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("gigabit", "1gbit", "the link is the ceiling, as in the seeds' gigabit tests: MTU"),
        Profile("fast", None, "unshaped: per-RPC CPU cost dominates, as on a 10 GbE LAN"),
        Profile(
            "wan",
            "1gbit",
            "a long path (RTT_MS, default 20 ms): client readahead and rsize",
            rtt_ms=DEFAULT_RTT_MS,
        ),
        Profile(
            "hdd",
            "1gbit",
            "disks whose writes and cache flushes wait ~10-20 ms: sync vs async exports, stripe_cache_size",
            disk_ms=HDD_MS,
        ),
        Profile(
            "contention",
            None,
            "an unshaped link to a server whose disk reads wait ~10-20 ms: nfsd threads under many streams",
            disk_ms=CONTENTION_MS,
        ),
    )
}

MD_MEMBERS = ("lab-md-a", "lab-md-b", "lab-md-c")
MAX_RTT_MS = 500.0


class ProfileError(ValueError):
    pass


def profile(name: str, rtt_ms: float | None = None) -> Profile:
    """The named profile, with its round trip replaced by ``rtt_ms`` where given."""
    if name not in PROFILES:
        raise ProfileError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}")
    base = PROFILES[name]
    if rtt_ms is None:
        return base
    if not 0 <= rtt_ms <= MAX_RTT_MS:  # also refuses NaN
        raise ProfileError(f"RTT_MS={rtt_ms} is outside 0..{MAX_RTT_MS:.0f} ms")
    return Profile(base.name, base.rate, base.shows, float(rtt_ms), base.disk_ms)


def host_tc(tap: str, p: Profile) -> list[list[str]]:
    """argv lists that set a tap's shaping on the host side (run in the lab's namespace)."""
    if p.rate:
        return [["tc", "qdisc", "replace", "dev", tap, "root", "tbf", "rate", p.rate, "burst", "512kb", "latency", "20ms"]]
    return [["tc", "qdisc", "del", "dev", tap, "root"]]


def guest_delay_script(p: Profile) -> str:
    """Shell run on every guest: half the round trip on vec0's ingress, or none."""
    lines = [
        "tc qdisc del dev vec0 ingress 2>/dev/null || true",
        "tc qdisc del dev ifb0 root 2>/dev/null || true",
    ]
    if p.rtt_ms > 0:
        half = f"{p.rtt_ms / 2:.3f}ms"
        lines += [
            "ip link show ifb0 >/dev/null 2>&1 || ip link add ifb0 type ifb",
            "ip link set ifb0 mtu 9000 up",
            "tc qdisc add dev vec0 handle ffff: ingress",
            "tc filter add dev vec0 parent ffff: matchall action mirred egress redirect dev ifb0",
            # A queue long enough for a gigabit's worth of packets in flight at the longest RTT.
            f"tc qdisc add dev ifb0 root netem delay {half} limit 100000",
        ]
    return "set -e\n" + "\n".join(lines) + "\n"


def server_disk_script(p: Profile) -> str:
    """Shell run on lab-server: every md member's dm-delay table reloaded in place."""
    read, write, flush = p.disk_ms
    lines = ["set -e"]
    for name in MD_MEMBERS:
        q = shlex.quote(name)
        dev = f"/dev/ubd{name[-1]}"
        lines += [
            f"n=$(blockdev --getsz {dev})",
            f'table="0 $n delay {dev} 0 {read} {dev} 0 {write} {dev} 0 {flush}"',
            # Loaded into the inactive slot first: a bad table leaves the member running.
            f'dmsetup load {q} --table "$table"',
            f"dmsetup suspend {q}",
            f"dmsetup resume {q}",
        ]
    return "\n".join(lines) + "\n"
