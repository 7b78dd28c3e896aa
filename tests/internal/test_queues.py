"""SPSC/MPSC queues: order, batch offer/poll, capacity bound (races are in test_races.py)."""

from __future__ import annotations

import pytest

from rstreams._internal.queues import MpscQueue, SpscQueue


@pytest.mark.parametrize("cls", [SpscQueue, MpscQueue])
def test_fifo_and_empty_poll_returns_none(cls: type[SpscQueue[int]]) -> None:
    q = cls()
    assert q.is_empty() and not q and len(q) == 0
    assert q.poll() is None and q.peek() is None
    assert q.offer(1) is True
    assert q.offer_many([2, 3, 4]) == 3
    assert q.offer_many(iter([5, 6])) == 2  # any iterable
    assert len(q) == 6 and q
    assert q.peek() == 1
    assert q.poll() == 1
    assert q.poll_many(2) == [2, 3]
    assert q.poll_many(100) == [4, 5, 6]
    assert q.poll_many(3) == []
    assert q.poll() is None


@pytest.mark.parametrize("cls", [SpscQueue, MpscQueue])
def test_capacity_bound(cls: type[SpscQueue[int]]) -> None:
    q = cls(capacity=3)
    assert q.offer(1) and q.offer(2)
    assert q.offer_many([3, 4, 5]) == 1  # only what fits, in order
    assert q.offer(6) is False
    assert q.offer_many([7]) == 0
    assert len(q) == 3
    assert q.poll_many(10) == [1, 2, 3]
    assert q.offer_many(x for x in range(10, 20)) == 3
    assert q.poll_many(10) == [10, 11, 12]


@pytest.mark.parametrize("cls", [SpscQueue, MpscQueue])
def test_clear(cls: type[SpscQueue[int]]) -> None:
    q = cls()
    q.offer_many(range(5))
    q.clear()
    assert q.is_empty() and q.poll() is None
