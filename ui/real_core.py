"""The real core behind the wizard: ``ui.core_api.CoreApi`` over app/ (SSH, discovery, knobs,
runner, sweep engine, recommendation, snippets, store).

Qt-free, like ``ui.fake_core``: it only translates between the wizard's plain types and
the core's. Everything that changes a host goes through the sweep engine (journal first,
dead-man switch, revert on the way out); this file only starts, pauses and stops it.
"""

from __future__ import annotations

import asyncio
import logging
import math
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from app.discovery import discover_host, hosts_from_ssh_config, require_client, require_server
from app.events import EventBus, Level, Message
from app.facts.model import HostFacts as CoreFacts
from app.facts.model import NfsMount
from app.hosts import HostError as CoreHostError
from app.hosts import HostPool, SshSettings, UnknownHostKey
from app.knobs import recovery
from app.knobs.catalog import SPECS
from app.knobs.listing import knob_rows
from app.knobs.model import KnobError, Safety
from app.knobs.model import KnobSpec as CoreKnob
from app.recommend import recommend
from app.recommend.model import ObjectiveRecommendation, SessionRecommendation
from app.runner import ClientWork, RunError, WorkloadRunner
from app.runner.baselines import disk_ceiling, tcp_ceiling
from app.snippets import context_for_session, render_all
from app.store import Store
from app.knobs.values import parse_value
from app.sweep import SweepEngine, SweepSpec
from app.sweep.events import SweepFinished
from app.recommend.context import CEILING
from app.sweep.session_facts import stored_ceilings
from app.sweep.spec import LOOPING, SWEEPABLE
from experiments import plan as xplan
from experiments.estimate import estimate_duration
from experiments.workloads import MIB
from ui.core_api import (
    BaselineResult,
    Ceiling,
    ConfirmKey,
    HostError,
    HostFacts,
    HostKey,
    HostRole,
    KnobEffect,
    KnobSpec,
    Leftover,
    NicFacts,
    Plan,
    RankedConfig,
    Recommendation,
    Results,
    RunOutcome,
    SafetyClass,
    Snippet,
    Strategy,
    WorkloadSpec,
)

log = logging.getLogger(__name__)

SAFETY = {Safety.SAFE: SafetyClass.SAFE, Safety.MEMORY: SafetyClass.SAFE, Safety.SERVICE: SafetyClass.SAFE,
          Safety.CONNECTIVITY: SafetyClass.DISRUPTIVE, Safety.DATA_RISK: SafetyClass.DATA_RISK}  # fmt: skip
REMOUNTED = {"rsize", "wsize", "nfsvers", "nconnect"}  # applied on a fresh test mount
STRATEGIES = {Strategy.ONE_AT_A_TIME: "ofat", Strategy.COORDINATE: "adaptive", Strategy.GRID: "grid"}
SIZE_KNOBS = {"rsize", "wsize"}
TEST_MOUNT_ROOT = "/mnt/nfs-tuner"  # SweepSpec.mount_root: where sweeps put their test mounts
WORKLOAD_TEXT: dict[str, tuple[str, str]] = {
    "seq_write": ("sequential write", "1 MiB writes, one file per client"),
    "seq_read": ("sequential read", "1 MiB reads, caches dropped first"),
    "rewrite": ("rewrite", "1 MiB overwrites of an existing file"),
    "rand_read": ("random 4 KiB read", "4 KiB reads at random offsets"),
    "rand_write": ("random 4 KiB write", "4 KiB writes at random offsets"),
    "mixed": ("random read/write mix", "4 KiB, 70 % reads"),
    "small_files": ("small files", "create, write, fsync, stat small files"),
    "tree": ("directory tree", "build and walk a tree of small files"),
    "dir_scaling": ("large directories", "many entries in one directory"),
}


def size_text(value: object) -> str:
    """1048576 → '1M', 32768 → '32K' (what the plan page shows and accepts for sizes)."""
    if isinstance(value, int) and value >= 1024 and value % 1024 == 0:
        return f"{value >> 20}M" if value % (1 << 20) == 0 else f"{value >> 10}K"
    return str(value)


def _text(knob: str, value: object) -> str:
    return size_text(value) if knob in SIZE_KNOBS else str(value)


def _ui_knob(spec: CoreKnob, current: str) -> KnobSpec:
    v = spec.validity
    choices = tuple(_text(spec.name, c) for c in v.choices) if v.choices else ()
    safety = SafetyClass.REMOUNT if spec.name in REMOUNTED else SAFETY[spec.safety]
    return KnobSpec(spec.name, spec.title, spec.scope.value, current,
                    tuple(_text(spec.name, d) for d in spec.default_sweep), safety,
                    None if choices else v.minimum, None if choices else v.maximum, choices, spec.unit,
                    f"{spec.safety_note} {v.reason}.", needs_opt_in=spec.safety is Safety.DATA_RISK)  # fmt: skip


