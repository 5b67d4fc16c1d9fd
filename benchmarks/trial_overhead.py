"""Time between measurements: what a trial costs besides its measuring, and how many remote commands.

Runs a small grid sweep on the lab with the product's engine (no ceilings: their measuring is
not a trial's overhead) and prints, per trial: wall time, measuring time (from the agents' "go"
to the stop: warm-up and measuring), the rest (applying and reading back knobs, mounts, the
MTU check, laying out the files, cache drops, stopping), that rest split by phase, and the
remote commands started during the trial (heartbeats included), by program. Figures only:
never a timed assert. The lab's two cores are shared, so run it more than once and say so.

    .venv/bin/python benchmarks/trial_overhead.py                  # ~4 min on the lab (gigabit)
    .venv/bin/python benchmarks/trial_overhead.py --out run.json   # the figures as JSON too

The plan touches every kind of change around a trial: the server's nfsd threads, the MTU
on both ends (its don't-fragment pings), the test mount (fresh when a trial changes what it is made under) and readahead on
its new bdi; every trial drops the caches of every host.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.events import EventBus  # noqa: E402
from app.hosts import HostConnection, HostPool, SshSettings  # noqa: E402
from app.hosts.privilege import HELPER_PATH  # noqa: E402
from app.runner import run as runner_run  # noqa: E402
from app.store import Store  # noqa: E402
from app.sweep import SweepEngine, SweepSpec, TrialFinished, TrialStarted  # noqa: E402
from app.sweep.apply import ConfigApplier  # noqa: E402
from benchmarks.lab_hosts import REPO as LAB_REPO, without_standing_mounts  # noqa: E402
from experiments.plan import Plan, Timing  # noqa: E402
from experiments.workloads import MIB  # noqa: E402

KNOBS: dict[str, tuple[int | str, ...]] = {"mtu": (1500, 9000), "nfsd_threads": (8, 32), "read_ahead_kb": (128, 4096)}
PHASES = ("apply", "prepare", "caches", "measure", "stop")


@dataclass
class Trial:
    config: dict[str, Any]
    start: float
    end: float = 0.0
    phases: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))
    commands: Counter[str] = field(default_factory=Counter)
    command_s: Counter[str] = field(default_factory=Counter)  # seconds spent waiting on each program

    @property
    def wall(self) -> float:
        return self.end - self.start

    @property
    def overhead(self) -> float:
        return self.wall - self.phases["measure"]


@dataclass
class Recorder:
    """What happens during each trial, from the engine's events and wrapped calls."""

    trials: list[Trial] = field(default_factory=list)

    @property
    def current(self) -> Trial | None:
        return self.trials[-1] if self.trials and not self.trials[-1].end else None

    def started(self, event: TrialStarted) -> None:
        self.trials.append(Trial(dict(event.config), time.monotonic()))

    def finished(self, _event: TrialFinished) -> None:
        if self.current is not None:
            self.current.end = time.monotonic()

    def command(self, argv: Sequence[str], seconds: float = 0.0) -> None:
        if self.current is not None:
            name = program(argv)
            self.current.commands[name] += 1
            self.current.command_s[name] += seconds

    def timed(self, phase: str, call: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            t = time.monotonic()
            try:
                return await call(*args, **kwargs)
            finally:
                if self.current is not None:
                    self.current.phases[phase] += time.monotonic() - t
        return wrapper


def program(argv: Sequence[str]) -> str:
    """What a remote command runs, without sudo or the helper in front: 'cat', 'deadman write', 'batch' …"""
    words = list(argv)
    if words[:1] == [HELPER_PATH]:
        words = words[1:]
    if words[:1] == ["python3"] and "-c" in words:  # the switch (or another program) sent as source
        rest = words[words.index("-c") + 2:]
        return f"python3 -c {rest[0]}" if rest else "python3 -c"
    if words[:1] == ["deadman"] and len(words) > 1:
        return f"deadman {words[1]}"
    return words[0] if words else "?"


@contextmanager
def recording(rec: Recorder) -> Iterator[None]:
    """Wrap the remote commands and the trial's phases (restored after)."""
    patches: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, make: Callable[[Any], Any]) -> None:
        original = getattr(owner, name)
        patches.append((owner, name, original))
        setattr(owner, name, make(original))

    def counted(original: Any) -> Any:  # a started process: its start timed, not its life (start returns then)
        async def wrapper(self: HostConnection, argv: Sequence[str], **kw: Any) -> Any:
            t = time.monotonic()
            try:
                return await original(self, argv, **kw)
            finally:
                rec.command(argv, time.monotonic() - t)
        return wrapper

    patch(HostConnection, "run", counted)
    patch(HostConnection, "start", counted)
    patch(ConfigApplier, "apply", lambda f: rec.timed("apply", f))
    patch(runner_run._Run, "_all_ready", lambda f: rec.timed("prepare", f))
    patch(runner_run._Run, "_drop_caches", lambda f: rec.timed("caches", f))
    patch(runner_run._Run, "_measure", lambda f: rec.timed("measure", f))
    patch(runner_run._Run, "_stop_all", lambda f: rec.timed("stop", f))
    try:
        yield
    finally:
        for owner, name, original in reversed(patches):
            setattr(owner, name, original)


