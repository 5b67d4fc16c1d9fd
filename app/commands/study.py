"""``nfs-tuner study ladder`` and ``study dirs``: studies headless, each kept as a session.

``study dirs`` grows one directory to ``--entries`` files per layout (app.sweep.dirs) and
finds where the create rate collapsed (app.report.dirs). ``study ladder``: a load ladder,
its knee and the layer that saturated there.

The ladder (app.sweep.ladder) steps the streams per client 1, 2, 4, … up to
``--max-streams`` on every client at once, at the hosts' own settings or with knobs held
by ``--knob NAME=V``, one trial per step, stored as a session of its own (``sessions
show``, ``report``). The knee rule and the layer attribution: experiments.knee.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from app.commands import arguments
from app.commands.json_out import write_json
from app.commands.sweep import (
    MAX_DURATION_S,
    MAX_FILE_MIB,
    MAX_LINK_MBPS,
    checked_run,
    connect_all,
    drive,
    ended,
    headless_session,
    say_paused,
)
from app.events import EventBus
from app.knobs.catalog import SPECS
from app.report.dirs import DirsResult, load_dirs
from app.report.ladder import LadderResult, load_ladder
from app.session import PlanChoices, PlanError, TuningSession
from app.session.admin_commands import command_line
from app.session.dirs_plan import MAX_ENTRIES
from app.session.plan import OptInWords
from app.session.study import DEFAULT_ENTRIES, DEFAULT_MAX_STREAMS, StudyChoice, StudyKind, as_study, study_problems
from app.store import Store
from app.sweep import SweepFinished
from app.sweep.spec import LOOPING, SweepSpec
from app.sweep.dirs import LAYOUTS
from app.sweep.ladder import MAX_STREAMS
from app.vocabulary import figure_text, held_text, latency_text, percent_text
from app.vocabulary.ladder import load_text, queue_text
from experiments.workloads import MIB

DEFAULT_WORKLOAD = "rand_read"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("study", help="studies beyond a sweep: the load ladder, directory scaling",
                              description="Studies that measure how the hosts behave rather than which knob wins.")  # fmt: skip
    studies = p.add_subparsers(dest="study", metavar="STUDY", required=True)
    q = studies.add_parser(
        "ladder", help="step the offered load up; name the knee and the layer that saturated there",
        description="Run one workload on every client at once with 1, 2, 4, … streams per client up to "
                    "--max-streams (offered load = streams × clients), one trial per step, at the hosts' own "
                    "settings or with knobs held by --knob NAME=V. The knee: the load before the first doubling "
                    "that gains < 10 % throughput while p99 grows > 50 % (the most it carried while more "
                    "load paid); the layer from the saturated step's telemetry. Every change is put back; the ladder is kept as a session.",
    )  # fmt: skip
    _host_arguments(q, "every step runs on all of them")
    q.add_argument("--workload", type=arguments.workload, default=DEFAULT_WORKLOAD, metavar="W",
                   help=f"the workload to climb with: {', '.join(sorted(LOOPING))} (default {DEFAULT_WORKLOAD})")
    q.add_argument("--max-streams", type=arguments.whole_number("a whole number of streams", 1, MAX_STREAMS),
                   default=DEFAULT_MAX_STREAMS, metavar="N",
                   help=f"streams per client at the last step (default {DEFAULT_MAX_STREAMS})")
    _knob_argument(q, "ladder")
    q.add_argument("--duration", type=arguments.finite_positive_float("seconds", MAX_DURATION_S), metavar="S",
                   help="measuring cap per step")
    q.add_argument("--file-size", type=arguments.whole_number("a whole number of MiB", 1, MAX_FILE_MIB),
                   default=PlanChoices().file_size // MIB, metavar="MiB", help="data set per client")
    q.add_argument("--link-mbps", type=arguments.finite_positive_float("MB/s", MAX_LINK_MBPS), metavar="MB/s",
                   help="link ceiling per client (else the measured TCP ceiling): the NIC figure's 100 %%")
    q.add_argument("--no-ceilings", action="store_true", help="skip measuring TCP and server-disk ceilings")
    arguments.opt_in_arguments(q)
    arguments.deadman_argument(q)
    q.add_argument("--json", action="store_true", help="print every step, the knee and the layer as JSON")
    q.set_defaults(func=main)
    _register_dirs(studies)


def _register_dirs(studies: Any) -> None:
    q = studies.add_parser(
        "dirs", help="grow one directory to N entries, flat and hashed; find where creates collapse",
        description="Create --entries files in one directory on every client, once per layout (flat: all in "
                    "one directory; hashed: spread over 256 subdirectories by a hash of the name), at the hosts' "
                    "own settings or with knobs held by --knob NAME=V, and trace the create rate against the "
                    "entries so far. The collapse: the first point below 50 % of the early rate that stays "
                    "below. Every change is put back; the study is kept as a session.",
    )  # fmt: skip
    _host_arguments(q, "every layout runs on all of them")
    q.add_argument("--entries", type=arguments.whole_number("a whole number of entries", 1, MAX_ENTRIES),
                   default=DEFAULT_ENTRIES, metavar="N", help=f"files per directory (default {DEFAULT_ENTRIES:,})")
    q.add_argument("--layout", choices=(*LAYOUTS, "both"), default="both",
                   help="the directory layout to grow (default both)")
    _knob_argument(q, "study")
    q.add_argument("--no-ceilings", action="store_true", help="skip measuring TCP and server-disk ceilings")
    arguments.opt_in_arguments(q)
    arguments.deadman_argument(q)
    q.add_argument("--json", action="store_true", help="print every point of every curve and the collapse as JSON")
    q.set_defaults(func=main_dirs)


def _host_arguments(q: argparse.ArgumentParser, each: str) -> None:
    """Where a study runs: the SSH config, the server, its address, the clients, the export."""
    q.add_argument("--ssh-config", type=arguments.ssh_config, metavar="FILE",
                   help="SSH config that names the hosts (default ~/.ssh/config)")
    q.add_argument("--server", type=arguments.host_name, required=True, metavar="HOST", help="the NFS server (SSH name)")
    q.add_argument("--server-address", type=arguments.address, metavar="ADDR",
                   help="the server's name or address as clients mount it")
    q.add_argument("--client", type=arguments.host_name, action="append", required=True, metavar="HOST",
                   help=f"a client (repeat for several); {each}")
    q.add_argument("--export", type=arguments.export_path, metavar="PATH", help="the export's path on the server")


def _knob_argument(q: argparse.ArgumentParser, study: str) -> None:
    q.add_argument("--knob", type=arguments.knob_assignment, action="append", default=[], metavar="NAME=V",
                   help=f"hold a knob at one value for the whole {study} (repeat); knobs: {', '.join(SPECS)}")


def _held_knobs(args: argparse.Namespace, study: str) -> dict[str, str]:
    """--knob NAME=V as a study holds them; ValueError on a knob given twice."""
    knobs: dict[str, str] = {}
    for item in args.knob:
        if item.name in knobs:
            raise ValueError(f"--knob {item.name} is given twice: a {study} holds it at one value")
        knobs[item.name] = item.values
    return knobs


def choices_from_args(args: argparse.Namespace) -> PlanChoices:
    """The ladder's choices; ValueError on a knob given twice."""
    chosen = PlanChoices(knobs=_held_knobs(args, "ladder"), workloads=(args.workload,), duration_s=args.duration,
                         allow_async=args.async_opt_in, allow_restart=args.restart_opt_in, file_size=int(args.file_size) * MIB,
                         link_bps=args.link_mbps * 1e6 if args.link_mbps else None,
                         measure_ceilings=not args.no_ceilings)  # fmt: skip
    return as_study(chosen, StudyKind.LADDER)


