"""Samples packed as blocks of a fixed little-endian record array, and read back as numpy."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from experiments.samples import Sample

_MEASURED = [
    ("t", "<f8"),
    ("interval", "<f4"),
    ("bytes_read", "<i8"),
    ("bytes_written", "<i8"),
    ("ops", "<i8"),
    ("lat_p50_ms", "<f4"),
    ("lat_p99_ms", "<f4"),
    ("lat_max_ms", "<f4"),
    ("errors", "<i4"),
]
# Schema version 1's blocks: 52 bytes a sample, no phase or count (migration 2 converts them).
SAMPLE_DTYPE_V1 = np.dtype(_MEASURED)

PHASE_BYTES = 16  # UTF-8, NUL padded; the agent's phase names ("create", "extract", ...) fit
NO_COUNT = -1  # Sample.count None: only dir_scaling reports a count
# 76 bytes a sample (schema version 2 on). Fixed byte order so a file moves between machines.
SAMPLE_DTYPE = np.dtype([*_MEASURED, ("count", "<i8"), ("phase", f"S{PHASE_BYTES}")])


def encode_phase(phase: str) -> bytes:
    """The phase as at most PHASE_BYTES of UTF-8, never cut inside a character."""
    raw = phase.encode("utf-8")
    if len(raw) <= PHASE_BYTES:
        return raw
    return raw[:PHASE_BYTES].decode("utf-8", "ignore").encode("utf-8")


def pack(samples: Sequence[Sample]) -> np.ndarray:
    """One client's samples as a record array, sorted by time."""
    rec = np.empty(len(samples), dtype=SAMPLE_DTYPE)
    for i, s in enumerate(samples):
        rec[i] = (
            s.t, s.interval, s.bytes_read, s.bytes_written, s.ops,
            s.lat_p50_ms, s.lat_p99_ms, s.lat_max_ms, s.errors,
            NO_COUNT if s.count is None else s.count, encode_phase(s.phase),
        )
    rec.sort(order="t", kind="stable")
    return rec


def upgrade_v1_blob(blob: bytes, n: int) -> bytes:
    """A schema-1 block (SAMPLE_DTYPE_V1) as a current one: no phase, no count."""
    if len(blob) != n * SAMPLE_DTYPE_V1.itemsize:
        raise ValueError(f"sample block of {len(blob)} bytes does not hold {n} version-1 samples")
    old = np.frombuffer(blob, dtype=SAMPLE_DTYPE_V1)
    new = np.zeros(len(old), dtype=SAMPLE_DTYPE)
    for name in SAMPLE_DTYPE_V1.names or ():
        new[name] = old[name]
    new["count"] = NO_COUNT
    return new.tobytes()


def unpack(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=SAMPLE_DTYPE)


@dataclass(frozen=True, slots=True)
class SampleArrays:
    """Samples of one trial or a whole session, column-wise, ordered by trial then time.

    ``client_index[i]`` indexes ``clients``; ``records`` holds the measured fields.
    """

    trial_id: np.ndarray  # int64
    client_index: np.ndarray  # int32
    clients: tuple[str, ...]
    records: np.ndarray  # SAMPLE_DTYPE

    def __len__(self) -> int:
        return len(self.records)

    @property
    def t(self) -> np.ndarray:
        return self.records["t"]

    @property
    def interval(self) -> np.ndarray:
        return self.records["interval"]

    @property
    def bytes_read(self) -> np.ndarray:
        return self.records["bytes_read"]

    @property
    def bytes_written(self) -> np.ndarray:
        return self.records["bytes_written"]

    @property
    def ops(self) -> np.ndarray:
        return self.records["ops"]

    @property
    def lat_p99_ms(self) -> np.ndarray:
        return self.records["lat_p99_ms"]

    @property
    def errors(self) -> np.ndarray:
        return self.records["errors"]

    @property
    def count(self) -> np.ndarray:
        """dir_scaling: entries in the directory at each sample's end; NO_COUNT (-1) elsewhere."""
        return self.records["count"]

    @property
    def phase(self) -> np.ndarray:
        """Each sample's phase as str (decoded per call: keep it to slices you need)."""
        return np.char.decode(self.records["phase"], "utf-8", "replace")

    @property
    def throughput_bps(self) -> np.ndarray:
        moved = (self.records["bytes_read"] + self.records["bytes_written"]).astype(np.float64)
        iv = self.records["interval"].astype(np.float64)
        out: np.ndarray = np.divide(moved, iv, out=np.zeros_like(moved), where=iv > 0)
        return out

    def select(self, mask: np.ndarray) -> SampleArrays:
        return SampleArrays(self.trial_id[mask], self.client_index[mask], self.clients, self.records[mask])

    def for_trial(self, trial_id: int) -> SampleArrays:
        return self.select(self.trial_id == trial_id)

    def for_client(self, client: str) -> SampleArrays:
        if client not in self.clients:
            return self.select(np.zeros(len(self), dtype=bool))
        return self.select(self.client_index == self.clients.index(client))

    def to_samples(self) -> list[Sample]:
        """Back to objects (for small slices: tests, CSV export)."""
        r = self.records
        return [
            Sample(
                client=self.clients[int(ci)], t=float(x["t"]), interval=float(x["interval"]),
                bytes_read=int(x["bytes_read"]), bytes_written=int(x["bytes_written"]), ops=int(x["ops"]),
                lat_p50_ms=float(x["lat_p50_ms"]), lat_p99_ms=float(x["lat_p99_ms"]),
                lat_max_ms=float(x["lat_max_ms"]), errors=int(x["errors"]),
                phase=bytes(x["phase"]).decode("utf-8", "replace"),
                count=None if int(x["count"]) < 0 else int(x["count"]),
            )
            for ci, x in zip(self.client_index, r, strict=True)
        ]


def assemble(rows: Sequence[tuple[int, str, int, bytes]]) -> SampleArrays:
    """Build arrays from (trial_id, client, n, blob) rows in the wanted order."""
    clients: list[str] = []
    index: dict[str, int] = {}
    counts = np.empty(len(rows), dtype=np.int64)
    trial_ids = np.empty(len(rows), dtype=np.int64)
    client_ids = np.empty(len(rows), dtype=np.int32)
    for i, (trial_id, client, n, _) in enumerate(rows):
        if client not in index:
            index[client] = len(clients)
            clients.append(client)
        counts[i] = n
        trial_ids[i] = trial_id
        client_ids[i] = index[client]
    # One join and one frombuffer: no per-sample Python work.
    records = np.frombuffer(b"".join(r[3] for r in rows), dtype=SAMPLE_DTYPE)
    if len(records) != int(counts.sum()):  # a block whose n is not what it holds
        raise ValueError(f"sample blocks claim {int(counts.sum())} samples but hold {len(records)}")
    return SampleArrays(
        trial_id=np.repeat(trial_ids, counts),
        client_index=np.repeat(client_ids, counts),
        clients=tuple(clients),
        records=records,
    )
