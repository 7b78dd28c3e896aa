"""Early results of event-time windows: ``early_every=`` (elements per window and key) and
``early_interval=`` (scheduler time), as Windows whose ``final`` is False.

Exact outputs by count and by interval (virtual time), keyed, sliding, sessions and their merges,
the on-time result still once and final, backpressure (request 1 at a time, the prefetch limit),
cancel, errors, None, bad arguments, fused vs hidden through the harness, state released after the
final result, the timer thread racing the upstream, and a seeded property test against the
plain-Python model of test_event_time_windows (``_model``, one element at a time; its pausing
map ``_pausing`` serves the race test too).
"""

from __future__ import annotations

import operator
import pickle
import random
from collections.abc import Callable
from operator import itemgetter
from typing import Any

import pytest

from rstreams import Flowable, plugins
from rstreams.errors import NoneElementError
from rstreams.flowable.operators._event_time_window import Aggregator, Window
from rstreams.testing import TestPublisher, TestScheduler, TestSubscriber

from .harness import Boom, check_scenarios, run_one_by_one
from .test_event_time_windows import _model, _pausing

ts0 = itemgetter(1)  # events are (key, time) or (key, time, value)
k0 = itemgetter(0)

Row = tuple[Any, Any, Any, Any, bool]


def rows(values: list[Any]) -> list[Row]:
    """(key, start, end, value, final): ``final`` is a property, not a field, so it is added here."""
    return [(w.key, w.start, w.end, w.value, w.final) for w in values]


def as_rows(f: Flowable[Any]) -> Flowable[Row]:
    return f.map(lambda w: (w.key, w.start, w.end, w.value, w.final))


def run(f: Flowable[Any]) -> TestSubscriber[Any]:
    ts = f.test()
    ts.assert_no_violations()
    return ts


# ---------------------------------------------------------------------------------------------
# The record


def test_an_early_result_is_a_window_with_final_false_and_the_four_fields() -> None:
    ts = run(Flowable.from_iterable([1, 2, 15]).tumbling_window(10, timestamp=float, aggregate="count",
                                                                 early_every=2))
    early, on_time, last = ts.values
    assert isinstance(early, Window) and not early.final and on_time.final and last.final
    key, start, end, value = early  # unpacking: still four fields
    assert (key, start, end, value) == (None, 0.0, 10.0, 2) and len(early) == 4
    assert early == on_time  # a tuple's equality: same fields, so test .final to tell them apart
    assert repr(early) == "Window(key=None, start=0.0, end=10.0, value=2, final=False)"
    assert repr(on_time) == "Window(key=None, start=0.0, end=10.0, value=2)"
    copy = pickle.loads(pickle.dumps(early))
    assert copy == early and not copy.final
    assert Window("a", 0.0, 1.0, 3).final  # constructed by hand: an on-time record
    ts.assert_complete().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# By count


def test_early_every_counts_the_elements_of_each_window_and_key() -> None:
    events = [("a", 1), ("b", 2), ("a", 3), ("a", 4), ("b", 5), ("a", 6), ("a", 12), ("b", 13), ("b", 14), ("a", 25)]
    ts = run(Flowable.from_iterable(events).tumbling_window(10, timestamp=ts0, key=k0, aggregate="count",
                                                             early_every=2))
    assert rows(ts.values) == [
        ("a", 0, 10, 2, False),  # a@3: a's second element of [0, 10)
        ("b", 0, 10, 2, False),  # b@5
        ("a", 0, 10, 4, False),  # a@6
        ("a", 0, 10, 4, True), ("b", 0, 10, 2, True),  # a@12 moves the watermark past 10
        ("b", 10, 20, 2, False),  # b@14
        ("a", 10, 20, 1, True), ("b", 10, 20, 2, True),  # a@25
        ("a", 20, 30, 1, True),  # completion
    ]
    ts.assert_complete().assert_no_violations()


def test_early_every_one_reports_every_element_and_the_final_still_comes_once() -> None:
    ts = run(Flowable.from_iterable([1, 2, 3]).tumbling_window(10, timestamp=float, aggregate="sum",
                                                                early_every=1))
    assert [(w.value, w.final) for w in ts.values] == [(1, False), (3, False), (6, False), (6, True)]
    ts.assert_complete().assert_no_violations()


