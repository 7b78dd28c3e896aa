"""request_or_park: the request(n) of a source whose loop belongs to whoever moves demand from 0."""

from __future__ import annotations

import threading

from rstreams._internal.atomics import AtomicInt
from rstreams._internal.requests import MAX_DEMAND, request_or_park


def _never(err: BaseException) -> None:
    raise AssertionError(f"parked {err!r} for a legal amount")


def test_the_caller_moving_demand_from_zero_owns_the_loop() -> None:
    r = AtomicInt(0)
    assert request_or_park(r, 3, _never) is True
    assert r.get() == 3
    assert request_or_park(r, 2, _never) is False  # the owner is running: it sees the new demand
    assert r.get() == 5


def test_demand_is_capped_and_sticky_at_max_demand() -> None:
    r = AtomicInt(0)
    assert request_or_park(r, 2**70, _never) is True
    assert r.get() == MAX_DEMAND
    assert request_or_park(r, 1, _never) is False
    assert r.get() == MAX_DEMAND


def test_concurrent_requests_elect_exactly_one_owner() -> None:
    r = AtomicInt(0)
    owners: list[int] = []
    start = threading.Barrier(8)

    def req(i: int) -> None:
        start.wait()
        if request_or_park(r, 1, _never):
            owners.append(i)

    threads = [threading.Thread(target=req, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(owners) == 1
    assert r.get() == 8
