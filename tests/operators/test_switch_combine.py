"""switch_map, concat_map_eager, combine_latest, with_latest_from, amb, skip_until, parallel."""

from __future__ import annotations

import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from operators.harness import Boom, check_scenarios
from rstreams import MAX_DEMAND, Flowable, schedulers
from rstreams.testing import TestPublisher, TestSubscriber


# ------------------------------------------------------------------------------------ switch_map
def test_switch_map_synchronous_inners_emit_everything_under_unbounded_demand() -> None:
    for src in (Flowable.range(0, 10), Flowable.range(0, 10).hide()):
        src.switch_map(lambda x: Flowable.just(x, x + 100)).test().assert_result(
            *[y for x in range(10) for y in (x, x + 100)]
        ).assert_no_violations()


def test_switch_map_with_slow_demand_keeps_only_the_latest_inner() -> None:
    # the outer is consumed unbounded: every new element replaces the inner before it could emit
    ts = Flowable.range(0, 10).switch_map(lambda x: Flowable.just(x, x + 100)).test(0)
    ts.request(1)
    ts.request(1)
    ts.assert_result(9, 109).assert_no_violations()


def test_switch_map_cancels_the_previous_inner() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inners = [TestPublisher[int].create() for _ in range(2)]
    ts = Flowable.from_publisher(outer).switch_map(lambda i: inners[i]).test()
    outer.next(0)
    inners[0].next(1, 2)
    outer.next(1)
    inners[0].assert_was_cancelled()
    inners[1].next(3)
    outer.complete()
    ts.assert_values(1, 2, 3).assert_not_complete()
    inners[1].complete()
    ts.assert_result(1, 2, 3).assert_no_violations()


def test_switch_map_demand_carries_over_to_next_inner() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.from_publisher(outer).switch_map(lambda i: Flowable.range(i * 10, 5)).test(3)
    outer.next(0)
    ts.assert_values(0, 1, 2)
    outer.next(1)
    ts.request(2)
    ts.assert_values(0, 1, 2, 10, 11).assert_no_violations()


def test_switch_map_errors() -> None:
    Flowable.range(0, 3).switch_map(lambda x: Flowable.error(Boom()) if x == 1 else Flowable.just(x)).test().assert_failure(
        Boom, 0
    ).assert_no_violations()
    Flowable.range(0, 3).switch_map(lambda x: None).test().assert_error(TypeError, match="switch_map").assert_no_violations()  # type: ignore[arg-type,return-value]


def test_switch_map_async_inners_only_latest_survive() -> None:
    ts = Flowable.range(0, 50).switch_map(lambda x: Flowable.range(x * 1000, 100).subscribe_on(schedulers.io())).test()
    ts.await_done(5).assert_complete().assert_no_violations()
    assert ts.values[-100:] == list(range(49000, 49100))


# ------------------------------------------------------------------------------------ concat_map_eager
def test_concat_map_eager_keeps_outer_order() -> None:
    check_scenarios(lambda f: f.concat_map_eager(lambda x: Flowable.just(x, -x)), range(1, 10),
                    lambda d: [y for x in d for y in (x, -x)])
    ts = Flowable.range(0, 20).concat_map_eager(
        lambda x: Flowable.range(x * 10, 10).subscribe_on(schedulers.io()), max_concurrency=5, prefetch=3
    ).test()
    ts.await_done(5)
    assert ts.values == list(range(200))
    ts.assert_complete().assert_no_violations()


def test_concat_map_eager_subscribes_eagerly() -> None:
    pubs = [TestPublisher[int].create() for _ in range(3)]
    ts = Flowable.range(0, 3).concat_map_eager(lambda i: pubs[i]).test()
    for p in pubs:
        p.assert_was_subscribed()
    pubs[2].next(20).complete()
    pubs[1].next(10).complete()
    ts.assert_no_values()
    pubs[0].next(0).complete()
    ts.assert_result(0, 10, 20).assert_no_violations()


# ------------------------------------------------------------------------------------ combine_latest
def test_combine_latest_emits_latest_pairs() -> None:
    a: TestPublisher[int] = TestPublisher.create()
    b: TestPublisher[str] = TestPublisher.create()
    ts = Flowable.combine_latest(a, b, lambda x, y: f"{x}{y}").test()
    a.next(1)
    ts.assert_no_values()
    b.next("a")
    a.next(2)
    b.next("b")
    a.complete()
    b.complete()
    ts.assert_result("1a", "2a", "2b").assert_no_violations()


