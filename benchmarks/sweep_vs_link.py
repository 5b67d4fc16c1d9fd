"""A sweep in the lab, then its seq-read recommendation checked the way an admin would.

1. Sweep rsize, wsize, nfsd threads, client readahead and the MTU (adaptive by default)
   on the lab (link shaped to 1 Gbit/s: python -m tests.lab profile gigabit) with the
   product's engine; it measures the ceilings (TCP again at each MTU) and stores a
   recommendation per objective. The client's standing mount of the server (/mnt/lab)
   is unmounted for the run and put back at the end: a test mount would share its TCP
   connection, made at the boot MTU (the sweep warns and refuses such MTU trials).
2. Set the recommended MTU on both ends (as the network snippets would), take the
   rendered /etc/fstab line of the seq_read recommendation, mount the export
   with exactly those options on the client at a temp mount point (the line's mount
   point swapped for the temp one, nothing else), set readahead as the readahead snippet
   says (`echo N > /sys/class/bdi/$(mountpoint -d MNT)/read_ahead_kb`), lay out a file
   larger than the client's RAM on the server, drop caches on both, read it with dd
   (iflag=nocache, so the client's memory is not filled), several times; unmount and delete everything it made.
3. Print the recommended config, the sweep's MB/s for it, the verification MB/s, the
   TCP ceiling (the session's iperf3, and iperf3 server->client now) and the share of
   the link: verification / min(TCP ceiling, 125 MB/s). The issue's goal is >= 90 %.

    .venv/bin/python benchmarks/sweep_vs_link.py               # ~10-15 min in the lab
    .venv/bin/python benchmarks/sweep_vs_link.py --session DB:ID   # rank a stored session again, verify it
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.events import EventBus  # noqa: E402
from benchmarks.lab_hosts import add_lab_args, address_of, without_standing_mounts  # noqa: E402
from app.hosts import HostPool, SshSettings  # noqa: E402
from app.snippets import context_for_session, render_all  # noqa: E402
from app.recommend import save  # noqa: E402
from app.recommend.context import recommend_session  # noqa: E402
from app.store import Store  # noqa: E402
from app.sweep.session_facts import stored_ceilings  # noqa: E402
from app.sweep import SweepEngine, SweepSpec, TrialFinished  # noqa: E402
from app.knobs.values import parse_values  # noqa: E402
from experiments.plan import Plan, Timing  # noqa: E402
from experiments.workloads import MIB  # noqa: E402

LINK_MBPS = 125.0  # 1 Gbit/s
MB = 1e6


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


class Lab:
    def __init__(self, ssh_config: Path) -> None:
        self.ssh_config = ssh_config

    def run(self, host: str, command: str, *, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        p = subprocess.run(["ssh", "-F", str(self.ssh_config), host, command], capture_output=True, text=True,
                           timeout=timeout)  # fmt: skip
        if check and p.returncode != 0:
            raise RuntimeError(f"{host}: {command!r} failed ({p.returncode}): {p.stderr.strip() or p.stdout.strip()}")
        return p


async def _sweep(args: argparse.Namespace, db: Path) -> int:
    timing = Timing(setup_s=15.0, warmup_s=args.warmup, min_measure_s=args.measure, max_measure_s=args.measure)
    plan = Plan(knobs={"rsize": parse_values("rsize", args.rsize), "wsize": parse_values("wsize", args.wsize),
                       "nfsd_threads": parse_values("nfsd_threads", args.threads),
                       "read_ahead_kb": parse_values("read_ahead_kb", args.readahead),
                       **({"mtu": parse_values("mtu", args.mtu)} if args.mtu else {})},
                workloads=("seq_read",), strategy=args.strategy, min_runs=args.repetitions,
                max_runs=args.max_repetitions or args.repetitions, seed=args.seed, timing=timing)  # fmt: skip
    spec = SweepSpec(args.server, (args.client,), args.export, plan, file_size=args.file_size * MIB,
                     link_bps=args.link_mbps * MB if args.link_mbps else None)  # fmt: skip
    bus = EventBus()

    def show(e: TrialFinished) -> None:
        v = f"{e.value_bps / MB:6.1f} MB/s" if e.value_bps is not None else f"BROKEN {e.reason[:90]}"
        print(f"  trial {e.trial_id:3} {dict(e.config)} -> {v}", flush=True)

    bus.subscribe(show, TrialFinished)
    settings = SshSettings(config_file=args.ssh_config, app_known_hosts=db.parent / "known_hosts")
    with Store(db) as store:
        async with HostPool(settings) as pool:
            return await SweepEngine(store, pool, bus, spec, deadman_timeout=60).run()


def recompute(db: Path, sid: int) -> None:
    """Rank a stored session again with today's code (the trials are the evidence)."""
    with Store(db) as store:
        save(store, recommend_session(store, sid))


