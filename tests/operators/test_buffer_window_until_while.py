"""buffer_until / buffer_while / window_until / window_while: Reactor's semantics, backpressure,
cancellation, errors, bad arguments, abandoned windows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from operators.harness import Boom, check_raising, check_scenarios, run_one_by_one
from rstreams import Flowable
from rstreams.testing import TestPublisher, TestSubscriber

Pred = Callable[[Any], object]


def is_zero(x: int) -> bool:
    return x == 0


def not_zero(x: int) -> bool:
    return x != 0


# -- models (Reactor's rules, written plainly) ---------------------------------------------------


def model_buffer_until(data: list[Any], pred: Pred, cut_before: bool = False) -> list[list[Any]]:
    out: list[list[Any]] = []
    buf: list[Any] = []
    for x in data:
        if cut_before:
            if pred(x) and buf:
                out.append(buf)
                buf = []
            buf.append(x)
        else:
            buf.append(x)
            if pred(x):
                out.append(buf)
                buf = []
    if buf:
        out.append(buf)
    return out


def model_buffer_while(data: list[Any], pred: Pred) -> list[list[Any]]:
    out: list[list[Any]] = []
    buf: list[Any] = []
    for x in data:
        if pred(x):
            buf.append(x)
        elif buf:
            out.append(buf)
            buf = []
    if buf:
        out.append(buf)
    return out


def model_windows(data: list[Any], pred: Pred, mode: str) -> list[list[Any]]:
    """Reactor's windows as lists: a window opens with the element that needs it."""
    out: list[list[Any]] = []
    cur: list[Any] | None = None
    for x in data:
        m = pred(x)
        if cur is None:
            cur = []
            out.append(cur)
        if mode == "until":
            cur.append(x)
            if m:
                cur = None
        elif mode == "cut_before":
            if m:
                cur = []
                out.append(cur)
            cur.append(x)
        elif m:
            cur.append(x)
        else:
            cur = None
    return out


def windows_as_lists(f: Flowable[Flowable[Any]]) -> Flowable[list[Any]]:
    return f.concat_map(lambda w: w.to_list())


class Grab(TestSubscriber[Flowable[int]]):
    """Subscribes a TestSubscriber(inner_request) to each window during on_next (not abandoned)."""

    def __init__(self, initial: int = 2**63 - 1, inner_request: int = 2**63 - 1) -> None:
        super().__init__(initial)
        self.inners: list[TestSubscriber[int]] = []
        self._inner_request = inner_request

    def on_next(self, item: Flowable[int]) -> None:
        super().on_next(item)
        t: TestSubscriber[int] = TestSubscriber(self._inner_request)
        self.inners.append(t)
        item.subscribe(t)


DATA = [1, 2, 0, 3, 0, 0, 4, 5, 0, 6]


# -- buffer_until / buffer_while -----------------------------------------------------------------


def test_buffer_until_examples() -> None:
    Flowable.just(1, 2, 0, 3, 0).buffer_until(is_zero).test().assert_result([1, 2, 0], [3, 0]).assert_no_violations()
    Flowable.just(1, 0, 2).buffer_until(is_zero, cut_before=True).test().assert_result([1], [0, 2]).assert_no_violations()
    # a leading separator in cut_before mode does not emit an empty list
    Flowable.just(0, 1, 0).buffer_until(is_zero, True).test().assert_result([0, 1], [0]).assert_no_violations()
    Flowable.empty().buffer_until(is_zero).test().assert_result().assert_no_violations()


def test_buffer_while_examples() -> None:
    Flowable.just(1, 2, 0, 0, 3).buffer_while(not_zero).test().assert_result([1, 2], [3]).assert_no_violations()
    Flowable.just(0, 0).buffer_while(not_zero).test().assert_result().assert_no_violations()


