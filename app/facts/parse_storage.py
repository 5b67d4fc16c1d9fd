"""Pure parsers for block devices, md arrays and mounts."""

from __future__ import annotations

import re

from app.facts.model import BlockDevice, MdArray, MountEntry, Parsed
from app.facts.parse_system import to_int

_MD_HEAD = re.compile(r"^(md\S*)\s*:\s*(\S+)\s*(.*)$")
_MEMBER = re.compile(r"^([^\s\[]+)\[(\d+)\](\([A-Za-z]\))?$")
_CHUNK = re.compile(r"(\d+)k chunk")
_BLOCKS = re.compile(r"^\s*(\d+) blocks")


def parse_mdstat(text: str) -> Parsed[tuple[MdArray, ...]]:
    """Arrays in /proc/mdstat: level, state, members (failed/spare), chunk, size."""
    arrays: list[MdArray] = []
    problems: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        head = _MD_HEAD.match(line)
        if not head:
            continue
        name, state, rest = head.groups()
        words = rest.split()
        level = ""
        if words and not _MEMBER.match(words[0]):
            level = words.pop(0)
            if level.startswith("("):  # "(read-only)" / "(auto-read-only)"
                level = words.pop(0) if words and not _MEMBER.match(words[0]) else ""
        members: list[str] = []
        failed: list[str] = []
        spares: list[str] = []
        for word in words:
            m = _MEMBER.match(word)
            if not m:
                continue
            dev, flag = m.group(1), m.group(3)
            (failed if flag == "(F)" else spares if flag == "(S)" else members).append(dev)
        detail = lines[i + 1] if i + 1 < len(lines) else ""
        chunk = _CHUNK.search(detail)
        blocks = _BLOCKS.match(detail)
        if not level and state == "active":
            problems.append(f"{name}: RAID level not shown in /proc/mdstat")
        arrays.append(
            MdArray(
                name=name,
                level=level,
                state=state,
                members=tuple(members),
                failed=tuple(failed),
                spares=tuple(spares),
                chunk_kb=int(chunk.group(1)) if chunk else None,
                size_kb=int(blocks.group(1)) if blocks else None,
            )
        )
    return Parsed(tuple(arrays), tuple(problems))


def parse_md_sysfs(text: str) -> Parsed[dict[str, dict[str, object]]]:
    """``mdX key value`` lines from /sys/block/mdX/md/ into a dict per array.

    Member devices collect under the key "members" as a list.
    """
    out: dict[str, dict[str, object]] = {}
    members: dict[str, list[str]] = {}
    for line in text.splitlines():
        parts = line.split(maxsplit=2)
        if len(parts) < 2:
            continue
        name, key = parts[0], parts[1]
        value = parts[2].strip() if len(parts) == 3 else ""
        entry = out.setdefault(name, {})
        if key == "member":
            members.setdefault(name, []).append(value)
        elif key != "members":
            entry[key] = value
    for name, devs in members.items():
        out[name]["members"] = devs
    return Parsed(out)


def merge_md(mdstat: tuple[MdArray, ...], sysfs: dict[str, dict[str, object]]) -> tuple[MdArray, ...]:
    """sysfs wins for the tunables (stripe_cache_size, chunk); mdstat gives the member roles."""
    merged: list[MdArray] = []
    names = [a.name for a in mdstat] + [n for n in sysfs if n not in {a.name for a in mdstat}]
    by_name = {a.name: a for a in mdstat}
    for name in names:
        base = by_name.get(name, MdArray(name=name))
        sys = sysfs.get(name, {})
        chunk_bytes = to_int(str(sys.get("chunk_size", "")))
        sys_members = sys.get("members")
        members = base.members or (
            tuple(str(m) for m in sys_members) if isinstance(sys_members, list) else ()
        )
        merged.append(
            MdArray(
                name=name,
                level=str(sys.get("level") or base.level),
                state=str(sys.get("array_state") or base.state),
                members=members,
                failed=base.failed,
                spares=base.spares,
                raid_disks=to_int(str(sys.get("raid_disks", ""))) or base.raid_disks,
                chunk_kb=chunk_bytes // 1024 if chunk_bytes else base.chunk_kb,
                stripe_cache_size=to_int(str(sys.get("stripe_cache_size", ""))),
                size_kb=base.size_kb,
                sync_action=str(sys.get("sync_action", "")),
            )
        )
    return tuple(merged)


def parse_block(text: str) -> Parsed[tuple[BlockDevice, ...]]:
    """``name|maj:min|sectors|rotational|read_ahead_kb|scheduler`` lines from /sys/block."""
    devices: list[BlockDevice] = []
    problems: list[str] = []
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) != 6 or not parts[0]:
            if line.strip():
                problems.append(f"odd /sys/block line: {line[:80]!r}")
            continue
        name, dev, sectors, rota, ra, sched = parts
        size = to_int(sectors)
        active = re.search(r"\[([^\]]+)\]", sched)
        devices.append(
            BlockDevice(
                name=name,
                dev=dev.strip(),
                size_bytes=size * 512 if size is not None else None,
                rotational={"0": False, "1": True}.get(rota.strip()),
                read_ahead_kb=to_int(ra),
                scheduler=active.group(1) if active else sched.strip(),
            )
        )
    return Parsed(tuple(devices), tuple(problems))


def unescape_mount_field(text: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def parse_mountinfo(text: str) -> Parsed[tuple[MountEntry, ...]]:
    entries: list[MountEntry] = []
    problems: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = line.split(" ")
        try:
            sep = fields.index("-", 6)
            mount_id = int(fields[0])
            fstype, source = fields[sep + 1], fields[sep + 2]
            super_options = fields[sep + 3] if len(fields) > sep + 3 else ""
        except (ValueError, IndexError):
            problems.append(f"odd mountinfo line: {line[:80]!r}")
            continue
        entries.append(
            MountEntry(
                mount_id=mount_id,
                dev=fields[2],
                root=unescape_mount_field(fields[3]),
                mount_point=unescape_mount_field(fields[4]),
                fstype=fstype,
                source=unescape_mount_field(source),
                options=fields[5],
                super_options=super_options,
            )
        )
    return Parsed(tuple(entries), tuple(problems))


def parse_bdi(text: str) -> Parsed[dict[str, int]]:
    """``major:minor read_ahead_kb`` lines from /sys/class/bdi."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and (value := to_int(parts[1])) is not None:
            out[parts[0]] = value
    return Parsed(out)


def mount_for_path(mounts: tuple[MountEntry, ...], path: str) -> MountEntry | None:
    """The mount a path lives on: the longest mount point that contains it (last wins)."""
    best: MountEntry | None = None
    for entry in mounts:
        mp = entry.mount_point.rstrip("/") or "/"
        inside = path == mp or path.startswith(mp + "/") or mp == "/"
        if inside and (best is None or len(mp) >= len(best.mount_point.rstrip("/") or "/")):
            best = entry
    return best
