"""Which lab profile each newer knob moves, measured without nfs-tuner (tests/lab/knob_effects.py).

The knobs added after the profiles were built, each on the profile where the field says
it matters, low vs high, with plain tools on the guests:

- wan (a 20 ms round trip): actimeo 0 vs 60 and cto vs nocto (a GETATTR round trip per
  stat or open, or none from the cache), the client's RPC slot table 16 vs 65536 (RPCs
  in flight per round trip at rsize 64 KiB; one stream, then four at once), nfsd's max_block_size 64 KiB vs 1 MiB (the
  rsize a 1 MiB mount gets, so the same as rsize);
- hdd (flushes that wait 10-20 ms): the export's wdelay vs no_wdelay on 4 KiB O_SYNC
  writes (one writer, then eight writers of one file at once), the client's dirty-page limits 16 MiB vs 1 GiB on a write closed with fsync;
- gigabit (the default): the dirty-page limits again, where the link, not the disk, waits.

    sudo .venv/bin/python benchmarks/newer_knobs.py              # ~15 min
    sudo .venv/bin/python benchmarks/newer_knobs.py --runs 2 wan

The lab must be up (make lab-up); lab-client1's standing mount is taken down for the
run (a fresh mount must make its own connection) and everything is left as it was.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.lab_hosts import without_standing_mounts  # noqa: E402
from benchmarks.lab_profiles import Recorder, k, on_profiles, print_tables, row  # noqa: E402
from tests.lab import effects, knob_effects  # noqa: E402
from tests.lab.lab import Lab  # noqa: E402

CLIENT = effects.CLIENTS[0]
STREAMS = 4  # many streams: each one's readahead wants its own RPCs in flight, so the slot table can bind
WRITERS = 8  # many writers of one file: what wdelay was made to gather into one flush
MIB = 1024 * 1024


def wan(lab: Lab, rec: Recorder) -> list[str]:
    chosen = lab.set_profile("wan")
    src = f"wan (RTT +{chosen.rtt_ms:g} ms, measured {effects.rtt_ms(lab):.1f} ms)"
    a = rec.grid("actimeo", "stat/s", {"actimeo": [0, 60]}, src,
                 lambda c: knob_effects.stats_per_s(lab, CLIENT, actimeo=int(c["actimeo"])))
    n = rec.grid("nocto", "opens/s", {"cto": ["cto", "nocto"]}, src,
                 lambda c: knob_effects.reopens_per_s(lab, CLIENT, cto=c["cto"] == "cto"))
    s = rec.grid("rpc_slots", "MB/s", {"rpc_slots": [16, 65536]}, src,
                 lambda c: knob_effects.slots_read(lab, CLIENT, slots=int(c["rpc_slots"])))
    s4 = rec.grid(f"rpc_slots_{STREAMS}", "MB/s", {"rpc_slots": [16, 65536]}, src,
                  lambda c: knob_effects.slots_read(lab, CLIENT, slots=int(c["rpc_slots"]), streams=STREAMS))
    m: dict[str, list[float]] = {}
    got: dict[int, int] = {}
    for size in (65536, 1048576):  # one restart per value, its runs inside
        with knob_effects.max_block_size(lab, size):
            got[size] = knob_effects.negotiated_rsize(lab, CLIENT)
            m |= rec.grid(f"max_block_size_{size}", "MB/s", {"max_block_size": [size]}, src,
                          lambda _c: knob_effects.cold_read(lab, CLIENT, "vers=4.2,rsize=1048576"))  # fmt: skip
    return [
        f"wan: {src}; max_block_size 64 KiB gave a 1 MiB mount rsize {got[65536]}, 1 MiB gave {got[1048576]}",
        row("actimeo", 0, 60, "stat of 200 files seen before", a[k(actimeo=0)], a[k(actimeo=60)], "stat/s"),
        row("nocto", "cto", "nocto", "open+read+close of 200 cached files", n[k(cto="cto")], n[k(cto="nocto")], "opens/s"),
        row("rpc_slots", 16, 65536, "cold read, rsize 64 KiB, readahead 16 MiB", s[k(rpc_slots=16)],
            s[k(rpc_slots=65536)], "MB/s"),
        row("rpc_slots", 16, 65536, f"{STREAMS} cold reads at once, rsize 64 KiB, readahead 16 MiB",
            s4[k(rpc_slots=16)], s4[k(rpc_slots=65536)], "MB/s"),
        row("max_block_size", 65536, 1048576, "cold read, rsize 1 MiB asked, readahead 16 MiB",
            m[k(max_block_size=65536)], m[k(max_block_size=1048576)], "MB/s"),
    ]  # fmt: skip


def _dirty(lab: Lab, rec: Recorder, profile: str, src: str) -> str:
    d = rec.grid(f"dirty_{profile}", "MB/s", {"dirty_bytes": [16 * MIB, 1024 * MIB]}, src,
                 lambda c: knob_effects.dirty_write(lab, CLIENT, dirty_bytes=int(c["dirty_bytes"]),
                                                    background_bytes=int(c["dirty_bytes"]) // 4))  # fmt: skip
    return row(f"dirty_bytes ({profile})", "16M (bg 4M)", "1G (bg 256M)", "192 MiB written, fsync at close",
               d[k(dirty_bytes=16 * MIB)], d[k(dirty_bytes=1024 * MIB)], "MB/s")  # fmt: skip


def hdd(lab: Lab, rec: Recorder) -> list[str]:
    lab.set_profile("hdd")
    src = "hdd (flushes wait 10-20 ms), sync export"
    w: dict[str, list[float]] = {}
    many: dict[str, list[float]] = {}
    for option in ("wdelay", "no_wdelay"):
        with knob_effects.export_options(lab, option):
            w |= rec.grid(f"wdelay_{option}", "writes/s", {"export_wdelay": [option]}, src,
                          lambda _c: knob_effects.sync_writes_per_s(lab, CLIENT))  # fmt: skip
            many |= rec.grid(f"wdelay_{option}_{WRITERS}", "writes/s", {"export_wdelay": [option]}, src,
                             lambda _c: knob_effects.sync_writes_per_s(lab, CLIENT, writers=WRITERS))  # fmt: skip
    return [
        row("export_wdelay", "wdelay", "no_wdelay", "4 KiB O_SYNC writes, one file", w[k(export_wdelay="wdelay")],
            w[k(export_wdelay="no_wdelay")], "writes/s"),
        row("export_wdelay", "wdelay", "no_wdelay", f"4 KiB O_SYNC writes, one file, {WRITERS} writers at once",
            many[k(export_wdelay="wdelay")], many[k(export_wdelay="no_wdelay")], "writes/s"),
        _dirty(lab, rec, "hdd", src),
    ]  # fmt: skip


def gigabit(lab: Lab, rec: Recorder) -> list[str]:
    lab.set_profile("gigabit")
    return [_dirty(lab, rec, "gigabit", "gigabit (the link is the ceiling)")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profiles", nargs="*", choices=["wan", "hdd", "gigabit"], help="default: all three")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    lab = Lab()
    if not lab.is_up():
        print("the lab is not up: sudo make lab-up", file=sys.stderr)
        return 2
    rec = Recorder(args.runs)
    started = time.monotonic()
    measure = {"wan": wan, "hdd": hdd, "gigabit": gigabit}
    with without_standing_mounts(lab.ssh_config, CLIENT, effects.SERVER):
        tables = on_profiles(lab, args.profiles or list(measure), lambda name: measure[name](lab, rec))
    print_tables(args.runs, started, tables)
    return 0


if __name__ == "__main__":
    sys.exit(main())
