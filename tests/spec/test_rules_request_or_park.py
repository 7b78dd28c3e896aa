"""Reactive Streams rule tests (``test_rule_*``) of request_or_park (rstreams._internal.requests).

Its other tests are in ``tests/internal/test_request_or_park.py``."""

from __future__ import annotations

import pytest

from rstreams._internal.atomics import AtomicInt
from rstreams._internal.requests import request_or_park
from rstreams.errors import BadRequestError


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