@pytest.mark.parametrize("cut_before", [False, True])
def test_buffer_until_scenarios(cut_before: bool) -> None:
    check_scenarios(
        lambda f: f.buffer_until(is_zero, cut_before),
        DATA,
        lambda d: model_buffer_until(d, is_zero, cut_before),
        on_error_expected=lambda d: (model_buffer_until(d, is_zero, cut_before)[:-1], Boom),
    )


def test_buffer_while_scenarios() -> None:
    check_scenarios(
        lambda f: f.buffer_while(not_zero),
        DATA,
        lambda d: model_buffer_while(d, not_zero),
        on_error_expected=lambda d: (model_buffer_while(d, not_zero)[:-1], Boom),
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 3), max_size=30),
    st.sampled_from(["until", "cut_before", "while"]),
    st.booleans(),
    st.lists(st.integers(1, 3), min_size=1, max_size=5),
)
def test_property_buffer_predicate_matches_model(data: list[int], mode: str, hidden: bool, reqs: list[int]) -> None:
    src = Flowable.from_iterable(data)
    if hidden:
        src = src.hide()
    if mode == "while":
        f = src.buffer_while(not_zero)
        want = model_buffer_while(data, not_zero)
    else:
        f = src.buffer_until(is_zero, mode == "cut_before")
        want = model_buffer_until(data, is_zero, mode == "cut_before")
    ts: TestSubscriber[list[int]] = TestSubscriber(0)
    f.subscribe(ts)
    i = 0
    while not ts.is_terminated and i < 200:
        ts.request(reqs[i % len(reqs)])
        i += 1
    assert ts.values == want
    ts.assert_complete().assert_no_violations()


def test_buffer_until_last_list_waits_for_demand() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[list[int]] = TestSubscriber(1)
    Flowable.from_publisher(tp).buffer_until(is_zero, cut_before=True).subscribe(ts)
    tp.next(1)
    tp.next(0)  # emits [1]; [0] is open, no demand left
    ts.assert_values([1])
    tp.complete()
    ts.assert_values([1]).assert_not_complete()
    ts.request(1)
    ts.assert_result([1], [0]).assert_no_violations()


def test_buffer_while_unbounded_makes_no_request_per_element() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.from_publisher(tp).buffer_while(not_zero).test()
    tp.next(1, 2, 0, 3)
    tp.complete()
    ts.assert_result([1, 2], [3]).assert_no_violations()
    assert len(tp.request_calls) == 1


def test_buffer_until_raising_predicate() -> None:
    def pred(x: int) -> bool:
        if x == 3:
            raise Boom("pred")
        return x == 0

    check_raising(lambda f: f.buffer_until(pred), DATA)
    check_raising(lambda f: f.buffer_while(pred), DATA)


def test_buffer_until_cancel_stops_upstream() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.from_publisher(tp).buffer_until(is_zero).test()
    tp.next(1, 0)
    ts.cancel()
    assert tp.was_cancelled
    ts.assert_values([1, 0]).assert_not_complete().assert_no_violations()


@pytest.mark.parametrize(
    ("call", "exc"),
    [
        (lambda f: f.buffer_until(3), TypeError),
        (lambda f: f.buffer_until(None), TypeError),
        (lambda f: f.buffer_until(is_zero, cut_before=1), TypeError),
        (lambda f: f.buffer_while("x"), TypeError),
        (lambda f: f.window_until(5), TypeError),
        (lambda f: f.window_until(is_zero, cut_before="yes"), TypeError),
        (lambda f: f.window_until(is_zero, prefetch=0), ValueError),
        (lambda f: f.window_while(not_zero, prefetch=1.5), TypeError),
        (lambda f: f.window_while(None), TypeError),
    ],
)
def test_bad_arguments_fail_at_assembly(call: Callable[[Flowable[int]], Any], exc: type[BaseException]) -> None:
    with pytest.raises(exc):
        call(Flowable.just(1))


# -- window_until / window_while -----------------------------------------------------------------


