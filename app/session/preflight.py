"""Checks before touching: what would stop a run half-way, found while nothing is changed yet.

Both faces run it on the very spec they would start (the wizard before its run
confirmation, the command line before its first change): the export's free space for every
client's data set and a margin, python3 3.6 or newer on the clients, the TCP ceiling test's
way through the firewalls, whether the login may write the export, and what each knob the
plan changes needs on each host it changes it on. Each problem is one line that says what
to do. Every look is read-only (``stat -f``, ``test -w``, a one-second TCP test); what cannot
be looked at before the run is a note, not a problem.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass

from app.facts.model import HostFacts
from app.hosts import HostError
from app.knobs.catalog import SPECS
from app.knobs.listing import KnobRow, knob_rows
from app.runner.baselines import IPERF_PORT
from app.runner.errors import RunError
from app.session import topology
from app.session.preview import hosts_of
from app.sweep.host_side import HostSide
from app.sweep.spec import SweepSpec
from app.vocabulary import about_host
from app.vocabulary.hosts import host_detail
from experiments.workloads import MIB

MARGIN_SHARE = 0.10  # room left on the export beyond the data sets: logs, metadata, another writer
MARGIN_MIN = 64 * MIB
PORT_TEST_S = 1.0  # the TCP ceiling test run short: does it get through at all
PORT_WAIT_S = 20.0  # a firewall that drops packets answers never: said after this long
NCONNECT_KERNEL = (5, 3)  # the Linux client takes nconnect from 5.3 on


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing in the way of the run, on one host ("" when not one host's), and what to do about it."""

    host: str
    text: str

    def line(self) -> str:
        return about_host(self.host, self.text)


@dataclass(frozen=True, slots=True)
class Preflight:
    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = ()  # what only the run itself can show

    @property
    def ok(self) -> bool:
        return not self.findings

    def lines(self) -> list[str]:
        return [f.line() for f in self.findings]


def data_set_bytes(spec: SweepSpec) -> int:
    """What one client has on the export at most over the plan (a ladder's last step has the most streams): the
    read data sets it keeps from trial to trial (one per set of data files, app.runner.kept_data), and the largest
    data set a trial of another workload makes and removes beside them."""
    kept: dict[str, int] = {}
    most = 0
    for name in spec.plan.workloads:
        workload = spec.workload(name)
        if spec.ladder and hasattr(workload, "jobs"):
            workload = dataclasses.replace(workload, jobs=max(spec.ladder))  # type: ignore[call-arg]
        if workload.data_files and spec.engine != "fio":
            kept[workload.data_files] = max(kept.get(workload.data_files, 0), workload.data_bytes())
        else:
            most = max(most, workload.data_bytes())
    return sum(kept.values()) + most


def space_needed(spec: SweepSpec) -> int:
    """Bytes the export must have free: every client's data set at once (the server's disk ceiling writes
    one data set alone, before), and a margin."""
    need = max(len(spec.clients) * data_set_bytes(spec), spec.file_size if spec.measure_ceilings else 0)
    return need + max(int(need * MARGIN_SHARE), MARGIN_MIN)


def _mib(n: int) -> str:
    return f"{n / MIB:,.0f} MiB"


async def preflight(hosts: HostSide, spec: SweepSpec, facts: Mapping[str, HostFacts], *,
                    ceilings_known: bool = False) -> Preflight:  # fmt: skip
    """Everything in the way of running ``spec``; ``ceilings_known``: the TCP ceilings were measured already
    (the wizard's baseline), so their way through the firewalls is proven."""
    findings = [*_pythons(spec, facts), *_knob_needs(spec, facts)]
    notes: list[str] = []
    looks = [_space(hosts, spec), *(_write(hosts, spec, facts, c, notes) for c in spec.clients)]
    if spec.measure_ceilings and not ceilings_known:
        looks += [_port(hosts, spec, c) for c in spec.clients]
    for found in await asyncio.gather(*looks):
        findings += found
    return Preflight(tuple(findings), tuple(notes))


def _pythons(spec: SweepSpec, facts: Mapping[str, HostFacts]) -> list[Finding]:
    out = []
    for c in spec.clients:
        py = facts[c].python3 if c in facts else None
        if py is not None and not py.usable_for_agent:
            have = f"it has python3 {py.version}" if py.present else "it has no python3"
            out.append(Finding(c, f"the load agent needs Python 3.6 or newer and {have}: install python3 (3.6+) there"))
    return out


async def _space(hosts: HostSide, spec: SweepSpec) -> list[Finding]:
    need = space_needed(spec)
    try:
        free = await hosts.export_free(spec.server, spec.export)
    except (RunError, HostError) as exc:
        return [Finding(spec.server, f"{host_detail(spec.server, str(exc))}; nfs-tuner checks the export's free "
                                     "space before a run: check that the export exists and the login may read it")]
    if free >= need:
        return []
    per = data_set_bytes(spec)
    return [Finding(spec.server, f"the export {spec.export} has {_mib(free)} free and this plan needs {_mib(need)} "
                                 f"({len(spec.clients)} client(s) × {_mib(per)} of data, and a margin): free space "
                                 "there, or choose a smaller data set per client or fewer clients")]