def test_early_results_accumulate_and_are_snapshots() -> None:
    ts = run(Flowable.from_iterable([1, 2, 3, 4, 5]).tumbling_window(10, timestamp=float, early_every=2))
    assert rows(ts.values) == [(None, 0, 10, [1, 2], False), (None, 0, 10, [1, 2, 3, 4], False),
                               (None, 0, 10, [1, 2, 3, 4, 5], True)]  # the list grew after each copy
    ts.assert_complete().assert_no_violations()


def test_the_element_that_closes_windows_gives_their_final_results_before_its_early_one() -> None:
    # 12 closes [0, 10) (lateness 0) and is the second element of [10, 20): final first, then early
    ts = run(Flowable.from_iterable([1, 11, 12]).tumbling_window(10, timestamp=float, aggregate="count",
                                                                  early_every=2))
    assert rows(ts.values) == [(None, 0, 10, 1, True), (None, 10, 20, 2, False), (None, 10, 20, 2, True)]
    ts.assert_complete().assert_no_violations()


def test_aggregator_result_makes_each_early_value() -> None:
    mean: Aggregator[Any, Any, Any] = Aggregator(lambda: (0, 0), lambda a, x: (a[0] + x, a[1] + 1), merge=lambda a, b: (a[0] + b[0], a[1] + b[1]),
                      result=lambda a: a[0] / a[1])
    ts = run(Flowable.from_iterable([2, 4, 6, 8]).tumbling_window(10, timestamp=float, aggregate=mean,
                                                                   early_every=2))
    assert [(w.value, w.final) for w in ts.values] == [(3.0, False), (5.0, False), (5.0, True)]
    ts.assert_complete().assert_no_violations()


def test_late_elements_do_not_count_toward_early_results() -> None:
    late: list[Any] = []
    ts = run(Flowable.from_iterable([1, 15, 2, 3, 16]).tumbling_window(
        10, timestamp=float, aggregate="count", late=late.append, early_every=2))
    assert rows(ts.values) == [(None, 0, 10, 1, True), (None, 10, 20, 2, False), (None, 10, 20, 2, True)]
    assert late == [2, 3]
    ts.assert_complete().assert_no_violations()


def test_sliding_early_results_come_in_order_of_window_end() -> None:
    # size 10, slide 5: 1 and 2 are in [-5, 5) and [0, 10); the second element triggers both
    ts = run(Flowable.from_iterable([1, 2, 6, 7]).sliding_window(10, 5, timestamp=float, aggregate="count",
                                                                  early_every=2))
    assert rows(ts.values) == [
        (None, -5, 5, 2, False), (None, 0, 10, 2, False),  # by 2
        (None, -5, 5, 2, True),  # 6 moves the watermark past 5
        (None, 0, 10, 4, False), (None, 5, 15, 2, False),  # by 7: [0, 10) has 4, [5, 15) 2
        (None, 0, 10, 4, True), (None, 5, 15, 2, True),
    ]
    ts.assert_complete().assert_no_violations()


def test_session_early_results_carry_the_bounds_so_far() -> None:
    ts = run(Flowable.from_iterable([("u", 0), ("u", 2), ("u", 4), ("v", 1)]).session_window(
        5, timestamp=ts0, key=k0, aggregate="count", early_every=2))
    assert rows(ts.values) == [("u", 0, 7, 2, False), ("v", 1, 6, 1, True), ("u", 0, 9, 3, True)]
    ts.assert_complete().assert_no_violations()


def test_a_session_merge_sums_the_counts_of_its_parts_and_its_results_cover_them() -> None:
    # gap 5: u@0 and u@6 are two sessions (one element each); u@3 bridges them: 1 + 1 + 1 = 3
    events = [("u", 0), ("u", 6), ("u", 3), ("u", 7)]
    ts = run(Flowable.from_iterable(events).session_window(5, timestamp=ts0, key=k0, allowed_lateness=10,
                                                             aggregate="list", early_every=3))
    assert rows(ts.values) == [
        ("u", 0, 11, [("u", 0), ("u", 6), ("u", 3)], False),  # the merge reached 3
        ("u", 0, 12, [("u", 0), ("u", 6), ("u", 3), ("u", 7)], True),
    ]
    ts.assert_complete().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# By interval (virtual time)


