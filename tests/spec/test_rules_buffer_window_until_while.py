"""Reactive Streams rule tests (``test_rule_*``) of buffer_until, buffer_while, window_until and window_while.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_buffer_window_until_while.py``."""

from __future__ import annotations

import pytest

from operators.test_buffer_window_until_while import Grab, is_zero
from rstreams import Flowable, plugins
from rstreams.errors import NoneElementError
from rstreams.testing import TestPublisher, TestSubscriber


def test_rule_1_1_buffer_until_upstream_demand_equals_list_demand() -> None:
    tp: TestPublisher[int] = TestPublisher.create()  # raises on an element beyond demand (rule 1.1)
    ts: TestSubscriber[list[int]] = TestSubscriber(0)
    tp_f = Flowable.from_publisher(tp).buffer_until(is_zero)
    tp_f.subscribe(ts)
    tp.assert_was_not_requested()
    ts.request(1)
    assert tp.requested == 1
    tp.next(1)  # absorbed: one more is requested
    assert tp.requested == 1
    tp.next(2)
    tp.next(0)  # closes the list: demand used up
    ts.assert_values([1, 2, 0])
    assert tp.requested == 0
    ts.request(2)
    assert tp.requested == 2
    ts.assert_no_violations()


def test_rule_3_9_buffer_until_bad_request() -> None:
    ts: TestSubscriber[list[int]] = TestSubscriber(0)
    Flowable.just(1, 0).hide().buffer_until(is_zero).subscribe(ts)
    ts.request(0)
    ts.assert_error(ValueError, match="3.9").assert_no_violations()


def test_rule_3_9_buffer_until_bad_request_while_the_last_list_waits() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[list[int]] = TestSubscriber(1)
    Flowable.from_publisher(tp).buffer_until(is_zero, cut_before=True).subscribe(ts)
    tp.next(1)
    tp.next(0)
    tp.complete()  # [0] waits for demand
    ts.request(0)
    ts.assert_values([1]).assert_error(ValueError, match="3.9").assert_no_violations()


def test_rule_2_13_buffer_until_none_element_from_source() -> None:
    with plugins.collect_errors():
        ts = Flowable.from_iterable([1, None, 0]).hide().buffer_until(is_zero).test()
    ts.assert_error((TypeError, NoneElementError)).assert_no_violations()


def test_rule_1_1_window_until_upstream_bounded_by_prefetch_and_replenished_as_consumed() -> None:
    tp: TestPublisher[int] = TestPublisher.create()  # raises on an element beyond demand (rule 1.1)
    main = Grab(0, inner_request=0)
    Flowable.from_publisher(tp).window_until(is_zero, prefetch=4).subscribe(main)
    tp.assert_was_not_requested()  # nothing before the first request
    main.request(1)
    assert tp.requested == 4
    tp.next(1)
    main.assert_value_count(1)
    inner = main.inners[0]
    tp.next(2, 3, 4)
    assert tp.requested == 0  # four elements wait in the window: no more
    inner.request(2)
    inner.assert_values(1, 2)
    assert tp.requested == 0  # 2 < limit (3): not yet
    inner.request(1)
    assert tp.requested == 3  # replenished in a batch
    inner.assert_values(1, 2, 3).assert_no_violations()
    main.assert_no_violations()


def test_rule_3_13_window_until_main_cancel_with_no_window_cancels_upstream() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    main: TestSubscriber[Flowable[int]] = TestSubscriber()
    Flowable.from_publisher(tp).window_until(is_zero).subscribe(main)
    main.cancel()
    assert tp.was_cancelled
    main.assert_no_violations()


def test_rule_3_9_window_until_bad_request() -> None:
    main: TestSubscriber[Flowable[int]] = TestSubscriber(0)
    tp: TestPublisher[int] = TestPublisher.create()
    Flowable.from_publisher(tp).window_until(is_zero).subscribe(main)
    main.request(-1)
    main.assert_error(ValueError, match="3.9").assert_no_violations()
    assert tp.was_cancelled


def test_rule_2_12_window_until_window_is_unicast() -> None:
    main: TestSubscriber[Flowable[int]] = TestSubscriber()
    tp: TestPublisher[int] = TestPublisher.create()
    Flowable.from_publisher(tp).window_until(is_zero).subscribe(main)
    tp.next(1)
    w = main.values[0]
    a: TestSubscriber[int] = TestSubscriber()
    b: TestSubscriber[int] = TestSubscriber()
    w.subscribe(a)
    w.subscribe(b)
    b.assert_error(Exception)
    a.assert_values(1).assert_no_violations()


@pytest.mark.parametrize("hidden", [False, True])
def test_rule_3_12_buffer_until_cancel_inside_on_next_stops_the_predicate(hidden: bool) -> None:
    # the fused source hands over batches under unbounded demand: the batch loop stops too
    calls: list[int] = []

    def pred(x: int) -> bool:
        calls.append(x)
        return x % 3 == 2

    class CancelAfterFirst(TestSubscriber[list[int]]):
        def on_next(self, item: list[int]) -> None:
            super().on_next(item)
            self.cancel()

    src = Flowable.range(0, 1000)
    ts = CancelAfterFirst()
    (src.hide() if hidden else src).buffer_until(pred).subscribe(ts)
    ts.assert_values([0, 1, 2]).assert_no_violations()
    assert calls == [0, 1, 2]


@pytest.mark.parametrize("hidden", [False, True])
def test_rule_1_1_window_until_batch_source_stays_within_prefetch(hidden: bool) -> None:
    # a fused range hands over batches of what was requested: still at most prefetch in flight
    pulled: list[int] = []
    src = Flowable.range(0, 1000)
    src = (src.hide() if hidden else src).do_on_next(pulled.append)
    main = Grab(inner_request=0)
    src.window_until(lambda x: x % 100 == 99, prefetch=16).subscribe(main)
    assert len(pulled) == 16
    main.assert_value_count(1)
    inner = main.inners[0]
    inner.request(5)
    assert len(pulled) == 16  # 5 consumed: below the replenish limit (12)
    inner.request(7)
    assert len(pulled) == 28  # 12 consumed: replenished in one batch
    inner.assert_values(*range(12))
    inner.request(2**63 - 1)
    inner.assert_result(*range(100)).assert_no_violations()
    # the second window's subscriber requests nothing: what it holds is all that is in flight
    assert 100 < len(pulled) <= 100 + 16
    assert len(main.inners[1].values) == 0
    main.assert_not_complete().assert_no_violations()