def _recommendation(db: Path, sid: int) -> tuple[dict[str, Any], float | None, str, str, float | None, dict[str, Any]]:
    """(config, sweep MB/s for it, fstab line, readahead note, stored TCP ceiling MB/s, evidence)."""
    with Store(db, readonly=True) as store:
        recs = {r.objective: r for r in store.recommendations(sid)}
        if "seq_read" not in recs:
            raise SystemExit(f"session {sid} has no seq_read recommendation (objectives: {sorted(recs)})")
        rec = recs["seq_read"]
        config = dict(rec.config)
        evidence = rec.evidence if isinstance(rec.evidence, dict) else {}
        sweep_mbps = None
        for r in evidence.get("ranking", []) or []:
            if dict(r.get("config", {})) == config:
                sweep_mbps = r["throughput"]["mean"] / MB
        # the session's own rule: each client's best (a sweep over the MTU measures at each)
        ceilings = stored_ceilings(store, sid, SweepSpec.from_json(store.get_session(sid).plan))
        tcp = ceilings.network_per_client_bps / MB if ceilings and ceilings.network_per_client_bps else None
        snippets = {s.key: s for s in render_all(config, context_for_session(store, sid, "seq_read"))}
    fstab = snippets["fstab"].text.strip()
    ra = snippets.get("readahead-udev")
    return config, sweep_mbps, fstab, ra.safety if ra else "", tcp, evidence


_DD = re.compile(r"(\d+) bytes .* copied, ([\d.]+) s")


def _dd_mbps(out: str) -> float:
    m = _DD.search(out)
    if not m:
        raise RuntimeError(f"no dd figures in {out!r}")
    return int(m.group(1)) / float(m.group(2)) / MB


def iperf3_reverse(lab: Lab, server: str, client: str, address: str, seconds: int = 5) -> float:
    """TCP server -> client (the direction a read goes), MB/s received."""
    port, pidfile = 5291, "/tmp/nfs-tuner-verify-iperf3.pid"
    lab.run(server, f"iperf3 -s -D -1 -p {port} -I {pidfile}")
    try:
        time.sleep(1)
        out = lab.run(client, f"iperf3 -c {shlex.quote(address)} -p {port} -t {seconds} -R -J", timeout=seconds + 60)
    finally:  # -1 ends the server after one test; this is for a test that never came
        lab.run(server, f"test -s {pidfile} && kill $(cat {pidfile}) 2>/dev/null; rm -f {pidfile}", check=False)
    return float(json.loads(out.stdout)["end"]["sum_received"]["bits_per_second"]) / 8 / MB