def test_combine_latest_completes_when_a_source_is_empty() -> None:
    Flowable.combine_latest(Flowable.empty(), Flowable.never()).test().assert_result().assert_no_violations()


def test_combine_latest_backpressure_and_errors() -> None:
    ts = Flowable.combine_latest(Flowable.just(1), Flowable.range(0, 5)).test(2)
    ts.assert_values((1, 0), (1, 1)).assert_not_complete()
    ts.request(10)
    ts.assert_result((1, 0), (1, 1), (1, 2), (1, 3), (1, 4)).assert_no_violations()
    Flowable.combine_latest(Flowable.just(1), Flowable.error(Boom())).test().assert_error(Boom).assert_no_violations()
    Flowable.combine_latest(Flowable.just(1), Flowable.just(2), lambda a, b: None).test().assert_error(TypeError).assert_no_violations()


# ------------------------------------------------------------------------------------ with_latest_from
def test_with_latest_from_drops_until_others_have_values() -> None:
    main: TestPublisher[int] = TestPublisher.create()
    other: TestPublisher[str] = TestPublisher.create()
    ts = Flowable.from_publisher(main).with_latest_from(other, lambda m, o: f"{m}{o}").test()
    main.next(1)
    other.next("x")
    main.next(2)
    other.next("y")
    main.next(3)
    main.complete()
    ts.assert_result("2x", "3y").assert_no_violations()
    other.assert_was_cancelled()


def test_with_latest_from_other_error_ends_stream() -> None:
    Flowable.never().with_latest_from(Flowable.error(Boom())).test().assert_error(Boom).assert_no_violations()


# ------------------------------------------------------------------------------------ amb / skip_until
def test_amb_first_signal_wins_and_others_are_cancelled() -> None:
    a: TestPublisher[int] = TestPublisher.create()
    b: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.amb(a, b).test()
    b.next(1)
    a.assert_was_cancelled()
    b.next(2).complete()
    ts.assert_result(1, 2).assert_no_violations()
    Flowable.just(9).amb_with(Flowable.never()).test().assert_result(9).assert_no_violations()


def test_skip_until_opens_on_other_element() -> None:
    main: TestPublisher[int] = TestPublisher.create()
    other: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.from_publisher(main).skip_until(other).test()
    main.next(1, 2)
    other.next(0)
    main.next(3)
    main.complete()
    ts.assert_result(3).assert_no_violations()


def test_skip_until_other_error() -> None:
    Flowable.never().skip_until(Flowable.error(Boom())).test().assert_error(Boom).assert_no_violations()


# ------------------------------------------------------------------------------------ parallel
def test_parallel_run_on_sequential_processes_everything() -> None:
    threads: set[str] = set()

    def work(x: int) -> int:
        threads.add(threading.current_thread().name)
        return x * 2

    ts = Flowable.range(0, 2000).parallel(4).run_on(schedulers.io()).map(work).filter(lambda x: x % 3 == 0).sequential().test()
    ts.await_done(10)
    assert sorted(ts.values) == [x * 2 for x in range(2000) if (x * 2) % 3 == 0]
    ts.assert_complete().assert_no_violations()
    assert len(threads) >= 2


def test_parallel_error_propagates() -> None:
    ts = Flowable.concat(Flowable.range(0, 10), Flowable.error(Boom())).parallel(2).sequential().test()
    ts.await_done(5).assert_error(Boom).assert_no_violations()


@settings(max_examples=30, deadline=None)
@given(data=st.lists(st.integers(0, 4), max_size=12), requests=st.lists(st.integers(1, 5), min_size=1, max_size=6))
def test_property_concat_map_eager_equals_concat_map_model(data: list[int], requests: list[int]) -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_iterable(data).concat_map_eager(lambda n: Flowable.range(0, n), max_concurrency=3).subscribe(ts)
    for r in requests:
        ts.request(r)
    ts.request(MAX_DEMAND)
    ts.assert_result(*[i for n in data for i in range(n)]).assert_no_violations()
