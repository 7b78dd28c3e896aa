"""Reactive Streams rule tests (``test_rule_*``) of merge and zip.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_merge_zip.py``."""

from __future__ import annotations

from typing import Any

from operators.test_merge_zip import MAX, CancelAfter, CountingSource
from rstreams import Flowable
from rstreams.testing import TestSubscriber


def test_rule_1_1_merge_never_over_delivers() -> None:
    srcs = [Flowable.range(i * 100, 50).hide() for i in range(5)] + [Flowable.just(-1), Flowable.just(-2)]
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.merge(*srcs, prefetch=8).subscribe(ts)
    total = 0
    for n in [1, 2, 3, 5, 7, 11, 13]:
        ts.request(n)
        total += n
        assert len(ts.values) == total
    ts.request(MAX)
    ts.assert_value_count(252).assert_complete().assert_no_violations()


def test_rule_1_1_merge_zero_demand_emits_nothing_but_completes_empty_sources() -> None:
    Flowable.merge(Flowable.empty().hide(), Flowable.empty()).test(0).assert_result().assert_no_violations()
    ts = Flowable.merge(Flowable.just(1).hide(), Flowable.just(2)).test(0)
    ts.assert_no_values().assert_not_complete()
    ts.request(2)
    assert sorted(ts.values) == [1, 2]  # the queued scalar goes first, as in RxJava
    ts.assert_complete().assert_no_violations()


def test_rule_3_9_merge_request_zero_signals_value_error(undeliverable: list[BaseException]) -> None:
    never = CountingSource(Flowable.never())
    ts = Flowable.merge(Flowable.range(0, 5).hide(), never).test(0)
    ts.request(0)
    ts.assert_error(ValueError, match="3.9").assert_no_values().assert_no_violations()
    assert never.cancels == 1


def test_rule_3_9_zip_request_zero_signals_value_error() -> None:
    ts = Flowable.zip(Flowable.range(0, 5).hide(), Flowable.never()).test(0)
    ts.request(-3)
    ts.assert_error(ValueError, match="3.9").assert_no_violations()


def test_rule_1_1_zip_never_over_delivers() -> None:
    ts: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.zip(Flowable.range(0, 100).hide(), Flowable.range(0, 100).hide(), prefetch=4).subscribe(ts)
    for k in range(1, 20):
        ts.request(1)
        assert len(ts.values) == k
    ts.request(MAX)
    ts.assert_value_count(100).assert_complete().assert_no_violations()


def test_rule_3_12_merge_stops_soon_after_cancel_from_on_next() -> None:
    ts = CancelAfter(3)
    srcs = [Flowable.just(i) for i in range(5)] + [Flowable.range(10, 10).hide()]
    Flowable.merge(*srcs).subscribe(ts)
    ts.assert_values(0, 1, 2).assert_not_complete().assert_no_violations()
    ts2 = CancelAfter(3)
    Flowable.merge(Flowable.range(0, 10).hide(), Flowable.range(10, 10).hide()).subscribe(ts2)
    ts2.assert_values(0, 1, 2).assert_no_violations()


def test_rule_3_12_zip_stops_soon_after_cancel_from_on_next() -> None:
    ts = CancelAfter(2)
    Flowable.zip(Flowable.range(0, 10).hide(), Flowable.range(0, 10).hide()).subscribe(ts)
    ts.assert_values((0, 0), (1, 1)).assert_not_complete().assert_no_violations()

