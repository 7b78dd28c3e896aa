"""Reactive Streams rule tests (``test_rule_*``) of window(count, skip), window_timed and buffer_timed.

Their other tests (scenarios, properties, arguments) are in ``tests/time/test_window_buffer_timed.py``."""

from __future__ import annotations

from typing import Any

from rstreams import Flowable
from rstreams.testing import TestPublisher, TestScheduler, TestSubscriber


def test_rule_1_1_window_requests_upstream_per_window() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    sub: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.from_publisher(tp).window(3, 5).subscribe(sub)
    sub.request(2)
    assert tp.requested == 3 + 5  # count + skip * (n - 1)
    sub.request(1)
    assert tp.requested == 8 + 5
    sub.assert_no_violations()


def test_rule_3_9_window_request_zero() -> None:
    sub = Flowable.range(0, 5).window(2).test(0)
    sub.request(0)
    sub.assert_error(ValueError, match="3.9").assert_no_violations()


def test_rule_3_13_window_timed_cancel_stops_timer_and_upstream() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).window_timed(1.0, scheduler=ts).test()
    sub.cancel()  # the emitted window was never subscribed (abandoned)
    assert tp.was_cancelled
    assert ts.pending == 0
    sub.assert_no_violations()


def test_rule_3_9_buffer_timed_request_zero() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).buffer_timed(1.0, scheduler=ts).test(0)
    sub.request(0)
    sub.assert_error(ValueError, match="3.9").assert_no_violations()
    assert tp.was_cancelled

