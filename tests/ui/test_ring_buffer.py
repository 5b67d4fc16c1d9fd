from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ui.ring_buffer import BucketSum, RingBuffer, RingTable


def test_view_is_oldest_first_and_drops_the_oldest_when_full() -> None:
    rb = RingBuffer(4)
    rb.extend([1, 2, 3], [10, 20, 30])
    rb.extend([4, 5, 6], [40, 50, 60])
    t, y = rb.view()
    assert t.tolist() == [3, 4, 5, 6]
    assert y.tolist() == [30, 40, 50, 60]
    assert rb.last() == (6.0, 60.0)


def test_view_is_a_view_not_a_copy() -> None:
    rb = RingBuffer(8)
    rb.extend(np.arange(5.0), np.arange(5.0))
    t, _ = rb.view()
    assert t.base is not None  # plots setData on preallocated memory every frame


def test_a_batch_larger_than_the_capacity_keeps_the_newest() -> None:
    rb = RingBuffer(3)
    rb.extend(range(10), range(10))
    assert rb.view()[1].tolist() == [7, 8, 9]


def test_mismatched_lengths_are_refused() -> None:
    with pytest.raises(ValueError):
        RingBuffer(3).extend([1, 2], [1])


@given(st.integers(1, 20), st.lists(st.lists(st.floats(-1e9, 1e9), max_size=30), max_size=20))
def test_ring_buffer_matches_a_list(capacity: int, batches: list[list[float]]) -> None:
    rb = RingBuffer(capacity)
    model: list[float] = []
    for batch in batches:
        rb.extend(batch, batch)
        model = (model + batch)[-capacity:]
    assert rb.view()[1].tolist() == model
    assert len(rb) == len(model)


def test_bucket_sum_adds_clients_on_the_same_interval() -> None:
    total = BucketSum(16, 0.25)
    total.add([0.25, 0.5], [1.0, 2.0])  # client a
    total.add([0.25, 0.5, 0.75], [10.0, 20.0, 30.0])  # client b, one ahead
    t, y = total.series(upto_key=2)  # complete up to 0.5 s
    assert t.tolist() == [0.25, 0.5]
    assert y.tolist() == [11.0, 22.0]


def test_bucket_sum_forgets_buckets_older_than_its_capacity() -> None:
    total = BucketSum(4, 1.0)
    total.add(np.arange(10.0), np.ones(10))
    t, y = total.series(upto_key=9)
    assert t.tolist() == [6.0, 7.0, 8.0, 9.0]
    assert y.tolist() == [1.0] * 4


@given(st.integers(1, 12), st.integers(1, 5),
       st.lists(st.lists(st.tuples(st.integers(0, 4), st.floats(-1e9, 1e9)), max_size=30), max_size=12))
def test_ring_table_rows_match_lists(capacity: int, rows: int, batches: list[list[tuple[int, float]]]) -> None:
    table = RingTable(capacity, 2)
    for _ in range(rows):
        table.add_row()
    model: list[list[float]] = [[] for _ in range(rows)]
    for batch in batches:
        batch = [(r % rows, v) for r, v in batch]
        table.extend(np.array([r for r, _ in batch], dtype=np.intp), np.array([(v, -v) for _, v in batch]).reshape(-1, 2))
        for r, v in batch:
            model[r].append(v)
    for r in range(rows):
        kept = model[r][-capacity:]
        assert table.view(r, 0).tolist() == kept and table.view(r, 1).tolist() == [-v for v in kept]
        assert table.length(r) == len(kept) and table.written(r) == len(model[r])


def test_ring_table_clear_forgets_values_and_column_max_sees_only_stored_ones() -> None:
    table = RingTable(4, 2)
    a, b = table.add_row(), table.add_row()
    table.extend(np.array([a, b, a]), np.array([[1.0, 50.0], [1.0, 7.0], [2.0, 3.0]]))
    assert table.column_max(1) == 50.0 and table.view(a, 1).tolist() == [50.0, 3.0]
    table.clear()
    assert table.length(a) == table.written(a) == 0 and table.column_max(1) == 0.0
    table.extend(np.array([b]), np.array([[3.0, 4.0]]))
    assert table.column_max(1) == 4.0 and table.view(b, 0).tolist() == [3.0]
    assert table.view(b, 0).base is not None  # a view, like RingBuffer's


def test_ring_table_grows_rows_and_keeps_their_values() -> None:
    table = RingTable(3, 1)
    for i in range(9):  # past the first allocation
        row = table.add_row()
        table.extend(np.array([row]), np.array([[float(i)]]))
    assert [table.view(r, 0).tolist() for r in range(9)] == [[float(i)] for i in range(9)]