async def _run_study(args: argparse.Namespace, store: Store, bus: EventBus,
                     plan: Callable[[TuningSession], SweepSpec]) -> int:  # fmt: skip
    """Connect the hosts, plan the study on them and run it; its session's id."""
    session = headless_session(args, store, bus)
    try:
        await connect_all(session, args)
        await checked_run(session, plan(session))
    finally:
        await session.hosts.close()
    assert session.session_id is not None
    return session.session_id


async def _run(args: argparse.Namespace, store: Store, bus: EventBus) -> int:
    return await _run_study(args, store, bus, lambda session: session.plan_study(
        choices_from_args(args), ladder_study(args), export=args.export, server_address=args.server_address))


def ladder_lines(ladder: LadderResult) -> list[str]:
    """The ladder's table and its knee sentence, as `study ladder` and `sessions show` print them."""
    head = (f"{'load':>11}  {'streams×clients':>15}  {'throughput':>12}  {'p50':>9}  {'p99':>9}  "
            f"{'nfsd wait':>9}  {'srv CPU':>7}  {'disk':>5}  {'disk q':>6}  {'NIC':>5}  {'cli CPU':>7}")  # fmt: skip
    lines = [f"Load ladder: {ladder.workload} at {held_text(ladder.config)}", head]
    for st in ladder.steps:
        lay = st.layers
        lines.append(f"{load_text(st.load):>11}  {f'{st.streams}×{st.clients}':>15}  "
                     f"{figure_text(st.throughput_bps):>12}  {latency_text(st.p50_ms):>9}  {latency_text(st.p99_ms):>9}  "
                     f"{percent_text(lay.nfsd_waiting):>9}  {percent_text(lay.server_cpu):>7}  "
                     f"{percent_text(lay.disk_util):>5}  {queue_text(lay.disk_queue):>6}  {percent_text(lay.nic_util):>5}  "
                     f"{percent_text(lay.client_cpu):>7}"
                     + (f"  ({st.reason})" if st.reason else ""))  # fmt: skip
    lines.append(ladder.sentence)
    return lines