def ui_facts(f: CoreFacts, role: HostRole) -> HostFacts:
    """The facts the Hosts page shows, as one line each."""
    nics = tuple(NicFacts(n.name, n.mtu or 0, n.speed_mbps, n.addresses[0] if n.addresses else "")
                 for n in f.nics if n.name != "lo")  # fmt: skip
    md = tuple(f"{a.name} {a.level} {a.state}, {a.raid_disks or len(a.members)} disks"
               + (f", chunk {a.chunk_kb}K" if a.chunk_kb else "")
               + (f", stripe_cache_size {a.stripe_cache_size}" if a.stripe_cache_size is not None else "")
               for a in f.md_arrays)  # fmt: skip
    exports = tuple(f"{e.path} {e.client}({','.join(e.options)})" for e in f.exports)
    mounts = tuple(f"{m.source} on {m.mount_point} type {m.fstype} (vers={m.version or '?'},rsize={m.rsize},"
                   f"wsize={m.wsize},nconnect={m.nconnect or 1})" for m in f.nfs_mounts)  # fmt: skip
    privilege = f.privilege + (f" as {f.user}" if f.user and f.user != "root" else "")
    return HostFacts(f.host, role, f.kernel, f.os.pretty_name, f.cpu_count or 0, (f.mem_total_kb or 0) * 1024,
                     nics, md, exports, mounts, privilege)  # fmt: skip


