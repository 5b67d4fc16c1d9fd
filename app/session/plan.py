"""From what an admin chose to a sweep: the one plan builder, defaults and checks of both faces.

The CLI's ``sweep`` flags and the wizard's Plan page fill the same ``PlanChoices``; its
defaults are the product's defaults, so the same choices give the same run from either
face. ``plan_problems`` checks choices field by field with the words both faces show
(values through ``app.knobs.values``); ``build_spec`` turns valid choices into a SweepSpec,
fitted to the admin's time budget (experiments.budget: the knobs are in priority order, the
last dropped first) and never longer than any budget allows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from app.hosts.remote_args import UnsafeValue, absolute_path, address, host_name
from app.knobs.catalog import SPECS
from app.knobs.model import Safety
from app.knobs.values import BadValue, parse_values
from app.session.budget import unfit_text
from app.sweep.spec import SweepSpec, workload_kind
from experiments.budget import Fit, fit
from experiments.goals import Goal, GoalKind
from experiments.plan import STRATEGIES, Plan, Timing, Value
from experiments.workloads import MIB

# What each strategy does, as the faces say it after its name (experiments.strategies implements them).
STRATEGY_TEXT: dict[str, str] = {
    "guided": "find the knobs that matter here, tune only those, confirm the change",
    "adaptive": "one knob at a time, keeping each winner",
    "ofat": "one knob at a time, from today's values",
    "grid": "every combination",
}
assert set(STRATEGY_TEXT) == set(STRATEGIES)


def strategy_label(name: str) -> str:
    """A strategy as a face lists it: 'adaptive: one knob at a time, keeping each winner'."""
    return f"{name}: {STRATEGY_TEXT[name]}"

NO_KNOB = "choose at least one knob to sweep"
MAX_HOST_WAIT_S = 3600.0
NO_WORKLOAD = "choose at least one workload"
ASYNC_RISK = "export_sync=async may lose acknowledged writes on a server crash: sweep it only with {opt_in}"
RESTART_RISK = ("it restarts nfsd for each change (max_block_size, pool_mode), and every NFSv4 client waits out its "
                "grace period: sweep it only with {opt_in}")  # fmt: skip
# How a face names each opt-in (app.session.choices.OPT_INS) where a refusal says to give it: the Plan page's
# boxes here; the command line passes its flags (app.commands.arguments.OPT_IN_FLAGS).
OptInWords = Mapping[str, str]
PLAN_PAGE_OPT_INS: OptInWords = {"async": "the “Also try async exports” box checked",
                                 "restart": "the “Also try nfsd's max_block_size” box checked"}


@dataclass(frozen=True)
class PlanChoices:
    """What the admin chose; every default here is the product's default, for both faces."""

    knobs: Mapping[str, str] = field(default_factory=dict)  # knob -> values as typed: "8, 16, 64"; priority order
    workloads: Sequence[str] = ("seq_read",)
    strategy: str = "guided"
    repetitions: int = 2  # runs per configuration at least (the noise is pooled over them all; the choice is confirmed)
    max_repetitions: int | None = None  # at most, while the runs are noisy; None: 3 × repetitions
    duration_s: float | None = None  # the measuring cap of a trial; None: Timing's
    allow_async: bool = False  # the admin read the warning about async exports and opted in
    allow_restart: bool = False  # the admin accepted nfsd restarts (max_block_size)
    seed: int = 0
    file_size: int = 256 * MIB  # data set per client
    engine: str = "agent"
    link_bps: float | None = None  # given by the admin; else the measured TCP ceiling
    measure_ceilings: bool = True
    goal: str = GoalKind.THROUGHPUT.value  # what the recommendation optimises (experiments.goals)
    p99_max_ms: float | None = None  # goal p99_cap: the limit
    load_iops: float | None = None  # goal lowest_p99: operations per second per client; None: the plan's own load
    host_wait_s: float = 120.0  # a host that stops answering mid-run is waited for this long before the admin is asked
    budget_s: float | None = None  # the admin's time for the plan (app.session.budget); None: none given

    def goal_of(self) -> Goal:
        """The goal these choices name; ValueError (in the faces' words) when they name none."""
        return Goal(self.goal, self.p99_max_ms, self.load_iops)  # type: ignore[arg-type]  # checked by Goal

    def timing(self) -> Timing:
        return Timing() if self.duration_s is None else Timing().measuring(float(self.duration_s))

    @property
    def runs(self) -> tuple[int, int]:
        """(min_runs, max_runs) of the plan."""
        return self.repetitions, self.max_repetitions or 3 * self.repetitions


@dataclass(frozen=True)
class Where:
    """The hosts a sweep runs on."""

    server: str
    clients: tuple[str, ...]
    export: str
    server_address: str = ""  # as the clients mount it; "" = the server's SSH name


class PlanError(ValueError):
    """Choices that do not make a plan; ``problems`` maps each field (a knob's name, "knobs",
    "workloads", "strategy", "repetitions") to what is wrong with it."""

    def __init__(self, problems: Mapping[str, str]) -> None:
        super().__init__("; ".join(problems.values()))
        self.problems = dict(problems)


