"""`python -m tests.lab up|down|status|heal|mtu N|hosts-mtu N|profile NAME` (what `make lab-*` runs)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from tests.lab.kernels import DEFAULT as DEFAULT_KERNEL
from tests.lab.kernels import NAMES as KERNELS
from tests.lab.lab import Lab, LabError
from tests.lab.profiles import PROFILES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.lab", description="The local NFS lab (needs root).")
    sub = parser.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="start lab-server, lab-client1 and lab-client2")
    up.add_argument("--profile", choices=list(PROFILES), default="gigabit", help=_profiles_help())
    up.add_argument("--rtt-ms", type=float, metavar="MS", help="the wan profile's added round trip (default 20)")
    up.add_argument("--kernel", choices=KERNELS, default=os.environ.get("NFS_TUNER_LAB_KERNEL") or DEFAULT_KERNEL,
                    help="the guests' UML kernel: 6.1 is the host's user-mode-linux package, 7.2 is fetched from "
                         "Debian testing into the lab directory (default: $NFS_TUNER_LAB_KERNEL, else 6.1)")
    sub.add_parser("down", help="stop the lab and remove everything it made")
    sub.add_parser("heal", help="restart any guest that stopped answering (its console is kept as NAME.log.1)")
    st = sub.add_parser("status", help="show whether the lab is up (exit 0) or not (exit 3)")
    st.add_argument("--json", action="store_true")
    mtu = sub.add_parser("mtu", help="set the lab switch's MTU (1500 makes a black hole for jumbo frames)")
    mtu.add_argument("value", type=int)
    hosts_mtu = sub.add_parser("hosts-mtu", help="set every guest's MTU (lan0) and remount the clients' /mnt/lab at it")
    hosts_mtu.add_argument("value", type=int)
    prof = sub.add_parser("profile", help="reshape the running lab's link, path and disks")
    prof.add_argument("name", choices=list(PROFILES), help=_profiles_help())
    prof.add_argument("--rtt-ms", type=float, metavar="MS", help="the added round trip (wan profile; default 20)")
    args = parser.parse_args(argv)
    lab = Lab()
    try:
        if args.cmd == "up":
            lab.up(profile=args.profile, rtt_ms=args.rtt_ms, kernel=args.kernel)
        elif args.cmd == "down":
            lab.down()
        elif args.cmd == "heal":
            print(f"restarted: {', '.join(names)}" if (names := lab.heal()) else "every guest answers")
        elif args.cmd == "mtu":
            lab.set_mtu(args.value)
            print(f"lab switch MTU is {args.value}")
        elif args.cmd == "hosts-mtu":
            lab.set_hosts_mtu(args.value)
            print(f"lab hosts' MTU is {args.value}; /mnt/lab on the clients was mounted again")
        elif args.cmd == "profile":
            chosen = lab.set_profile(args.name, args.rtt_ms)
            print(f"lab profile is {chosen.name}: {chosen.shows}")
        else:
            report = lab.status()
            if args.json:
                print(json.dumps(report, indent=2))
            else:
                _print_status(report)
            return 0 if report.get("up") else 3
    except LabError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


def _profiles_help() -> str:
    return "; ".join(f"{p.name}: {p.shows}" for p in PROFILES.values())


def _print_status(report: dict) -> None:  # type: ignore[type-arg]
    print(f"lab dir   {report['lab_dir']}  (namespace {report['netns']}: {'present' if report['netns_exists'] else 'absent'})")
    if "hosts" not in report:
        print("lab is down")
        return
    print(f"lab is {'UP' if report['up'] else 'NOT healthy'}: UML {report['kernel']}, profile {report['profile']}, "
          f"switch MTU {report['mtu']}")
    for name, h in report["hosts"].items():
        print(f"  {name:12} {h['ip']:14} 127.0.0.1:{h['port']}  kernel {'up' if h['kernel_alive'] else 'DOWN'}  ssh {'ok' if h['ssh'] else 'NO'}")
    helpers = {"forwarder": report.get("forwarder_alive"), "clock watchdog": report.get("clock_watchdog_alive")}
    print("  " + ", ".join(f"{name} {'up' if alive else 'DOWN'}" for name, alive in helpers.items()))
    print(f"  ssh -F {report['ssh_config']} lab-server")


if __name__ == "__main__":
    sys.exit(main())