def test_window_until_and_while_examples() -> None:
    windows_as_lists(Flowable.just(1, 2, 0, 3).window_until(is_zero)).test().assert_result([1, 2, 0], [3])
    windows_as_lists(Flowable.just(1, 0, 2).window_until(is_zero, True)).test().assert_result([1], [0, 2])
    # Reactor: cut_before with a matching first element emits an empty first window
    windows_as_lists(Flowable.just(0, 1, 0).window_until(is_zero, True)).test().assert_result([], [0, 1], [0])
    windows_as_lists(Flowable.just(1, 2, 0, 3).window_while(not_zero)).test().assert_result([1, 2], [3])
    # Reactor: a leading separator or two in a row give empty windows
    windows_as_lists(Flowable.just(0, 1, 0, 0, 2).window_while(not_zero)).test().assert_result([], [1], [], [2])
    windows_as_lists(Flowable.empty().window_while(not_zero)).test().assert_result().assert_no_violations()


@pytest.mark.parametrize("mode", ["until", "cut_before", "while"])
@pytest.mark.parametrize("flat", [False, True])
def test_window_predicate_scenarios(mode: str, flat: bool) -> None:
    def op(f: Flowable[int]) -> Flowable[list[int]]:
        w = f.window_while(not_zero, prefetch=4) if mode == "while" else f.window_until(is_zero, mode == "cut_before", 4)
        if flat:
            return w.flat_map(lambda x: x.to_list())
        return windows_as_lists(w)

    pred = not_zero if mode == "while" else is_zero
    check_scenarios(op, DATA, lambda d: model_windows(d, pred, mode))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 3), max_size=30),
    st.sampled_from(["until", "cut_before", "while"]),
    st.booleans(),
    st.integers(1, 6),
    st.lists(st.integers(1, 3), min_size=1, max_size=5),
)
def test_property_window_predicate_matches_model(
    data: list[int], mode: str, hidden: bool, prefetch: int, reqs: list[int]
) -> None:
    src = Flowable.from_iterable(data)
    if hidden:
        src = src.hide()
    pred = not_zero if mode == "while" else is_zero
    w = src.window_while(pred, prefetch) if mode == "while" else src.window_until(pred, mode == "cut_before", prefetch)
    ts: TestSubscriber[list[int]] = TestSubscriber(0)
    windows_as_lists(w).subscribe(ts)
    i = 0
    while not ts.is_terminated and i < 300:
        ts.request(reqs[i % len(reqs)])
        i += 1
    assert ts.values == model_windows(data, pred, mode)
    ts.assert_complete().assert_no_violations()


def test_window_until_window_waits_for_main_demand() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    main = Grab(1)
    Flowable.from_publisher(tp).window_until(is_zero, prefetch=8).subscribe(main)
    tp.next(1, 0)  # first window [1, 0]
    tp.next(2)  # needs a second window: main has no demand; it waits
    main.assert_value_count(1)
    main.request(1)
    main.assert_value_count(2)
    tp.complete()
    assert [t.values for t in main.inners] == [[1, 0], [2]]
    main.assert_complete().assert_no_violations()


def test_window_until_abandoned_window_keeps_elements_and_does_not_stall() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    main: TestSubscriber[Flowable[int]] = TestSubscriber()
    Flowable.from_publisher(tp).window_until(is_zero, prefetch=2).subscribe(main)
    tp.next(1, 2)  # nobody subscribes: abandoned, credited at once
    assert tp.requested >= 1
    tp.next(3, 0)
    late: TestSubscriber[int] = TestSubscriber()
    main.values[0].subscribe(late)
    late.assert_result(1, 2, 3, 0).assert_no_violations()
    tp.next(5)
    tp.complete()
    main.assert_value_count(2).assert_complete().assert_no_violations()


