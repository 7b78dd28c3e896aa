"""Reactive Streams rule tests (``test_rule_*``) of sample(sampler), debounce(selector) and delay(selector) (virtual time).

Their other tests (scenarios, properties, arguments) are in ``tests/time/test_sample_debounce_delay_selectors.py``."""

from __future__ import annotations

from rstreams import Flowable
from rstreams.testing import TestPublisher, TestSubscriber
from spec._helpers import _pair


def test_rule_3_13_sample_publisher_cancel_cancels_both() -> None:
    src, s = _pair()
    ts = Flowable.from_publisher(src).sample(s).test()
    ts.cancel()
    assert src.was_cancelled and s.was_cancelled
    ts.assert_empty().assert_no_violations()


def test_rule_3_9_sample_publisher_bad_request() -> None:
    src, s = _pair()
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_publisher(src).sample(s).subscribe(ts)
    ts.request(0)
    ts.assert_error(ValueError, match="3.9").assert_no_violations()


def test_rule_3_13_debounce_selector_cancel_cancels_source_and_debouncer() -> None:
    d: TestPublisher[int] = TestPublisher.create()
    src: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(src).debounce(lambda x: d).test()
    src.next(1)
    sub.cancel()
    assert src.was_cancelled and d.was_cancelled
    sub.assert_empty().assert_no_violations()


def test_rule_1_1_delay_selector_bounds_pending_delays() -> None:
    src: TestPublisher[int] = TestPublisher.create()
    Flowable.from_publisher(src).delay(lambda x: Flowable.never()).test()
    assert src.requested == 128  # RxJava's flatMap default


def test_rule_3_13_delay_selector_cancel_cancels_indicators() -> None:
    ind: TestPublisher[str] = TestPublisher.create()
    sub = Flowable.just(1).delay(lambda x: ind).test()
    sub.cancel()
    assert ind.was_cancelled
    sub.assert_empty().assert_no_violations()