def main(args: argparse.Namespace) -> int:
    return _checked("study ladder", args, lambda flags: study_problems(choices_from_args(args), ladder_study(args), flags), _run, _done)


def _checked(command: str, args: argparse.Namespace, problems: Callable[[OptInWords], dict[str, str]],
             run: Callable[[argparse.Namespace, Store, EventBus], Coroutine[Any, Any, int]],
             done: Callable[[argparse.Namespace, Store, int, list[SweepFinished]], int]) -> int:  # fmt: skip
    """A study run by ``drive`` once its arguments make one: 2 and the problems before any host is touched."""
    try:
        if found := problems(arguments.OPT_IN_FLAGS):
            raise PlanError({k: f"{v} (--knob {k}=V)" if k in SPECS else v for k, v in found.items()})
    except ValueError as exc:
        print(f"nfs-tuner {command}: {exc}", file=sys.stderr)
        return 2
    return drive(command, args, run, done)


def _done(args: argparse.Namespace, store: Store, sid: int, finished: list[SweepFinished]) -> int:
    ladder = load_ladder(store, sid)
    assert ladder is not None
    return _finish(args, store, sid, finished, ladder.to_json(), ladder_lines(ladder))


def _finish(args: argparse.Namespace, store: Store, sid: int, finished: list[SweepFinished], result: dict[str, Any],
            lines: list[str]) -> int:  # fmt: skip
    """A study's result on stdout (JSON under --json); 0 when it completed with every change put back."""
    state = store.get_session(sid).state.value
    unreverted = list(finished[-1].problems) if finished else []
    if args.json:
        write_json(f"study {args.study}", {"session": sid, "state": state, **result, "revert_problems": unreverted,
                                           "paused_for": finished[-1].paused_for if finished else ""}, sys.stdout)
    else:
        print("\n".join(lines))
        print(f"session {sid} ({state}); see `{command_line('sessions', 'show', str(sid), db=store.path)}` and "
              f"`{command_line('report', str(sid), '--to', f'session-{sid}.html', db=store.path)}`")
        say_paused(args, store, sid, finished)
    return ended(finished, complete=state == "complete")


def ladder_study(args: argparse.Namespace) -> StudyChoice:
    return StudyChoice(StudyKind.LADDER, max_streams=args.max_streams)


def dirs_study(args: argparse.Namespace) -> StudyChoice:
    return StudyChoice(StudyKind.DIRS, entries=args.entries, layouts=LAYOUTS if args.layout == "both" else (args.layout,))


def dirs_choices(args: argparse.Namespace) -> PlanChoices:
    """The directory study's choices; ValueError on a knob given twice."""
    chosen = PlanChoices(knobs=_held_knobs(args, "directory study"), allow_async=args.async_opt_in,
                         allow_restart=args.restart_opt_in, measure_ceilings=not args.no_ceilings)
    return as_study(chosen, StudyKind.DIRS)


async def _run_dirs(args: argparse.Namespace, store: Store, bus: EventBus) -> int:
    return await _run_study(args, store, bus, lambda session: session.plan_study(
        dirs_choices(args), dirs_study(args), export=args.export, server_address=args.server_address))


def dirs_lines(result: DirsResult) -> list[str]:
    """The curves as a table (entries, each curve's create rate: DirsResult.table_rows) and the collapse sentence."""
    lines = [f"Directory scaling: {result.entries:,} entries at {held_text(result.config)}"]
    for c in result.curves:
        if c.reason:
            lines.append(f"{result.label(c)}: broke ({c.reason})")
    if rows := result.table_rows():
        lines.append(f"{'entries':>12}  " + "  ".join(f"{result.label(c) + ' /s':>16}" for c in result.drawn()))
        lines += [f"{row[0]:>12}  " + "  ".join(f"{rate:>16}" for rate in row[1:]) for row in rows]
    lines.append(result.sentence)
    return lines


def main_dirs(args: argparse.Namespace) -> int:
    return _checked("study dirs", args, lambda flags: study_problems(dirs_choices(args), dirs_study(args), flags), _run_dirs,
                    _done_dirs)


def _done_dirs(args: argparse.Namespace, store: Store, sid: int, finished: list[SweepFinished]) -> int:
    result = load_dirs(store, sid)
    assert result is not None
    return _finish(args, store, sid, finished, result.to_json(), dirs_lines(result))
