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
