"""``nfs-tuner sweep``: run a sweep headless, with a progress line and ETA; Ctrl-C cancels and reverts.

The same application layer as the wizard: the hosts are connected (facts, today's
values), the plan is built from the same PlanChoices and defaults (without ``--knob``, the
plan the diagnosis proposes: app.commands.sweep_plan), the engine opens the session and
puts every change back.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TextIO

from app.commands import arguments, sweep_plan
from app.events import EventBus, Message
from app.hosts import HostPool, SshSettings
from app.knobs.catalog import SPECS
from app.paths import resolve_db_path
from app.runner import ENGINES
from app.session import STRATEGY_TEXT, PlanChoices, PlanError, Role, TuningSession, Where, build_spec
from app.session.plan import plan_problems
from app.store import Store
from app.terminal_text import CARRIAGE_RETURN, ERASE, redraw
from app.sweep import Progress, SweepFinished, SweepSpec, TrialFinished
from app.sweep.ssh_hosts import SshHosts
from app.report.session_data import plan_goal, trial_fairness_json, trial_latency_json
from app.vocabulary import clients_note, duration_text, figure_text, latencies_text, trial_config_text
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
    p.add_argument("--server", type=arguments.host_name, required=True, metavar="HOST",
                   help="the NFS server (SSH name)")
    p.add_argument("--server-address", type=arguments.address, metavar="ADDR",
                   help="the server's name or address as clients mount it")
    p.add_argument("--client", type=arguments.host_name, action="append", required=True, metavar="HOST",
                   help="a client (repeat for several)")
    p.add_argument("--export", type=arguments.export_path, metavar="PATH",
                   help="the export's path on the server (default: the one the clients mount, else the first exported)")
    p.add_argument("--knob", type=arguments.knob_assignment, action="append", default=[], metavar="NAME=V1,V2",
                   help=f"a knob and its values (repeat; the first kept longest under --budget); knobs: "
                        f"{', '.join(SPECS)}; without --knob the diagnosis proposes the plan")
    p.add_argument("--workload", type=arguments.workload, action="append", metavar="W",
                   help=f"seq_read, seq_write, … (repeat; default --use's, or {', '.join(DEFAULTS.workloads)} with "
                        "--knob)")
    sweep_plan.add_arguments(p)
    p.add_argument("--strategy", choices=list(STRATEGY_TEXT), default=DEFAULTS.strategy,
                   help="; ".join(f"{k}: {v}" for k, v in STRATEGY_TEXT.items()) + f" (default {DEFAULTS.strategy})")
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
    p.add_argument("--resume", type=arguments.session_id, metavar="ID", help="resume an interrupted or cancelled session")
    p.add_argument("--seed", type=arguments.whole_number("a whole number", 0), default=DEFAULTS.seed)
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
    problems = plan_problems(choices)
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
            if (lat := event.latency) is not None and event.value_bps is not None:
                what += f" ({latencies_text(lat.p50_ms, lat.p99_ms, lat.p999_ms)})"
            if (fair := clients_note(event.fairness)) is not None:  # only when beyond the noise, as `sessions show`
                what += f", {fair}"
            line = f"trial {event.trial_id} {event.workload} {trial_config_text(event.config, event.step)}: {what}"
            self._line(line)
        elif isinstance(event, Message):
            self._line(f"{event.level.value}: {event.text} {event.detail}")
        elif isinstance(event, SweepFinished) and self.tty:
            self.out.write("\n")
        self.out.flush()

    def _line(self, text: str) -> None:
        """A line of its own, over the progress line on a terminal."""
        redraw(self.out, text + "\n", before=CARRIAGE_RETURN + ERASE if self.tty else "")


async def _run(args: argparse.Namespace, store: Store, bus: EventBus) -> int:
    config = Path(args.ssh_config).expanduser() if args.ssh_config else None
    session = TuningSession(store, SshHosts(HostPool(SshSettings(config_file=config))), bus,
                            deadman_timeout=args.deadman_timeout)
    try:
        if args.resume is not None:
            await session.resume(args.resume)
        else:
            for host, role in [(args.server, Role.SERVER), *((c, Role.CLIENT) for c in args.client)]:
                await session.connect(host, role)
            args.planned = await sweep_plan.plan_for(session, args, choices_from_args(args),
                                                     sys.stderr if args.json else sys.stdout)  # fmt: skip
            if args.dry_run:
                return 0  # said; nothing changed
            await session.run(args.planned.spec)
    finally:
        await session.hosts.close()
    assert session.session_id is not None
    return session.session_id


def main(args: argparse.Namespace) -> int:
    try:
        if args.resume is not None and args.dry_run:
            raise ValueError(sweep_plan.NO_DRY_RESUME)
        if args.resume is None:
            check_choices(choices_from_args(args), sweep_plan.proposed(args))  # refuse a bad plan before touching any host
    except ValueError as exc:
        print(f"nfs-tuner sweep: {exc}", file=sys.stderr)
        return 2
    return drive("sweep", args, _run, _done)


def drive(command: str, args: argparse.Namespace, run: Callable[[argparse.Namespace, Store, EventBus], Coroutine[Any, Any, int]],
          done: Callable[[argparse.Namespace, Store, int, list[SweepFinished]], int]) -> int:  # fmt: skip
    """Run a session headless (``sweep``, ``study ladder``): progress on the terminal (on stderr under --json),
    Ctrl-C cancels and puts every change back; ``done`` says the stored session and returns the exit code."""
    bus = EventBus()
    finished: list[SweepFinished] = []
    bus.subscribe(_Printer(sys.stderr if args.json else sys.stdout, False))
    bus.subscribe(finished.append, SweepFinished)
    stopped_by: list[int] = []
    with Store(resolve_db_path(args.db)) as store:
        try:
            sid = asyncio.run(_stoppable(run(args, store, bus), stopped_by))
        except (KeyboardInterrupt, asyncio.CancelledError):
            how = signal.Signals(stopped_by[0]).name if stopped_by else "Ctrl-C"
            print(f"\nnfs-tuner {command}: cancelled ({how}); every change was put back", file=sys.stderr)
            return 128 + (stopped_by[0] if stopped_by else signal.SIGINT)
        except Exception as exc:  # a host's trouble (SessionError) or a bug: said, never a traceback
            print(f"nfs-tuner {command}: {exc}", file=sys.stderr)
            return 1
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
            json.dump({"dry_run": True, **planned.to_json()}, sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            print(sweep_plan.DRY_RUN_DONE)
        return 0
    trials = store.trials(sid)
    if args.json:
        json.dump({**(planned.to_json() if planned is not None else {}),
            "session": sid, "state": store.get_session(sid).state.value,
            "goal": plan_goal(store.get_session(sid).plan).to_json(),
            "trials": [{"id": t.id, "config": t.config, "state": t.state.value, "reason": t.reason,
                        "mean_bps": (t.summary or {}).get("mean"), "latency": trial_latency_json(t),
                        "fairness": trial_fairness_json(t)}
                       for t in trials],
            "revert_problems": list(finished[-1].problems) if finished else [],
            "topups": finished[-1].topups if finished else 0,
            "paused_for": finished[-1].paused_for if finished else "",
        }, sys.stdout, indent=2)  # fmt: skip
        sys.stdout.write("\n")
    else:
        ok = sum(1 for t in trials if t.state.value == "ok")
        topups = f" ({finished[-1].topups} re-run for lost runs)" if finished and finished[-1].topups else ""
        print(f"session {sid}: {ok} of {len(trials)} trials ok{topups}; see `nfs-tuner sessions show {sid}`")
        if finished and finished[-1].paused_for:
            print(f"paused: {finished[-1].paused_for} stopped answering; when it is back, "
                  f"`nfs-tuner sweep --resume {sid}` goes on where it stopped")
    if finished and finished[-1].paused_for:
        return 3
    return 0 if finished and not finished[-1].problems else 1
