"""interval, timer, delay, delay_subscription: virtual time only."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import Flowable
from rstreams.errors import MissingBackpressureError
from rstreams.testing import TestPublisher, TestScheduler, TestSubscriber

# -- interval -----------------------------------------------------------------------------------


def test_interval_ticks_on_virtual_time() -> None:
    ts = TestScheduler()
    sub = Flowable.interval(1.0, scheduler=ts).test()
    ts.advance_by(0.5)
    sub.assert_no_values()
    ts.advance_by(3)
    sub.assert_values(0, 1, 2).assert_not_complete().assert_no_violations()
    sub.cancel()


def test_interval_initial_delay() -> None:
    ts = TestScheduler()
    sub = Flowable.interval(2.0, initial_delay=0.5, scheduler=ts).test()
    ts.advance_by(0.5)
    sub.assert_values(0)
    ts.advance_by(2)
    sub.assert_values(0, 1).assert_no_violations()
    sub.cancel()


def test_interval_missing_backpressure_names_interval_and_fix() -> None:
    ts = TestScheduler()
    sub = Flowable.interval(1.0, scheduler=ts).test(2)
    ts.advance_by(5)
    sub.assert_values(0, 1).assert_error(MissingBackpressureError, match="interval")
    assert "on_backpressure_drop" in str(sub.errors[0])
    assert ts.pending == 0  # the periodic task is gone
    sub.assert_no_violations()


def test_interval_with_on_backpressure_drop_does_not_fail() -> None:
    ts = TestScheduler()
    sub = Flowable.interval(1.0, scheduler=ts).on_backpressure_drop().test(1)
    ts.advance_by(3)
    sub.request(1)
    ts.advance_by(1)
    sub.assert_values(0, 3).assert_no_errors().assert_no_violations()
    sub.cancel()


def test_interval_bad_arguments() -> None:
    with pytest.raises(ValueError):
        Flowable.interval(0)
    with pytest.raises(TypeError):
        Flowable.interval("1")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Flowable.interval(1.0, initial_delay=-1)
    with pytest.raises(TypeError):
        Flowable.interval(1.0, scheduler="x")  # type: ignore[arg-type]


# -- timer --------------------------------------------------------------------------------------


def test_timer_emits_zero_once() -> None:
    ts = TestScheduler()
    sub = Flowable.timer(2.0, ts).test()
    ts.advance_by(1.9)
    sub.assert_no_values()
    ts.advance_by(0.1)
    sub.assert_result(0).assert_no_violations()
    assert ts.pending == 0


def test_timer_cancel_before_firing() -> None:
    ts = TestScheduler()
    sub = Flowable.timer(1.0, ts).test()
    sub.cancel()
    ts.advance_by(2)
    sub.assert_empty().assert_no_violations()


# -- delay ----------------------------------------------------------------------------------------


def test_delay_shifts_elements_and_completion() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).delay(1.0, ts).test()
    tp.next(1)
    ts.advance_by(0.5)
    tp.next(2)
    tp.complete()
    sub.assert_no_values()
    ts.advance_by(0.5)
    sub.assert_values(1).assert_not_complete()
    ts.advance_by(0.5)
    sub.assert_result(1, 2).assert_no_violations()


def test_delay_error_is_immediate_by_default() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).delay(1.0, ts).test()
    tp.next(1)
    tp.error(KeyError("x"))
    ts.trigger_actions()
    sub.assert_no_values().assert_error(KeyError)
    ts.advance_by(2)
    sub.assert_no_values().assert_no_violations()


def test_delay_error_true_delays_the_error_too() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).delay(1.0, ts, delay_error=True).test()
    tp.next(1)
    tp.error(KeyError("x"))
    ts.advance_by(1)
    sub.assert_values(1).assert_error(KeyError).assert_no_violations()


def test_delay_subscription() -> None:
    ts = TestScheduler()
    subscribed: list[float] = []
    src = Flowable.just(1, 2).do_on_subscribe(lambda s: subscribed.append(ts.now()))
    sub = src.delay_subscription(5, ts).test(1)
    ts.advance_by(4)
    assert subscribed == []
    ts.advance_by(1)
    assert subscribed == [5.0]
    sub.assert_values(1)
    sub.request(1)
    sub.assert_result(1, 2).assert_no_violations()


def test_delay_subscription_cancel_before_subscribing() -> None:
    ts = TestScheduler()
    subscribed: list[int] = []
    sub = Flowable.just(1).do_on_subscribe(lambda s: subscribed.append(1)).delay_subscription(1, ts).test()
    sub.cancel()
    ts.advance_by(2)
    assert subscribed == []
    sub.assert_empty().assert_no_violations()


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(0, 100), max_size=30),
    st.lists(st.integers(1, 5), min_size=1, max_size=10),
    st.booleans(),
)
def test_property_delay_is_identity_after_time(data: list[int], requests: list[int], hidden: bool) -> None:
    ts = TestScheduler()
    src = Flowable.from_iterable(data)
    if hidden:
        src = src.hide()
    sub: TestSubscriber[int] = TestSubscriber(0)
    src.delay(1.0, ts).subscribe(sub)
    for r in requests:
        sub.request(r)
        ts.advance_by(1)
    want = data[: sum(requests)]
    assert sub.values == want
    if sum(requests) > len(data):
        sub.assert_complete()
    sub.assert_no_violations()
