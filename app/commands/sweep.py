"""``nfs-tuner sweep``: run a sweep headless, with a progress line and ETA; Ctrl-C cancels and reverts.

The same application layer as the wizard: the hosts are connected (facts, today's
values), the plan is built from the same PlanChoices and defaults (without ``--knob``, the
plan the diagnosis proposes: app.commands.sweep_plan), the engine opens the session and
puts every change back.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TextIO

from app.commands import arguments, sweep_plan
from app.commands.common import UsageError, open_store
from app.commands.exit_status import Exit, signalled
from app.commands.json_out import write_json
from app.events import EventBus, Message
from app.hosts import HostPool, SshSettings
from app.knobs.catalog import SPECS
from app.runner import ENGINES
from app.session import (
    STRATEGY_TEXT,
    PlanChoices,
    PlanError,
    Role,
    SessionError,
    TuningSession,
    Where,
    build_spec,
    strategy_label,
)
from app.session.admin_commands import command_line, resume_command
from app.session.plan import plan_problems
from app.session.preflight import Preflight
from app.store import Store
from app.terminal_text import CARRIAGE_RETURN, ERASE, redraw
from app.sweep import Progress, SweepFinished, SweepSpec, TrialFinished
from app.sweep.host_side import HostSide
from app.sweep.ssh_hosts import SshHosts
from app.report.session_data import plan_goal, trial_fairness_json, trial_latency_json
from app.vocabulary import (
    clients_note,
    duration_text,
    figure_text,
    latencies_text,
    time_limited_text,
    trial_config_text,
)
from experiments.goals import GOALS, MAX_LOAD_IOPS, MAX_P99_MS, GoalKind
from experiments.workloads import MIB

DEFAULTS = PlanChoices()
MAX_RUNS = 1000
MAX_DURATION_S = 86400.0  # a day's measuring per trial
MAX_FILE_MIB = 16 * 1024 * 1024  # 16 TiB per client
MAX_LINK_MBPS = 1e7  # 10 TB/s


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "sweep", help="sweep knob values with real workloads and store every trial",
        description="Apply each configuration (journal first, reverted at the end), run the workload on every "
                    "client at once and keep the results in the session database.",
    )  # fmt: skip
    low = DEFAULTS.repetitions
    runs = arguments.whole_number("a whole number of runs", 1, MAX_RUNS)
    p.add_argument("--ssh-config", type=arguments.ssh_config, metavar="FILE",
                   help="SSH config that names the hosts (default ~/.ssh/config)")
    p.add_argument("--server", type=arguments.host_name, metavar="HOST",
                   help="the NFS server (SSH name); needed but with --resume")
    p.add_argument("--server-address", type=arguments.address, metavar="ADDR",
                   help="the server's name or address as clients mount it")
    p.add_argument("--client", type=arguments.host_name, action="append", metavar="HOST",
                   help="a client (repeat for several); needed but with --resume")
    p.add_argument("--export", type=arguments.export_path, metavar="PATH",
                   help="the export's path on the server (default: the one the clients mount, else the first exported)")
    p.add_argument("--knob", type=arguments.knob_assignment, action="append", default=[], metavar="NAME=V1,V2",
                   help=f"a knob and its values (repeat; the first kept longest under --budget); knobs: "
                        f"{', '.join(SPECS)}; without --knob the diagnosis proposes the plan")
    p.add_argument("--workload", type=arguments.workload, action="append", metavar="W",
                   help=f"a workload: {arguments.WORKLOAD_NAMES} (repeat; default --use's, or "
                        f"{', '.join(DEFAULTS.workloads)} with --knob)")
    sweep_plan.add_arguments(p)
    p.add_argument("--strategy", choices=list(STRATEGY_TEXT), default=DEFAULTS.strategy,
                   help="; ".join(map(strategy_label, STRATEGY_TEXT)) + f" (default {DEFAULTS.strategy})")
    p.add_argument("--repetitions", type=runs, default=low, metavar="N",
                   help=f"runs per configuration at least (default {low})")
    p.add_argument("--max-repetitions", type=runs, metavar="N", help="runs at most while noisy (default 3×N)")
    p.add_argument("--duration", type=arguments.finite_positive_float("seconds", MAX_DURATION_S), metavar="S",
                   help=f"measuring cap per trial (default {DEFAULTS.timing().max_measure_s:g})")
    p.add_argument("--file-size", type=arguments.whole_number("a whole number of MiB", 1, MAX_FILE_MIB),
                   default=DEFAULTS.file_size // MIB, metavar="MiB",
                   help=f"data set per client (default {DEFAULTS.file_size // MIB})")
    p.add_argument("--link-mbps", type=arguments.finite_positive_float("MB/s", MAX_LINK_MBPS), metavar="MB/s",
                   help="link ceiling per client: faster trials are broken")
    p.add_argument("--no-ceilings", action="store_true",
                   help="skip measuring TCP and server-disk ceilings (results are then not shown as a share of them)")
    arguments.opt_in_arguments(p)
    arguments.deadman_argument(p)
    arguments.host_wait_argument(p)
    p.add_argument("--resume", type=arguments.session_id, metavar="ID",
                   help="go on with an interrupted or cancelled session (a sweep or a study): its own hosts and plan")
    p.add_argument("--seed", type=arguments.whole_number("a whole number", 0), default=DEFAULTS.seed, metavar="N",
                   help="orders the trials (the grid's shuffle, adaptive's knob order): the same seed, the same plan "
                        f"(default {DEFAULTS.seed})")
    p.add_argument("--engine", choices=ENGINES, default=DEFAULTS.engine,
                   help="the load: the embedded agent, fio, or auto (fio where installed and exact; default agent)")
    p.add_argument("--goal", choices=GOALS, metavar="GOAL",
                   help="what the recommendation optimises: throughput (the most), p99_cap (the most with p99 at "
                        "most --p99-max-ms), lowest_p99 (the lowest p99 at --load-iops, else at the plan's own load); "
                        "default throughput, or what --p99-max-ms / --load-iops imply")
    p.add_argument("--p99-max-ms", type=arguments.finite_positive_float("ms", MAX_P99_MS), metavar="MS",
                   help="goal p99_cap: configurations whose p99 exceeds this are left out of the choice")
    p.add_argument("--load-iops", type=arguments.finite_positive_float("operations per second", MAX_LOAD_IOPS),
                   metavar="N", help="goal lowest_p99: hold each client's workload to N operations per second")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=main)
    p.set_defaults(defaults=vars(p.parse_args([])))  # what a flag left out holds: --resume refuses the others


def choices_from_args(args: argparse.Namespace) -> PlanChoices:
    """The --knob NAME=V1,V2 flags and the rest as the wizard's PlanChoices; ValueError on a knob given twice."""
    knobs: dict[str, str] = {}
    for item in args.knob:  # KnobAssignment: checked by the parser
        if item.name in knobs:
            raise ValueError(f"--knob {item.name} is given twice: list all its values in one, "
                             f"--knob {item.name}=V1,V2")  # fmt: skip
        knobs[item.name] = item.values
    return PlanChoices(
        knobs=knobs, workloads=sweep_plan.workloads_from_args(args, DEFAULTS.workloads), strategy=args.strategy,
        repetitions=int(args.repetitions), max_repetitions=args.max_repetitions, duration_s=args.duration,
        allow_async=args.async_opt_in, allow_restart=args.restart_opt_in, seed=args.seed, file_size=int(args.file_size) * MIB, engine=args.engine,
        link_bps=args.link_mbps * 1e6 if args.link_mbps else None, measure_ceilings=not args.no_ceilings,
        goal=_goal_name(args), p99_max_ms=args.p99_max_ms, load_iops=args.load_iops,
        host_wait_s=float(getattr(args, "host_wait", 120)),
        budget_s=sweep_plan.budget_from_args(args),
    )  # fmt: skip