def test_window_until_window_cancel_drops_and_replenishes() -> None:
    tp: TestPublisher[int] = TestPublisher.create()

    def take_one(w: Flowable[int]) -> Flowable[int]:
        return w.take(1)

    ts = Flowable.from_publisher(tp).window_until(is_zero, prefetch=2).flat_map(take_one).test()
    for i in range(1, 8):
        tp.next(i)  # all in the first window; take(1) cancelled it after the first
    tp.next(0)
    tp.next(9)
    tp.complete()
    ts.assert_result(1, 9).assert_no_violations()


def test_window_until_main_cancel_keeps_a_subscribed_open_window_running() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    main = Grab()
    Flowable.from_publisher(tp).window_until(is_zero).subscribe(main)
    tp.next(1)
    inner = main.inners[0]
    main.cancel()
    assert not tp.was_cancelled
    tp.next(2, 0)  # closes the window: nothing live left
    inner.assert_result(1, 2, 0)
    assert tp.was_cancelled
    main.assert_no_violations()


def test_window_until_upstream_error_reaches_window_and_main() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    inner: TestSubscriber[int] = TestSubscriber()

    def grab(w: Flowable[int]) -> Flowable[int]:
        w.subscribe(inner)
        return Flowable.empty()

    ts = Flowable.from_publisher(tp).window_until(is_zero).flat_map(grab).test()
    tp.next(1)
    tp.error(Boom("up"))
    inner.assert_values(1).assert_error(Boom).assert_no_violations()
    ts.assert_error(Boom).assert_no_violations()


def test_window_until_raising_predicate() -> None:
    def pred(x: int) -> bool:
        if x == 3:
            raise Boom("pred")
        return x == 0

    check_raising(lambda f: f.window_until(pred).flat_map(lambda w: w), DATA)
    check_raising(lambda f: f.window_while(pred).flat_map(lambda w: w), DATA)


def test_window_until_one_by_one() -> None:
    ts = run_one_by_one(windows_as_lists(Flowable.range(0, 20).window_until(lambda x: x % 3 == 0, prefetch=2)))
    ts.assert_complete().assert_no_violations()
    assert ts.values == model_windows(list(range(20)), lambda x: x % 3 == 0, "until")


def test_window_while_large_stream_with_small_prefetch_completes() -> None:
    n = 5000
    ts = Flowable.range(0, n).window_while(lambda x: x % 10 != 0, prefetch=3).flat_map(lambda w: w.count()).test()
    ts.await_done(5).assert_complete().assert_no_violations()
    assert sum(ts.values) == n - n // 10


def test_buffer_until_batch_path_requests_replacements_under_bounded_demand() -> None:
    ts: TestSubscriber[list[int]] = TestSubscriber(2)
    Flowable.range(0, 10).buffer_while(lambda x: x % 4 != 3).subscribe(ts)
    ts.assert_values([0, 1, 2], [4, 5, 6]).assert_not_complete()
    ts.request(5)
    ts.assert_result([0, 1, 2], [4, 5, 6], [8, 9]).assert_no_violations()


def test_window_until_windows_consumed_on_other_threads_replenish_without_loss() -> None:
    from rstreams import schedulers

    n = 20_000
    ts = (
        Flowable.range(0, n)
        .window_until(lambda x: x % 50 == 49, prefetch=16)
        .flat_map(lambda w: w.observe_on(schedulers.computation()).to_list(), max_concurrency=4)
        .test()
    )
    ts.await_done(20).assert_complete().assert_no_violations()
    assert sorted(x for lst in ts.values for x in lst) == list(range(n))


def test_window_while_windows_cancelled_on_other_threads_do_not_stall() -> None:
    from rstreams import schedulers

    n = 20_000
    ts = (
        Flowable.range(0, n)
        .window_while(lambda x: x % 40 != 39, prefetch=8)
        .flat_map(lambda w: w.observe_on(schedulers.computation()).take(3), max_concurrency=4)
        .test()
    )
    ts.await_done(20).assert_complete().assert_no_violations()
    assert len(ts.values) == 3 * (n // 40)