def verify(args: argparse.Namespace, lab: Lab, config: dict[str, Any], fstab: str) -> tuple[list[float], str, str, list[float]]:
    """Mount with the fstab line's options at a temp point, read a file > client RAM.

    Returns (MB/s per read, mounts line, bdi readahead, iperf3 server->client MB/s at that MTU).
    """
    server, client = args.server, args.client
    fields = fstab.split()
    if len(fields) != 6 or fields[2] != "nfs":
        raise RuntimeError(f"unexpected fstab line: {fstab!r}")
    token = uuid.uuid4().hex[:8]
    tmp = lab.run(client, "mktemp -d /tmp/nfs-tuner-verify.XXXXXX").stdout.strip()
    point = f"{tmp}/mnt"
    name = f"nfs-tuner-verify-{token}.dat"
    server_file = f"{args.export.rstrip('/')}/{name}"
    mounted = False
    threads_before = None
    mtu_before: dict[str, tuple[str, str]] = {}
    try:
        if "mtu" in config:  # as the systemd-networkd/ifupdown snippets would, on both ends
            for host, peer in ((server, client), (client, server)):
                dev, mtu = link_of(lab, host, address_of(lab.ssh_config, host, peer))
                mtu_before[host] = (dev, mtu)
                lab.run(host, f"ip link set dev {shlex.quote(dev)} mtu {int(config['mtu'])}")
        if "nfsd_threads" in config:  # as the nfs.conf snippet's note says: `rpc.nfsd N` changes it at once
            threads_before = int(lab.run(server, "cat /proc/fs/nfsd/threads").stdout.strip())
            if threads_before != int(config["nfsd_threads"]):
                lab.run(server, f"rpc.nfsd {int(config['nfsd_threads'])}")
            else:
                threads_before = None
        lab.run(client, f"mkdir {shlex.quote(point)}")
        line = " ".join([fields[0], point, *fields[2:]])  # only the mount point differs from the rendered line
        lab.run(client, f"printf '%s\\n' {shlex.quote(line)} > {shlex.quote(tmp + '/fstab')}")
        lab.run(client, f"mount --fstab {shlex.quote(tmp + '/fstab')} {shlex.quote(point)}", timeout=120)
        mounted = True
        mounts = lab.run(client, f"findmnt -n -o SOURCE,OPTIONS --mountpoint {shlex.quote(point)}").stdout.strip()
        ra_now = ""
        if "read_ahead_kb" in config:  # as the readahead snippet's note says for a mounted share
            kb = int(config["read_ahead_kb"])
            lab.run(client, f"echo {kb} > /sys/class/bdi/$(mountpoint -d {shlex.quote(point)})/read_ahead_kb")
        ra_now = lab.run(client, f"cat /sys/class/bdi/$(mountpoint -d {shlex.quote(point)})/read_ahead_kb").stdout.strip()
        mem_mib = int(lab.run(client, "awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo").stdout.strip())
        size_mib = max(args.verify_mib, int(mem_mib * 1.5))
        print(f"laying out {size_mib} MiB on {server}:{server_file} (client RAM {mem_mib} MiB) ...", flush=True)
        # oflag=direct: the file must not fill the server's page cache either. In the UML lab a
        # host whose page cache fills its RAM can wedge (ksoftirqd spinning, no SSH): it happened
        # to the client with a plain dd read of 1.5 x RAM and to the server with a buffered write.
        lab.run(server, f"dd if=/dev/zero of={shlex.quote(server_file)} bs=1M count={size_mib} oflag=direct "
                        "conv=fsync status=none", timeout=900)  # fmt: skip
        results = []
        for i in range(args.verify_runs):
            lab.run(server, "sync; echo 3 > /proc/sys/vm/drop_caches")
            lab.run(client, "sync; echo 3 > /proc/sys/vm/drop_caches")
            # iflag=nocache: buffered reads through the mount's readahead as an admin's would be, but
            # the pages read are let go as dd goes. A plain dd of 1.5 x RAM wedged a 512 MB UML
            # client (ksoftirqd spinning, dd and the NFSv4 state manager stuck in D state).
            out = lab.run(client, f"dd if={shlex.quote(point + '/' + name)} of=/dev/null bs=1M iflag=nocache",
                          timeout=900)  # fmt: skip
            mbps = _dd_mbps(out.stderr)
            results.append(mbps)
            print(f"  verification read {i + 1}/{args.verify_runs}: {mbps:.1f} MB/s ({size_mib} MiB, dd bs=1M iflag=nocache); "
                  f"load {load()}", flush=True)  # fmt: skip
        address = fstab.split()[0].rsplit(":", 1)[0]
        tcp_now = [iperf3_reverse(lab, server, client, address) for _ in range(args.iperf_runs)]
        return results, mounts, ra_now, tcp_now
    finally:
        if mounted:
            lab.run(client, f"umount {shlex.quote(point)}", check=False, timeout=120)
        lab.run(client, f"mountpoint -q {shlex.quote(point)} || rm -rf {shlex.quote(tmp)}", check=False)
        lab.run(server, f"rm -f {shlex.quote(server_file)}", check=False)
        if threads_before is not None:
            lab.run(server, f"rpc.nfsd {threads_before}", check=False)
        for host, (dev, mtu) in mtu_before.items():
            lab.run(host, f"ip link set dev {shlex.quote(dev)} mtu {int(mtu)}", check=False)


