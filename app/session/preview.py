"""What a run will change, host by host, before it starts: what a face shows the admin to agree to.

Built from the spec the run gets and the hosts' discovered facts (``app.knobs.listing``'s
rows), so it names the values the engine will really try (today's value among them, as
``experiments.plan`` adds it) on the hosts it will really touch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.facts.model import HostFacts
from app.hosts.remote_args import mount_source
from app.knobs.catalog import SPECS
from app.knobs.listing import KnobRow, knob_rows
from app.knobs.model import Safety, Scope
from app.session import topology
from app.session.study import spec_estimate
from app.sweep.spec import SweepSpec
from app.vocabulary import knob_label, knob_value_text, knob_values_text, where_text
from experiments.estimate import DurationEstimate


@dataclass(frozen=True, slots=True)
class Change:
    """One knob on one host: where, today's value and the values the run will try."""

    knob: str
    title: str  # app.vocabulary.knob_label: 'nfsd_threads (nfsd threads)'
    where: str  # app.vocabulary.where_text, as the catalog says: "the server", "the test mount", "the whole client"
    target: str  # "/proc/fs/nfsd/threads", "eth0", "/proc/sys/vm/dirty_bytes"; "" on the test mount (its own line)
    today: str  # "unknown" when discovery did not find it
    values: str  # as the admin types them: "8, 16, 64"
    risk: str  # the catalog's safety note for a knob that is not plainly safe or acts host-wide; else ""

    @property
    def place(self) -> str:
        """Where, as a face's Where column says it: 'the whole client: /proc/sys/vm/dirty_bytes', 'the test mount'."""
        return f"{self.where}: {self.target}" if self.target else self.where


@dataclass(frozen=True, slots=True)
class HostChanges:
    host: str
    role: str  # "server" or "client"
    changes: tuple[Change, ...]
    test_mount: str  # a client's: what it mounts where, afresh for every trial; "" on the server
    own_mounts: tuple[str, ...]  # a client's own mounts of the export: left as they are


@dataclass(frozen=True, slots=True)
class RunPreview:
    hosts: tuple[HostChanges, ...]  # the server first
    workloads: tuple[str, ...]
    caches_dropped_on: tuple[str, ...]  # before every trial
    async_risk: str  # what async exports risk, when the run tries them; else ""
    estimate: DurationEstimate  # on real hosts
    speed: float = 1.0  # how many times faster than real ones these hosts run (the demo's)


def hosts_of(scope: Scope, spec: SweepSpec) -> tuple[str, ...]:
    """Where the engine applies a knob of ``scope`` (app.sweep.apply): the MTU on both ends."""
    if scope is Scope.SERVER:
        return (spec.server,)
    return spec.clients if scope in (Scope.TEST_MOUNT, Scope.CLIENT) else (spec.server, *spec.clients)


def _change(knob: str, values: str, rows: list[KnobRow]) -> Change:
    spec = SPECS[knob]
    if spec.scope is Scope.TEST_MOUNT:
        target = ""  # the host's test mount line says what it mounts where
    else:
        target = " or ".join(r.target for r in rows) or "not found on this host"
    today = ", ".join(dict.fromkeys(knob_value_text(knob, r.current) for r in rows)) or "unknown"
    noted = spec.safety is not Safety.SAFE or spec.scope is Scope.CLIENT  # host-wide says so, however safe
    return Change(knob, knob_label(knob), where_text(knob), target, today, values, spec.safety_note if noted else "")


def run_preview(spec: SweepSpec, facts: Mapping[str, HostFacts], *, speed: float = 1.0) -> RunPreview:
    """Per host of ``spec``, what its run changes; ``facts``: the connected hosts' (missing ones show "unknown")."""
    server = facts.get(spec.server)
    clients = [facts[c] for c in spec.clients if c in facts]
    rows = knob_rows(server, clients, spec.export or None) if server is not None else []
    changes: dict[str, list[Change]] = {h: [] for h in (spec.server, *spec.clients)}
    for knob, values in spec.plan.knobs.items():
        scope = SPECS[knob].scope
        for host in hosts_of(scope, spec):
            found = [r for r in rows if r.host == host and r.knob == knob]
            changes[host].append(_change(knob, knob_values_text(knob, values), found))
    mount_point = f"{spec.mount_root}-<session>-<token>"
    hosts = [HostChanges(spec.server, "server", tuple(changes[spec.server]), "", ())]
    for c in spec.clients:
        own = tuple(m.mount_point for m in topology.own_mounts(facts[c], spec.export)) if c in facts else ()
        hosts.append(HostChanges(c, "client", tuple(changes[c]), f"{mount_source(spec.address, spec.export)} at {mount_point}", own))
    tried = [str(v) for v in spec.plan.knobs.get("export_sync", ())]
    return RunPreview(tuple(hosts), tuple(spec.plan.workloads), (spec.server, *spec.clients),
                      SPECS["export_sync"].safety_note if "async" in tried else "", spec_estimate(spec), speed)  # fmt: skip