def test_early_interval_reports_the_windows_that_changed_on_the_scheduler() -> None:
    sched = TestScheduler()
    tp: TestPublisher[tuple[str, int]] = TestPublisher.create()
    ts = as_rows(Flowable.from_publisher(tp).tumbling_window(
        10, timestamp=ts0, key=k0, allowed_lateness=5, aggregate="count", early_interval=1, scheduler=sched)).test()
    tp.next(("a", 1), ("b", 2), ("a", 3))
    ts.assert_no_values()  # nothing before the first tick
    sched.advance_by(1)
    assert ts.values == [("a", 0, 10, 2, False), ("b", 0, 10, 1, False)]  # keys in the order they opened
    sched.advance_by(1)
    assert len(ts.values) == 2  # nothing changed: no result
    tp.next(("b", 4), ("a", 12))  # watermark 7: [0, 10) still open
    sched.advance_by(1)
    assert ts.values[2:] == [("b", 0, 10, 2, False), ("a", 10, 20, 1, False)]  # by end, then opening
    tp.next(("a", 16))  # watermark 11: [0, 10) fires on time
    assert ts.values[4:] == [("a", 0, 10, 2, True), ("b", 0, 10, 2, True)]
    sched.advance_by(5)
    assert ts.values[6:] == [("a", 10, 20, 2, False)]
    tp.complete()
    assert ts.values[7:] == [("a", 10, 20, 2, True)]
    assert sched.pending == 0  # the timer is gone
    ts.assert_complete().assert_no_violations()


def test_early_interval_and_early_every_together() -> None:
    sched = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    ts = as_rows(Flowable.from_publisher(tp).tumbling_window(
        10, timestamp=float, aggregate="count", early_every=3, early_interval=2, scheduler=sched)).test()
    tp.next(1, 2, 3)  # the count fires (3), and restarts
    assert ts.values == [(None, 0, 10, 3, False)]
    sched.advance_by(2)
    assert len(ts.values) == 1  # nothing new since the count's result
    tp.next(4)
    sched.advance_by(2)
    assert ts.values[1:] == [(None, 0, 10, 4, False)]
    tp.next(5, 6)  # 2 since the tick's result: the count restarted with it
    assert len(ts.values) == 2
    tp.next(7)
    assert ts.values[2:] == [(None, 0, 10, 7, False)]
    tp.complete()
    assert ts.values[3:] == [(None, 0, 10, 7, True)]
    ts.assert_complete().assert_no_violations()


def test_early_interval_with_sessions_and_sliding_windows() -> None:
    sched = TestScheduler()
    tp: TestPublisher[tuple[str, int]] = TestPublisher.create()
    ts = as_rows(Flowable.from_publisher(tp).session_window(
        5, timestamp=ts0, key=k0, allowed_lateness=20, aggregate="count", early_interval=1, scheduler=sched)).test()
    tp.next(("u", 0), ("v", 1), ("u", 6))
    sched.advance_by(1)
    assert ts.values == [("u", 0, 5, 1, False), ("v", 1, 6, 1, False), ("u", 6, 11, 1, False)]
    tp.next(("u", 3))  # merges u's two sessions
    sched.advance_by(1)
    assert ts.values[3:] == [("u", 0, 11, 3, False)]
    tp.complete()
    assert ts.values[4:] == [("v", 1, 6, 1, True), ("u", 0, 11, 3, True)]
    ts.assert_complete().assert_no_violations()

    sched2 = TestScheduler()
    tp2: TestPublisher[int] = TestPublisher.create()
    ts2 = as_rows(Flowable.from_publisher(tp2).sliding_window(
        10, 5, timestamp=float, allowed_lateness=10, aggregate="sum", early_interval=1, scheduler=sched2)).test()
    tp2.next(1, 6)
    sched2.advance_by(1)
    assert ts2.values == [(None, -5, 5, 1, False), (None, 0, 10, 7, False), (None, 5, 15, 6, False)]
    tp2.complete()
    ts2.assert_value_count(6).assert_complete().assert_no_violations()


