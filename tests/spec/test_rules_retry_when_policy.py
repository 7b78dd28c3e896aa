"""Reactive Streams rule tests (``test_rule_*``) of retry_when, repeat_when and the rstreams.retry policies (virtual time).

Their other tests (scenarios, properties, arguments) are in ``tests/time/test_retry_when_policy.py``."""

from __future__ import annotations

from rstreams import Flowable
from rstreams.testing import TestPublisher, TestScheduler
from spec._helpers import _failing


def test_rule_1_1_retry_when_carries_unfulfilled_demand() -> None:
    n = [0]
    sub = _failing(2, [10, 11, 12], n, values_before=[1, 2]).retry_when(lambda e: e).test(5)
    # subscription 1: 1, 2 (error); subscription 2: 1, 2 (error) -> 4 delivered; 1 left for the third
    sub.assert_values(1, 2, 1, 2, 10).assert_not_complete()
    sub.request(2)
    sub.assert_result(1, 2, 1, 2, 10, 11, 12).assert_no_violations()


def test_rule_3_13_retry_when_cancel_stops_everything() -> None:
    ts = TestScheduler()
    n = [0]
    sub = _failing(10, [1], n).retry_when(lambda e: e.flat_map(lambda x: Flowable.timer(1, ts))).test()
    sub.cancel()
    ts.advance_by(10)
    assert n[0] == 1
    assert ts.pending == 0
    sub.assert_empty().assert_no_violations()


def test_rule_3_9_retry_when_request_zero() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).retry_when(lambda e: e).test(0)
    sub.request(0)
    sub.assert_error(ValueError, match="3.9").assert_no_violations()
    assert tp.was_cancelled