def link_of(lab: Lab, host: str, address: str) -> tuple[str, str]:
    """(interface towards address, its MTU now)."""
    words = lab.run(host, f"ip -o route get {shlex.quote(address)}").stdout.split()
    dev = words[words.index("dev") + 1]
    return dev, lab.run(host, f"cat /sys/class/net/{shlex.quote(dev)}/mtu").stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_lab_args(ap)
    ap.add_argument("--rsize", default="32k,128k,1M")
    ap.add_argument("--wsize", default="32k,128k,1M")
    ap.add_argument("--threads", default="4,8,32")
    ap.add_argument("--readahead", default="128,1024,8192")
    ap.add_argument("--mtu", default="1500,9000", help="MTU values ('' leaves the MTU out)")
    ap.add_argument("--keep-standing-mounts", action="store_true",
                    help="leave the client's own mounts of the server up (MTU trials then share their connection)")
    ap.add_argument("--strategy", default="adaptive", choices=("grid", "ofat", "adaptive"))
    ap.add_argument("--repetitions", type=int, default=2)
    ap.add_argument("--max-repetitions", type=int, default=0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--measure", type=float, default=4.0)
    ap.add_argument("--file-size", type=int, default=64, help="MiB per trial (the sweep drops caches every pass)")
    ap.add_argument("--link-mbps", type=float, default=LINK_MBPS,
                    help="the shaped link: faster trials are broken (0: 1.5 x the measured TCP ceiling)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--verify-mib", type=int, default=768, help="at least this much, and 1.5 x the client's RAM")
    ap.add_argument("--verify-runs", type=int, default=3)
    ap.add_argument("--iperf-runs", type=int, default=3)
    ap.add_argument("--session", help="DB:ID: verify a stored session instead of sweeping")
    args = ap.parse_args()
    lab = Lab(args.ssh_config)
    t0 = time.monotonic()
    print(f"start {time.strftime('%H:%M:%S')}, load {load()}", flush=True)
    with without_standing_mounts(args.ssh_config, args.client, args.server, keep=args.keep_standing_mounts):
        run(args, lab, t0)


def run(args: argparse.Namespace, lab: Lab, t0: float) -> None:
    if args.session:
        path, _, sid_text = args.session.rpartition(":")
        db, sid = Path(path), int(sid_text)
        recompute(db, sid)
    else:
        db = Path(tempfile.mkdtemp(prefix="sweep-vs-link-")) / "sweep.db"
        sid = asyncio.run(_sweep(args, db))
    sweep_s = time.monotonic() - t0
    with Store(db, readonly=True) as store:
        trials = store.trials(sid)
    config, sweep_mbps, fstab, ra_note, tcp_session, evidence = _recommendation(db, sid)
    print(f"\nsweep: session {sid} in {db}, {len(trials)} trials, {sweep_s / 60:.1f} min; load {load()}")
    print(f"recommended (seq_read): {config}  changed={evidence.get('changed')}")
    print(f"fstab line: {fstab}")
    t1 = time.monotonic()
    reads, mounts, ra_now, tcp_now = verify(args, lab, config, fstab)
    verify_s = time.monotonic() - t1
    left = lab.run(args.client, "findmnt -rn -o TARGET").stdout
    leftovers = [m for m in left.split() if "nfs-tuner-" in m]
    tcp_all = [*([tcp_session] if tcp_session else []), *tcp_now]
    ceiling = min(max(tcp_all), LINK_MBPS) if tcp_all else LINK_MBPS
    med = statistics.median(reads)
    print("\n=== sweep vs link ===")
    print(f"recommended config      : {config}")
    print(f"mounted as (findmnt)    : {mounts}")
    print(f"readahead on the mount  : {ra_now} KiB")
    print(f"sweep measured          : {sweep_mbps:.1f} MB/s" if sweep_mbps else "sweep measured          : n/a")
    print(f"verification (dd, {len(reads)}x)  : median {med:.1f} MB/s, range {min(reads):.1f}-{max(reads):.1f}")
    print(f"TCP ceiling iperf3      : session's best (client->server) {tcp_session or float('nan'):.1f} MB/s; "
          f"now server->client {min(tcp_now):.1f}-{max(tcp_now):.1f} MB/s")
    print(f"link share              : {med / ceiling:.0%} of min(best TCP {max(tcp_all):.1f}, {LINK_MBPS:.0f}) MB/s;"
          f" {med / LINK_MBPS:.0%} of the 1 Gbit/s link itself (goal >= 90 %)")
    print(f"durations               : sweep {sweep_s / 60:.1f} min, verification {verify_s / 60:.1f} min; load {load()}")
    print(f"left mounted            : {leftovers or 'nothing'}")


if __name__ == "__main__":
    main()
