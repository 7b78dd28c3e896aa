"""Reactive Streams rule tests (``test_rule_*``) of publish(selector).

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_publish_selector.py``."""

from __future__ import annotations

from rstreams import BadRequestError, Flowable
from rstreams.testing import TestPublisher, TestSubscriber


def test_rule_3_12_publish_selector_cancel_cancels_the_source() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.from_publisher(tp).publish(lambda v: v.map(lambda x: x + 1)).test()
    tp.next(1)
    ts.cancel()
    tp.assert_was_cancelled()
    ts.assert_values(2).assert_not_terminated().assert_no_violations()


def test_rule_3_9_publish_selector_non_positive_request() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.range(0, 3).publish(lambda v: v).subscribe(ts)
    ts.request(-5)
    ts.assert_error(BadRequestError).assert_no_violations()