def test_a_raising_result_function_on_the_timer_fails_the_stream() -> None:
    sched = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()

    def result(a: int) -> int:
        if a == 2:
            raise Boom("result")
        return a

    ts = Flowable.from_publisher(tp).tumbling_window(
        10, timestamp=float, aggregate=Aggregator(int, lambda a, x: a + 1, result=result), early_interval=1,
        scheduler=sched).test()
    tp.next(1)
    sched.advance_by(1)
    assert rows(ts.values) == [(None, 0, 10, 1, False)]
    tp.next(2)
    sched.advance_by(1)
    assert tp.was_cancelled and sched.pending == 0
    ts.assert_error(Boom).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# Backpressure, cancel, state


def test_request_one_at_a_time_gives_the_same_results() -> None:
    events = [("a", 1), ("b", 2), ("a", 3), ("a", 4), ("b", 5), ("a", 12), ("b", 13), ("b", 14), ("a", 25)]

    def op(f: Flowable[Any]) -> Flowable[Any]:
        return f.tumbling_window(10, timestamp=ts0, key=k0, aggregate="count", early_every=2)

    want = rows(run(op(Flowable.from_iterable(events))).values)
    ts: TestSubscriber[Any] = TestSubscriber(0)
    op(Flowable.from_iterable(events)).subscribe(ts)
    ts.assert_no_values()
    for i in range(1, len(want) + 1):
        ts.request(1)
        assert rows(ts.values) == want[:i]
    ts.assert_complete().assert_no_violations()
    ts1 = run_one_by_one(op(Flowable.from_iterable(events).hide()))
    assert rows(ts1.values) == want
    ts1.assert_no_violations()


def test_early_results_wait_for_demand_and_count_toward_the_prefetch_limit() -> None:
    requests: list[int] = []
    src = Flowable.range(0, 10_000).do_on_request(requests.append)
    ts: TestSubscriber[Any] = TestSubscriber(0)
    # one window, an early result per element: nothing fires on time before completion
    src.tumbling_window(1e9, timestamp=float, aggregate="count", prefetch=16, early_every=1).subscribe(ts)
    assert sum(requests) <= 32, requests  # 16 waiting early results stop the requests
    op: Any = ts.subscription
    assert op.state_size()[2] <= 16 + 16
    ts.request(3)
    assert [(w.value, w.final) for w in ts.values] == [(1, False), (2, False), (3, False)]
    ts.request(2**63 - 1)
    assert [w.value for w in ts.values[-2:]] == [10_000, 10_000] and ts.values[-1].final
    assert max(requests) <= 16
    ts.assert_value_count(10_001).assert_complete().assert_no_violations()


def test_cancel_stops_the_early_timer_and_releases_state() -> None:
    sched = TestScheduler()
    tp: TestPublisher[tuple[str, int]] = TestPublisher.create()
    ts: TestSubscriber[Any] = TestSubscriber(1)
    Flowable.from_publisher(tp).tumbling_window(10, timestamp=ts0, key=k0, aggregate="count", early_every=2,
                                                early_interval=1, idle_timeout=3, scheduler=sched).subscribe(ts)
    assert sched.pending == 2  # the early timer and the idle timer
    op: Any = ts.subscription
    tp.next(("a", 1), ("a", 2), ("b", 3), ("b", 4))
    assert rows(ts.values) == [("a", 0, 10, 2, False)]  # b's waits for demand
    ts.cancel()
    assert tp.was_cancelled and sched.pending == 0
    assert op.state_size() == (0, 0, 0) and not op._store.pend
    sched.advance_by(10)
    ts.request(10)
    assert len(ts.values) == 1
    ts.assert_not_complete().assert_no_errors().assert_no_violations()


