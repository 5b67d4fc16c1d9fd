"""A session's trials and samples as CSV, for spreadsheets and colleagues without nfs-tuner."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from app.output_files import OutputExists, staged
from app.store.store import Store

SAMPLE_COLUMNS = ("trial_id", "client", "t", "interval", "bytes_read", "bytes_written", "ops",
                  "lat_p50_ms", "lat_p99_ms", "lat_max_ms", "errors")
# A trial's latency (its clients' merged histogram) as columns of their own; the histogram stays in the database.
LATENCY_COLUMNS = ("ops", "p50_ms", "p99_ms", "p999_ms", "max_ms")


def export_csv(store: Store, session_id: int, folder: Path, *, replace: bool = False) -> tuple[Path, Path]:
    """Write ``session-<id>-trials.csv`` and ``session-<id>-samples.csv`` into ``folder`` by app.output_files'
    rules (``replace``: over files of those names); neither is written when either exists."""
    trials_path = folder / f"session-{session_id}-trials.csv"
    samples_path = folder / f"session-{session_id}-samples.csv"
    for path in (trials_path, samples_path):
        if not replace and path.exists():
            raise OutputExists(path, "the CSV export")
    trials = store.trials(session_id)
    knobs = sorted({k for t in trials for k in t.config})
    summary_keys = sorted({k for t in trials if isinstance(t.summary, dict) for k in t.summary} - {"latency"})
    with staged(trials_path, "the trials' CSV", replace=replace) as tmp, tmp.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["trial_id", "order", "repetition", "state", "reason", "workload", *knobs,
                    *(f"summary_{k}" for k in summary_keys), *(f"latency_{k}" for k in LATENCY_COLUMNS)])
        for t in trials:
            summary = t.summary if isinstance(t.summary, dict) else {}
            latency = summary.get("latency")
            latency = latency if isinstance(latency, dict) else {}
            w.writerow([t.id, t.order_index, t.repetition, t.state.value, t.reason,
                        json.dumps(t.workload, sort_keys=True), *(t.config.get(k, "") for k in knobs),
                        *(summary.get(k, "") for k in summary_keys), *(latency.get(k, "") for k in LATENCY_COLUMNS)])
    arrays = store.load_session_samples(session_id)
    r = arrays.records
    with staged(samples_path, "the samples' CSV", replace=replace) as tmp, tmp.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(SAMPLE_COLUMNS)
        for i in range(len(arrays)):
            x = r[i]
            w.writerow([int(arrays.trial_id[i]), arrays.clients[int(arrays.client_index[i])], repr(float(x["t"])),
                        repr(float(x["interval"])), int(x["bytes_read"]), int(x["bytes_written"]), int(x["ops"]),
                        repr(float(x["lat_p50_ms"])), repr(float(x["lat_p99_ms"])), repr(float(x["lat_max_ms"])),
                        int(x["errors"])])
    return trials_path, samples_path
