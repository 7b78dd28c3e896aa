"""Reactive Streams rule tests (``test_rule_*``) of group_by.

Their other tests (scenarios, properties, arguments) are in ``tests/time/test_group_by.py``."""

from __future__ import annotations

from rstreams import Flowable
from rstreams.testing import TestPublisher, TestSubscriber


def test_rule_1_1_upstream_is_replenished_as_groups_consume() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    got: list[TestSubscriber[int]] = []
    Flowable.from_publisher(tp).group_by(lambda x: 0, buffer_size=16).do_on_next(
        lambda g: (got.append(TestSubscriber(0)), g.subscribe(got[-1]))
    ).subscribe(TestSubscriber())
    assert tp.requested == 16
    tp.next(*range(10))
    assert tp.requested == 6  # nothing consumed yet: no replenishment
    got[0].request(4)
    assert tp.requested == 10
    got[0].assert_no_violations()


def test_rule_3_9_group_request_zero() -> None:
    inner: list[TestSubscriber[int]] = []
    Flowable.just(1, 2).group_by(lambda x: 0).do_on_next(
        lambda g: (inner.append(TestSubscriber(0)), g.subscribe(inner[-1]))
    ).test()
    inner[0].request(0)
    inner[0].assert_error(ValueError, match="3.9").assert_no_violations()


def test_rule_3_9_main_request_zero() -> None:
    sub = Flowable.never().group_by(lambda x: x).test(0)
    sub.request(-3)
    sub.assert_error(ValueError, match="3.9").assert_no_violations()
