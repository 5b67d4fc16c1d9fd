"""Ground-truth grids for the offline benchmarks (search_efficiency.py, score_recommendation.py).

A grid file (benchmarks/data/grid_seqread*.json) holds, for every configuration of a
full grid, the repeated measurements ("values", MB/s; null for a run that broke) and
each run's wall time ("durations_s"). The synthetic grid's surface lives here too, so
the scripts that generate or replay it agree on it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from experiments.plan import Config, Value

DATA = Path(__file__).with_name("data")
SYNTHETIC_GRID = DATA / "grid_seqread.json"
LAB_GRID = DATA / "grid_seqread_lab.json"

# The synthetic grid's knobs (benchmarks/data/grid_seqread.json)
KNOBS: dict[str, list[int]] = {
    "rsize": [8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576],
    "nfsd_threads": [4, 8, 16, 32, 64, 128],
    "read_ahead_kb": [128, 512, 1024, 4096, 16384],
}
LINK_MBPS = 117.0  # MB/s of payload on 1 Gbit/s


def seqread_surface(rsize: int, threads: int, read_ahead_kb: int, link: float = LINK_MBPS) -> float:
    """The synthetic grid's noise-free MB/s: per-RPC overhead at small rsize, thread starvation and
    contention, and readahead that matters most at small rsize (an interaction)."""
    kb = rsize / 1024
    f_rsize = 1.0 - math.exp(-kb / 48.0)
    f_threads = min(1.0, (threads / 16.0) ** 0.35) * (1.0 - 0.03 * max(0.0, math.log2(threads / 32.0)))
    f_ra = 1.0 - 0.45 * math.exp(-read_ahead_kb / (kb * 6.0)) - 0.02 * max(0.0, math.log2(read_ahead_kb / 4096.0))
    return float(link * f_rsize * f_threads * f_ra)


@dataclass(frozen=True, slots=True)
class RecordedGrid:
    """A grid file: its knobs, and per configuration its runs as (value or None, duration)."""

    knobs: dict[str, list[Value]]
    runs: dict[Config, tuple[tuple[float | None, float], ...]]
    source: str
    unit: str

    def configs(self) -> list[Config]:
        """Every configuration of the full grid, recorded or not (a missing one only broke)."""
        names = list(self.knobs)
        out = [Config({})]
        for name in names:
            out = [c.replace(name, v) for c in out for v in self.knobs[name]]
        return out


def load_runs(path: Path) -> RecordedGrid:
    data = json.loads(path.read_text())
    runs: dict[Config, tuple[tuple[float | None, float], ...]] = {}
    for e in data["runs"]:
        values = [None if v is None else float(v) for v in e["values"]]
        durations = [float(d) for d in e["durations_s"]]
        runs[Config(e["config"])] = tuple(zip(values, durations, strict=True))
    return RecordedGrid(knobs=dict(data["knobs"]), runs=runs, source=str(data.get("source", "")),
                        unit=str(data.get("unit", "")))
