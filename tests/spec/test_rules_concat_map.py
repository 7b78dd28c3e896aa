"""Reactive Streams rule tests (``test_rule_*``) of concat_map.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_concat_map.py``."""

from __future__ import annotations

from operators.test_merge_zip import CountingSource
from rstreams import Flowable
from rstreams.testing import TestSubscriber


def test_rule_3_9_concat_map_request_zero_signals_value_error() -> None:
    src = CountingSource(Flowable.never())
    ts = Flowable.from_publisher(src).concat_map(lambda x: Flowable.just(x)).test(0)
    ts.request(0)
    ts.assert_error(ValueError, match="3.9").assert_no_violations()
    assert src.cancels == 1


def test_rule_1_1_concat_map_one_at_a_time() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.range(0, 30).hide().concat_map(lambda x: Flowable.range(x, x % 4).hide()).subscribe(ts)
    want = [y for x in range(30) for y in range(x, x + x % 4)]
    for k in range(1, len(want) + 1):
        ts.request(1)
        assert len(ts.values) == k
    ts.assert_values(*want).assert_complete().assert_no_violations()


def test_rule_3_12_concat_map_stops_soon_after_cancel_from_on_next() -> None:
    from operators.test_merge_zip import CancelAfter

    for mapper in (lambda x: Flowable.just(x), lambda x: Flowable.just(x, x).hide()):
        ts = CancelAfter(3)
        Flowable.range(0, 10).hide().concat_map(mapper).subscribe(ts)
        assert len(ts.values) == 3
        ts.assert_not_complete().assert_no_violations()