class RealCore:
    demo = False

    def __init__(self, db_path: Path, *, ssh_config: Path | None = None, app_known_hosts: Path | None = None,
                 log_path: Path | None = None, file_size: int = 256 * MIB,
                 timing: xplan.Timing | None = None, ceiling_s: float = 5.0) -> None:  # fmt: skip
        self.bus = EventBus()
        self.log_path = log_path or Path("~/.local/state/nfs-tuner/log/nfs-tuner.log").expanduser()
        self.ssh_config = ssh_config
        self.pool = HostPool(SshSettings(config_file=ssh_config, app_known_hosts=app_known_hosts))
        self.store = Store(db_path)
        self.file_size = file_size
        self.timing = timing or xplan.Timing()
        self.ceiling_s = ceiling_s
        self.facts: dict[str, CoreFacts] = {}
        self.roles: dict[str, HostRole] = {}
        self.session_id: int | None = None
        self.allow_async = False
        self._engine: SweepEngine | None = None
        self._run_task: asyncio.Task[int] | None = None
        self._baseline: dict[str, Any] = {}  # ceilings measured on the Baseline page, for the session
        self._trial_ids = 0

    # --- hosts -------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._run_task is not None

    def ssh_config_hosts(self) -> Sequence[str]:
        return hosts_from_ssh_config(self.ssh_config)

    def _error(self, host: str, exc: Exception) -> HostError:
        log.warning("%s: %s", host, exc, exc_info=exc)
        return HostError(str(exc))

    async def connect(self, host: str, role: HostRole, confirm_key: ConfirmKey) -> HostFacts:
        conn = self.pool.get(host)
        for _attempt in range(2):
            try:
                facts = await discover_host(conn)
                (require_server if role is HostRole.SERVER else require_client)(facts)
            except UnknownHostKey as unknown:
                where = unknown.host if unknown.port == 22 else f"{unknown.host} port {unknown.port}"
                if not await confirm_key(HostKey(host, where, unknown.key_type, unknown.fingerprint)):
                    raise HostError(f"The key of {host} was not trusted, so nothing was done there.") from None
                try:
                    await conn.trust(unknown)
                except (CoreHostError, OSError) as exc:
                    raise self._error(host, exc) from exc
                continue
            except CoreHostError as exc:
                raise self._error(host, exc) from exc
            self.facts[host], self.roles[host] = facts, role
            return ui_facts(facts, role)
        raise HostError(f"{host}: the key was trusted but the host still refused it; see {self.log_path}")

    async def nfs_clients_of(self, server: str) -> Sequence[str]:
        """The server's connected clients, by SSH config alias where one matches the NFSv4 name."""
        facts = self.facts.get(server)
        if facts is None:
            return ()
        aliases = list(self.ssh_config_hosts())
        out: list[str] = []
        for c in facts.client_candidates:
            name = c.nfs4_name.split()[-1] if c.nfs4_name else ""
            match = next((a for a in aliases if name and (a == name or a.split(".")[0] == name
                                                          or a.endswith("-" + name))), None)  # fmt: skip
            out.append(match or c.address)
        return tuple(dict.fromkeys(out))

    def _server(self) -> str:
        return next(h for h, r in self.roles.items() if r is HostRole.SERVER)

    def _clients(self) -> list[str]:
        return [h for h, r in self.roles.items() if r is HostRole.CLIENT]

    # --- plan --------------------------------------------------------------------------
    def _current(self) -> dict[str, str]:
        """Each knob's value today: the server's, and the first client's mount."""
        server = next((self.facts[h] for h, r in self.roles.items() if r is HostRole.SERVER), None)
        if server is None:
            return {}
        out: dict[str, str] = {}
        for row in knob_rows(server, [self.facts[c] for c in self._clients()], self._export() or None):
            out.setdefault(row.knob, row.current)
        return out

    def knobs(self) -> Sequence[KnobSpec]:
        current = self._current()
        return tuple(_ui_knob(s, self._shown(s.name, current.get(s.name, "unknown"))) for s in SPECS.values())

    @staticmethod
    def _shown(knob: str, current: str) -> str:
        return size_text(int(current)) if knob in SIZE_KNOBS and current.isdigit() else current

    def workloads(self) -> Sequence[WorkloadSpec]:
        kinds = [k for k in WORKLOAD_TEXT if k in SWEEPABLE]
        return tuple(WorkloadSpec(k, *WORKLOAD_TEXT[k]) for k in kinds)

    def _baseline_values(self, knobs: Sequence[str]) -> dict[str, xplan.Value]:
        out: dict[str, xplan.Value] = {}
        current = self._current()
        for k in knobs:
            try:
                out[k] = parse_value(k, current.get(k, "unknown"))
            except ValueError:
                pass  # unknown today: the strategy starts from the middle value
        return out

    def core_plan(self, plan: Plan) -> xplan.Plan:
        knobs = {k: tuple(parse_value(k, v) for v in values) for k, values in plan.knob_values.items()}
        return xplan.Plan(knobs, tuple(plan.workloads), strategy=STRATEGIES[plan.strategy],
                          min_runs=plan.repetitions, max_runs=plan.repetitions,
                          baseline=self._baseline_values(list(knobs)), timing=self.timing)  # fmt: skip

    def estimate_duration(self, plan: Plan) -> tuple[int, float]:
        est = estimate_duration(self.core_plan(plan))
        return est.trials, est.seconds

    def _mounts(self, client: str) -> list[NfsMount]:
        """The client's own NFS mounts of the export (not the test mounts of a sweep, ours or another's)."""
        export = self._export()
        return [m for m in self.facts[client].nfs_mounts
                if m.export == export and not m.mount_point.startswith(TEST_MOUNT_ROOT)]  # fmt: skip

    def _export(self) -> str:
        """The export the clients mount (else the server's first)."""
        server = next((self.facts[h] for h, r in self.roles.items() if r is HostRole.SERVER), None)
        if server is None or not server.exports:
            return ""
        paths = [e.path for e in server.exports]
        mounted = [m.export for c in self._clients() for m in self.facts[c].nfs_mounts if m.export in paths]
        return mounted[0] if mounted else paths[0]

    def _address(self) -> str:
        """The server as the clients mount it; its SSH name when no client mounts it now."""
        found = [m.server for c in self._clients() for m in self._mounts(c)]
        return found[0] if found else self._server()

    def sweep_spec(self, plan: Plan) -> SweepSpec:
        return SweepSpec(self._server(), tuple(self._clients()), self._export(), self.core_plan(plan),
                         server_address=self._address(), async_opt_in=plan.allow_async,
                         file_size=self.file_size)  # fmt: skip

    # --- baseline ----------------------------------------------------------------------
    async def run_baseline(self, workloads: Sequence[str]) -> BaselineResult:
        server, clients, address = self._server(), self._clients(), self._address()
        ceilings: list[Ceiling] = []
        self._baseline = {}
        try:
            for c in clients:
                tcp = await tcp_ceiling(self.pool, server, c, address, duration_s=self.ceiling_s)
                ceilings.append(Ceiling(f"network {c} → {server} ({tcp.tool})", tcp.bps))
                self._baseline[c] = {"tcp_bps": tcp.bps, "tool": tcp.tool}
            disk = await disk_ceiling(self.pool, server, self._export(), file_size=min(self.file_size, 256 * MIB))
            ceilings += [Ceiling(f"{server} disk, sequential read", disk.read_bps),
                         Ceiling(f"{server} disk, sequential write", disk.write_bps)]  # fmt: skip
            self._baseline[server] = {"disk_read_bps": disk.read_bps, "disk_write_bps": disk.write_bps,
                                      "cache_mode": disk.cache_mode}  # fmt: skip
            current = {w: await self._measure_today(w) for w in workloads}
        except (RunError, CoreHostError) as exc:
            raise self._error(server, exc) from exc
        return BaselineResult(tuple(ceilings), {w: v for w, v in current.items() if v is not None})

    async def _measure_today(self, workload: str) -> float | None:
        """Today's configuration: the workload on the clients' own mounts of the export."""
        where = [ClientWork(c, mounts[0].mount_point) for c in self._clients() if (mounts := self._mounts(c))]
        if not where:
            self.bus.publish(Message(Level.WARNING, "Today's configuration was not measured",
                                     "no client mounts the export now; the sweep measures on its own mounts"))
            return None
        spec = self.sweep_spec(Plan({}, (workload,)))
        t = self.timing
        self._trial_ids -= 1  # baseline samples are not trials: negative ids, never stored
        result = await WorkloadRunner(self.pool, self.bus).run(
            self._trial_ids, spec.workload(workload), where, drop_caches_on=[self._server(), *self._clients()],
            monitor=lambda s: s.t >= t.warmup_s + t.min_measure_s, max_s=t.warmup_s + t.max_measure_s + 5.0,
        )  # fmt: skip
        kept = [s.throughput_bps for s in result.totals if s.t > t.warmup_s]
        if result.error is not None or not kept:
            self.bus.publish(Message(Level.WARNING, f"Today's {workload} could not be measured",
                                     str(result.error or "no samples after the warm-up")))
            return None
        return statistics.fmean(kept)

    # --- the run -----------------------------------------------------------------------
    def _open_session(self, spec: SweepSpec) -> int:
        """A session with the facts and the Baseline page's ceilings already in: nothing is measured twice."""
        sid = self.store.create_session([spec.server, *spec.clients], plan=spec.to_json(), notes="sweep (GUI)")
        self.store.save_plan(sid, spec.to_json())
        for host in [spec.server, *spec.clients]:
            if host in self.facts:
                role = "server" if host == spec.server else "client"
                self.store.add_host_facts(sid, host, role, self.facts[host].to_dict())
        for host, figures in self._baseline.items():
            self.store.add_host_facts(sid, host, CEILING, figures)
        return sid

    async def run(self, plan: Plan) -> RunOutcome:
        spec = self.sweep_spec(plan)
        if all(w not in LOOPING for w in spec.plan.workloads):
            log.info("no looping workload: trials run to their own end")
        self.allow_async = plan.allow_async
        sid = self._open_session(spec)
        self.session_id = sid
        engine = SweepEngine(self.store, self.pool, self.bus, spec, deadman_timeout=60.0)
        engine.session_id = sid  # the engine goes on in the session opened above
        self._engine = engine
        finished: list[SweepFinished] = []
        unsubscribe = self.bus.subscribe(finished.append, SweepFinished)
        self._run_task = asyncio.ensure_future(engine.run())
        try:
            await asyncio.shield(self._run_task)  # a cancelled caller must not cut the revert short
        except (CoreHostError, RunError, KnobError) as exc:  # a host's trouble, in its words; reverted already
            raise self._error(spec.server, exc) from exc
        finally:
            unsubscribe()
            self._run_task = None
        return RunOutcome.of(finished[-1]) if finished else RunOutcome.FAILED

    def pause(self) -> None:
        if self._engine is not None:
            self._engine.go_on.clear()
            self.bus.publish(Message(Level.INFO, "Paused: the run stops after the current trial"))

    def resume(self) -> None:
        if self._engine is not None:
            self._engine.go_on.set()

    def skip_trial(self) -> None:
        if self._engine is not None:
            self._engine.skip.set()

    async def cancel_and_revert(self) -> None:
        task, engine = self._run_task, self._engine
        if task is None or engine is None:
            return
        engine.cancel.set()  # the engine ends the trial and reverts every change in its finally
        engine.go_on.set()
        await asyncio.wait({task})

    async def revert_all(self) -> None:
        await self.cancel_and_revert()
        for entry in self.store.unreverted_journal():
            if entry.session_id is not None and entry.session_id == self.session_id:
                try:
                    await recovery.revert_entry(self.store, self.pool, entry)
                except (KnobError, CoreHostError) as exc:
                    self.bus.publish(Message(Level.ERROR, f"Could not put back {entry.knob} on {entry.host}", str(exc)))

    # --- results -----------------------------------------------------------------------
    def recommendation(self) -> SessionRecommendation:
        assert self.session_id is not None, "no run yet"
        server = self._server()
        spec = SweepSpec.from_json(self.store.get_session(self.session_id).plan)  # type: ignore[arg-type]
        ceilings = stored_ceilings(self.store, self.session_id, spec)
        return recommend(self.store, self.session_id, allow_async=self.allow_async, server_host=server,
                         **({"ceilings": ceilings} if ceilings else {}))  # fmt: skip

    def results(self) -> Results:
        rec = self.recommendation()
        ranked = {o.objective: tuple(_ranked(r) for r in o.ranking) for o in rec.objectives}
        not_ranked = [f"Not ranked: {_config_line(e.config)}: {e.reason}" for e in rec.excluded]
        first = rec.objectives[0] if rec.objectives else None
        if first is None:
            return Results({}, Recommendation({}, 0.0, ("No configuration could be ranked: every trial was "
                                                        "left out (see the notes).",)), safety_notes=tuple(not_ranked))
        assert self.session_id is not None
        ctx = context_for_session(self.store, self.session_id, first.objective)
        snippets = render_all(first.config, ctx)
        notes = [*first.warnings, *not_ranked, *dict.fromkeys(f"{s.title}: {s.safety}" for s in snippets if s.safety)]
        return Results(
            ranked,
            Recommendation(_labelled(first.config), first.gain.rel * 100 if first.gain else 0.0, first.evidence),
            _effects(first),
            tuple(Snippet(s.title, _filename(s.key, s.target), s.text) for s in snippets),
            tuple(notes),
        )

    # --- crash leftovers ---------------------------------------------------------------
    async def leftovers(self) -> Sequence[Leftover]:
        if not self.store.unreverted_journal():
            return ()
        pending = await recovery.inspect(self.store, self.pool)
        return tuple(Leftover(p.entry.id, p.entry.host, f"{p.entry.knob} ({p.entry.target})", str(p.entry.old_value),
                              str(p.entry.new_value), p.status) for p in pending
                     if p.status != "reverted by host")  # fmt: skip

    async def revert_leftover(self, entry_id: int) -> None:
        entry = next((e for e in self.store.unreverted_journal() if e.id == entry_id), None)
        if entry is not None:
            try:
                await recovery.revert_entry(self.store, self.pool, entry)
            except (KnobError, CoreHostError) as exc:
                raise self._error(entry.host, exc) from exc

    def dismiss_leftover(self, entry_id: int) -> None:
        entry = next((e for e in self.store.unreverted_journal() if e.id == entry_id), None)
        if entry is not None:
            recovery.dismiss(self.store, entry)

    async def close(self) -> None:
        await self.pool.close()
        self.store.close()


