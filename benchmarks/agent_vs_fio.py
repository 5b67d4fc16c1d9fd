"""Agent versus fio: sequential write and read, 1 MiB blocks, same size, same cache handling.

Prints each engine's throughput, the agent/fio ratios (goal: >= 0.95 for both) and the
agent's CPU use per 100 MB/s. Runs locally on a directory now:

    .venv/bin/python benchmarks/agent_vs_fio.py /mnt/test --size 2G

With --ssh HOST both engines run on that host over plain ssh (the lab mount), the agent
through the same bootstrap the app uses (--ssh-config FILE for the lab's config):

    .venv/bin/python benchmarks/agent_vs_fio.py /mnt/lab --ssh lab-client1 \
        --ssh-config .lab/ssh_config --size 1G --repeat 3

Caches: as root the page cache is dropped after the read file is laid out and before
it is read (both engines: fio lays its file out in a separate create_only run);
otherwise fio invalidates its file (fadvise) and the agent evicts its file the same
way; the agent's summary says which applied. --direct uses O_DIRECT for both. The runs
alternate agent, fio, agent, fio ... so drift in the host hits both; the median counts.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments import workloads as w  # noqa: E402
from experiments.agent_launch import bootstrap_argv, payload  # noqa: E402
from experiments.agent_protocol import AgentStream, AgentSummary  # noqa: E402
from app.knobs.values import parse_size  # noqa: E402
from experiments.fio import parse_fio_json, to_fio_job  # noqa: E402

MB = 1e6


def file_size(text: str) -> int:
    size = parse_size(text)
    if size is None or size <= 0:
        raise SystemExit(f"--size {text!r}: give a size like 256M or 1G")
    return size


SSH_OPTS: list[str] = []  # e.g. ["-F", ".lab/ssh_config"]


def _remote(argv: list[str], ssh: str | None) -> list[str]:
    return ["ssh", *SSH_OPTS, ssh, shlex.join(argv)] if ssh else argv


def run_agent(spec: w.WorkloadSpec, directory: str, python: str, ssh: str | None) -> AgentSummary:
    # stdin must stay open while the agent runs: its EOF means "stop"
    proc = subprocess.Popen(_remote(bootstrap_argv(python), ssh), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(payload(spec.to_agent_config(directory)))
    proc.stdin.flush()
    stream = AgentStream(ssh or "local")
    for line in proc.stdout:
        stream.feed(line)
        if stream.summary or stream.error:
            break
    proc.stdin.close()
    proc.wait(timeout=600)
    if stream.error or stream.summary is None:
        raise SystemExit(f"agent failed: {stream.error or proc.stderr.read().decode(errors='replace')}")
    return stream.summary


def run_fio(spec: w.WorkloadSpec, directory: str, ssh: str | None, drop: bool) -> AgentSummary:
    job = to_fio_job(spec, directory, log_prefix=None)
    # The job goes in over stdin; a read job's file is laid out first (kept: unlink=0) so
    # that the drop comes between layout and read, as the agent does it.
    j, lay = f"{directory}/.bench.fio", f"{directory}/.bench-layout.fio"
    script = f"cat > {j}; "
    if isinstance(spec, w.SeqRead):
        script += f"sed s/^unlink=1/unlink=0/ {j} > {lay}; fio --create_only=1 {lay} >/dev/null || exit 1; "
    if drop:
        script += "sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null; "
    script += f"fio --output-format=json {j}; rc=$?; rm -f {j} {lay}; exit $rc"
    proc = subprocess.run(_remote(["sh", "-c", script], ssh), input=job.encode(), capture_output=True, timeout=3600)
    if proc.returncode != 0:
        raise SystemExit(f"fio failed: {proc.stderr.decode(errors='replace')}")
    return parse_fio_json(proc.stdout.decode(), ssh or "local")


def rate(s: AgentSummary) -> float:
    return (s.bytes_read + s.bytes_written) / s.duration / MB


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("directory", help="directory on the file system to test (the NFS mount)")
    ap.add_argument("--size", default="1G", help="file size per run (default 1G; use more than RAM without root)")
    ap.add_argument("--python", default="python3", help="python on the target for the agent")
    ap.add_argument("--ssh", help="run both engines on this host over ssh")
    ap.add_argument("--ssh-config", help="ssh -F file (e.g. .lab/ssh_config)")
    ap.add_argument("--direct", action="store_true", help="O_DIRECT for both engines")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved runs per engine; the median counts")
    args = ap.parse_args()
    if args.ssh_config:
        SSH_OPTS[:] = ["-F", args.ssh_config]
    size = file_size(args.size)
    is_root = (subprocess.run(_remote(["id", "-u"], args.ssh), capture_output=True, text=True).stdout.strip() == "0")

    with tempfile.TemporaryDirectory(dir=None if args.ssh else args.directory, prefix="agent-vs-fio-") as scratch:
        fio_dir = f"{args.directory.rstrip('/')}/agent-vs-fio" if args.ssh else scratch
        if args.ssh:
            subprocess.run(_remote(["mkdir", "-p", fio_dir], args.ssh), check=True)
        write = w.SeqWrite(block_size=1 << 20, file_size=size, direct=args.direct)
        read = w.SeqRead(block_size=1 << 20, file_size=size, direct=args.direct)
        print(f"size {size / MB:.0f} MB, 1 MiB blocks, direct={args.direct}, root={is_root}, "
              f"target {'ssh ' + args.ssh if args.ssh else 'local'} {args.directory}")
        rows = []
        for name, spec in (("seq write", write), ("seq read", read)):
            agents, fios = [], []
            for _ in range(args.repeat):  # interleaved, so drift in the host hits both engines
                agents.append(run_agent(spec, args.directory, args.python, args.ssh))
                fios.append(run_fio(spec, fio_dir, args.ssh, drop=is_root and spec is read))
            print(f"  {name}: agent {' '.join(f'{rate(a):.1f}' for a in agents)} MB/s; "
                  f"fio {' '.join(f'{rate(f):.1f}' for f in fios)} MB/s", flush=True)
            a_rate, f_rate = statistics.median(map(rate, agents)), statistics.median(map(rate, fios))
            # CPU: cores busy per 100 MB/s, over all the agent's runs (run phase only)
            cpu, secs, moved = (sum(x.cpu_s for x in agents), sum(x.duration for x in agents),
                                sum(x.bytes_read + x.bytes_written for x in agents))
            per100 = (cpu / secs) / (moved / secs / MB / 100) if moved and secs else 0.0
            # each agent run beside the fio run after it: drift that spans the pair cancels out
            paired = statistics.median(rate(a) / rate(f) for a, f in zip(agents, fios, strict=True))
            rows.append((name, a_rate, f_rate, a_rate / f_rate, paired, per100, agents[0].cache_mode))
        if args.ssh:
            subprocess.run(_remote(["rm", "-rf", fio_dir], args.ssh), check=False)
        else:
            for p in Path(scratch).iterdir():
                p.unlink()
    print(f"{'workload':<10} {'agent MB/s':>11} {'fio MB/s':>10} {'ratio':>7} {'paired':>7} "
          f"{'agent CPU cores/100MB/s':>24}  cache")  # fmt: skip
    for name, a, f, ratio, paired, per100, cache in rows:
        flag = "" if ratio >= 0.95 else "  (below 0.95 goal)"
        print(f"{name:<10} {a:>11.1f} {f:>10.1f} {ratio:>7.3f} {paired:>7.3f} {per100:>24.3f}  {cache}{flag}")
    print("ratio: of the medians; paired: median of each agent run over the fio run beside it")
    print(json.dumps({name.replace(" ", "_"): {"agent_mbps": round(a, 1), "fio_mbps": round(f, 1), "ratio": round(r, 3),
                                               "paired_ratio": round(p, 3), "agent_cores_per_100mbps": round(c, 4)}
                      for name, a, f, r, p, c, _ in rows}))


if __name__ == "__main__":
    main()