def parse_knobs(choices: PlanChoices, opt_ins: OptInWords = PLAN_PAGE_OPT_INS) -> tuple[dict[str, tuple[Value, ...]], dict[str, str]]:
    """(values per knob, problems per knob); ``opt_ins``: the face's names of the opt-ins a refusal asks for."""
    knobs: dict[str, tuple[Value, ...]] = {}
    problems: dict[str, str] = {}
    for name, text in choices.knobs.items():
        try:
            knobs[name] = parse_values(name, text)
        except BadValue as exc:
            problems[name] = str(exc)
            continue
        spec = SPECS[name]
        if spec.safety is Safety.DATA_RISK and not choices.allow_async and "async" in map(str, knobs[name]):
            problems[name] = ASYNC_RISK.format(opt_in=opt_ins["async"])
        if spec.safety is Safety.RESTART and not choices.allow_restart:
            problems[name] = RESTART_RISK.format(opt_in=opt_ins["restart"])
    return knobs, problems


def plan_problems(choices: PlanChoices, opt_ins: OptInWords = PLAN_PAGE_OPT_INS, *,
                  baseline: Mapping[str, Value] | None = None) -> dict[str, str]:
    """Everything wrong with ``choices``, by field, in the words of the face whose ``opt_ins`` they are; empty
    when they make a plan. A plan that fits no budget (or not the one given) is a problem of the field
    "budget"; ``baseline``: the hosts' values today."""
    _, problems = parse_knobs(choices, opt_ins)
    if not choices.knobs:
        problems["knobs"] = NO_KNOB
    if not choices.workloads:
        problems["workloads"] = NO_WORKLOAD
    for w in choices.workloads:
        try:
            workload_kind(w)
        except ValueError as exc:
            problems["workloads"] = str(exc)
    if choices.strategy not in STRATEGIES:
        problems["strategy"] = f"unknown strategy {choices.strategy!r}; choose one of {', '.join(STRATEGIES)}"
    low, high = choices.runs
    if not 1 <= low <= high:
        problems["repetitions"] = f"repetitions must be at least 1 and at most the maximum ({high}), got {low}"
    if choices.duration_s is not None and not (math.isfinite(choices.duration_s) and choices.duration_s > 0):
        problems["duration"] = f"the measuring cap must be a finite number of seconds above 0, got {choices.duration_s}"
    if not choices.file_size > 0:
        problems["file_size"] = f"the data set per client must be more than 0 bytes, got {choices.file_size}"
    if not (math.isfinite(choices.host_wait_s) and 0 <= choices.host_wait_s <= MAX_HOST_WAIT_S):
        problems["host_wait"] = f"the wait for a host that stops answering must be 0 to {MAX_HOST_WAIT_S:.0f} s, got {choices.host_wait_s}"
    if choices.link_bps is not None and not (math.isfinite(choices.link_bps) and choices.link_bps > 0):
        problems["link"] = f"the link ceiling must be a finite rate above 0, got {choices.link_bps}"
    try:
        choices.goal_of()
    except ValueError as exc:
        problems["goal"] = str(exc)
    if choices.budget_s is not None and not (math.isfinite(choices.budget_s) and choices.budget_s > 0):
        problems["budget"] = f"the time budget must be a finite time above 0, got {choices.budget_s} s"
    if not problems and (unfit := unfit_text(plan_fit(choices, baseline), choices.workloads)):
        problems["budget"] = unfit
    return problems


def _plan(choices: PlanChoices, clients: tuple[str, ...], baseline: Mapping[str, Value] | None) -> Plan:
    knobs, _ = parse_knobs(choices)
    low, high = choices.runs
    return Plan(
        knobs=knobs, workloads=tuple(choices.workloads), clients=clients, strategy=choices.strategy,
        min_runs=low, max_runs=high, seed=choices.seed, timing=choices.timing(),
        baseline={k: v for k, v in (baseline or {}).items() if k in knobs},
    )  # fmt: skip


def plan_fit(choices: PlanChoices, baseline: Mapping[str, Value] | None = None,
             clients: tuple[str, ...] = ("client",)) -> Fit:  # fmt: skip
    """The plan valid ``choices`` describe, fitted to their budget; ``baseline``: the hosts' values today."""
    return fit(_plan(choices, clients, baseline), choices.budget_s)


def where_problems(where: Where) -> dict[str, str]:
    """What in ``where`` would not reach the hosts' commands as plain data, by field.

    The admin types these, or discovery reports them (the export, the address a client
    mounts): either way they become words of ssh, mount, getent and exportfs.
    """
    problems: dict[str, str] = {}
    checks = [("server", host_name, where.server, "server"),
              *(("clients", host_name, c, "client") for c in where.clients),
              ("export", absolute_path, where.export, "export path"),
              ("server_address", address, where.server_address, "server address")]  # fmt: skip
    for field_name, check, value, what in checks:
        if value or field_name in ("server", "clients"):  # "" export or address: the default one
            try:
                check(value, what)
            except UnsafeValue as exc:
                problems.setdefault(field_name, str(exc))
    return problems


def build_spec(choices: PlanChoices, where: Where, baseline: Mapping[str, Value] | None = None) -> SweepSpec:
    """The sweep ``choices`` describe on ``where``; ``baseline``: the hosts' values today. PlanError if invalid."""
    if problems := plan_problems(choices, baseline=baseline) | where_problems(where):
        raise PlanError(problems)
    fitted = plan_fit(choices, baseline, where.clients)
    plan = replace(fitted.plan, time_budget_s=choices.budget_s)  # held while it runs too (app.sweep.deadline)
    return SweepSpec(
        where.server, where.clients, where.export, plan, server_address=where.server_address,
        async_opt_in=choices.allow_async, restart_opt_in=choices.allow_restart, file_size=choices.file_size,
        link_bps=choices.link_bps, measure_ceilings=choices.measure_ceilings, engine=choices.engine,
        goal=choices.goal_of(), host_wait_s=choices.host_wait_s,
    )  # fmt: skip
