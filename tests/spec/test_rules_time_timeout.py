"""Reactive Streams rule tests (``test_rule_*``) of timeout, timeout_selector, timestamp, time_interval, take_for and skip_for.

Their other tests (scenarios, properties, arguments) are in ``tests/time/test_time_timeout.py``."""

from __future__ import annotations

from rstreams import Flowable
from rstreams.testing import TestPublisher, TestScheduler, TestSubscriber


def test_rule_3_13_timeout_cancel_disposes_timer() -> None:
    ts = TestScheduler()
    sub = Flowable.never().timeout(1.0, scheduler=ts).test()
    sub.cancel()
    assert ts.pending == 0
    ts.advance_by(2)
    sub.assert_empty().assert_no_violations()


def test_rule_3_9_timeout_request_zero() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).timeout(1.0, scheduler=ts).test(0)
    sub.request(0)
    sub.assert_error(ValueError, match="3.9").assert_no_violations()
    assert tp.was_cancelled
    ts.advance_by(2)
    assert len(sub.errors) == 1


def test_rule_1_1_timestamp_is_one_to_one() -> None:
    ts = TestScheduler()
    sub = Flowable.range(0, 10).timestamp(ts).test(3)
    sub.assert_value_count(3).assert_not_complete().assert_no_violations()


def test_rule_1_1_skip_for_replenishes_dropped_elements() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub: TestSubscriber[int] = TestSubscriber(2)
    Flowable.from_publisher(tp).skip_for(1, ts).subscribe(sub)
    tp.next(1, 2)  # dropped: each replaced by request(1)
    ts.advance_by(1)
    tp.next(3, 4)
    sub.assert_values(3, 4).assert_no_violations()
    assert tp.requested == 0


def test_rule_3_13_take_for_cancel() -> None:
    ts = TestScheduler()
    sub = Flowable.never().take_for(1, ts).test()
    sub.cancel()
    assert ts.pending == 0
    sub.assert_empty().assert_no_violations()

