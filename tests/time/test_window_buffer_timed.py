"""window(count, skip), window_timed, buffer_timed: models, demand, rules, virtual time."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from operators.harness import check_scenarios
from rstreams import Flowable
from rstreams.errors import MissingBackpressureError
from rstreams.testing import TestPublisher, TestScheduler, TestSubscriber


def _model_window(data: list[int], count: int, skip: int) -> list[list[int]]:
    return [data[i : i + count] for i in range(0, len(data), skip)]


def _windows_as_lists(f: Flowable[Any], count: int, skip: int | None = None) -> Flowable[Any]:
    return f.window(count, skip).concat_map(lambda w: w.to_list(), prefetch=1 << 20)


# -- window(count, skip) -----------------------------------------------------------------------


@pytest.mark.parametrize("count,skip", [(2, None), (3, 3), (2, 3), (3, 1), (1, 1), (4, 2)])
def test_window_scenarios(count: int, skip: int | None) -> None:
    data = list(range(11))
    check_scenarios(
        lambda f: f.window(count, skip).flat_map(lambda w: w.to_list()),
        data,
        sorted(_model_window(data, count, skip or count), key=lambda xs: xs[-1])
        if skip and skip < count
        else _model_window(data, count, skip or count),
    )


def test_window_overlapping_order_of_completion() -> None:
    # overlapping windows complete in the order they close (by last element)
    sub = Flowable.range(0, 5).window(3, 1).flat_map(lambda w: w.to_list()).test()
    sub.assert_result([0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4], [4]).assert_no_violations()


def test_window_is_unicast() -> None:
    wins: list[Any] = []
    first: TestSubscriber[int] = TestSubscriber()
    Flowable.just(1, 2).window(2).subscribe(on_next=lambda w: (wins.append(w), w.subscribe(first)))
    second: TestSubscriber[int] = TestSubscriber()
    wins[0].subscribe(second)
    first.assert_result(1, 2).assert_no_violations()
    second.assert_error(RuntimeError, match="once").assert_no_violations()


def test_window_abandoned_window_still_buffers_for_late_subscriber() -> None:
    main = Flowable.range(0, 4).window(2).test()
    main.assert_value_count(2).assert_complete()
    main.values[1].test().assert_result(2, 3).assert_no_violations()


def test_window_cancel_main_and_windows_cancels_upstream() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    inner: list[TestSubscriber[int]] = []
    main = (
        Flowable.from_publisher(tp)
        .window(10)
        .do_on_next(lambda w: (inner.append(TestSubscriber()), w.subscribe(inner[-1])))
        .test()
    )
    tp.next(1, 2)
    main.cancel()
    assert not tp.was_cancelled  # the open window still needs the upstream
    tp.next(3)
    inner[0].cancel()
    assert tp.was_cancelled
    assert inner[0].values == [1, 2, 3]
    main.assert_no_violations()


def test_window_error_reaches_main_and_open_window() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    inner: list[TestSubscriber[int]] = []
    main = (
        Flowable.from_publisher(tp)
        .window(10)
        .do_on_next(lambda w: (inner.append(TestSubscriber()), w.subscribe(inner[-1])))
        .test()
    )
    tp.next(1)
    tp.error(KeyError("k"))
    main.assert_error(KeyError).assert_no_violations()
    inner[0].assert_values(1).assert_error(KeyError).assert_no_violations()


def test_window_bad_arguments() -> None:
    with pytest.raises(ValueError):
        Flowable.range(0, 3).window(0)
    with pytest.raises(ValueError):
        Flowable.range(0, 3).window(2, 0)
    with pytest.raises(TypeError):
        Flowable.range(0, 3).window(2.5)  # type: ignore[arg-type]


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(0, 99), max_size=40),
    st.integers(1, 5),
    st.integers(1, 5),
    st.booleans(),
    st.lists(st.integers(1, 4), min_size=1, max_size=30),
)
def test_property_window_model(data: list[int], count: int, skip: int, hidden: bool, reqs: list[int]) -> None:
    src = Flowable.from_iterable(data)
    if hidden:
        src = src.hide()
    inner: list[TestSubscriber[int]] = []

    def on_window(w: Any) -> None:
        t: TestSubscriber[int] = TestSubscriber()
        inner.append(t)
        w.subscribe(t)

    main: TestSubscriber[Any] = TestSubscriber(0)
    src.window(count, skip).do_on_next(on_window).subscribe(main)
    for i in range(200):
        if main.completions:
            break
        main.request(reqs[i % len(reqs)])
    main.assert_complete().assert_no_violations()
    assert [t.values for t in inner] == _model_window(data, count, skip)
    for t in inner:
        t.assert_complete().assert_no_violations()


# -- window_timed -------------------------------------------------------------------------------


def test_window_timed() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).window_timed(1.0, scheduler=ts).flat_map(lambda w: w.to_list()).test()
    tp.next(1, 2)
    ts.advance_by(1)
    ts.advance_by(1)  # an empty window
    tp.next(3)
    tp.complete()
    sub.assert_result([1, 2], [], [3]).assert_no_violations()
    assert ts.pending == 0


def test_window_timed_with_count_restarts_timer() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = (
        Flowable.from_publisher(tp)
        .window_timed(1.0, count=2, scheduler=ts)
        .flat_map(lambda w: w.to_list())
        .test()
    )
    ts.advance_by(0.5)
    tp.next(1, 2, 3)  # [1, 2] closes by size at 0.5; the next window runs until 1.5
    ts.advance_by(0.9)
    sub.assert_values([1, 2])
    ts.advance_by(0.1)
    sub.assert_values([1, 2], [3])
    tp.complete()
    sub.assert_result([1, 2], [3], []).assert_no_violations()


def test_window_timed_missing_backpressure() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).window_timed(1.0, scheduler=ts).test(1)
    ts.advance_by(1)
    sub.assert_value_count(1).assert_error(
        MissingBackpressureError, match="window_timed"
    ).assert_no_violations()
    assert tp.was_cancelled
    assert ts.pending == 0


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 4), max_size=25), st.integers(1, 4), st.one_of(st.none(), st.integers(1, 4)))
def test_property_window_timed_equals_buffer_timed(gaps: list[int], p: int, count: int | None) -> None:
    # the same events split by window_timed and buffer_timed give the same lists
    events = [(sum(gaps[: i + 1]), i) for i in range(len(gaps))]
    out: list[list[int]] = []
    for make in (
        lambda f, s: f.window_timed(p, count, s).concat_map(lambda w: w.to_list(), prefetch=1 << 20),
        lambda f, s: f.buffer_timed(p, count, s),
    ):
        ts = TestScheduler()
        tp: TestPublisher[int] = TestPublisher.create()
        sub = make(Flowable.from_publisher(tp), ts).test()
        for t, v in events:
            ts.advance_to(t)
            tp.next(v)
        tp.complete()
        sub.assert_complete().assert_no_violations()
        # compare non-empty lists: at completion window_timed completes its (possibly empty) last
        # window, buffer_timed emits its last list only if it is not empty
        out.append([x for x in sub.values if x])
        assert [x for xs in sub.values for x in xs] == [v for _, v in events]
    assert out[0] == out[1]


# -- buffer_timed -------------------------------------------------------------------------------


def test_buffer_timed_emits_every_period_including_empty() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).buffer_timed(1.0, scheduler=ts).test()
    tp.next(1, 2)
    ts.advance_by(2)
    tp.next(3)
    tp.complete()
    sub.assert_result([1, 2], [], [3]).assert_no_violations()
    assert ts.pending == 0


def test_buffer_timed_count_closes_early() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).buffer_timed(10.0, count=2, scheduler=ts).test()
    tp.next(1, 2, 3)
    sub.assert_values([1, 2])
    tp.complete()
    sub.assert_result([1, 2], [3]).assert_no_violations()


def test_buffer_timed_missing_backpressure_when_a_list_is_due_without_demand() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).buffer_timed(1.0, scheduler=ts).test(1)
    tp.next(1)
    ts.advance_by(1)
    tp.next(2)
    ts.advance_by(1)
    sub.assert_values([1]).assert_error(MissingBackpressureError, match="buffer_timed").assert_no_violations()
    assert "on_backpressure_buffer" in str(sub.errors[0])
    assert tp.was_cancelled
    assert ts.pending == 0


def test_buffer_timed_slow_consumer_with_on_backpressure_buffer() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).buffer_timed(1.0, scheduler=ts).on_backpressure_buffer().test(0)
    tp.next(1)
    ts.advance_by(3)
    tp.complete()
    sub.assert_no_values()
    sub.request(10)
    sub.assert_result([1], [], []).assert_no_violations()


def test_buffer_timed_final_list_waits_for_demand() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).buffer_timed(5.0, scheduler=ts).test(0)
    tp.next(1, 2)
    tp.complete()
    sub.assert_no_values().assert_not_complete()
    sub.request(1)
    sub.assert_result([1, 2]).assert_no_violations()


def test_buffer_timed_error_drops_the_partial_list() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).buffer_timed(1.0, scheduler=ts).test()
    tp.next(1)
    tp.error(KeyError("k"))
    sub.assert_no_values().assert_error(KeyError).assert_no_violations()
    assert ts.pending == 0


def test_buffer_timed_bad_arguments() -> None:
    with pytest.raises(ValueError):
        Flowable.never().buffer_timed(0)
    with pytest.raises(ValueError):
        Flowable.never().buffer_timed(1, count=0)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=30), st.integers(1, 3), st.one_of(st.none(), st.integers(1, 4)))
def test_property_buffer_timed_model(gaps: list[int], p: int, count: int | None) -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).buffer_timed(p, count, ts).test()
    # model: a list closes at each tick (period p since the last close) or when it holds `count`
    want: list[list[int]] = []
    cur: list[int] = []
    next_tick = p
    now = 0
    for i, g in enumerate(gaps):
        t = now + g
        while next_tick <= t:
            want.append(cur)
            cur = []
            next_tick += p
        now = t
        ts.advance_to(t)
        tp.next(i)
        cur.append(i)
        if count is not None and len(cur) >= count:
            want.append(cur)
            cur = []
            next_tick = now + p
    tp.complete()
    if cur:
        want.append(cur)
    sub.assert_result(*want).assert_no_violations()