def test_state_is_released_after_the_final_results() -> None:
    for kind in ("tumbling", "sliding", "session"):
        tp: TestPublisher[tuple[str, int]] = TestPublisher.create()
        src = Flowable.from_publisher(tp)
        kw: dict[str, Any] = {"timestamp": ts0, "key": k0, "allowed_lateness": 10, "aggregate": "count",
                              "early_every": 3}
        if kind == "tumbling":
            f = src.tumbling_window(10, **kw)
        elif kind == "sliding":
            f = src.sliding_window(10, 5, **kw)
        else:
            f = src.session_window(5, **kw)
        ts = f.test()
        op: Any = ts.subscription
        tp.next(*[(f"u{i % 7}", i % 9) for i in range(50)])
        assert kind == "session" or op._store.pend
        tp.next(("z", 100))  # the watermark (90) passes every window but z's
        store = op._store
        assert op.state_size()[:2] == ((2, 2) if kind == "sliding" else (1, 1)), kind  # z's windows only
        if kind != "session":
            assert set(store.pend) <= set(store.wins), kind  # counters only for open windows
        tp.complete()
        assert op.state_size() == (0, 0, 0) and not getattr(store, "pend", None) and not store.trig, kind
        finals = [(w.key, w.start) for w in ts.values if w.final]
        assert len(finals) == len(set(finals)), kind
        assert any(not w.final for w in ts.values), kind
        ts.assert_complete().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# Fused vs hidden, errors


def test_the_harness_scenarios_fused_hidden_one_by_one_cancel_and_upstream_error() -> None:
    events = [("a", 1), ("b", 3), ("a", 2), ("a", 12), ("b", 11), ("a", 14), ("b", 15), ("c", 27), ("a", 40),
              ("a", 41), ("b", 41)]
    ops: list[Callable[[Flowable[Any]], Flowable[Any]]] = [
        lambda f: as_rows(f.tumbling_window(10, timestamp=ts0, key=k0, allowed_lateness=5, aggregate="count",
                                            early_every=2)),
        lambda f: as_rows(f.sliding_window(10, 5, timestamp=ts0, key=k0, allowed_lateness=3, aggregate="list",
                                           early_every=2)),
        lambda f: as_rows(f.session_window(4, timestamp=ts0, key=k0, allowed_lateness=3, aggregate="count",
                                           early_every=1)),
        lambda f: as_rows(f.tumbling_window(10, timestamp=ts0, allowed_lateness=5, aggregate="count",
                                            early_every=3)),
    ]
    for op in ops:
        want = run(op(Flowable.from_iterable(events))).values
        assert any(not r[4] for r in want)
        check_scenarios(op, events, want)


def test_upstream_error_emits_the_queued_early_and_fired_results_then_the_error() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.from_publisher(tp).tumbling_window(10, timestamp=float, aggregate="count", early_every=2).subscribe(ts)
    tp.next(1, 2, 12, 13)
    tp.error(Boom("upstream"))
    ts.assert_no_values().assert_not_terminated()
    ts.request(10)
    # [10, 20) had an early result; its on-time one never comes (its contents are not complete)
    assert rows(ts.values) == [(None, 0, 10, 2, False), (None, 0, 10, 2, True), (None, 10, 20, 2, False)]
    ts.assert_error(Boom).assert_no_violations()


@pytest.mark.parametrize("kind", ["tumbling", "sliding", "session"])
def test_a_raising_aggregate_after_early_results(kind: str) -> None:
    def add(a: int, e: Any) -> int:
        if e[1] == 5:
            raise Boom("add")
        return a + 1

    agg: Aggregator[Any, Any, Any] = Aggregator(int, add, merge=operator.add)
    src = Flowable.from_iterable([("a", 1), ("a", 2), ("a", 3), ("a", 5), ("a", 6)])
    if kind == "tumbling":
        f = src.tumbling_window(10, timestamp=ts0, aggregate=agg, early_every=2)
    elif kind == "sliding":
        f = src.sliding_window(10, 10, timestamp=ts0, aggregate=agg, early_every=2)
    else:
        f = src.session_window(10, timestamp=ts0, aggregate=agg, early_every=2)
    for s in (f, f.hide()):
        ts = run(s)
        assert [(w.value, w.final) for w in ts.values] == [(2, False)]
        ts.assert_error(Boom).assert_no_violations()


def test_none_from_the_result_function_of_an_early_value_is_an_error() -> None:
    agg: Aggregator[Any, Any, Any] = Aggregator(int, lambda a, x: a + 1, result=lambda a: None if a == 2 else a)
    ts = run(Flowable.from_iterable([1, 2, 3]).tumbling_window(10, timestamp=float, aggregate=agg, early_every=1))
    assert [(w.value, w.final) for w in ts.values] == [(1, False)]
    assert "result" in str(ts.errors[0])
    ts.assert_error(NoneElementError).assert_no_violations()


