"""observe_on, subscribe_on and flat_map. The rule tests (``test_rule_*``) are in
``tests/spec/test_rules_async_boundaries.py``."""

from __future__ import annotations

import threading
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from operators.harness import Boom, check_scenarios
from rstreams import MAX_DEMAND, Flowable, schedulers
from rstreams.testing import TestScheduler, TestSubscriber


# ------------------------------------------------------------------------------------ observe_on
def test_observe_on_delivers_on_the_worker_thread() -> None:
    ts = Flowable.range(0, 100).observe_on(schedulers.new_thread()).test()
    ts.await_done(5).assert_result(*range(100)).assert_no_violations()
    assert all(name.startswith("rstreams-new-thread") for name in ts.value_threads)


def test_observe_on_scenarios() -> None:
    check_scenarios(lambda f: f.observe_on(schedulers.single()), range(50), lambda d: d)


def test_observe_on_prefetch_bounds_upstream_demand() -> None:
    requests: list[int] = []
    ts = Flowable.range(0, 1000).hide().do_on_request(requests.append).observe_on(schedulers.single(), prefetch=16).test(0)
    time.sleep(0.05)
    assert requests == [16]
    ts.request(100)
    ts.await_count(100, 5)
    assert all(r <= 16 for r in requests)
    assert sum(requests) <= 100 + 16
    ts.cancel()
    ts.assert_no_violations()


def test_observe_on_error_cuts_ahead_unless_delay_error() -> None:
    src = Flowable.concat(Flowable.range(0, 5), Flowable.error(Boom()))
    ts = src.observe_on(schedulers.single(), delay_error=True).test()
    ts.await_done(5).assert_failure(Boom, 0, 1, 2, 3, 4).assert_no_violations()
    ts2: TestSubscriber[int] = TestSubscriber(0)
    src.observe_on(schedulers.single()).subscribe(ts2)
    ts2.await_done(5)
    ts2.assert_error(Boom).assert_no_values().assert_no_violations()


def test_observe_on_cancel_stops_delivery_and_disposes_worker() -> None:
    before = {t for t in threading.enumerate()}
    ts = Flowable.range(0, 10**9).observe_on(schedulers.new_thread()).test(5)
    ts.await_count(5, 5)
    ts.cancel()
    time.sleep(0.05)
    n = len(ts.values)
    time.sleep(0.05)
    assert len(ts.values) == n == 5
    ts.assert_no_violations()
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and {t for t in threading.enumerate()} - before:
        time.sleep(0.02)
    assert not ({t for t in threading.enumerate()} - before)


def test_observe_on_with_test_scheduler_is_deterministic() -> None:
    sched = TestScheduler()
    ts = Flowable.just(1, 2, 3).observe_on(sched).test()
    ts.assert_no_values()
    sched.trigger_actions()
    ts.assert_result(1, 2, 3).assert_no_violations()


# ------------------------------------------------------------------------------------ subscribe_on
def test_subscribe_on_subscribes_and_emits_on_the_worker() -> None:
    threads: list[str] = []
    ts = Flowable.defer(lambda: (threads.append(threading.current_thread().name), Flowable.range(0, 10))[1]).subscribe_on(
        schedulers.io()
    ).test()
    ts.await_done(5).assert_result(*range(10)).assert_no_violations()
    assert threads[0].startswith("rstreams-io")
    assert all(n.startswith("rstreams-io") for n in ts.value_threads)


def test_subscribe_on_requests_before_subscription_are_deferred() -> None:
    ts = Flowable.range(0, 10).subscribe_on(schedulers.single()).test(0)
    ts.request(3)
    ts.request(2)
    ts.await_count(5, 5)
    time.sleep(0.02)
    ts.assert_values(0, 1, 2, 3, 4).assert_no_violations()


def test_subscribe_on_scenarios() -> None:
    check_scenarios(lambda f: f.subscribe_on(schedulers.io()), range(30), lambda d: d)


# ------------------------------------------------ from_callable(...).subscribe_on(s): one task
def test_subscribe_on_callable_runs_the_callable_and_emits_on_the_worker() -> None:
    ran_on: list[str] = []
    ts = Flowable.from_callable(lambda: (ran_on.append(threading.current_thread().name), 7)[1]).subscribe_on(
        schedulers.io()
    ).test()
    ts.await_done(5).assert_result(7).assert_no_violations()
    assert ran_on[0].startswith("rstreams-io") and ts.value_threads[0].startswith("rstreams-io")


def test_subscribe_on_callable_late_request_still_emits_on_the_worker() -> None:
    ran = threading.Event()
    ts = Flowable.from_callable(lambda: (ran.set(), "v")[1]).subscribe_on(schedulers.single()).test(0)
    assert ran.wait(5)
    time.sleep(0.02)
    ts.assert_no_values()  # rule 1.1: nothing without demand
    ts.request(1)  # from the test thread, after the value is ready: hopped onto the worker
    ts.await_done(5).assert_result("v").assert_no_violations()
    assert ts.value_threads[0].startswith("rstreams-single")


