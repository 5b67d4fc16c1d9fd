"""``nfs-tuner sweep``: run a sweep headless, with a progress line and ETA; Ctrl-C cancels and reverts."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from app.events import EventBus, Message
from app.hosts import HostPool, SshSettings
from app.paths import resolve_db_path
from app.runner import ENGINES
from app.store import Store
from app.knobs.values import parse_values
from app.sweep import Progress, SweepEngine, SweepFinished, SweepSpec, TrialFinished
from experiments.plan import STRATEGIES, Plan, Timing
from experiments.workloads import MIB


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "sweep", help="sweep knob values with real workloads and store every trial",
        description="Apply each configuration (journal first, reverted at the end), run the workload on every "
                    "client at once and keep the results in the session database.",
    )  # fmt: skip
    p.add_argument("--ssh-config", metavar="FILE", help="SSH config that names the hosts (default ~/.ssh/config)")
    p.add_argument("--server", required=True, metavar="HOST", help="the NFS server (SSH name)")
    p.add_argument("--server-address", metavar="ADDR", help="the server's name or address as clients mount it")
    p.add_argument("--client", action="append", required=True, metavar="HOST", help="a client (repeat for several)")
    p.add_argument("--export", required=True, metavar="PATH", help="the export's path on the server")
    p.add_argument("--knob", action="append", default=[], metavar="NAME=V1,V2", help="a knob and its values (repeat)")
    p.add_argument("--workload", action="append", metavar="W", help="seq_read, seq_write, … (repeat; default seq_read)")
    p.add_argument("--strategy", choices=STRATEGIES, default="grid")
    p.add_argument("--repetitions", type=int, default=3, metavar="N", help="runs per configuration at least (default 3)")
    p.add_argument("--max-repetitions", type=int, metavar="N", help="runs at most while noisy (default 3×N)")
    p.add_argument("--duration", type=float, default=30.0, metavar="S", help="measuring cap per trial (default 30)")
    p.add_argument("--file-size", type=int, default=256, metavar="MiB", help="data set per client (default 256)")
    p.add_argument("--link-mbps", type=float, metavar="MB/s", help="link ceiling per client: faster trials are broken")
    p.add_argument("--no-ceilings", action="store_true",
                   help="skip measuring TCP and server-disk ceilings (results are then not shown as a share of them)")
    p.add_argument("--async-opt-in", action="store_true", help="allow export_sync=async (may lose acknowledged writes)")
    p.add_argument("--resume", type=int, metavar="ID", help="resume an interrupted or cancelled session")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--engine", choices=ENGINES, default="agent",
                   help="the load: the embedded agent, fio, or auto (fio where installed and exact; default agent)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=main)


def spec_from_args(args: argparse.Namespace) -> SweepSpec:
    knobs: dict[str, tuple[Any, ...]] = {}
    for item in args.knob:
        name, sep, values = item.partition("=")
        if not sep:
            raise ValueError(f"--knob {item!r}: write NAME=V1,V2")
        knobs[name.strip()] = parse_values(name.strip(), values)
    if not knobs:
        raise ValueError("name at least one --knob NAME=V1,V2")
    duration = float(args.duration)
    reps = int(args.repetitions)
    timing = Timing(setup_s=15.0, warmup_s=min(5.0, duration / 4), min_measure_s=min(15.0, duration),
                    max_measure_s=duration)  # fmt: skip
    plan = Plan(knobs=knobs, workloads=tuple(args.workload or ["seq_read"]), clients=tuple(args.client),
                strategy=args.strategy, min_runs=reps, max_runs=args.max_repetitions or 3 * reps, seed=args.seed,
                timing=timing)  # fmt: skip
    return SweepSpec(
        args.server, tuple(args.client), args.export, plan, server_address=args.server_address or "",
        async_opt_in=args.async_opt_in, file_size=int(args.file_size) * MIB,
        link_bps=args.link_mbps * 1e6 if args.link_mbps else None, measure_ceilings=not args.no_ceilings,
        engine=args.engine,
    )  # fmt: skip


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
            eta = "" if event.eta_s is None else f", ETA {int(event.eta_s // 60)}m{int(event.eta_s % 60):02d}s"
            width = 24
            filled = int(width * event.done / event.total) if event.total else 0
            line = f"[{'#' * filled}{'.' * (width - filled)}] {event.done}/{event.total} trials{eta}"
            self.out.write(("\r" + line + "\x1b[K") if self.tty else line + "\n")
        elif isinstance(event, TrialFinished):
            config = " ".join(f"{k}={v}" for k, v in event.config.items())
            what = f"{event.value_bps / 1e6:.1f} MB/s" if event.value_bps is not None else f"broken: {event.reason}"
            self.out.write(("\r\x1b[K" if self.tty else "") + f"trial {event.trial_id} {event.workload} {config}: {what}\n")
        elif isinstance(event, Message):
            self.out.write(("\r\x1b[K" if self.tty else "") + f"{event.level.value}: {event.text} {event.detail}\n")
        elif isinstance(event, SweepFinished) and self.tty:
            self.out.write("\n")
        self.out.flush()


async def _run(args: argparse.Namespace, store: Store, bus: EventBus) -> int:
    config = Path(args.ssh_config).expanduser() if args.ssh_config else None
    async with HostPool(SshSettings(config_file=config)) as pool:
        if args.resume is not None:
            engine = SweepEngine.for_session(store, pool, bus, args.resume)
        else:
            engine = SweepEngine(store, pool, bus, spec_from_args(args))
        return await engine.run()


def main(args: argparse.Namespace) -> int:
    try:
        if args.resume is None:
            spec_from_args(args)  # refuse a bad plan before touching any host
    except ValueError as exc:
        print(f"nfs-tuner sweep: {exc}", file=sys.stderr)
        return 2
    bus = EventBus()
    finished: list[SweepFinished] = []
    bus.subscribe(_Printer(sys.stderr if args.json else sys.stdout, False))
    bus.subscribe(finished.append, SweepFinished)
    with Store(resolve_db_path(args.db)) as store:
        try:
            sid = asyncio.run(_run(args, store, bus))
        except KeyboardInterrupt:
            print("\nnfs-tuner sweep: cancelled; every change was put back", file=sys.stderr)
            return 130
        except Exception as exc:
            print(f"nfs-tuner sweep: {exc}", file=sys.stderr)
            return 1
        trials = store.trials(sid)
        if args.json:
            json.dump({
                "session": sid, "state": store.get_session(sid).state.value,
                "trials": [{"id": t.id, "config": t.config, "state": t.state.value, "reason": t.reason,
                            "mean_bps": (t.summary or {}).get("mean")} for t in trials],
                "revert_problems": list(finished[-1].problems) if finished else [],
            }, sys.stdout, indent=2)  # fmt: skip
            sys.stdout.write("\n")
        else:
            ok = sum(1 for t in trials if t.state.value == "ok")
            print(f"session {sid}: {ok} of {len(trials)} trials ok; see `nfs-tuner sessions show {sid}`")
    return 0 if finished and not finished[-1].problems else 1