@pytest.mark.parametrize(
    "call, exc, text",
    [
        (lambda f: f.tumbling_window(1, timestamp=float, early_every=0), ValueError, "early_every"),
        (lambda f: f.tumbling_window(1, timestamp=float, early_every=True), TypeError, "early_every"),
        (lambda f: f.tumbling_window(1, timestamp=float, early_every=2.0), TypeError, "early_every"),
        (lambda f: f.tumbling_window(1, timestamp=float, early_interval=0), ValueError, "early_interval"),
        (lambda f: f.tumbling_window(1, timestamp=float, early_interval=float("inf")), ValueError, "early_interval"),
        (lambda f: f.tumbling_window(1, timestamp=float, early_interval="1s"), TypeError, "early_interval"),
        (lambda f: f.tumbling_window(1, timestamp=float, process=lambda w: w.count(), early_every=2), ValueError,
         "need aggregate="),
        (lambda f: f.session_window(1, timestamp=float, process=lambda w: w.count(), early_interval=1,
                                    scheduler=TestScheduler()), ValueError, "need aggregate="),
        (lambda f: f.sliding_window(2, 1, timestamp=float, early_every=1, scheduler=TestScheduler()), ValueError,
         "early_interval"),
        (lambda f: f.tumbling_window(1, timestamp=float, early_interval=1, scheduler=3), TypeError, "scheduler"),
    ],
)
def test_bad_arguments_at_assembly(call: Callable[[Flowable[Any]], Any], exc: type[BaseException], text: str) -> None:
    with pytest.raises(exc, match=text):
        call(Flowable.range(0, 3))


def test_early_interval_defaults_to_the_computation_scheduler() -> None:
    ts = Flowable.from_iterable([1, 2, 3]).tumbling_window(10, timestamp=float, aggregate="count",
                                                            early_interval=60).test()
    ts.await_done(5)
    assert rows(ts.values) == [(None, 0, 10, 3, True)]  # the timer never ticked
    ts.assert_complete().assert_no_violations()


def test_the_docstring_example_and_marble() -> None:
    ts = run(Flowable.from_iterable([1, 2, 4, 12, 13, 25]).tumbling_window(
        10, timestamp=float, aggregate="count", early_every=2).map(lambda w: (w.start, w.value, w.final)))
    ts.assert_result((0.0, 2, False), (0.0, 3, True), (10.0, 2, False), (10.0, 2, True), (20.0, 1, True))
    ts.assert_no_violations()


# ---------------------------------------------------------------------------------------------
# A real timer thread racing the upstream thread


@pytest.mark.parametrize("seed", range(2))
def test_early_timer_thread_races_the_upstream_and_every_final_is_once_and_last(seed: int) -> None:
    from rstreams import schedulers

    rnd = random.Random(seed)
    n = 4000
    events = [(rnd.randrange(10), i * 0.001, 1) for i in range(n)]
    with plugins.collect_errors() as errors:
        f = (
            Flowable.from_iterable(events).map(_pausing).subscribe_on(schedulers.io())
            .tumbling_window(0.5, timestamp=ts0, key=k0, aggregate=Aggregator(int, lambda a, e: a + e[2]),
                             early_interval=0.0005, early_every=50, scheduler=schedulers.computation(), prefetch=32)
            .observe_on(schedulers.single(), prefetch=4)
        )
        ts = f.test()
        ts.await_done(20)
    assert not errors
    finals = [w for w in ts.values if w.final]
    assert sum(w.value for w in finals) == n
    assert any(not w.final and w.value % 50 for w in ts.values), "no early result came from the timer"
    seen = [(w.key, w.start) for w in finals]
    assert len(seen) == len(set(seen)), "a window fired twice"
    last: dict[Any, Any] = {}
    done: set[Any] = set()
    for w in ts.values:  # per window and key: values only grow, and nothing after the final
        ident = (w.key, w.start)
        assert ident not in done
        assert w.value >= last.get(ident, 0)
        last[ident] = w.value
        if w.final:
            done.add(ident)
    ts.assert_complete().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# Against the model (test_event_time_windows._model): one element at a time


