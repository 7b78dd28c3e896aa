"""Reactive Streams rule tests (``test_rule_*``) of blocking_for_each(fn, prefetch, timeout).

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_blocking_for_each_timeout.py``."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from operators.test_blocking_for_each_timeout import WAIT
from rstreams import BackpressureStrategy, Flowable, plugins
from rstreams.errors import MissingBackpressureError
from rstreams.testing import TestPublisher, Violation


def test_rule_3_12_timeout_cancels_the_upstream_and_raises() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    got: list[int] = []
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"blocking_for_each\(\): no element within 0.05 s"):
        Flowable.from_publisher(tp).blocking_for_each(got.append, timeout=0.05)
    assert 0.04 <= time.monotonic() - started < WAIT
    tp.assert_was_cancelled()
    assert got == []


def test_rule_1_1_prefetch_bounds_the_demand_with_a_timeout() -> None:
    tp: TestPublisher[int] = TestPublisher.create()  # compliant: raises in the producer on overflow
    got: list[int] = []

    def produce() -> None:
        for i in range(20):
            deadline = time.monotonic() + WAIT
            while tp.requested < 1 and time.monotonic() < deadline:
                time.sleep(0.0005)
            tp.next(i)
        tp.complete()

    t = threading.Thread(target=produce, daemon=True)
    t.start()
    Flowable.from_publisher(tp).blocking_for_each(got.append, prefetch=4, timeout=WAIT)
    t.join(WAIT)
    assert got == list(range(20))
    assert tp.request_calls[0] == 4
    assert all(n == 3 for n in tp.request_calls[1:])  # prefetch - prefetch // 4


def test_rule_1_1_overflow_is_named_after_the_bridge() -> None:
    cancels: list[bool] = []

    def push(e: Any) -> None:
        e.set_cancellable(lambda: cancels.append(True))
        for i in range(10):
            e.on_next(i)  # ignores the demand of 4

    src = Flowable.create(push, BackpressureStrategy.MISSING)
    with pytest.raises(MissingBackpressureError, match=r"blocking_for_each\(prefetch=4\)"):
        src.blocking_for_each(print, prefetch=4, timeout=WAIT)
    assert cancels == [True]


def test_rule_2_13_error_after_the_timeout_goes_to_the_hook() -> None:
    """An error in flight when the wait timed out is not stored for a consumer that is gone."""
    tp: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.DEFER_CANCELLATION)
    with pytest.raises(TimeoutError):
        Flowable.from_publisher(tp).blocking_for_each(print, timeout=0.02)
    tp.assert_was_cancelled()
    late = ValueError("in flight")
    with plugins.collect_errors() as errors:
        tp.error(late)
    assert errors == [late]


# ---------------------------------------------------------------------------------------------
# blocking_iterable's generator (the loop blocking_for_each shares its accounting with) yields
# what is buffered as runs: the same requests, and a break in the middle of a run stops there


def test_rule_1_1_iterator_runs_request_as_one_by_one() -> None:
    requests: list[int] = []
    cancels: list[bool] = []
    src = Flowable.range(0, 1000).hide().do_on_request(requests.append).do_on_cancel(lambda: cancels.append(True))
    assert list(src.blocking_iterable(8)) == list(range(1000))
    # prefetch, then each batch of 8 consumed whole (>= limit = 8 - 8 // 4) is requested again
    assert requests[0] == 8 and set(requests[1:]) == {8}
    assert sum(requests) >= 1000 and not cancels
    got: list[int] = []
    for x in src.blocking_iterable(8):
        got.append(x)
        if x == 4:  # in the middle of the first run
            break
    assert got == [0, 1, 2, 3, 4] and cancels == [True]

