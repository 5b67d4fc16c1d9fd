"""Fixed-size numpy ring buffers that hand out contiguous views without copying.

Each buffer stores every value twice (at i and i + capacity), so the newest
``len`` values are always one contiguous slice: the plots can ``setData`` on a
view of preallocated memory every frame, with no allocation and no reordering.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray


class RingBuffer:
    """Time/value pairs of one series, oldest dropped first."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be positive")
        self.capacity = capacity
        self._t = np.zeros(2 * capacity)
        self._y = np.zeros(2 * capacity)
        self._head = 0  # next write position in [0, capacity)
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def clear(self) -> None:
        self._head = 0
        self._len = 0

    def extend(self, t: ArrayLike, y: ArrayLike) -> None:
        t_arr = np.asarray(t, dtype=float)
        y_arr = np.asarray(y, dtype=float)
        if t_arr.shape != y_arr.shape or t_arr.ndim != 1:
            raise ValueError("t and y must be 1-d and of equal length")
        if len(t_arr) > self.capacity:  # only the newest fit
            t_arr, y_arr = t_arr[-self.capacity :], y_arr[-self.capacity :]
        n = len(t_arr)
        if n == 0:
            return
        idx = (self._head + np.arange(n)) % self.capacity
        for arr, values in ((self._t, t_arr), (self._y, y_arr)):
            arr[idx] = values
            arr[idx + self.capacity] = values
        self._head = (self._head + n) % self.capacity
        self._len = min(self.capacity, self._len + n)

    def append(self, t: float, y: float) -> None:
        self.extend((t,), (y,))

    def view(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(t, y) of the stored values, oldest first; views into the buffer, not copies."""
        start = (self._head - self._len) % self.capacity
        return self._t[start : start + self._len], self._y[start : start + self._len]

    def last(self) -> tuple[float, float] | None:
        if not self._len:
            return None
        i = (self._head - 1) % self.capacity
        return float(self._t[i]), float(self._y[i])


class BucketSum:
    """Sums values from many series that share a time grid (the summed throughput).

    Values land in bucket ``round(t / interval)``; a bucket is complete once every
    series has moved past it, so partial sums never show as dips in the plot.
    """

    def __init__(self, capacity: int, interval: float) -> None:
        self.capacity = capacity
        self.interval = interval
        self._key = np.full(capacity, -1, dtype=np.int64)
        self._sum = np.zeros(capacity)
        self._t = np.zeros(capacity)
        self._t_out = np.zeros(capacity)
        self._y_out = np.zeros(capacity)
        self.first_key = -1

    def clear(self) -> None:
        self._key.fill(-1)
        self._sum.fill(0.0)
        self.first_key = -1

    def key_of(self, t: NDArray[np.float64]) -> NDArray[np.int64]:
        return np.rint(t / self.interval).astype(np.int64)

    def add(self, t: ArrayLike, y: ArrayLike) -> None:
        t_arr = np.asarray(t, dtype=float)
        keys = self.key_of(t_arr)
        slots = keys % self.capacity
        fresh = self._key[slots] < keys  # slot held an older bucket (or none): start over
        self._sum[slots[fresh]] = 0.0
        self._key[slots[fresh]] = keys[fresh]
        self._t[slots] = keys * self.interval
        current = self._key[slots] == keys  # drop values older than what the slot holds
        np.add.at(self._sum, slots[current], np.asarray(y, dtype=float)[current])
        if self.first_key < 0 and len(keys):
            self.first_key = int(keys.min())

    def series(self, upto_key: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(t, sum) for complete buckets up to ``upto_key`` inclusive, oldest first."""
        if self.first_key < 0 or upto_key < self.first_key:
            return self._t_out[:0], self._y_out[:0]
        lo = max(self.first_key, upto_key - self.capacity + 1)
        keys = np.arange(lo, upto_key + 1)
        slots = keys % self.capacity
        valid = self._key[slots] == keys
        n = int(valid.sum())
        self._t_out[:n] = self._t[slots[valid]]
        self._y_out[:n] = self._sum[slots[valid]]
        return self._t_out[:n], self._y_out[:n]


class RingTable:
    """Many series that share their columns (a client's time, throughput, ops, latency), each row
    its own ring of ``capacity`` samples, stored twice like RingBuffer so views stay contiguous.

    One ``extend`` writes a whole batch for every row with a few array operations: per-client
    RingBuffer.extend calls cost ~1.3 ms a batch at 64 clients, most of it Python overhead.
    """

    def __init__(self, capacity: int, columns: int) -> None:
        if capacity < 1 or columns < 1:
            raise ValueError("capacity and columns must be positive")
        self.capacity = capacity
        self.columns = columns
        self.rows = 0
        self._data = np.zeros((0, columns, 2 * capacity))
        self._head = np.zeros(0, dtype=np.int64)  # next write position per row, in [0, capacity)
        self._len = np.zeros(0, dtype=np.int64)
        self._written = np.zeros(0, dtype=np.int64)  # values ever written per row since clear

    def add_row(self) -> int:
        if self.rows == len(self._data):  # grow by doubling: clients arrive one by one at a trial's start
            more = max(4, self.rows)
            self._data = np.concatenate((self._data, np.zeros((more, self.columns, 2 * self.capacity))))
            self._head, self._len, self._written = (np.concatenate((a, np.zeros(more, dtype=np.int64)))
                                                    for a in (self._head, self._len, self._written))
        self.rows += 1
        return self.rows - 1

    def clear(self) -> None:
        """Empty every row; zeroed so that ``column_max`` over the raw slots sees no old values."""
        self._data.fill(0.0)
        self._head.fill(0)
        self._len.fill(0)
        self._written.fill(0)

    def extend(self, rows: NDArray[np.intp], values: NDArray[np.float64]) -> None:
        """Append ``values[i]`` (one value per column) to row ``rows[i]``; a row's values keep their order."""
        if values.shape != (len(rows), self.columns):
            raise ValueError("values must be (len(rows), columns)")
        if not len(rows):
            return
        order = np.argsort(rows, kind="stable")
        rows, values = rows[order], values[order]
        counts = np.bincount(rows, minlength=len(self._head))
        rank = np.arange(len(rows)) - (np.cumsum(counts) - counts)[rows]  # place within its row's run
        self._written += counts
        drop = np.maximum(counts - self.capacity, 0)  # more than a ring holds: only the newest stay
        if drop.any():
            keep = rank >= drop[rows]
            rows, values, rank = rows[keep], values[keep], rank[keep] - drop[rows[keep]]
            counts -= drop
        pos = (self._head[rows] + rank) % self.capacity
        self._data[rows, :, pos] = values
        self._data[rows, :, pos + self.capacity] = values
        self._head = (self._head + counts) % self.capacity
        self._len = np.minimum(self._len + counts, self.capacity)

    def length(self, row: int) -> int:
        return int(self._len[row])

    def written(self, row: int) -> int:
        """Values written to ``row`` since the last clear: a drawer compares it to what it drew."""
        return int(self._written[row])

    def view(self, row: int, column: int) -> NDArray[np.float64]:
        """The row's stored values of one column, oldest first: a view, not a copy."""
        n = int(self._len[row])
        start = (int(self._head[row]) - n) % self.capacity
        return self._data[row, column, start : start + n]

    def column_max(self, column: int) -> float:
        """The largest stored value of a column over all rows (0.0 when empty or all negative).

        The first copy holds every stored value once and zeros elsewhere (see ``clear``)."""
        if not self.rows:
            return 0.0
        return max(0.0, float(self._data[: self.rows, column, : self.capacity].max()))
