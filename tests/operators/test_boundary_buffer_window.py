"""buffer(boundary) and window(boundary): RxJava 3 semantics (cuts, empty lists, completion of
either side, MissingBackpressureError), cancellation, errors, races between the two threads."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from operators.harness import Boom
from rstreams import Flowable, schedulers
from rstreams.errors import MissingBackpressureError
from rstreams.testing import TestPublisher, TestScheduler, TestSubscriber


def _pair() -> tuple[TestPublisher[int], TestPublisher[str]]:
    src: TestPublisher[int] = TestPublisher.create()
    b: TestPublisher[str] = TestPublisher.create()
    return src, b


# -- buffer(boundary) ----------------------------------------------------------------------------


def test_buffer_boundary_cuts_at_each_signal_empty_lists_included() -> None:
    src, b = _pair()
    ts = Flowable.from_publisher(src).buffer(b).test()
    src.next(1, 2)
    b.next("x")
    b.next("x")  # nothing collected: an empty list (RxJava)
    src.next(3)
    src.complete()  # the last list, then completion; the boundary is cancelled
    ts.assert_result([1, 2], [], [3]).assert_no_violations()
    assert b.was_cancelled


def test_buffer_boundary_empty_source_emits_one_empty_list() -> None:
    Flowable.empty().buffer(Flowable.never()).test().assert_result([]).assert_no_violations()


def test_buffer_boundary_completion_of_boundary_completes_and_cancels_source() -> None:
    src, b = _pair()
    ts = Flowable.from_publisher(src).buffer(b).test()
    src.next(1)
    b.complete()
    ts.assert_result([1]).assert_no_violations()
    assert src.was_cancelled


def test_buffer_boundary_virtual_time() -> None:
    ts = TestScheduler()
    sub = Flowable.interval(0.25, scheduler=ts).buffer(Flowable.interval(1.1, scheduler=ts)).take(3).test()
    ts.advance_by(3.3)
    sub.assert_result([0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11, 12]).assert_no_violations()
    assert ts.pending == 0


def test_buffer_boundary_missing_backpressure_at_a_boundary_signal() -> None:
    src, b = _pair()
    ts: TestSubscriber[list[int]] = TestSubscriber(1)
    Flowable.from_publisher(src).buffer(b).subscribe(ts)
    src.next(1)
    b.next("x")
    src.next(2)
    b.next("x")
    ts.assert_values([1]).assert_error(MissingBackpressureError, match="buffer").assert_no_violations()
    assert src.was_cancelled and b.was_cancelled


def test_buffer_boundary_last_list_waits_for_demand() -> None:
    # departure from RxJava (which fails): nothing presses at completion, so the list waits
    src, b = _pair()
    ts: TestSubscriber[list[int]] = TestSubscriber(0)
    Flowable.from_publisher(src).buffer(b).subscribe(ts)
    src.next(1, 2)
    src.complete()
    ts.assert_no_values().assert_not_complete()
    ts.request(1)
    ts.assert_result([1, 2]).assert_no_violations()


@pytest.mark.parametrize("which", ["source", "boundary"])
def test_buffer_boundary_error_of_either_side_drops_the_list_and_cancels_the_other(which: str) -> None:
    src, b = _pair()
    ts = Flowable.from_publisher(src).buffer(b).test()
    src.next(1)
    b.next("x")
    src.next(2)
    (src if which == "source" else b).error(Boom(which))
    ts.assert_values([1]).assert_error(Boom).assert_no_violations()
    assert (b if which == "source" else src).was_cancelled


def test_buffer_boundary_synchronous_source_gives_one_list() -> None:
    # as RxJava: the source is requested before the boundary is subscribed
    Flowable.range(0, 4).buffer(Flowable.just(1)).test().assert_result([0, 1, 2, 3]).assert_no_violations()
    Flowable.range(0, 4).hide().buffer(Flowable.never()).test().assert_result([0, 1, 2, 3]).assert_no_violations()


@pytest.mark.parametrize(
    ("call", "exc"),
    [
        (lambda f: f.buffer(Flowable.never(), 2), TypeError),
        (lambda f: f.buffer("not a publisher"), TypeError),
        (lambda f: f.buffer(None), TypeError),
        (lambda f: f.window(Flowable.never(), 2), TypeError),
        (lambda f: f.window("x"), TypeError),
    ],
)
def test_bad_arguments_fail_at_assembly(call: Any, exc: type[BaseException]) -> None:
    with pytest.raises(exc):
        call(Flowable.just(1))


def test_buffer_boundary_race_source_thread_vs_boundary_thread_loses_nothing() -> None:
    n = 20_000
    src = Flowable.range(0, n).subscribe_on(schedulers.new_thread())
    boundary = Flowable.interval(0.0002, scheduler=schedulers.new_thread()).on_backpressure_drop()
    ts = src.buffer(boundary).on_backpressure_buffer().test()
    ts.await_done(10).assert_complete().assert_no_violations()
    flat = [x for lst in ts.values for x in lst]
    assert flat == list(range(n))


# -- window(boundary) ----------------------------------------------------------------------------


class Grab(TestSubscriber[Flowable[int]]):
    """Subscribes a TestSubscriber to each window during on_next (not abandoned)."""

    def __init__(self, initial: int = 2**63 - 1) -> None:
        super().__init__(initial)
        self.inners: list[TestSubscriber[int]] = []

    def on_next(self, item: Flowable[int]) -> None:
        super().on_next(item)
        t: TestSubscriber[int] = TestSubscriber()
        self.inners.append(t)
        item.subscribe(t)


def test_window_boundary_first_window_at_subscription_and_rotation() -> None:
    src, b = _pair()
    main = Grab()
    Flowable.from_publisher(src).window(b).subscribe(main)
    main.assert_value_count(1)  # opened at subscription (RxJava)
    src.next(1, 2)
    b.next("x")
    b.next("x")  # an empty window
    src.next(3)
    src.complete()
    assert [t.values for t in main.inners] == [[1, 2], [], [3]]
    for t in main.inners:
        t.assert_complete().assert_no_violations()
    main.assert_complete().assert_no_violations()
    assert b.was_cancelled


def test_window_boundary_flat_map_example() -> None:
    src, b = _pair()
    sub = Flowable.from_publisher(src).window(b).flat_map(lambda w: w.to_list()).test()
    src.next(1, 2)
    b.next("x")
    src.next(3)
    b.complete()
    sub.assert_result([1, 2], [3]).assert_no_violations()
    assert src.was_cancelled


def test_window_boundary_missing_backpressure() -> None:
    src, b = _pair()
    main: TestSubscriber[Flowable[int]] = TestSubscriber(0)
    Flowable.from_publisher(src).window(b).subscribe(main)
    main.assert_error(MissingBackpressureError, match="window").assert_no_violations()
    main2 = Grab(1)
    src2, b2 = _pair()
    Flowable.from_publisher(src2).window(b2).subscribe(main2)
    src2.next(1)
    b2.next("x")
    main2.assert_value_count(1).assert_error(MissingBackpressureError).assert_no_violations()
    main2.inners[0].assert_result(1)
    assert src2.was_cancelled and b2.was_cancelled


def test_window_boundary_error_goes_to_window_and_main() -> None:
    src, b = _pair()
    main = Grab()
    Flowable.from_publisher(src).window(b).subscribe(main)
    src.next(1)
    b.error(Boom("b"))
    main.inners[0].assert_values(1).assert_error(Boom).assert_no_violations()
    main.assert_error(Boom).assert_no_violations()
    assert src.was_cancelled


def test_window_boundary_main_cancel_keeps_a_subscribed_window_until_source_ends() -> None:
    src, b = _pair()
    main = Grab()
    Flowable.from_publisher(src).window(b).subscribe(main)
    main.cancel()
    assert b.was_cancelled  # no new windows
    assert not src.was_cancelled  # the subscribed window still receives
    src.next(1, 2)
    src.complete()
    main.inners[0].assert_result(1, 2).assert_no_violations()
    main.assert_no_violations()


def test_window_boundary_cancel_with_windows_done_cancels_source() -> None:
    src, b = _pair()
    main = Grab()
    Flowable.from_publisher(src).window(b).subscribe(main)
    main.inners[0].cancel()
    main.cancel()
    assert src.was_cancelled and b.was_cancelled


def test_window_boundary_abandoned_window_keeps_elements_for_a_late_subscriber() -> None:
    src, b = _pair()
    main: TestSubscriber[Flowable[int]] = TestSubscriber()
    Flowable.from_publisher(src).window(b).subscribe(main)
    src.next(1, 2)
    b.next("x")
    late: TestSubscriber[int] = TestSubscriber()
    main.values[0].subscribe(late)
    late.assert_result(1, 2).assert_no_violations()


def test_window_boundary_race_source_thread_vs_boundary_thread() -> None:
    n = 20_000
    src = Flowable.range(0, n).subscribe_on(schedulers.new_thread())
    boundary = Flowable.interval(0.0002, scheduler=schedulers.new_thread()).on_backpressure_drop()
    ts = src.window(boundary).concat_map(lambda w: w.to_list()).test()
    ts.await_done(10).assert_complete().assert_no_violations()
    flat = [x for lst in ts.values for x in lst]
    assert flat == list(range(n))


# -- buffer(openings, closing_selector) ----------------------------------------------------------


def _opening() -> tuple[TestPublisher[int], TestPublisher[int], dict[int, TestPublisher[str]], Any]:
    src: TestPublisher[int] = TestPublisher.create()
    opens: TestPublisher[int] = TestPublisher.create()
    closers: dict[int, TestPublisher[str]] = {}

    def closing(o: int) -> TestPublisher[str]:
        closers[o] = TestPublisher.create()
        return closers[o]

    return src, opens, closers, closing


def test_buffer_openings_overlapping_lists_close_in_closing_order() -> None:
    src, opens, closers, closing = _opening()
    ts = Flowable.from_publisher(src).buffer(opens, closing).test()
    src.next(0)  # no list open: dropped
    opens.next(1)
    src.next(1)
    opens.next(2)
    src.next(2)
    closers[2].next("x")  # closes the second list first
    src.next(3)
    closers[1].complete()  # completion closes too
    ts.assert_values([2], [1, 2, 3]).assert_not_complete()
    assert closers[2].was_cancelled
    opens.complete()  # nothing open, openings done: the stream ends, the source is cancelled
    ts.assert_complete().assert_no_violations()
    assert src.was_cancelled


def test_buffer_openings_source_completion_emits_open_lists_in_opening_order() -> None:
    src, opens, closers, closing = _opening()
    ts = Flowable.from_publisher(src).buffer(opens, closing).test()
    opens.next(1)
    src.next(1)
    opens.next(2)
    src.next(2)
    src.complete()
    ts.assert_result([1, 2], [2]).assert_no_violations()
    assert opens.was_cancelled and closers[1].was_cancelled and closers[2].was_cancelled


def test_buffer_openings_openings_done_waits_for_open_lists() -> None:
    src, opens, closers, closing = _opening()
    ts = Flowable.from_publisher(src).buffer(opens, closing).test()
    opens.next(1)
    opens.complete()
    src.next(5)
    assert not src.was_cancelled
    closers[1].next("x")
    ts.assert_result([5]).assert_no_violations()
    assert src.was_cancelled


def test_buffer_openings_virtual_time() -> None:
    ts = TestScheduler()
    sub = (
        Flowable.interval(0.25, scheduler=ts)
        .buffer(Flowable.interval(1.1, scheduler=ts), lambda o: Flowable.timer(0.6, ts))
        .take(2)
        .test()
    )
    ts.advance_by(3)
    # lists open at 1.1 and 2.2 and close 0.6 later: ticks at 1.25, 1.5 and 2.25, 2.5, 2.75
    sub.assert_result([4, 5], [8, 9, 10]).assert_no_violations()


def test_buffer_openings_closed_lists_wait_for_demand() -> None:
    src, opens, closers, closing = _opening()
    ts: TestSubscriber[list[int]] = TestSubscriber(0)
    Flowable.from_publisher(src).buffer(opens, closing).subscribe(ts)
    opens.next(1)
    src.next(1)
    closers[1].next("x")
    ts.assert_no_values().assert_no_errors()
    ts.request(1)
    ts.assert_values([1]).assert_no_violations()


@pytest.mark.parametrize("which", ["source", "openings", "closer", "selector", "none"])
def test_buffer_openings_errors(which: str) -> None:
    src: TestPublisher[int] = TestPublisher.create()
    opens: TestPublisher[int] = TestPublisher.create()
    closer: TestPublisher[str] = TestPublisher.create()

    def closing(o: int) -> Any:
        if which == "selector":
            raise Boom("selector")
        if which == "none":
            return None
        return closer

    ts = Flowable.from_publisher(src).buffer(opens, closing).test()
    opens.next(1)
    src.next(1)
    if which == "source":
        src.error(Boom("src"))
    elif which == "openings":
        opens.error(Boom("open"))
    elif which == "closer":
        closer.error(Boom("close"))
    ts.assert_no_values().assert_error(Exception).assert_no_violations()
    if which in ("selector", "source", "openings", "closer"):
        ts.assert_error(Boom)
    assert src.was_cancelled or which == "source"


def test_buffer_openings_bad_arguments() -> None:
    with pytest.raises(TypeError, match="closing selector"):
        Flowable.just(1).buffer(Flowable.never(), 3)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="openings Publisher"):
        Flowable.just(1).buffer(3, lambda o: Flowable.never())  # type: ignore[call-overload]


# -- models --------------------------------------------------------------------------------------

script_st = st.lists(st.one_of(st.integers(0, 9).map(lambda v: ("src", v)), st.just(("b", 0))), max_size=30)


@settings(max_examples=60, deadline=None)
@given(script_st, st.booleans())
def test_property_buffer_and_window_boundary_match_the_model(script: list[tuple[str, int]], window: bool) -> None:
    src, b = _pair()
    f = Flowable.from_publisher(src)
    out = f.window(b).concat_map(lambda w: w.to_list()) if window else f.buffer(b)
    ts = out.test()
    want: list[list[int]] = []
    cur: list[int] = []
    for kind, v in script:
        if kind == "src":
            src.next(v)
            cur.append(v)
        else:
            b.next("x")
            want.append(cur)
            cur = []
    src.complete()
    want.append(cur)
    ts.assert_result(*want).assert_no_violations()


open_script_st = st.lists(
    st.one_of(
        st.integers(0, 9).map(lambda v: ("src", v)),
        st.integers(0, 3).map(lambda k: ("open", k)),
        st.integers(0, 3).map(lambda k: ("close", k)),
    ),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(open_script_st)
def test_property_buffer_openings_matches_the_model(script: list[tuple[str, int]]) -> None:
    src, opens, closers, closing = _opening()
    ts = Flowable.from_publisher(src).buffer(opens, closing).test()
    want: list[list[int]] = []
    open_lists: dict[int, list[int]] = {}
    for kind, v in script:
        if kind == "src":
            src.next(v)
            for lst in open_lists.values():
                lst.append(v)
        elif kind == "open" and v not in closers:  # each token opens once (one closer each)
            opens.next(v)
            open_lists[v] = []
        elif kind == "close" and v in open_lists:
            closers[v].next("x")
            want.append(open_lists.pop(v))
    src.complete()
    want.extend(open_lists.values())
    ts.assert_result(*want).assert_no_violations()


@pytest.mark.parametrize("hidden", [False, True])
def test_window_boundary_a_batch_source_respects_the_window_subscribers_demand(hidden: bool) -> None:
    # a fused range hands its elements over in batches: queued in the window, delivered on demand
    inner: TestSubscriber[int] = TestSubscriber(0)

    class Take(TestSubscriber[Flowable[int]]):
        def on_next(self, item: Flowable[int]) -> None:
            super().on_next(item)
            item.subscribe(inner)

    main = Take()
    src = Flowable.range(0, 10)
    (src.hide() if hidden else src).window(Flowable.never()).subscribe(main)
    inner.assert_no_values()
    inner.request(3)
    inner.assert_values(0, 1, 2)
    inner.request(100)
    inner.assert_result(*range(10)).assert_no_violations()
    main.assert_complete().assert_no_violations()


def test_window_boundary_large_batch_source_loses_nothing() -> None:
    ts = Flowable.range(0, 50_000).window(Flowable.never()).flat_map(lambda w: w.count()).test()
    ts.assert_result(50_000).assert_no_violations()


def test_buffer_openings_batch_source_fills_every_open_list() -> None:
    # openings are subscribed before the source is requested: two lists are open when the fused
    # range hands its elements over in a batch; each gets all of them
    ts = Flowable.range(0, 5).buffer(Flowable.just(0, 1), lambda o: Flowable.never()).test()
    ts.assert_result([0, 1, 2, 3, 4], [0, 1, 2, 3, 4]).assert_no_violations()