def sweep(args: argparse.Namespace) -> Recorder:
    rec = Recorder()
    bus = EventBus()
    bus.subscribe(rec.started, TrialStarted)
    bus.subscribe(rec.finished, TrialFinished)
    timing = Timing(setup_s=5.0, warmup_s=args.warmup, min_measure_s=args.measure, max_measure_s=args.measure)
    plan = Plan(knobs=KNOBS, workloads=("seq_read",), strategy="grid", min_runs=1, max_runs=1, timing=timing)
    spec = SweepSpec(args.server, tuple(args.client), args.export, plan, file_size=args.file_size * MIB,
                     measure_ceilings=False)  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        settings = SshSettings(config_file=args.ssh_config, app_known_hosts=Path(tmp) / "kh")

        async def run() -> None:
            with Store(Path(tmp) / "bench.db") as store:
                async with HostPool(settings) as pool:
                    await SweepEngine(store, pool, bus, spec, deadman_timeout=60).run()

        with recording(rec), ExitStack() as stack:
            for client in args.client:
                stack.enter_context(without_standing_mounts(args.ssh_config, client, args.server))
            asyncio.run(run())
    return rec


def report(rec: Recorder) -> dict[str, Any]:
    done = [t for t in rec.trials if t.end]
    print(f"{'trial':>5} {'wall s':>7} {'measure':>7} {'rest':>6}  " + " ".join(f"{p:>7}" for p in PHASES[:3])
          + f" {'stop':>6} {'cmds':>5}  config")
    for i, t in enumerate(done, 1):
        print(f"{i:>5} {t.wall:7.1f} {t.phases['measure']:7.1f} {t.overhead:6.1f}  "
              + " ".join(f"{t.phases[p]:7.1f}" for p in PHASES[:3])
              + f" {t.phases['stop']:6.1f} {sum(t.commands.values()):5d}  {t.config}")
    overheads = [t.overhead for t in done]
    commands = [sum(t.commands.values()) for t in done]
    kinds: Counter[str] = Counter()
    waits: Counter[str] = Counter()
    for t in done:
        kinds.update(t.commands)
        waits.update(t.command_s)
    print(f"\nper trial, over {len(done)} trials: the rest (wall minus measuring) mean {statistics.mean(overheads):.1f} s, "
          f"median {statistics.median(overheads):.1f} s (min {min(overheads):.1f}, max {max(overheads):.1f}); "
          f"remote commands mean {statistics.mean(commands):.1f}")
    for phase in ("apply", "prepare", "caches", "stop"):
        print(f"  {phase:8} mean {statistics.mean(t.phases[phase] for t in done):5.1f} s")
    print("  commands per trial by program: " + ", ".join(f"{k} {n / len(done):.1f}" for k, n in kinds.most_common()))
    print("  seconds per trial waiting on each (run side by side, so they may add up to more than the wall): "
          + ", ".join(f"{k} {n / len(done):.2f}" for k, n in waits.most_common()))
    return {
        "trials": [{"config": t.config, "wall_s": t.wall, "phases": t.phases, "commands": dict(t.commands),
                    "command_s": dict(t.command_s)} for t in done],
        "overhead_mean_s": statistics.mean(overheads), "overhead_median_s": statistics.median(overheads),
        "commands_mean": statistics.mean(commands),
    }  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ssh-config", type=Path, default=LAB_REPO / ".lab" / "ssh_config")
    ap.add_argument("--server", default="lab-server")
    ap.add_argument("--client", action="append", help="a client (repeat; default lab-client1 and lab-client2)")
    ap.add_argument("--export", default="/srv/nfs")
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--measure", type=float, default=5.0, help="the measuring cap (min = max), seconds")
    ap.add_argument("--file-size", type=int, default=32, help="MiB per client")
    ap.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = ap.parse_args()
    args.client = args.client or ["lab-client1", "lab-client2"]
    figures = report(sweep(args))
    if args.out:
        args.out.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
