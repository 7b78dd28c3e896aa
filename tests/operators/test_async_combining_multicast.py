"""The asynchronous, combining and multicast operators and the processors
against RxJava 3's documented behaviour and the Reactive Streams rules.

Each test is a case an RxJava user would expect to work; most of them failed before the fix that
accompanies them (see the commit messages). Every operator test subscribes a ``TestSubscriber``
and ends with ``assert_no_violations()``.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest

from operators.harness import Boom
from rstreams import Flowable, plugins
from rstreams.testing import TestPublisher, TestSubscriber

# ---------------------------------------------------------------------------------------------
# helpers


class LatePublisher:
    """A Publisher whose ``on_subscribe`` arrives only when the test calls :meth:`release` (as
    from a source subscribed on another thread); records requests and cancellation."""

    def __init__(self) -> None:
        self.subscribers: list[Any] = []
        self.requested = 0
        self.cancelled = False

    def subscribe(self, subscriber: Any) -> None:
        self.subscribers.append(subscriber)

    def release(self) -> None:
        outer = self

        class _Sub:
            def request(self, n: int) -> None:
                outer.requested += n

            def cancel(self) -> None:
                outer.cancelled = True

        for s in self.subscribers:
            s.on_subscribe(_Sub())


def request_one_at_a_time(ts: TestSubscriber[Any], limit: int = 10_000) -> TestSubscriber[Any]:
    for _ in range(limit):
        if ts.is_terminated:
            break
        ts.request(1)
    return ts


# ---------------------------------------------------------------------------------------------
# flat_map


@pytest.mark.parametrize("max_concurrency", [1, 2, 3, 4, 8])
def test_flat_map_mixed_empty_and_just_results_do_not_stall(max_concurrency: int) -> None:
    # empty() and just(x) results free their slot without an inner subscription; they must
    # together re-request the outer (RxJava re-requests every scalarLimit of them)
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.range(0, 40).hide().flat_map(
        lambda x: Flowable.empty() if x % 2 == 0 else Flowable.just(x), max_concurrency=max_concurrency
    ).subscribe(ts)
    request_one_at_a_time(ts)
    ts.assert_result(*range(1, 40, 2)).assert_no_violations()


@pytest.mark.parametrize("max_concurrency", [1, 2, 5])
def test_flat_map_only_empty_results_complete(max_concurrency: int) -> None:
    Flowable.range(0, 50).hide().flat_map(
        lambda x: Flowable.empty(), max_concurrency=max_concurrency
    ).test().assert_result().assert_no_violations()


def test_flat_map_outer_never_more_than_max_concurrency_ahead() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inners: list[TestPublisher[int]] = []

    def make(_: int) -> TestPublisher[int]:
        t: TestPublisher[int] = TestPublisher.create()
        inners.append(t)
        return t

    ts = Flowable.from_publisher(outer).flat_map(make, max_concurrency=2).test()
    assert outer.request_calls == [2]
    outer.next(1, 2)
    assert outer.requested == 0
    inners[0].next(10).complete()
    assert outer.requested == 1  # one slot freed: one more
    outer.next(3)
    inners[1].complete()
    inners[2].next(30).complete()
    outer.complete()
    ts.assert_result(10, 30).assert_no_violations()


def test_flat_map_inner_error_cancels_outer_and_other_inners() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    a: TestPublisher[int] = TestPublisher.create()
    b: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.from_publisher(outer).flat_map(lambda x: a if x == 1 else b).test()
    outer.next(1, 2)
    b.next(5)
    a.error(Boom("inner"))
    assert outer.was_cancelled and b.was_cancelled
    ts.assert_failure(Boom, 5).assert_no_violations()


def test_flat_map_delay_errors_collects_into_exception_group() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    a: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.from_publisher(outer).flat_map(lambda x: a, delay_error=True).test()
    outer.next(1)
    outer.error(KeyError("outer"))
    assert not a.was_cancelled
    a.next(5)
    a.error(ValueError("inner"))
    ts.assert_values(5).assert_error(ExceptionGroup).assert_no_violations()
    group = ts.errors[0]
    assert isinstance(group, ExceptionGroup)
    assert [type(e) for e in group.exceptions] == [KeyError, ValueError]


def test_flat_map_cancel_before_inner_on_subscribe_cancels_it() -> None:
    late = LatePublisher()
    ts = Flowable.just(1).flat_map(lambda _: late).test()
    ts.cancel()
    late.release()
    assert late.cancelled
    ts.assert_no_values().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# amb


def test_amb_loser_subscribed_late_is_cancelled_and_never_requested() -> None:
    late = LatePublisher()
    ts = Flowable.amb(late, Flowable.just(1)).test()
    ts.assert_result(1)
    late.release()
    assert late.cancelled and late.requested == 0
    ts.assert_no_violations()


def test_amb_cancel_before_a_source_subscribes_cancels_it() -> None:
    late = LatePublisher()
    other: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.amb(late, other).test()
    ts.cancel()
    late.release()
    assert late.cancelled and other.was_cancelled
    ts.assert_no_violations()


def test_amb_demand_requested_before_late_on_subscribe_is_forwarded() -> None:
    late = LatePublisher()
    other: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber(3)
    Flowable.amb(late, other).subscribe(ts)
    ts.request(2)
    late.release()
    assert late.requested == 5
    other.next(1)  # other wins: the late one is cancelled
    assert late.cancelled
    ts.assert_values(1).assert_no_violations()


def test_amb_the_first_to_signal_wins_even_with_complete() -> None:
    a: TestPublisher[int] = TestPublisher.create()
    b: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.amb(a, b).test()
    b.complete()
    assert a.was_cancelled
    ts.assert_result().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# combine_latest, with_latest_from, skip_until: a late on_subscribe after cancel


def test_combine_latest_cancel_before_a_source_subscribes_cancels_it() -> None:
    late = LatePublisher()
    other: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.combine_latest(other, late).test()
    ts.cancel()
    late.release()
    assert late.cancelled and other.was_cancelled
    ts.assert_no_violations()


def test_combine_latest_empty_source_completes_at_once_and_cancels_late_other() -> None:
    late = LatePublisher()
    a: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.combine_latest(a, late).test()
    a.complete()  # no row can ever be made
    ts.assert_result().assert_no_violations()
    late.release()
    assert late.cancelled


def test_with_latest_from_cancel_before_other_subscribes_cancels_it() -> None:
    late = LatePublisher()
    main: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.from_publisher(main).with_latest_from(late).test()
    ts.cancel()
    late.release()
    assert late.cancelled and main.was_cancelled
    ts.assert_no_violations()


def test_skip_until_cancel_before_other_subscribes_cancels_it() -> None:
    late = LatePublisher()
    main: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.from_publisher(main).skip_until(late).test()
    ts.cancel()
    late.release()
    assert late.cancelled and main.was_cancelled
    ts.assert_no_violations()


def test_skip_until_main_completes_before_late_other_subscribes_cancels_it() -> None:
    late = LatePublisher()
    ts = Flowable.just(1, 2).skip_until(late).test()
    ts.assert_result().assert_no_violations()
    late.release()
    assert late.cancelled


# ---------------------------------------------------------------------------------------------
# ReplayProcessor: RxJava's factories and its time bound (an item is kept while age < max_age)


def test_replay_processor_create_with_size_replays_the_last_n() -> None:
    from rstreams.processors import ReplayProcessor

    rp = ReplayProcessor.create_with_size(1)
    rp.on_next(1)
    rp.on_next(2)
    ts = rp.test()
    rp.on_next(3)
    rp.on_complete()
    ts.assert_result(2, 3).assert_no_violations()
    rp.test().assert_result(3).assert_no_violations()


def test_replay_processor_create_with_time_drops_items_exactly_max_age_old() -> None:
    from rstreams.processors import ReplayProcessor
    from rstreams.testing import TestScheduler

    sched = TestScheduler()
    rp = ReplayProcessor.create_with_time(1.0, sched)
    rp.on_next(1)
    sched.advance_by(1.0)
    ts = rp.test()  # item 1 is exactly 1 s old: not replayed
    rp.on_next(2)
    sched.advance_by(1.0)
    rp.on_next(3)
    ts.assert_values(2, 3).assert_no_violations()


def test_replay_processor_create_with_time_after_termination_replays_only_fresh_items() -> None:
    from rstreams.processors import ReplayProcessor
    from rstreams.testing import TestScheduler

    sched = TestScheduler()
    rp = ReplayProcessor.create_with_time(1.0, sched)
    rp.on_next(1)
    sched.advance_by(1.0)
    rp.on_next(2)
    sched.advance_by(0.5)
    rp.on_next(3)
    rp.on_complete()
    rp.test().assert_result(2, 3).assert_no_violations()
    sched.advance_by(1.0)
    rp.test().assert_result().assert_no_violations()  # stale data is not replayed after termination


def test_replay_processor_create_with_time_and_size_applies_both_bounds() -> None:
    from rstreams.processors import ReplayProcessor
    from rstreams.testing import TestScheduler

    sched = TestScheduler()
    rp = ReplayProcessor.create_with_time_and_size(10.0, sched, 2)
    for i in range(5):
        rp.on_next(i)
    rp.test().assert_values(3, 4).assert_no_violations()
    sched.advance_by(10.0)
    rp.on_complete()
    rp.test().assert_result().assert_no_violations()


def test_replay_processor_replays_the_error_after_the_items_at_the_subscribers_pace() -> None:
    from rstreams.processors import ReplayProcessor

    rp: ReplayProcessor[int] = ReplayProcessor.create()
    rp.on_next(1)
    rp.on_next(2)
    rp.on_error(Boom("done"))
    ts: TestSubscriber[int] = TestSubscriber(1)
    rp.subscribe(ts)
    ts.assert_values(1).assert_no_errors()
    ts.request(1)
    ts.assert_failure(Boom, 1, 2).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# BehaviorProcessor


def test_behavior_processor_create_default_and_late_subscribers() -> None:
    from rstreams.processors import BehaviorProcessor

    bp = BehaviorProcessor.create_default(0)
    first = bp.test()
    first.assert_values(0)
    bp.on_next(1)
    bp.test().assert_values(1).assert_no_violations()  # the latest to a late subscriber
    bp.on_complete()
    first.assert_result(0, 1).assert_no_violations()
    bp.test().assert_result().assert_no_violations()  # after completion only the terminal
    assert bp.value is None and not bp.has_value
    with pytest.raises(TypeError):
        BehaviorProcessor.create_default(None)


# ---------------------------------------------------------------------------------------------
# every in-scope operator: rule 3.9, request(1) at a time, cancel mid-stream


def _io() -> Any:
    from rstreams import schedulers

    return schedulers.io()


# ---------------------------------------------------------------------------------------------
# zip, merge, concat: RxJava semantics with hand-driven sources


def test_zip_completes_with_the_shortest_and_cancels_the_others() -> None:
    a: TestPublisher[int] = TestPublisher.create()
    b: TestPublisher[str] = TestPublisher.create()
    ts = Flowable.zip(a, b).test()
    a.next(1, 2).complete()
    b.next("x")
    ts.assert_values((1, "x")).assert_not_complete()  # a's 2 may still pair
    b.next("y")
    ts.assert_result((1, "x"), (2, "y")).assert_no_violations()
    assert b.was_cancelled


def test_zip_with_an_empty_source_completes_at_once() -> None:
    other: TestPublisher[int] = TestPublisher.create()
    Flowable.zip(other, Flowable.empty()).test().assert_result().assert_no_violations()
    assert other.was_cancelled
    Flowable.range(0, 3).zip_with(Flowable.empty()).test().assert_result().assert_no_violations()


def test_zip_error_cancels_the_others() -> None:
    a: TestPublisher[int] = TestPublisher.create()
    b: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.zip(a, b, lambda x, y: x + y).test()
    a.next(1)
    b.error(Boom("b"))
    assert a.was_cancelled
    ts.assert_failure(Boom).assert_no_violations()


def test_zip_requests_prefetch_and_replenishes() -> None:
    a: TestPublisher[int] = TestPublisher.create()
    b: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.zip(a, b, prefetch=4).subscribe(ts)
    assert a.request_calls == [4] and b.request_calls == [4]
    a.next(1, 2, 3, 4)
    b.next(1, 2, 3, 4)
    ts.assert_no_values()
    ts.request(3)
    ts.assert_values((1, 1), (2, 2), (3, 3)).assert_no_violations()
    assert a.request_calls == [4, 3] and b.request_calls == [4, 3]  # replenished at 75%


def test_merge_error_cancels_the_other_sources() -> None:
    a: TestPublisher[int] = TestPublisher.create()
    b: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.merge(a, b).test()
    a.next(1)
    b.error(Boom("b"))
    assert a.was_cancelled
    ts.assert_failure(Boom, 1).assert_no_violations()


def test_merge_with_max_concurrency_subscribes_the_next_when_one_completes() -> None:
    srcs: list[TestPublisher[int]] = [TestPublisher.create() for _ in range(3)]
    ts = Flowable.merge(*srcs, max_concurrency=2).test()
    assert [s.subscriber_count for s in srcs] == [1, 1, 0]
    srcs[1].next(1).complete()
    assert [s.subscriber_count for s in srcs] == [1, 0, 1]
    srcs[2].next(2).complete()
    srcs[0].next(0).complete()
    ts.assert_result(1, 2, 0).assert_no_violations()


def test_concat_of_async_sources_keeps_order_one_at_a_time() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.concat(*[Flowable.range(i * 10, 3).subscribe_on(_io()) for i in range(4)]).subscribe(ts)
    for n in range(12):
        ts.request(1)
        ts.await_count(n + 1, 5)
    ts.await_done(5).assert_result(*[i * 10 + k for i in range(4) for k in range(3)]).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# combine_latest, with_latest_from


def test_combine_latest_waits_for_every_source_then_combines_the_latest() -> None:
    a: TestPublisher[int] = TestPublisher.create()
    b: TestPublisher[int] = TestPublisher.create()
    c: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.combine_latest(a, b, c, lambda x, y, z: x * 100 + y * 10 + z).test()
    a.next(1, 2)
    b.next(3)
    ts.assert_no_values()
    c.next(4)
    ts.assert_values(234)
    b.next(5)
    ts.assert_values(234, 254)
    a.complete()
    b.complete()
    ts.assert_not_complete()  # c may still change the row
    c.next(6)
    c.complete()
    ts.assert_result(234, 254, 256).assert_no_violations()


def test_combine_latest_source_completing_empty_ends_at_once_and_cancels_others() -> None:
    a: TestPublisher[int] = TestPublisher.create()
    b: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.combine_latest(a, b).test()
    a.next(1)
    b.complete()
    assert a.was_cancelled
    ts.assert_result().assert_no_violations()


def test_combine_latest_error_cancels_the_others() -> None:
    a: TestPublisher[int] = TestPublisher.create()
    b: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.combine_latest(a, b).test()
    a.next(1)
    b.error(Boom("b"))
    assert a.was_cancelled
    ts.assert_failure(Boom).assert_no_violations()


def test_combine_latest_honours_demand() -> None:
    a: TestPublisher[int] = TestPublisher.create()
    b: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.combine_latest(a, b).subscribe(ts)
    a.next(1)
    b.next(1, 2)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values((1, 1))
    ts.request(5)
    ts.assert_values((1, 1), (1, 2)).assert_no_violations()


def test_with_latest_from_drops_main_elements_until_the_other_emitted() -> None:
    main: TestPublisher[int] = TestPublisher.create()
    other: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber(2)
    Flowable.from_publisher(main).with_latest_from(other, lambda m, o: m + o).subscribe(ts)
    main.next(1)  # dropped; one more is requested in its place
    other.next(10)
    main.next(2)
    other.next(20)
    main.next(3)
    ts.assert_values(12, 23)
    main.complete()
    ts.assert_result(12, 23).assert_no_violations()
    assert other.was_cancelled


def test_with_latest_from_other_error_ends_the_stream_and_cancels_main() -> None:
    main: TestPublisher[int] = TestPublisher.create()
    other: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.from_publisher(main).with_latest_from(other).test()
    other.next(1)
    main.next(5)
    other.error(Boom("other"))
    assert main.was_cancelled
    ts.assert_failure(Boom, (5, 1)).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# switch_map, concat_map_eager, take_until, skip_until


def test_switch_map_outer_error_cancels_the_inner() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inner: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.from_publisher(outer).switch_map(lambda _: inner).test()
    outer.next(1)
    inner.next(5)
    outer.error(Boom("outer"))
    assert inner.was_cancelled
    ts.assert_failure(Boom, 5).assert_no_violations()


def test_switch_map_inner_error_cancels_the_outer() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inner: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.from_publisher(outer).switch_map(lambda _: inner).test()
    outer.next(1)
    inner.error(Boom("inner"))
    assert outer.was_cancelled
    ts.assert_failure(Boom).assert_no_violations()


def test_switch_map_error_of_a_replaced_inner_is_not_delivered(undeliverable: list[BaseException]) -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    first: TestPublisher[int] = TestPublisher.create_noncompliant()
    second: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.from_publisher(outer).switch_map(lambda x: first if x == 1 else second).test()
    outer.next(1, 2)
    assert first.was_cancelled
    second.next(7)
    outer.complete()
    second.complete()
    ts.assert_result(7).assert_no_violations()


def test_switch_map_delay_error_keeps_going_and_reports_at_the_end() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    a: TestPublisher[int] = TestPublisher.create()
    b: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.from_publisher(outer).switch_map(lambda x: a if x == 1 else b, delay_error=True).test()
    outer.next(1)
    a.error(Boom("a"))
    assert not outer.was_cancelled
    outer.next(2)
    b.next(3)
    outer.complete()
    ts.assert_values(3).assert_not_complete()
    b.complete()
    ts.assert_failure(Boom, 3).assert_no_violations()


def test_concat_map_eager_subscribes_eagerly_but_keeps_outer_order() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inners: dict[int, TestPublisher[int]] = {i: TestPublisher.create() for i in range(3)}
    ts = Flowable.from_publisher(outer).concat_map_eager(lambda i: inners[i]).test()
    outer.next(0, 1, 2)
    assert all(p.subscriber_count == 1 for p in inners.values())
    inners[2].next(20).complete()
    inners[1].next(10)
    ts.assert_no_values()
    inners[0].next(0)
    ts.assert_values(0)
    inners[0].complete()
    ts.assert_values(0, 10)  # 20 waits for inner 1 to finish
    inners[1].complete()
    ts.assert_values(0, 10, 20)
    outer.complete()
    ts.assert_result(0, 10, 20).assert_no_violations()


def test_concat_map_eager_async_inners_one_at_a_time_keep_order() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.range(0, 8).concat_map_eager(
        lambda x: Flowable.range(x * 10, 3).subscribe_on(_io()), max_concurrency=3, prefetch=1
    ).subscribe(ts)
    for n in range(24):
        ts.request(1)
        ts.await_count(n + 1, 5)
    ts.await_done(5).assert_result(*[x * 10 + k for x in range(8) for k in range(3)]).assert_no_violations()


def test_take_until_other_element_completes_and_cancels_both() -> None:
    main: TestPublisher[int] = TestPublisher.create()
    other: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.from_publisher(main).take_until(other).test()
    main.next(1, 2)
    other.next(0)
    assert main.was_cancelled and other.was_cancelled
    ts.assert_result(1, 2).assert_no_violations()


def test_skip_until_other_element_opens_the_gate() -> None:
    main: TestPublisher[int] = TestPublisher.create()
    other: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber(2)
    Flowable.from_publisher(main).skip_until(other).subscribe(ts)
    main.next(1)
    other.next(0)
    assert other.was_cancelled
    main.next(2, 3)
    main.complete()
    ts.assert_result(2, 3).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# multicast operators


def test_ref_count_last_cancel_disconnects_and_a_new_subscriber_reconnects() -> None:
    subscriptions: list[TestPublisher[int]] = []

    def fresh() -> TestPublisher[int]:
        tp: TestPublisher[int] = TestPublisher.create()
        subscriptions.append(tp)
        return tp

    shared = Flowable.defer(fresh).publish().ref_count()
    a, b = shared.test(), shared.test()
    subscriptions[0].next(1)
    a.cancel()
    assert not subscriptions[0].was_cancelled
    b.cancel()
    assert subscriptions[0].was_cancelled
    c = shared.test()
    assert len(subscriptions) == 2
    subscriptions[1].next(2).complete()
    a.assert_values(1).assert_no_violations()
    b.assert_values(1).assert_no_violations()
    c.assert_result(2).assert_no_violations()


def test_ref_count_reconnects_after_the_source_failed() -> None:
    count = [0]

    def source() -> Flowable[int]:
        count[0] += 1
        return Flowable.concat(Flowable.just(count[0]), Flowable.error(Boom("done")))

    shared = Flowable.defer(source).share()
    shared.test().assert_failure(Boom, 1).assert_no_violations()
    shared.test().assert_failure(Boom, 2).assert_no_violations()


def test_cache_replays_everything_to_late_subscribers_at_their_pace() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    cached = Flowable.from_publisher(tp).cache()
    early = cached.test()
    tp.next(1, 2)
    late: TestSubscriber[int] = TestSubscriber(1)
    cached.subscribe(late)
    late.assert_values(1)
    tp.next(3).complete()
    late.request(5).assert_result(1, 2, 3).assert_no_violations()
    early.assert_result(1, 2, 3).assert_no_violations()
    cached.test().assert_result(1, 2, 3).assert_no_violations()
    assert tp.request_calls[:1] == [2**63 - 1]  # cache consumes its source unbounded


def test_replay_n_bounded_late_subscriber_gets_the_last_n_then_live() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    cf = Flowable.from_publisher(tp).replay(2)
    early = cf.test()  # replay() asks the upstream only for what its subscribers requested
    cf.connect()
    tp.next(1, 2, 3)
    early.assert_values(1, 2, 3)
    late = cf.test()
    late.assert_values(2, 3)
    tp.next(4).complete()
    late.assert_result(2, 3, 4).assert_no_violations()
    cf.test().assert_result(3, 4).assert_no_violations()


def test_auto_connect_n_connects_at_the_nth_and_never_disconnects() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ac = Flowable.from_publisher(tp).publish().auto_connect(2)
    a = ac.test()
    assert tp.subscriber_count == 0
    b = ac.test()
    assert tp.subscriber_count == 1
    a.cancel()
    b.cancel()
    assert not tp.was_cancelled
    a.assert_no_violations()
    b.assert_no_violations()


def test_publish_subscribers_present_share_one_lockstep_upstream() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    cf = Flowable.from_publisher(tp).publish()
    fast = cf.test()
    slow: TestSubscriber[int] = TestSubscriber(1)
    cf.subscribe(slow)
    cf.connect()
    tp.next(1, 2)
    fast.assert_values(1)  # the slow one paces the fast one
    slow.request(1)
    fast.assert_values(1, 2).assert_no_violations()
    slow.assert_values(1, 2).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# group_by, window


class _SubscribingMain(TestSubscriber[Any]):
    """Subscribes every group during on_next (as flat_map does) with its own TestSubscriber."""

    def __init__(self) -> None:
        super().__init__()
        self.groups: list[tuple[Any, TestSubscriber[Any]]] = []

    def on_next(self, item: Any) -> None:
        super().on_next(item)
        ts: TestSubscriber[Any] = TestSubscriber(tag=f"group {item.key!r}")
        item.subscribe(ts)
        self.groups.append((item.key, ts))


def test_group_by_cancelled_group_is_recreated_by_the_next_element_of_its_key() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    main = _SubscribingMain()
    Flowable.from_publisher(tp).group_by(lambda x: x % 2).subscribe(main)
    tp.next(0, 1, 2)
    even, odd = main.groups[0][1], main.groups[1][1]
    even.assert_values(0, 2)
    even.cancel()
    tp.next(4, 3)
    assert [k for k, _ in main.groups] == [0, 1, 0]
    main.groups[2][1].assert_values(4)
    odd.assert_values(1, 3)
    tp.complete()
    for _, g in main.groups[1:]:
        g.assert_complete().assert_no_violations()
    even.assert_not_terminated().assert_no_violations()
    main.assert_complete().assert_no_violations()


def test_group_by_group_subscribed_late_gets_its_element_then_completes() -> None:
    ts = Flowable.range(0, 4).group_by(lambda x: x % 2).test()
    groups = ts.values
    assert [g.key for g in groups] == [0, 1, 0, 1]  # abandoned groups are evicted: a new one per element
    for i, g in enumerate(groups):
        g.test().assert_result(i).assert_no_violations()
    ts.assert_complete().assert_no_violations()


def test_group_by_main_cancel_keeps_open_groups_and_cancels_upstream_last() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    main = _SubscribingMain()
    Flowable.from_publisher(tp).group_by(lambda x: x % 2).subscribe(main)
    tp.next(0, 1)
    main.cancel()
    tp.next(2, 3, 5)  # no new keys: existing groups go on
    assert not tp.was_cancelled
    main.groups[0][1].assert_values(0, 2)
    main.groups[1][1].assert_values(1, 3, 5)
    main.groups[0][1].cancel()
    assert not tp.was_cancelled
    main.groups[1][1].cancel()
    assert tp.was_cancelled
    main.assert_no_violations()


@pytest.mark.parametrize(
    ("count", "skip", "want"),
    [
        (3, 3, [[0, 1, 2], [3, 4, 5], [6]]),
        (2, 3, [[0, 1], [3, 4], [6]]),
        (3, 2, [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]]),
        (3, 1, [[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6], [5, 6], [6]]),
    ],
)
def test_window_count_skip(count: int, skip: int, want: list[list[int]]) -> None:
    for src in (Flowable.range(0, 7), Flowable.range(0, 7).hide()):
        src.window(count, skip).concat_map(lambda w: w.to_list()).test().assert_result(*want).assert_no_violations()
        ts: TestSubscriber[Any] = TestSubscriber(0)
        src.window(count, skip).concat_map(lambda w: w.to_list()).subscribe(ts)
        request_one_at_a_time(ts).assert_result(*want).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# processors


def test_publish_processor_missing_backpressure_only_for_the_subscriber_without_demand() -> None:
    from rstreams.errors import MissingBackpressureError
    from rstreams.processors import PublishProcessor

    pp: PublishProcessor[int] = PublishProcessor.create()
    slow: TestSubscriber[int] = TestSubscriber(1)
    fast: TestSubscriber[int] = TestSubscriber()
    pp.subscribe(slow)
    pp.subscribe(fast)
    pp.on_next(1)
    pp.on_next(2)
    slow.assert_failure(MissingBackpressureError, 1).assert_no_violations()
    assert pp.subscriber_count == 1
    pp.on_next(3)
    pp.on_complete()
    fast.assert_result(1, 2, 3).assert_no_violations()
    pp.test().assert_result().assert_no_violations()  # late: only the terminal


def test_unicast_processor_second_subscriber_gets_an_error_first_keeps_going() -> None:
    from rstreams.errors import ProtocolViolationError
    from rstreams.processors import UnicastProcessor

    up: UnicastProcessor[int] = UnicastProcessor.create()
    up.on_next(1)
    first: TestSubscriber[int] = TestSubscriber(0)
    up.subscribe(first)
    second = up.test()
    second.assert_error(ProtocolViolationError).assert_no_values().assert_no_violations()
    up.on_next(2)
    up.on_complete()
    first.request(1).assert_values(1).assert_not_complete()
    first.request(1).assert_result(1, 2).assert_no_violations()


def test_async_processor_emits_only_the_last_value_on_complete() -> None:
    from rstreams.processors import AsyncProcessor

    ap: AsyncProcessor[int] = AsyncProcessor.create()
    early: TestSubscriber[int] = TestSubscriber(0)
    ap.subscribe(early)
    ap.on_next(1)
    ap.on_next(2)
    early.request(1).assert_no_values().assert_not_complete()
    ap.on_complete()
    early.assert_result(2).assert_no_violations()
    late: TestSubscriber[int] = TestSubscriber(0)
    ap.subscribe(late)
    late.assert_no_values().assert_not_complete()
    late.request(1).assert_result(2).assert_no_violations()
    err: AsyncProcessor[int] = AsyncProcessor.create()
    err.on_next(1)
    err.on_error(Boom("x"))
    err.test().assert_failure(Boom).assert_no_violations()


def test_multicast_processor_emits_only_when_every_subscriber_has_demand() -> None:
    from rstreams.processors import MulticastProcessor

    mp: MulticastProcessor[int] = MulticastProcessor.create(4)
    mp.start()
    a: TestSubscriber[int] = TestSubscriber(0)
    b: TestSubscriber[int] = TestSubscriber(0)
    mp.subscribe(a)
    mp.subscribe(b)
    assert [mp.offer(i) for i in range(5)] == [True, True, True, True, False]  # bounded by buffer_size
    a.request(3)
    a.assert_no_values()
    b.request(1)
    a.assert_values(0)
    b.assert_values(0)
    b.request(5)
    a.assert_values(0, 1, 2)
    b.assert_values(0, 1, 2)
    b.cancel()  # a alone now paces
    a.request(1).assert_values(0, 1, 2, 3)
    mp.on_complete()
    a.assert_complete().assert_no_violations()
    b.assert_no_violations()
    unbounded: MulticastProcessor[int] = MulticastProcessor.create(2)
    unbounded.start_unbounded()
    assert all(unbounded.offer(i) for i in range(10))
    unbounded.on_complete()
    unbounded.test().assert_result(*range(10)).assert_no_violations()


def test_replay_processor_value_is_the_latest_retained_item() -> None:
    from rstreams.processors import ReplayProcessor

    rp: ReplayProcessor[int] = ReplayProcessor.create()
    assert rp.value is None and not rp.has_value
    rp.on_next(1)
    rp.on_next(2)
    assert rp.value == 2 and rp.values == [1, 2]


# ---------------------------------------------------------------------------------------------
# thread safety: seeded, bounded stress (short; run with -m stress)


def _requester(ts: TestSubscriber[Any], rnd: random.Random, deadline: float, max_n: int) -> None:
    while not ts.is_terminated and time.monotonic() < deadline:
        ts.request(rnd.randint(1, max_n))
        time.sleep(rnd.random() * 0.0003)


def _in_threads(*fns: Any) -> None:
    threads = [threading.Thread(target=f) for f in fns]
    for t in threads:
        t.start()
    for t in threads:
        t.join(15)
        assert not t.is_alive()


STRESS_SEEDS = range(3)


@pytest.mark.stress
@pytest.mark.parametrize("seed", STRESS_SEEDS)
def test_stress_flat_map_async_inners_mixed_scalars_random_demand(seed: int) -> None:
    rnd = random.Random(seed)
    sizes = [rnd.randint(0, 4) for _ in range(40)]

    def inner(x: int) -> Flowable[int]:
        if x % 5 == 0:
            return Flowable.empty()
        if x % 5 == 1:
            return Flowable.just(x * 100)
        return Flowable.range(x * 100, sizes[x]).subscribe_on(_io())

    want = sorted(v for x in range(40) for v in (([] if x % 5 == 0 else [x * 100]) if x % 5 < 2 else range(x * 100, x * 100 + sizes[x])))
    for mc in (1, 3, None):
        ts: TestSubscriber[int] = TestSubscriber(0)
        Flowable.range(0, 40).hide().flat_map(inner, max_concurrency=mc, prefetch=2).subscribe(ts)
        _requester(ts, rnd, time.monotonic() + 10, 4)
        ts.await_done(10).assert_complete().assert_no_violations()
        assert sorted(ts.values) == want


@pytest.mark.stress
@pytest.mark.parametrize("seed", STRESS_SEEDS)
def test_stress_zip_combine_latest_switch_map_cme_across_threads(seed: int) -> None:
    deadline = time.monotonic() + 10
    ts1: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.zip(Flowable.range(0, 120).subscribe_on(_io()), Flowable.range(0, 100).subscribe_on(_io()), prefetch=4).subscribe(ts1)
    ts2: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.combine_latest(Flowable.range(0, 80).subscribe_on(_io()), Flowable.range(0, 60).subscribe_on(_io()), prefetch=4).subscribe(ts2)
    ts3: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.range(0, 40).subscribe_on(_io()).switch_map(lambda x: Flowable.range(x * 10, 5).subscribe_on(_io()), prefetch=2).subscribe(ts3)
    ts4: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.range(0, 30).concat_map_eager(lambda x: Flowable.range(x * 10, 3).subscribe_on(_io()), max_concurrency=4, prefetch=1).subscribe(ts4)
    _in_threads(*[(lambda t=t, s=s: _requester(t, random.Random(s), deadline, 6)) for s, t in enumerate((ts1, ts2, ts3, ts4), seed * 10)])
    ts1.await_done(10).assert_result(*[(i, i) for i in range(100)]).assert_no_violations()
    ts2.await_done(10).assert_complete().assert_no_violations()
    assert ts2.values[-1] == (79, 59)
    ts3.await_done(10).assert_complete().assert_no_violations()
    assert ts3.values[-5:] == [390, 391, 392, 393, 394]
    ts4.await_done(10).assert_result(*[x * 10 + k for x in range(30) for k in range(3)]).assert_no_violations()


@pytest.mark.stress
@pytest.mark.parametrize("seed", STRESS_SEEDS)
def test_stress_amb_of_racing_sources_one_winner(seed: int) -> None:
    for _ in range(20):
        ts: TestSubscriber[int] = TestSubscriber()
        Flowable.amb(*[Flowable.range(i * 100, 10).subscribe_on(_io()) for i in range(3)]).subscribe(ts)
        ts.await_done(10).assert_complete().assert_no_violations()
        assert len(ts.values) == 10 and len({v // 100 for v in ts.values}) == 1


@pytest.mark.stress
@pytest.mark.parametrize("seed", STRESS_SEEDS)
def test_stress_share_and_replay_subscribers_on_threads_see_the_whole_stream(seed: int) -> None:
    n = 300
    deadline = time.monotonic() + 10
    shared = Flowable.range(0, n).subscribe_on(_io()).publish().ref_count(2)
    a: TestSubscriber[int] = TestSubscriber(0)
    b: TestSubscriber[int] = TestSubscriber(0)
    shared.subscribe(a)
    shared.subscribe(b)
    _in_threads(lambda: _requester(a, random.Random(seed), deadline, 7), lambda: _requester(b, random.Random(seed + 1), deadline, 7))
    for t in (a, b):
        t.await_done(10).assert_result(*range(n)).assert_no_violations()

    replayed = Flowable.range(0, n).subscribe_on(_io()).replay().auto_connect()
    c: TestSubscriber[int] = TestSubscriber(0)
    replayed.subscribe(c)
    d: TestSubscriber[int] = TestSubscriber(0)

    def late() -> None:
        time.sleep(random.Random(seed).random() * 0.002)
        replayed.subscribe(d)
        _requester(d, random.Random(seed + 2), deadline, 9)

    _in_threads(lambda: _requester(c, random.Random(seed + 3), deadline, 9), late)
    for t in (c, d):
        t.await_done(10).assert_result(*range(n)).assert_no_violations()


@pytest.mark.stress
@pytest.mark.parametrize("seed", STRESS_SEEDS)
def test_stress_multicast_processor_requesters_on_threads(seed: int) -> None:
    from rstreams.processors import MulticastProcessor

    n = 300
    deadline = time.monotonic() + 10
    mp: MulticastProcessor[int] = MulticastProcessor.create(8)
    subs: list[TestSubscriber[int]] = [TestSubscriber(0) for _ in range(3)]
    for s in subs:
        mp.subscribe(s)
    Flowable.range(0, n).subscribe_on(_io()).subscribe(mp)
    _in_threads(*[(lambda t=t, i=i: _requester(t, random.Random(seed * 7 + i), deadline, 5)) for i, t in enumerate(subs)])
    for t in subs:
        t.await_done(10).assert_result(*range(n)).assert_no_violations()


@pytest.mark.stress
@pytest.mark.parametrize("seed", STRESS_SEEDS)
def test_stress_behavior_and_replay_subscribers_arriving_while_emitting(seed: int) -> None:
    from rstreams.processors import BehaviorProcessor, ReplayProcessor

    n = 400
    rnd = random.Random(seed)
    bp: BehaviorProcessor[int] = BehaviorProcessor.create_default(-1)
    rp: ReplayProcessor[int] = ReplayProcessor.create_with_size(10)
    b_subs: list[TestSubscriber[int]] = []
    r_subs: list[TestSubscriber[int]] = []

    def emit() -> None:
        for i in range(n):
            bp.on_next(i)
            rp.on_next(i)
        bp.on_complete()
        rp.on_complete()

    def subscribe() -> None:
        for _ in range(15):
            tb: TestSubscriber[int] = TestSubscriber()
            bp.subscribe(tb)
            b_subs.append(tb)
            tr: TestSubscriber[int] = TestSubscriber(0)
            rp.subscribe(tr)
            r_subs.append(tr)
            time.sleep(rnd.random() * 0.0002)

    _in_threads(emit, subscribe)
    for tb in b_subs:
        tb.await_done(10).assert_complete().assert_no_violations()
        v = tb.values
        if v:  # the latest (or the default), then every later item, in order
            assert v == list(range(v[0], n)) or v == [-1, *range(n)]
    for tr in r_subs:
        _requester(tr, rnd, time.monotonic() + 10, 50)
        tr.await_done(10).assert_complete().assert_no_violations()
        v = tr.values
        assert v and v == list(range(v[0], n))


def test_combine_latest_amb_with_latest_from_accept_an_iterable_of_sources() -> None:
    # as merge/zip/concat do (RxJava's Iterable overloads)
    Flowable.combine_latest([Flowable.just(1), Flowable.just(2)], lambda a, b: a + b).test().assert_result(3).assert_no_violations()
    Flowable.combine_latest([Flowable.just(1), Flowable.just(2)]).test().assert_result((1, 2)).assert_no_violations()
    amb_of_iterable: Any = Flowable.amb(iter([Flowable.never(), Flowable.just(5)]))  # type: ignore[arg-type]
    amb_of_iterable.test().assert_result(5).assert_no_violations()
    Flowable.just(1).with_latest_from([Flowable.just(10), Flowable.just(100)], lambda a, b, c: a + b + c).test().assert_result(
        111
    ).assert_no_violations()


def test_auto_connect_hands_the_connection_to_on_connect() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    connections: list[Any] = []
    ac = Flowable.from_publisher(tp).publish().auto_connect(1, connections.append)
    ts = ac.test()
    assert len(connections) == 1
    tp.next(1)
    connections[0].dispose()  # the caller can disconnect
    assert tp.was_cancelled
    ts.assert_values(1).assert_no_violations()


CANCEL_RACES: dict[str, Any] = {
    "concat_map_eager": lambda: Flowable.range(0, 200).concat_map_eager(
        lambda x: Flowable.range(x, 3).subscribe_on(_io()), max_concurrency=8, prefetch=1
    ),
    "flat_map": lambda: Flowable.range(0, 200).flat_map(lambda x: Flowable.range(x, 3).subscribe_on(_io()), max_concurrency=8, prefetch=1),
    "switch_map": lambda: Flowable.range(0, 200).subscribe_on(_io()).switch_map(lambda x: Flowable.range(x, 3).subscribe_on(_io())),
    "merge": lambda: Flowable.merge(*[Flowable.range(i * 100, 50).subscribe_on(_io()) for i in range(4)], prefetch=2),
    "zip": lambda: Flowable.zip(Flowable.range(0, 200).subscribe_on(_io()), Flowable.range(0, 200).subscribe_on(_io()), prefetch=2),
    "combine_latest": lambda: Flowable.combine_latest(Flowable.range(0, 200).subscribe_on(_io()), Flowable.range(0, 200).subscribe_on(_io())),
    "group_by": lambda: Flowable.range(0, 400).subscribe_on(_io()).group_by(lambda x: x % 4).flat_map(lambda g: g.observe_on(_io())),
    "share": lambda: Flowable.range(0, 400).subscribe_on(_io()).share(),
}


@pytest.mark.stress
@pytest.mark.parametrize("name", sorted(CANCEL_RACES))
def test_stress_cancel_from_another_thread_while_inners_emit(name: str) -> None:
    rnd = random.Random(name)
    thread_errors: list[BaseException | None] = []
    old_hook = threading.excepthook

    def hook(args: Any) -> None:
        thread_errors.append(args.exc_value)

    threading.excepthook = hook
    try:
        with plugins.collect_errors() as undeliverable:
            for _ in range(40):
                ts: TestSubscriber[Any] = TestSubscriber()
                CANCEL_RACES[name]().subscribe(ts)
                time.sleep(rnd.random() * 0.002)
                ts.cancel()
                ts.assert_no_violations()
            time.sleep(0.05)
        assert not undeliverable, undeliverable[:3]
        assert not thread_errors, thread_errors[:3]
    finally:
        threading.excepthook = old_hook


def test_publish_dispose_while_items_are_queued_drops_them_and_refuses_nobody() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    cf = Flowable.from_publisher(tp).publish()
    slow: TestSubscriber[int] = TestSubscriber(0)
    cf.subscribe(slow)
    d = cf.connect()
    tp.next(1, 2, 3)  # queued: the subscriber has no demand
    d.dispose()
    assert tp.was_cancelled
    slow.request(5)
    slow.assert_no_values().assert_not_terminated().assert_no_violations()  # RxJava: no signal on dispose
    fresh = cf.test()  # a new connection serves new subscribers
    fresh.assert_no_values().assert_not_terminated().assert_no_violations()


def test_connectable_after_termination_late_subscribers_get_the_terminal_until_reset() -> None:
    runs: list[int] = []

    def source() -> Flowable[int]:
        runs.append(1)
        return Flowable.range(0, 3)

    cf = Flowable.defer(source).publish()
    first = cf.test()
    cf.connect()
    first.assert_result(0, 1, 2).assert_no_violations()
    cf.test().assert_result().assert_no_violations()  # RxJava 3: the terminal, as a processor would
    cf.reset()
    fresh = cf.test()
    fresh.assert_no_values().assert_not_terminated()
    cf.connect()
    fresh.assert_result(0, 1, 2).assert_no_violations()
    assert len(runs) == 2

    rf = Flowable.defer(source).replay()
    rf.connect()
    rf.test().assert_result(0, 1, 2).assert_no_violations()  # replayed after termination
    rf.reset()
    again = rf.test()
    again.assert_no_values().assert_not_terminated()
    rf.connect()
    again.assert_result(0, 1, 2).assert_no_violations()
    assert len(runs) == 4


@pytest.mark.parametrize("op", ["flat_map", "switch_map", "concat_map_eager", "concat_map"])
def test_mapper_returning_a_non_publisher_is_a_type_error_and_cancels_upstream(op: str) -> None:
    cancelled: list[bool] = []
    src = Flowable.range(0, 3).hide().do_on_cancel(lambda: cancelled.append(True))
    ts = getattr(src, op)(lambda x: [x]).test()
    ts.await_done(5).assert_error(TypeError, match=f"{op}.*not a Publisher").assert_no_values().assert_no_violations()
    assert cancelled


def test_flat_map_source_within_its_prefetch_is_never_reported() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.just(1).flat_map(lambda _: tp, prefetch=4).subscribe(ts)
    for round_ in range(5):
        tp.next(*range(round_ * 4, round_ * 4 + 4) if round_ == 0 else range(round_ * 4, round_ * 4 + 3))
        ts.request(4 if round_ == 0 else 3)
    ts.assert_no_errors().assert_no_violations()
    assert ts.values == [*range(0, 4), *[v for r in range(1, 5) for v in range(r * 4, r * 4 + 3)]]