async def _write(hosts: HostSide, spec: SweepSpec, facts: Mapping[str, HostFacts], client: str,
                 notes: list[str]) -> list[Finding]:  # fmt: skip
    mounts = topology.own_mounts(facts[client], spec.export) if client in facts else []
    if not mounts:
        notes.append(about_host(client, f"mounts no share of {spec.export}: whether its login may write the export "
                                        "shows in the first trial"))
        return []
    where = mounts[0].mount_point
    try:
        writable = await hosts.may_write(client, where)
    except (RunError, HostError) as exc:
        return [Finding(client, f"{host_detail(client, str(exc))}: check that {where} answers (a hung NFS mount?)")]
    if writable:
        return []
    user = facts[client].user or "the login"
    return [Finding(client, f"{user} may not write the export (its mount {where} says so): the load agent writes "
                            "its files there as that user; check the export directory's owner and the export's "
                            "options (root_squash, all_squash)")]


async def _port(hosts: HostSide, spec: SweepSpec, client: str) -> list[Finding]:
    try:
        await asyncio.wait_for(hosts.tcp_ceiling(spec.server, client, spec.address, duration_s=PORT_TEST_S,
                                                 python=spec.python.get(client, "python3")), PORT_WAIT_S)  # fmt: skip
    except TimeoutError:
        detail = f"no answer within {PORT_WAIT_S:.0f} s"
    except (RunError, HostError) as exc:
        detail = host_detail(client, str(exc))
    else:
        return []
    return [Finding(client, f"the TCP ceiling test does not get through to {spec.address} ({detail}): open the "
                            f"firewalls between them for it (iperf3: TCP port {IPERF_PORT}, when both ends have "
                            "iperf3; else the load agent's, a free port chosen afresh), or skip the ceilings")]


def _changed(spec: SweepSpec) -> list[str]:
    """The knobs the plan sets to a value other than today's."""
    today = spec.plan.baseline
    return [k for k, values in spec.plan.knobs.items() if any(str(v) != str(today.get(k)) for v in values)]


def _knob_needs(spec: SweepSpec, facts: Mapping[str, HostFacts]) -> list[Finding]:
    """What each knob the plan changes needs on each host it changes it on: to be there, and to be changeable."""
    server = facts.get(spec.server)
    if server is None:
        return []
    rows = knob_rows(server, [facts[c] for c in spec.clients if c in facts], spec.export or None)
    out: list[Finding] = []
    read_only: dict[str, list[str]] = {}
    for knob in _changed(spec):
        for host in hosts_of(SPECS[knob].scope, spec):
            if host not in facts:
                continue
            found = [r for r in rows if r.host == host and r.knob == knob]
            if (missing := _missing(knob, host, facts[host], found)) is not None:
                out.append(Finding(host, missing))
            elif found and not all(r.can_change for r in found):
                read_only.setdefault(host, []).append(knob)
    for host, knobs in read_only.items():
        why = next(r.why_not for r in rows if r.host == host and not r.can_change)
        out.append(Finding(host, f"{', '.join(knobs)} cannot be changed there: {why}"))
    return out


def _missing(knob: str, host: str, facts: HostFacts, rows: list[KnobRow]) -> str | None:
    """What ``knob`` lacks on ``host`` to be changed at all, in words saying what to do; None when nothing."""
    leave_out = f"or leave {knob} out of the plan"
    if knob == "nconnect" and (kernel := _kernel(facts.kernel)) is not None and kernel < NCONNECT_KERNEL:
        return f"nconnect needs Linux 5.3 or newer and this client runs {facts.kernel}: leave nconnect out of the plan"
    if knob == "max_block_size" and not facts.nfsd.running:
        return f"nfsd is not running, and max_block_size is nfsd's: start nfs-server there, {leave_out}"
    if knob in ("export_sync", "export_wdelay") and not facts.tools.get("exportfs", "x"):
        return f"exportfs is not installed, and {knob} changes the export with it: install nfs-utils, {leave_out}"
    if not rows:
        return f"{knob} has nothing to act on there ({SPECS[knob].validity.reason}): check the host, {leave_out}"
    if all(r.current == "unknown" for r in rows) and knob in ("rpc_slots", "dirty_bytes", "dirty_background"):
        return f"{knob}'s kernel setting could not be read (for rpc_slots: the sunrpc module is not loaded until " \
               f"something mounts NFS): mount the export there once, {leave_out}"
    return None


def _kernel(release: str) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", release)
    return (int(m.group(1)), int(m.group(2))) if m else None
