"""timeout, timeout_selector, timestamp, time_interval, take_for, skip_for."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import Flowable
from rstreams.flowable.operators._time_timestamp import Timed
from rstreams.testing import TestPublisher, TestScheduler

# -- timeout ------------------------------------------------------------------------------------


def test_timeout_first_element() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).timeout(1.0, scheduler=ts).test()
    ts.advance_by(1)
    sub.assert_error(TimeoutError, match="timeout").assert_no_violations()
    assert tp.was_cancelled
    assert ts.pending == 0


def test_timeout_between_elements_rearms() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).timeout(1.0, scheduler=ts).test()
    for v in range(3):
        ts.advance_by(0.9)
        tp.next(v)
    tp.complete()
    ts.advance_by(5)
    sub.assert_result(0, 1, 2).assert_no_violations()
    assert ts.pending == 0


def test_timeout_fallback_carries_unfulfilled_demand() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).timeout(1.0, Flowable.range(100, 10), ts).test(5)
    tp.next(1, 2)
    ts.advance_by(1)
    sub.assert_values(1, 2, 100, 101, 102).assert_not_complete()
    assert tp.was_cancelled
    sub.request(100)
    sub.assert_value_count(12).assert_complete().assert_no_violations()


def test_timeout_element_after_timeout_is_dropped() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).timeout(1.0, scheduler=ts).test()
    ts.advance_by(1)
    sub.assert_error(TimeoutError).assert_no_violations()


def test_timeout_selector_first_and_items() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = (
        Flowable.from_publisher(tp)
        .timeout_selector(Flowable.timer(5, ts), lambda x: Flowable.timer(x, ts))
        .test()
    )
    ts.advance_by(4)
    tp.next(2)
    ts.advance_by(1.5)
    tp.next(1)
    ts.advance_by(1)
    sub.assert_values(2, 1).assert_error(TimeoutError).assert_no_violations()
    assert tp.was_cancelled


def test_timeout_selector_no_first_timeout_and_fallback() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = (
        Flowable.from_publisher(tp)
        .timeout_selector(None, lambda x: Flowable.empty(), Flowable.just(9))
        .test()
    )
    ts.advance_by(100)
    sub.assert_no_values()
    tp.next(1)  # the item timeout completes at once: switch to the fallback
    sub.assert_result(1, 9).assert_no_violations()


def test_timeout_selector_raising_and_none_selector() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).timeout_selector(None, lambda x: 1 / 0).test()  # type: ignore[arg-type,return-value]
    tp.next(1)
    sub.assert_values(1).assert_error(ZeroDivisionError).assert_no_violations()
    assert tp.was_cancelled
    tp2: TestPublisher[int] = TestPublisher.create()
    sub2 = Flowable.from_publisher(tp2).timeout_selector(None, lambda x: None).test()  # type: ignore[arg-type,return-value]
    tp2.next(1)
    sub2.assert_error(TypeError, match="timeout_selector").assert_no_violations()


def test_timeout_selector_timeout_publisher_error() -> None:
    sub = Flowable.never().timeout_selector(Flowable.error(KeyError("t")), lambda x: Flowable.never()).test()
    sub.assert_error(KeyError).assert_no_violations()


def test_timeout_bad_arguments() -> None:
    with pytest.raises(ValueError):
        Flowable.never().timeout(-1)
    with pytest.raises(TypeError):
        Flowable.never().timeout(1, fallback=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Flowable.never().timeout_selector(None, 3)  # type: ignore[arg-type]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=20), st.integers(1, 4))
def test_property_timeout_model(gaps: list[int], d: int) -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).timeout(d, scheduler=ts).test()
    want: list[int] = []
    timed_out = False
    for i, g in enumerate(gaps):
        ts.advance_by(g)
        if g >= d:
            timed_out = True
            break
        tp.next(i)
        want.append(i)
    if not timed_out:
        tp.complete()
    assert sub.values == want
    if timed_out:
        sub.assert_error(TimeoutError)
    else:
        sub.assert_complete()
    sub.assert_no_violations()


# -- timestamp / time_interval ------------------------------------------------------------------


def test_timestamp_and_time_interval() -> None:
    ts = TestScheduler(start=10)
    tp: TestPublisher[str] = TestPublisher.create()
    a = Flowable.from_publisher(tp).timestamp(ts).test()
    tp2: TestPublisher[str] = TestPublisher.create()
    b = Flowable.from_publisher(tp2).time_interval(ts).test()
    ts.advance_by(1)
    tp.next("x")
    tp2.next("x")
    ts.advance_by(2.5)
    tp.next("y").complete()
    tp2.next("y").complete()
    a.assert_result(Timed("x", 11.0), Timed("y", 13.5)).assert_no_violations()
    b.assert_result(Timed("x", 1.0), Timed("y", 2.5)).assert_no_violations()
    assert a.values[0].value == "x" and a.values[0].time == 11.0


# -- take_for / skip_for ------------------------------------------------------------------------


def test_take_for() -> None:
    ts = TestScheduler()
    sub = Flowable.interval(1.0, scheduler=ts).take_for(2.5, ts).test()
    ts.advance_by(3)
    sub.assert_result(0, 1).assert_no_violations()
    assert ts.pending == 0


def test_take_for_source_completes_first() -> None:
    ts = TestScheduler()
    sub = Flowable.just(1, 2).take_for(1, ts).test()
    sub.assert_result(1, 2).assert_no_violations()
    assert ts.pending == 0


def test_skip_for() -> None:
    ts = TestScheduler()
    sub = Flowable.interval(1.0, scheduler=ts).skip_for(1.5, ts).take(2).test()
    ts.advance_by(3)
    sub.assert_result(1, 2).assert_no_violations()
    assert ts.pending == 0
