"""Pure parsers for host basics: OS, kernel, CPU, memory, NICs, python3, tools.

Every parser takes text and returns ``Parsed``; odd input becomes a problem note,
never an exception.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from app.facts.model import Nic, OsInfo, Parsed, Python3
from experiments.record_fields import BadRecord, loads


def to_int(text: str | None) -> int | None:
    """A size, count or id a host reported; None when unreadable. None of them is negative."""
    try:
        value = int(str(text).strip())
    except (TypeError, ValueError):  # also: more digits than Python converts
        return None
    return value if value >= 0 else None


def parse_os_release(text: str) -> Parsed[OsInfo]:
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, raw = line.partition("=")
        if not sep or not key.strip() or key.strip().startswith("#"):
            continue
        try:
            parts = shlex.split(raw)
            value = parts[0] if parts else ""
        except ValueError:
            value = raw.strip().strip("\"'")
        values[key.strip()] = value
    if not values:
        return Parsed(OsInfo(), ("/etc/os-release is missing or empty",))
    return Parsed(
        OsInfo(
            id=values.get("ID", ""),
            name=values.get("NAME", ""),
            version_id=values.get("VERSION_ID", ""),
            pretty_name=values.get("PRETTY_NAME", ""),
        )
    )


def parse_uname(text: str) -> Parsed[tuple[str, str, str]]:
    """(hostname, kernel release, machine) from ``uname -n -r -m`` (one line or three)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    words = lines[0].split() if len(lines) == 1 else lines
    got = (words + ["", "", ""])[:3]
    problems = () if all(got) else ("uname output incomplete",)
    return Parsed((got[0], got[1], got[2]), problems)


def parse_int_section(text: str, what: str) -> Parsed[int | None]:
    value = to_int(text.strip().splitlines()[0] if text.strip() else None)
    return Parsed(value, () if value is not None else (f"could not read {what}",))


def parse_cpu_count(text: str) -> Parsed[int | None]:
    """Online CPUs from /sys/devices/system/cpu/online ("0-3,6") or a plain count."""
    text = text.strip().splitlines()[0].strip() if text.strip() else ""
    if text.isdigit() and "-" not in text and "," not in text and len(text) < 6:
        # A lone number is a count from nproc, except "0" which is CPU 0 online.
        return Parsed(int(text) if text != "0" else 1)
    count = 0
    for part in text.split(","):
        lo, sep, hi = part.partition("-")
        a, b = to_int(lo), to_int(hi) if sep else to_int(lo)
        if a is None or b is None or b < a or b - a > 1_000_000:
            return Parsed(None, (f"could not read the CPU list {text[:40]!r}",))
        count += b - a + 1
    return Parsed(count or None, () if count else ("could not read the CPU count",))


def parse_meminfo(text: str) -> Parsed[int | None]:
    """MemTotal in KiB."""
    for line in text.splitlines():
        if line.startswith("MemTotal:"):
            value = to_int(line.split()[1] if len(line.split()) > 1 else None)
            if value is not None:
                return Parsed(value)
    return Parsed(None, ("could not read MemTotal from /proc/meminfo",))


def parse_nics(ip_json: str, net_sys: str) -> Parsed[tuple[Nic, ...]]:
    """Merge ``ip -j addr`` (addresses) with /sys/class/net (mtu, speed, state)."""
    problems: list[str] = []
    addrs: dict[str, list[str]] = {}
    base: dict[str, dict[str, Any]] = {}
    if ip_json.strip():
        try:
            data = loads(ip_json)
        except BadRecord:  # not JSON, or nested deeper than the decoder goes
            data = None
            problems.append("could not parse `ip -j addr` output")
        for link in data if isinstance(data, list) else []:
            if not isinstance(link, dict) or not isinstance(link.get("ifname"), str):
                continue
            name = link["ifname"]
            base[name] = {
                "mtu": link["mtu"] if type(link.get("mtu")) is int else None,
                "state": str(link.get("operstate", "")).lower(),
                "mac": str(link.get("address", "")),
            }
            infos = link.get("addr_info")
            for info in infos if isinstance(infos, list) else []:
                if isinstance(info, dict) and info.get("local"):
                    addrs.setdefault(name, []).append(f"{info['local']}/{info.get('prefixlen', '')}")
    order = list(base)
    sysfs: dict[str, dict[str, Any]] = {}
    for line in net_sys.splitlines():
        parts = line.split("|")
        if len(parts) != 5 or not parts[0]:
            if line.strip():
                problems.append(f"odd /sys/class/net line: {line[:80]!r}")
            continue
        name, mtu, speed, state, mac = parts
        speed_val = to_int(speed)
        sysfs[name] = {
            "mtu": to_int(mtu),
            "speed": speed_val if speed_val is not None and speed_val > 0 else None,
            "state": state.strip(),
            "mac": mac.strip(),
        }
        if name not in order:
            order.append(name)
    if not order:
        problems.append("no network interfaces found")
    nics = []
    for name in order:
        b, s = base.get(name, {}), sysfs.get(name, {})
        nics.append(
            Nic(
                name=name,
                mtu=s.get("mtu") if s.get("mtu") is not None else b.get("mtu"),
                speed_mbps=s.get("speed"),
                state=s.get("state") or b.get("state", ""),
                mac=s.get("mac") or b.get("mac", ""),
                addresses=tuple(addrs.get(name, ())),
            )
        )
    return Parsed(tuple(nics), tuple(problems))


def parse_python3(text: str) -> Parsed[Python3]:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return Parsed(Python3(), ("python3 not found",))
    path = lines[0]
    version = lines[1] if len(lines) > 1 and re.fullmatch(r"\d+\.\d+(\.\d+)?", lines[1]) else ""
    return Parsed(Python3(path, version), () if version else ("python3 found but did not run",))


_NFS_UTILS = (
    re.compile(r"nfs-utils[ -](\d+(?:\.\d+)+)"),
    re.compile(r"^dpkg nfs-(?:common|kernel-server) (?:\d+:)?(\d+(?:\.\d+)+)", re.M),
)


def parse_nfs_utils(text: str) -> Parsed[str]:
    for pattern in _NFS_UTILS:
        match = pattern.search(text)
        if match:
            return Parsed(match.group(1))
    return Parsed("", ("nfs-utils version unknown (mount.nfs, dpkg and rpm did not say)",))


def parse_tools(text: str) -> Parsed[dict[str, str]]:
    tools: dict[str, str] = {}
    for line in text.splitlines():
        name, _, path = line.strip().partition(" ")
        if name:
            tools[name] = path.strip()
    return Parsed(tools)


SYSCTLS = ("vm.dirty_bytes", "vm.dirty_ratio", "vm.dirty_background_bytes", "vm.dirty_background_ratio",
           "sunrpc.tcp_max_slot_table_entries")  # fmt: skip


def parse_sysctls(text: str) -> Parsed[dict[str, int]]:
    """``vm/dirty_bytes 0`` lines (the kernel files under /proc/sys) as {"vm.dirty_bytes": 0}; others ignored."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and (name := parts[0].replace("/", ".")) in SYSCTLS and (value := to_int(parts[1])) is not None:
            out[name] = value
    return Parsed(out)