def _random_case(rnd: random.Random) -> tuple[list[Any], dict[str, Any]]:
    kind = rnd.choice(["tumbling", "sliding", "session"])
    events: list[Any] = []
    t = 0
    for i in range(rnd.randrange(0, 100)):
        t += rnd.choice([0, 0, 1, 1, 2, 5])
        events.append((rnd.choice("abc"), max(0, t - rnd.choice([0, 0, 0, 1, 3, 8])), i))
    p: dict[str, Any] = {"kind": kind, "lateness": rnd.choice([0, 1, 3, 6]), "every": rnd.choice([1, 2, 3, 5]),
                         "keyed": rnd.random() < 0.7, "agg": rnd.choice(["count", "list", "sum", "fold"]),
                         "prefetch": rnd.choice([1, 3, 16, 1024])}
    if kind == "tumbling":
        p["size"] = rnd.choice([1, 2, 5, 7])
    elif kind == "sliding":
        p["size"] = rnd.choice([2, 6, 10])
        p["slide"] = rnd.choice([s for s in (1, 2, 3, 5) if s <= p["size"]])
    else:
        p["gap"] = rnd.choice([1, 2, 4])
    return events, p


def _operator(src: Flowable[Any], p: dict[str, Any]) -> Flowable[Any]:
    agg: Any = {"count": "count", "list": "list",
                "sum": Aggregator(int, lambda a, e: a + e[2], merge=operator.add),
                "fold": Aggregator(list, lambda a, e: a + [e], merge=operator.add, result=tuple)}[p["agg"]]
    common: dict[str, Any] = {"timestamp": ts0, "key": k0 if p["keyed"] else None, "allowed_lateness": p["lateness"],
                              "late": "drop", "aggregate": agg, "prefetch": p["prefetch"], "early_every": p["every"]}
    if p["kind"] == "tumbling":
        return src.tumbling_window(p["size"], **common)
    if p["kind"] == "sliding":
        return src.sliding_window(p["size"], p["slide"], **common)
    return src.session_window(p["gap"], **common)


def _value(agg: str, xs: list[Any]) -> Any:
    if agg == "count":
        return len(xs)
    if agg == "sum":
        return sum(e[2] for e in xs)
    if agg == "fold":
        return tuple(xs)
    return xs


@pytest.mark.parametrize("seed", range(30))
def test_against_the_model(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(8):
        events, p = _random_case(rnd)
        model, _ = _model(events, kind=p["kind"], size=p.get("size", 0), slide=p.get("slide", 0), gap=p.get("gap", 0),
                          lateness=p["lateness"], key=k0 if p["keyed"] else None, every=p["every"])
        want = [(k, s, e, _value(p["agg"], xs), final) for k, s, e, xs, final in model]
        for how in ("fused", "hidden", "one_by_one"):
            src = Flowable.from_iterable(events)
            if how != "fused":
                src = src.hide()
            f = _operator(src, p)
            ts = run_one_by_one(f) if how == "one_by_one" else f.test()
            ts.assert_complete().assert_no_violations()
            assert rows(ts.values) == want, (seed, how, p, events)


def test_early_interval_ticks_while_a_synchronous_upstream_runs_inside_on_subscribe() -> None:
    """A subscriber that requests inside on_subscribe runs a synchronous upstream to its end there:
    the early timer is already running, so the early results are those of a subscriber that
    requests later."""

    def run(request_late: bool) -> list[Any]:
        sched = TestScheduler()
        ts: TestSubscriber[Any] = TestSubscriber(0) if request_late else TestSubscriber()
        (
            Flowable.range(0, 5)
            .do_on_next(lambda _x: sched.advance_by(1))
            .tumbling_window(1000, timestamp=float, aggregate="count", early_interval=1, scheduler=sched)
            .subscribe(ts)
        )
        if request_late:
            ts.request(100)
        ts.assert_complete().assert_no_errors().assert_no_violations()
        assert sched.pending == 0  # the timers were disposed at completion
        return [(w.start, w.value, w.final) for w in ts.values]

    early_in_on_subscribe = run(False)
    assert early_in_on_subscribe == run(True)
    assert [f for _s, _v, f in early_in_on_subscribe] == [False] * 4 + [True]
