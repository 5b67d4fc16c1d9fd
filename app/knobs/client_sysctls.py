"""A client's host-wide kernel settings nfs-tuner sweeps: the dirty-page limits and sunrpc's slot table.

Unlike the test mount's options these hold for the whole client while set, so the
sweep changes one only when a trial needs a new value (app.sweep.apply), and the
journal puts the old one back as for any other change.

vm.dirty_bytes and vm.dirty_ratio are one limit in two units: writing either zeroes the
other. The old value is therefore the one that was in force: a byte count, or the ratio
written as "20%", put back by writing the ratio's own file.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.hosts import HostConnection
from app.knobs.catalog import SPECS
from app.knobs.model import KnobError, KnobSpec, Step, Value, as_int, write_file
from app.knobs.targets import KernelFileTarget, read_text

DIRTY_FILES = {"dirty_bytes": "/proc/sys/vm/dirty_bytes", "dirty_background": "/proc/sys/vm/dirty_background_bytes"}
SLOTS_FILE = "/proc/sys/sunrpc/tcp_max_slot_table_entries"
SYSCTL_FILES = {**DIRTY_FILES, "rpc_slots": SLOTS_FILE}  # knob -> its file, in the order they are applied
# knob -> its sysctl name: "dirty_background" -> "vm.dirty_background_bytes"
SYSCTL_NAMES = {k: p.removeprefix("/proc/sys/").replace("/", ".") for k, p in SYSCTL_FILES.items()}
CLIENT_SYSCTLS = tuple(SYSCTL_FILES)  # knob names


def in_force(in_bytes: int, ratio: int) -> Value:
    """A dirty-page limit as the kernel applies it: the byte count, or when that is 0 the ratio ("20%")."""
    return in_bytes if in_bytes else f"{ratio}%"


def ratio_value(value: Value) -> int | None:
    """20 for "20%" (a ratio 0–100), else None."""
    text = str(value).strip()
    if not text.endswith("%") or not text[:-1].isdigit():
        return None
    ratio = int(text[:-1])
    return ratio if ratio <= 100 else None


@dataclass
class DirtyLimitTarget:
    """vm.dirty_bytes or vm.dirty_background_bytes, with the ratio it displaces."""

    spec: KnobSpec
    path: str

    def __post_init__(self) -> None:
        if self.path not in DIRTY_FILES.values():
            raise KnobError(f"{self.path!r} is not one of the dirty-page limits ({', '.join(DIRTY_FILES.values())})")

    @property
    def target(self) -> str:
        return self.path

    @property
    def ratio_path(self) -> str:
        return self.path.removesuffix("_bytes") + "_ratio"

    async def read(self, conn: HostConnection) -> Value:
        in_bytes = as_int(await read_text(conn, self.path), self.path)
        if in_bytes:  # the ratio is 0 then: no second read
            return in_bytes
        return in_force(0, as_int(await read_text(conn, self.ratio_path), self.ratio_path))

    def set_steps(self, value: Value) -> list[Step]:
        if (ratio := ratio_value(value)) is not None:
            return [write_file(self.ratio_path, ratio)]
        if isinstance(value, str | bool) or value < 1:
            raise KnobError(f"{self.spec.name} takes a byte count or a ratio such as 20%, not {value!r}")
        return [write_file(self.path, value)]

    def restore_steps(self, old: Value) -> list[Step]:
        return self.set_steps(old)


def client_sysctl(knob: str, target: str | None = None) -> DirtyLimitTarget | KernelFileTarget:
    """The target of one of CLIENT_SYSCTLS (``target``: the file a journal entry names, checked)."""
    if knob in DIRTY_FILES:
        return DirtyLimitTarget(SPECS[knob], target or DIRTY_FILES[knob])
    if knob == "rpc_slots":
        if target not in (None, SLOTS_FILE):
            raise KnobError(f"{target!r} is not {SLOTS_FILE}")
        return KernelFileTarget(SPECS[knob], SLOTS_FILE)
    raise KnobError(f"{knob} is not a client kernel setting ({', '.join(CLIENT_SYSCTLS)})")
