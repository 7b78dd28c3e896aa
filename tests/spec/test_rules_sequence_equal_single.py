"""Reactive Streams rule tests (``test_rule_*``) of sequence_equal and single, single_or_error, first_or_error, last_or_error.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_sequence_equal_single.py``."""

from __future__ import annotations

import pytest

from operators.test_sequence_equal_single import seq
from rstreams import Flowable
from rstreams.testing import TestPublisher


def test_rule_1_1_bounded_prefetch_and_replenish_in_batches() -> None:
    ra: list[int] = []
    rb: list[int] = []
    a = Flowable.range(0, 100).hide().do_on_request(ra.append)
    b = Flowable.range(0, 100).hide().do_on_request(rb.append)
    seq(a, b, prefetch=8).test().assert_result(True).assert_no_violations()
    assert ra[0] == 8 and rb[0] == 8
    # replenished in batches of at least limit = 8 - 8 // 4, never above prefetch
    assert ra[1:] and all(6 <= r <= 8 for r in ra[1:] + rb[1:])


@pytest.mark.parametrize("bad", [0, -1])
def test_rule_3_9_bad_request_cancels_both(bad: int) -> None:
    ta: TestPublisher[int] = TestPublisher.create()
    tb: TestPublisher[int] = TestPublisher.create()
    ts = seq(ta, tb).test(0)
    ts.request(bad)
    ts.assert_error(ValueError, match="3.9").assert_no_violations()
    assert ta.was_cancelled and tb.was_cancelled


def test_rule_3_12_downstream_cancel_cancels_both() -> None:
    ta: TestPublisher[int] = TestPublisher.create()
    tb: TestPublisher[int] = TestPublisher.create()
    ts = seq(ta, tb).test()
    ta.next(1)
    ts.cancel()
    assert ta.was_cancelled and tb.was_cancelled
    ts.assert_no_values().assert_not_complete().assert_no_violations()