def _labelled(config: Mapping[str, Any]) -> dict[str, str]:
    return {SPECS[k].title if k in SPECS else k: _text(k, v) for k, v in config.items()}


def _config_line(config: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in _labelled(config).items())


def _ranked(r: Any) -> RankedConfig:
    t = r.throughput
    half = t.half_width if t.half_width is not None else 0.0
    return RankedConfig(_labelled(r.config), t.mean, t.mean - half, t.mean + half, r.stability.median_cv, t.n)


def _effects(o: ObjectiveRecommendation) -> tuple[KnobEffect, ...]:
    """Per knob that varied: mean throughput and CV at each value (over the ranked configurations)."""
    out = []
    knobs = dict.fromkeys(k for r in o.ranking for k in r.config)
    for knob in knobs:
        values = sorted({r.config[knob] for r in o.ranking if knob in r.config}, key=_order)
        if len(values) < 2:
            continue
        rows = [[r for r in o.ranking if r.config.get(knob) == v] for v in values]
        out.append(KnobEffect(SPECS[knob].title if knob in SPECS else knob, tuple(_text(knob, v) for v in values),
                              tuple(statistics.fmean(r.throughput.mean for r in rs) for rs in rows),
                              tuple(statistics.fmean(r.stability.median_cv for r in rs) for rs in rows)))  # fmt: skip
    return tuple(out)


def _order(v: Any) -> tuple[int, float, str]:
    try:
        return (0, float(v), "")
    except (TypeError, ValueError):
        return (1, math.inf, str(v))


def _filename(key: str, target: str) -> str:
    name = Path(target).name if target and target != "shell" else ""
    return name or key.replace(":", "-").replace("/", "-") + ".txt"