def test_subscribe_on_callable_cancel_before_it_runs_never_calls_it() -> None:
    calls: list[int] = []
    gate = threading.Event()
    w = schedulers.single().create_worker()
    w.schedule(lambda: gate.wait(5))  # keep the single thread busy
    ts = Flowable.from_callable(lambda: calls.append(1) or 1).subscribe_on(schedulers.single()).test()
    ts.cancel()
    gate.set()
    time.sleep(0.05)
    assert calls == []
    ts.assert_no_values().assert_not_complete().assert_no_violations()
    w.dispose()


def test_subscribe_on_callable_errors_and_none() -> None:
    from rstreams.errors import NoneElementError

    ts = Flowable.from_callable(lambda: 1 // 0).subscribe_on(schedulers.io()).test()
    ts.await_done(5).assert_error(ZeroDivisionError).assert_no_violations()
    ts2 = Flowable.from_callable(lambda: None).subscribe_on(schedulers.io()).test()
    ts2.await_done(5).assert_error(NoneElementError, match="2.13").assert_no_violations()


def test_subscribe_on_callable_releases_its_io_thread_before_on_complete() -> None:
    """The worker is disposed before on_complete, so whatever on_complete starts (flat_map's
    next inner) can lease the same pooled thread: 200 inners at concurrency 1 use one thread."""
    seen: set[str] = set()

    def inner(i: int) -> Flowable[int]:
        return Flowable.from_callable(lambda: (seen.add(threading.current_thread().name), i)[1]).subscribe_on(
            schedulers.io()
        )

    ts = Flowable.range(0, 200).flat_map(inner, max_concurrency=1).test()
    ts.await_done(10).assert_result(*range(200)).assert_no_violations()
    assert len(seen) <= 2  # the first inner may start on a fresh thread, the rest reuse one


def _callable_inner(running: list[int], peak: list[int], lock: threading.Lock, delay: float = 0.001):  # type: ignore[no-untyped-def]
    def inner(i: int) -> Flowable[int]:
        def call() -> int:
            with lock:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            time.sleep(delay)
            with lock:
                running[0] -= 1
            return i

        return Flowable.from_callable(call).subscribe_on(schedulers.io())

    return inner


def test_flat_map_callable_inners_value_and_completion_in_one_signal_honour_demand() -> None:
    """flat_map takes a callable inner's value and completion together (on_last): with demand of
    one at a time the values still wait in the inner (rule 1.1), slots stay bounded by
    max_concurrency, and the stream completes after the last inner."""
    running, peak, lock = [0], [0], threading.Lock()
    requested: list[int] = []
    ts = (
        Flowable.range(0, 60).hide().do_on_request(requested.append)
        .flat_map(_callable_inner(running, peak, lock), max_concurrency=4).test(0)
    )
    time.sleep(0.05)
    ts.assert_no_values()
    assert sum(requested) == 4  # only max_concurrency ahead while nothing is consumed
    got = 0
    while got < 60:
        ts.request(1)
        got += 1
        ts.await_count(got, 5)
    ts.await_done(5)
    assert sorted(ts.values) == list(range(60))
    ts.assert_complete().assert_no_violations()
    assert peak[0] <= 4


def test_flat_map_callable_inners_unbounded_and_last_inner_completes_the_stream() -> None:
    running, peak, lock = [0], [0], threading.Lock()
    for n, mc in ((1, 1), (2, 16), (300, 16)):
        ts = Flowable.range(0, n).flat_map(_callable_inner(running, peak, lock, 0.0), max_concurrency=mc).test()
        ts.await_done(10)
        assert sorted(ts.values) == list(range(n))
        ts.assert_complete().assert_no_violations()
        assert peak[0] <= mc
        peak[0] = 0


def test_flat_map_callable_inner_error_cancels_the_rest() -> None:
    def inner(i: int) -> Flowable[int]:
        def call() -> int:
            time.sleep(0.001)
            if i == 7:
                raise Boom()
            return i

        return Flowable.from_callable(call).subscribe_on(schedulers.io())

    ts = Flowable.range(0, 1000).flat_map(inner, max_concurrency=8).test()
    ts.await_done(10).assert_error(Boom).assert_no_violations()
    assert len(ts.values) < 1000


def test_flat_map_callable_inners_cancel_mid_flight_stops_everything() -> None:
    running, peak, lock = [0], [0], threading.Lock()
    ts = Flowable.range(0, 10_000).flat_map(_callable_inner(running, peak, lock), max_concurrency=8).test()
    ts.await_count(50, 10)
    ts.cancel()
    time.sleep(0.05)
    n = len(ts.values)
    time.sleep(0.05)
    assert len(ts.values) == n
    ts.assert_not_complete().assert_no_violations()


def test_switch_map_and_concat_map_eager_with_callable_inners() -> None:
    def inner(i: int) -> Flowable[int]:
        return Flowable.from_callable(lambda: i * 2).subscribe_on(schedulers.io())

    ts = Flowable.range(0, 50).concat_map_eager(inner).test()
    ts.await_done(10).assert_result(*[i * 2 for i in range(50)]).assert_no_violations()
    ts2 = Flowable.just(1).switch_map(inner).test()
    ts2.await_done(10).assert_result(2).assert_no_violations()


def test_thread_hand_off_end_to_end() -> None:
    ts = Flowable.range(0, 20000).subscribe_on(schedulers.single()).observe_on(schedulers.new_thread()).test()
    ts.await_done(10)
    assert ts.values == list(range(20000))
    ts.assert_complete().assert_no_violations()


# ------------------------------------------------------------------------------------ flat_map
def test_flat_map_synchronous_inners() -> None:
    Flowable.range(0, 3).flat_map(lambda x: Flowable.range(x * 10, 2)).test().assert_result(
        0, 1, 10, 11, 20, 21
    ).assert_no_violations()


def test_flat_map_scenarios() -> None:
    check_scenarios(lambda f: f.flat_map(lambda x: Flowable.just(x, x + 100)), range(20),
                    lambda d: [y for x in d for y in (x, x + 100)])
    check_scenarios(lambda f: f.flat_map(lambda x: Flowable.just(x) if x % 2 else Flowable.empty()), range(20),
                    lambda d: [x for x in d if x % 2])


def test_flat_map_outer_is_backpressured_by_max_concurrency() -> None:
    requested: list[int] = []
    ts = (
        Flowable.range(0, 1000).hide().do_on_request(requested.append)
        .flat_map(lambda x: Flowable.never(), max_concurrency=16)
        .test()
    )
    assert requested == [16]
    ts.cancel()
    ts.assert_no_violations()


def test_flat_map_honours_downstream_demand_exactly() -> None:
    ts = Flowable.range(0, 10).flat_map(lambda x: Flowable.range(0, 10)).test(7)
    ts.assert_value_count(7).assert_not_complete().assert_no_violations()
    ts.request(93)
    ts.assert_value_count(100).assert_complete().assert_no_violations()


def test_flat_map_async_inners_merge_everything() -> None:
    ts = Flowable.range(0, 200).flat_map(
        lambda x: Flowable.range(x * 5, 5).subscribe_on(schedulers.io()), max_concurrency=8, prefetch=2
    ).test()
    ts.await_done(10)
    assert sorted(ts.values) == list(range(1000))
    ts.assert_complete().assert_no_violations()


def test_flat_map_error_cancels_everything() -> None:
    cancelled: list[int] = []
    ts = Flowable.range(0, 5).hide().do_on_cancel(lambda: cancelled.append(1)).flat_map(
        lambda x: Flowable.error(Boom()) if x == 2 else Flowable.just(x)
    ).test()
    ts.assert_failure(Boom, 0, 1).assert_no_violations()
    assert cancelled == [1]


def test_flat_map_delay_error_collects_all() -> None:
    ts = Flowable.range(0, 4).flat_map(
        lambda x: Flowable.error(Boom(x)) if x % 2 else Flowable.just(x), delay_error=True
    ).test()
    ts.assert_value_count(2)
    assert len(ts.errors) == 1 and isinstance(ts.errors[0], ExceptionGroup)
    ts.assert_no_violations()


def test_flat_map_raising_mapper() -> None:
    def bad(x: int) -> Flowable[int]:
        raise Boom()

    Flowable.range(0, 3).flat_map(bad).test().assert_error(Boom).assert_no_violations()


def test_flat_map_many_scalars_no_recursion() -> None:
    ts = Flowable.range(0, 50000).flat_map(lambda x: Flowable.just(x)).test()
    assert ts.values == list(range(50000))
    ts.assert_complete().assert_no_violations()


@settings(max_examples=40, deadline=None)
@given(data=st.lists(st.integers(0, 5), max_size=15), requests=st.lists(st.integers(1, 6), min_size=1, max_size=8),
       mc=st.sampled_from([1, 2, 16, None]))
def test_property_flat_map_matches_model(data: list[int], requests: list[int], mc: int | None) -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_iterable(data).flat_map(lambda n: Flowable.range(0, n), max_concurrency=mc).subscribe(ts)
    for r in requests:
        ts.request(r)
    ts.request(MAX_DEMAND)
    ts.assert_result(*[i for n in data for i in range(n)]).assert_no_violations()