def _goal_name(args: argparse.Namespace) -> str:
    """--goal, or the goal its value flags imply (--p99-max-ms: p99_cap, --load-iops: lowest_p99)."""
    if args.goal:
        return str(args.goal)
    if args.p99_max_ms is not None:
        return GoalKind.P99_CAP.value
    return GoalKind.LOWEST_P99.value if args.load_iops is not None else GoalKind.THROUGHPUT.value


def check_choices(choices: PlanChoices, proposed: bool = False) -> None:
    """Refuse a bad plan before touching any host, in the words the Plan page uses (a ``proposed`` plan's
    knobs come from the diagnosis)."""
    problems = plan_problems(choices, arguments.OPT_IN_FLAGS)
    if proposed:
        problems.pop("knobs", None)
    if problems:
        if "knobs" in problems:
            problems["knobs"] += " (--knob NAME=V1,V2)"
        raise PlanError(problems)


def spec_from_args(args: argparse.Namespace) -> SweepSpec:
    """The spec without the hosts' facts (no connection; today's values unknown)."""
    where = Where(args.server, tuple(args.client), args.export or "", args.server_address or "")
    return build_spec(choices_from_args(args), where)


class _Printer:
    """The progress line on a terminal (rewritten in place), plain lines elsewhere."""

    def __init__(self, out: TextIO, quiet: bool) -> None:
        self.out = out
        self.quiet = quiet
        self.tty = out.isatty()

    def __call__(self, event: object) -> None:
        if self.quiet:
            return
        if isinstance(event, Progress):
            eta = "" if event.eta_s is None else f", about {duration_text(event.eta_s)} left"
            width = 24
            filled = int(width * event.done / event.total) if event.total else 0
            line = f"[{'#' * filled}{'.' * (width - filled)}] {event.done}/{event.total} trials{eta}"
            if self.tty:
                redraw(self.out, line, before=CARRIAGE_RETURN, after=ERASE)
            else:
                self.out.write(line + "\n")
        elif isinstance(event, TrialFinished):
            what = figure_text(event.value_bps, event.unit) if event.value_bps is not None else f"broken: {event.reason}"
            if event.value_bps is not None and event.limited:  # the rate of what completed, said as such
                what += f" ({time_limited_text(event.limited, event.time_limit_s)})"
            if (lat := event.latency) is not None and event.value_bps is not None:
                what += f" ({latencies_text(lat.p50_ms, lat.p99_ms, lat.p999_ms)})"
            if (fair := clients_note(event.fairness)) is not None:  # only when beyond the noise, as `sessions show`
                what += f", {fair}"
            line = f"trial {event.trial_id} {event.workload} {trial_config_text(event.config, event.step)}: {what}"
            self._line(line)
        elif isinstance(event, Message):
            self._line(f"{event.level.value}: {event.text}" + (f": {event.detail}" if event.detail else ""))
        elif isinstance(event, SweepFinished) and self.tty:
            self.out.write("\n")
        self.out.flush()

    def _line(self, text: str) -> None:
        """A line of its own, over the progress line on a terminal."""
        redraw(self.out, text + "\n", before=CARRIAGE_RETURN + ERASE if self.tty else "")


