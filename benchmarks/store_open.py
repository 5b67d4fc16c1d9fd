"""Write a session with 1,000,000 samples through SampleWriter, then time open + load.

Run: .venv/bin/python benchmarks/store_open.py [N]
Prints figures; never asserts on time.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.store import Store, TrialState  # noqa: E402
from experiments.samples import Sample  # noqa: E402


def main(n_samples: int = 1_000_000) -> None:
    clients = ("lab-client1", "lab-client2")
    trials = 100
    per_trial_client = n_samples // (trials * len(clients))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        store = Store(path)
        sid = store.create_session(["lab-server", *clients])
        t0 = time.perf_counter()
        writer = store.sample_writer(background=False)
        for k in range(trials):
            tid = store.add_trial(sid, {"rsize": 1 << (15 + k % 6)}, {"name": "seqread"})
            # One flush per simulated second: 4 samples per client, as the live path does.
            for sec in range(0, per_trial_client, 4):
                batch = [
                    Sample(c, (sec + i + 1) * 0.25, 0.25, 28_000_000 + 1000 * i, 0, 220, 1.1, 4.5, 9.0)
                    for c in clients
                    for i in range(min(4, per_trial_client - sec))
                ]
                writer.add(tid, batch)
                writer.flush()
            store.finish_trial(tid, TrialState.OK, summary={"mean": 1.0})
        writer.close()
        store.close()
        write_s = time.perf_counter() - t0
        size_mb = path.stat().st_size / 1e6

        t0 = time.perf_counter()
        reader = Store(path, readonly=True)
        arrays = reader.load_session_samples(sid)
        tp = arrays.throughput_bps
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        one = reader.load_samples(reader.trials(sid)[50].id)
        one_s = time.perf_counter() - t0
        reader.close()
        print(f"samples written:          {len(arrays):,} ({trials} trials x {len(clients)} clients)")
        print(f"write (1 commit/s sim.):  {write_s:.2f} s   file {size_mb:.1f} MB")
        print(f"open + load 1M to numpy:  {load_s * 1000:.0f} ms   (mean throughput {tp.mean() / 1e6:.1f} MB/s)")
        print(f"load one trial:           {one_s * 1000:.1f} ms ({len(one):,} samples)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
