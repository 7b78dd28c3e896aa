"""Reactive Streams rule tests (``test_rule_*``) of concat, concat_with, start_with and switch_if_empty.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_concat.py``."""

from __future__ import annotations

from operators.test_merge_zip import CountingSource
from rstreams import BadRequestError, Flowable
from rstreams.testing import TestSubscriber


def test_rule_3_9_concat_request_zero_signals_value_error() -> None:
    src = CountingSource(Flowable.never())
    ts = Flowable.concat(Flowable.range(0, 3).hide(), src).test(0)
    ts.request(0)
    ts.assert_error(BadRequestError, match="3.9").assert_no_values().assert_no_violations()


def test_rule_3_9_concat_negative_request_cancels_upstream() -> None:
    src = CountingSource(Flowable.never())
    ts = Flowable.concat(src, Flowable.just(1)).test(0)
    ts.request(-1)
    ts.assert_error(ValueError).assert_no_violations()
    assert src.cancels == 1


def test_rule_3_9_switch_if_empty_bad_request() -> None:
    Flowable.never().switch_if_empty(Flowable.just(1)).test(0).request(0).assert_error(ValueError)


def test_rule_1_1_concat_request_one_at_a_time_over_many_sources() -> None:
    srcs = [Flowable.range(i * 3, 3).hide() for i in range(50)]
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.concat(*srcs).subscribe(ts)
    for k in range(1, 151):
        ts.request(1)
        assert len(ts.values) == k
    ts.assert_values(*range(150)).assert_complete().assert_no_violations()


def test_rule_3_12_concat_stops_soon_after_cancel_from_on_next() -> None:
    from operators.test_merge_zip import CancelAfter

    ts = CancelAfter(4)
    second = CountingSource(Flowable.range(10, 5).hide())
    Flowable.concat(Flowable.range(0, 3).hide(), second, Flowable.just(99).hide()).subscribe(ts)
    ts.assert_values(0, 1, 2, 10).assert_not_complete().assert_no_violations()
    assert second.cancels == 1

