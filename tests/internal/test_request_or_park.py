"""request_or_park: the request(n) of a source whose loop belongs to whoever moves demand from 0."""

from __future__ import annotations

import threading

import pytest

from rstreams._internal.atomics import AtomicInt
from rstreams._internal.requests import MAX_DEMAND, request_or_park
from rstreams.errors import BadRequestError


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


@pytest.mark.parametrize("bad", [0, -1, True, 1.0, "1", None])
def test_rule_3_9_bad_amount_is_parked_and_wakes_the_owner_with_one(bad: object) -> None:
    r = AtomicInt(0)
    parked: list[BaseException] = []
    assert request_or_park(r, bad, parked.append) is True  # type: ignore[arg-type]
    assert len(parked) == 1 and isinstance(parked[0], BadRequestError)
    assert r.get() == 1  # one unit, only to wake the loop that signals the parked error


def test_rule_3_9_bad_amount_while_a_loop_runs_does_not_take_the_loop() -> None:
    r = AtomicInt(4)
    parked: list[BaseException] = []
    assert request_or_park(r, 0, parked.append) is False
    assert len(parked) == 1
    assert r.get() == 5


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
