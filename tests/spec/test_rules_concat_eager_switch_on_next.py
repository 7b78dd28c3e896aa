"""Reactive Streams rule tests (``test_rule_*``) of concat_eager and switch_on_next.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_concat_eager_switch_on_next.py``."""

from __future__ import annotations

from rstreams import BadRequestError, Flowable
from rstreams.testing import TestPublisher, TestSubscriber


def test_rule_3_9_concat_eager_non_positive_request() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.concat_eager(Flowable.just(1), Flowable.just(2)).subscribe(ts)
    ts.request(0)
    ts.assert_error(BadRequestError).assert_no_violations()


def test_rule_3_12_concat_eager_cancel_cancels_every_source() -> None:
    tp1: TestPublisher[int] = TestPublisher.create()
    tp2: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.concat_eager(tp1, tp2).test()
    ts.cancel()
    tp1.assert_was_cancelled()
    tp2.assert_was_cancelled()
    ts.assert_not_terminated().assert_no_violations()

