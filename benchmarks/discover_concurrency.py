"""Does discovering several hosts at once take about as long as the slowest one alone?

    python benchmarks/discover_concurrency.py --ssh-config .lab/ssh_config \
        lab-server lab-client1 lab-client2

Prints each host's time alone (fresh connection each), the total when all run
concurrently, and the ratio of that total to the slowest host (goal: <= 1.20).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from app.discovery import discover_many
from app.hosts import HostPool, SshSettings


async def timed(settings: SshSettings, hosts: list[str]) -> tuple[float, list[str]]:
    start = time.perf_counter()
    async with HostPool(settings) as pool:
        results = await discover_many(pool, hosts)
    errors = [f"{r.host}: {r.error}" for r in results if r.error]
    return time.perf_counter() - start, errors


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ssh-config", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("hosts", nargs="+")
    args = parser.parse_args()
    settings = SshSettings(config_file=args.ssh_config)
    alone: dict[str, float] = {}
    for host in args.hosts:
        best = float("inf")
        for _ in range(args.rounds):
            seconds, errors = await timed(settings, [host])
            if errors:
                print("\n".join(errors))
                return 1
            best = min(best, seconds)
        alone[host] = best
        print(f"{host:>20}: {best:6.3f} s alone (best of {args.rounds})")
    together = min([(await timed(settings, args.hosts))[0] for _ in range(args.rounds)])
    slowest = max(alone.values())
    print(f"{'all concurrently':>20}: {together:6.3f} s (best of {args.rounds})")
    print(f"{'sum if sequential':>20}: {sum(alone.values()):6.3f} s")
    print(f"{'ratio to slowest':>20}: {together / slowest:6.2f} (goal <= 1.20)")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