def host_side(args: argparse.Namespace) -> HostSide:
    """The hosts a headless run reaches: over SSH, through --ssh-config when given."""
    return SshHosts(HostPool(SshSettings(config_file=ssh_config_of(args))))


def ssh_config_of(args: argparse.Namespace) -> Path | None:
    return Path(args.ssh_config).expanduser() if args.ssh_config else None


def headless_session(args: argparse.Namespace, store: Store, bus: EventBus) -> TuningSession:
    """The application layer as ``sweep`` and ``study`` drive it: no questions (a lost host stops the run)."""
    return TuningSession(store, host_side(args), bus, deadman_timeout=args.deadman_timeout)


async def connect_all(session: TuningSession, args: argparse.Namespace) -> None:
    for host, role in [(args.server, Role.SERVER), *((c, Role.CLIENT) for c in args.client)]:
        await session.connect(host, role)


class NotClear(SessionError):
    """The pre-flight check found what would stop the run; nothing was changed."""

    def __init__(self, found: Preflight) -> None:
        super().__init__("nothing was changed: before the first change, the hosts were checked and "
                         + "\n  ".join(["found:", *found.lines()]))  # fmt: skip
        self.found = found


async def checked_run(session: TuningSession, spec: SweepSpec) -> None:
    """Run ``spec`` once the pre-flight check finds nothing in its way (NotClear else)."""
    found = await session.preflight(spec)
    if not found.ok:
        raise NotClear(found)
    await session.run(spec)


