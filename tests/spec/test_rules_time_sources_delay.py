"""Reactive Streams rule tests (``test_rule_*``) of interval, timer, delay and delay_subscription (virtual time).

Their other tests (scenarios, properties, arguments) are in ``tests/time/test_time_sources_delay.py``."""

from __future__ import annotations

from rstreams import Flowable
from rstreams.testing import TestScheduler, TestSubscriber


def test_rule_3_13_interval_cancel_disposes_the_timer() -> None:
    ts = TestScheduler()
    sub = Flowable.interval(1.0, scheduler=ts).test()
    ts.advance_by(1)
    sub.cancel()
    assert ts.pending == 0
    ts.advance_by(5)
    sub.assert_values(0).assert_no_violations()


def test_rule_3_9_interval_request_zero() -> None:
    ts = TestScheduler()
    sub: TestSubscriber[int] = TestSubscriber(0)
    Flowable.interval(1.0, scheduler=ts).subscribe(sub)
    sub.request(0)
    sub.assert_error(ValueError, match="3.9")
    assert ts.pending == 0
    ts.advance_by(3)
    sub.assert_no_values().assert_no_violations()


def test_rule_1_1_timer_waits_for_demand() -> None:
    ts = TestScheduler()
    sub = Flowable.timer(1.0, ts).test(0)
    ts.advance_by(5)
    sub.assert_no_values().assert_not_complete()
    sub.request(1)
    sub.assert_result(0).assert_no_violations()


def test_rule_3_9_timer_request_negative() -> None:
    ts = TestScheduler()
    sub = Flowable.timer(1.0, ts).test(0)
    sub.request(-1)
    sub.assert_error(ValueError, match="3.9")
    ts.advance_by(2)
    sub.assert_no_values().assert_no_violations()


def test_rule_1_1_delay_passes_requests_through() -> None:
    ts = TestScheduler()
    sub = Flowable.range(0, 10).delay(1.0, ts).test(3)
    ts.advance_by(1)
    sub.assert_values(0, 1, 2)
    sub.request(2)
    ts.advance_by(1)
    sub.assert_values(0, 1, 2, 3, 4).assert_no_violations()


def test_rule_3_13_delay_cancel_drops_pending() -> None:
    ts = TestScheduler()
    sub = Flowable.just(1, 2).delay(1.0, ts).test()
    sub.cancel()
    ts.advance_by(2)
    sub.assert_no_values().assert_no_violations()
    assert ts.pending == 0


def test_rule_3_9_delay_subscription_bad_request_before_upstream() -> None:
    ts = TestScheduler()
    sub = Flowable.just(1).delay_subscription(1, ts).test(0)
    sub.request(0)
    sub.assert_error(ValueError, match="3.9")
    ts.advance_by(2)
    sub.assert_no_values().assert_no_violations()