async def _run(args: argparse.Namespace, store: Store, bus: EventBus) -> int:
    session = headless_session(args, store, bus)
    try:
        if args.resume is not None:
            await session.resume(args.resume)
        else:
            began = time.monotonic()
            await connect_all(session, args)
            args.planned = await sweep_plan.plan_for(session, args, choices_from_args(args),
                                                     sys.stderr if args.json else sys.stdout, began)  # fmt: skip
            if args.dry_run:
                return 0  # said; nothing changed
            await checked_run(session, args.planned.spec)
    finally:
        await session.hosts.close()
    if session.session_id is None:
        raise SessionError("no session was recorded")
    return session.session_id


# What --resume takes besides the session: how to reach the hosts, how long they wait, how to print.
RESUME_TAKES = {"func", "defaults", "resume", "ssh_config", "deadman_timeout", "json"}


def main(args: argparse.Namespace) -> int:
    try:
        if args.resume is not None and args.dry_run:
            db = Path(args.db) if getattr(args, "db", None) else None
            raise UsageError(sweep_plan.no_dry_resume(command_line("sessions", "show", str(args.resume), db=db)))
        if args.resume is not None:
            _resume_alone(args)
        else:
            if not args.server or not args.client:
                raise UsageError("give the hosts: --server HOST and --client HOST (repeat for several), "
                                 "or --resume ID to go on with a stored session")  # fmt: skip
            check_choices(choices_from_args(args), sweep_plan.proposed(args))  # refuse a bad plan before touching any host
    except (ValueError, UsageError) as exc:
        print(f"nfs-tuner sweep: {exc}", file=sys.stderr)
        return Exit.USAGE
    return drive("sweep", args, _run, _done)


def _resume_alone(args: argparse.Namespace) -> None:
    """--resume goes on with the session's own hosts and plan: a plan flag given beside it is refused, not ignored."""
    defaults = args.defaults
    given = sorted(f"--{k.replace('_', '-')}" for k, v in vars(args).items()
                   if k not in RESUME_TAKES and k in defaults and v != defaults[k])  # fmt: skip
    if given:
        raise UsageError(f"--resume goes on with the session's own hosts and plan; leave out {', '.join(given)} "
                         "(only --ssh-config, --deadman-timeout and --json go with it)")  # fmt: skip


def drive(command: str, args: argparse.Namespace, run: Callable[[argparse.Namespace, Store, EventBus], Coroutine[Any, Any, int]],
          done: Callable[[argparse.Namespace, Store, int, list[SweepFinished]], int]) -> int:  # fmt: skip
    """Run a session headless (``sweep``, ``study ladder``): progress on the terminal (on stderr under --json),
    Ctrl-C cancels and puts every change back; ``done`` says the stored session and returns the exit code."""
    bus = EventBus()
    finished: list[SweepFinished] = []
    bus.subscribe(_Printer(sys.stderr if args.json else sys.stdout, False))
    bus.subscribe(finished.append, SweepFinished)
    stopped_by: list[int] = []
    with open_store(args, create=getattr(args, "resume", None) is None) as store:  # a resume's session is there
        try:
            sid = asyncio.run(_stoppable(run(args, store, bus), stopped_by))
        except (KeyboardInterrupt, asyncio.CancelledError):
            how = signal.Signals(stopped_by[0]).name if stopped_by else "Ctrl-C"
            print(f"\nnfs-tuner {command}: cancelled ({how}); every change was put back", file=sys.stderr)
            return signalled(stopped_by[0] if stopped_by else signal.SIGINT)
        except Exception as exc:  # a host's trouble (SessionError) or a bug: said, never a traceback
            print(f"nfs-tuner {command}: {exc}", file=sys.stderr)
            return Exit.FAILED
        return done(args, store, sid, finished)


async def _stoppable(run: Coroutine[Any, Any, int], stopped_by: list[int]) -> int:
    """``run``, cancelled by SIGTERM or SIGHUP (a service stop, a closed terminal) as by Ctrl-C: every change
    is put back and the agents remove their files, rather than leaving it all to the hosts' dead-man switches."""
    task, loop = asyncio.current_task(), asyncio.get_running_loop()
    assert task is not None

    def stop(signum: int) -> None:
        stopped_by.append(signum)
        task.cancel()

    for signum in (signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, stop, signum)
    try:
        return await run
    finally:
        for signum in (signal.SIGTERM, signal.SIGHUP):
            loop.remove_signal_handler(signum)


def _done(args: argparse.Namespace, store: Store, sid: int, finished: list[SweepFinished]) -> int:
    planned: sweep_plan.Planned | None = getattr(args, "planned", None)
    if args.dry_run:
        if args.json and planned is not None:
            write_json("sweep", {"dry_run": True, **planned.to_json()}, sys.stdout)
        else:
            print(sweep_plan.DRY_RUN_DONE)
        return 0
    trials = store.trials(sid)
    if args.json:
        write_json("sweep", {**(planned.to_json() if planned is not None else {}),
            "session": sid, "state": store.get_session(sid).state.value,
            "goal": plan_goal(store.get_session(sid).plan).to_json(),
            "trials": [{"id": t.id, "config": t.config, "state": t.state.value, "reason": t.reason,
                        "mean_bps": (t.summary or {}).get("mean"), "latency": trial_latency_json(t),
                        "fairness": trial_fairness_json(t)}
                       for t in trials],
            "revert_problems": list(finished[-1].problems) if finished else [],
            "topups": finished[-1].topups if finished else 0,
            "paused_for": finished[-1].paused_for if finished else "",
            "resume": resume_command(sid, db=store.path, ssh_config=ssh_config_of(args)) if paused(finished) else None,
        }, sys.stdout)  # fmt: skip
    else:
        ok = sum(1 for t in trials if t.state.value == "ok")
        topups = f" ({finished[-1].topups} re-run for lost runs)" if finished and finished[-1].topups else ""
        print(f"session {sid}: {ok} of {len(trials)} trials ok{topups}; "
              f"see `{command_line('sessions', 'show', str(sid), db=store.path)}`")
        say_paused(args, store, sid, finished)
    return ended(finished, complete=True)


def paused(finished: list[SweepFinished]) -> bool:
    return bool(finished and finished[-1].paused_for)


def say_paused(args: argparse.Namespace, store: Store, sid: int, finished: list[SweepFinished]) -> None:
    """When a lost host stopped the run: the command that goes on, whole (this database, this SSH config)."""
    if paused(finished):
        print(f"paused: {finished[-1].paused_for} stopped answering; when it is back, "
              f"`{resume_command(sid, db=store.path, ssh_config=ssh_config_of(args))}` goes on where it stopped")


def ended(finished: list[SweepFinished], *, complete: bool) -> Exit:
    """A run's exit status: a lost host (3) before a change left on a host (4) before an early end (1)."""
    if paused(finished):
        return Exit.HOST_LOST
    if not finished or finished[-1].problems:
        return Exit.NOT_PUT_BACK if finished else Exit.FAILED
    return Exit.OK if complete else Exit.FAILED
