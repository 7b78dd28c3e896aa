"""ParallelFlowable's folds, joins and per-rail stages (RxJava 3 ``ParallelFlowable``): ``reduce``
(one Flowable), ``reduce_rails`` / ``collect`` (one value per rail), ``sorted`` /
``to_sorted_list`` (the sorted rails merged), ``flat_map`` / ``concat_map`` per rail,
``sequential_delay_error``, ``do_on_error`` / ``do_on_complete``.

Each runs over same-thread rails (no ``run_on``) and over ``run_on(schedulers.computation())``,
compared with plain Python; every subscriber ends with ``assert_no_violations()``.
"""

from __future__ import annotations

import functools
import operator
import random
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from rstreams import Flowable, plugins, schedulers
from rstreams.flowable import ParallelFlowable
from rstreams.schedulers import Scheduler, Worker
from rstreams.testing import TestSubscriber

from .harness import Boom, check_raising, check_scenarios, run_one_by_one

RUN_ON = ["same-thread", "computation"]


def _par(src: Flowable[Any], rails: int, run_on: str) -> ParallelFlowable[Any]:
    p = src.parallel(rails)
    return p if run_on == "same-thread" else p.run_on(schedulers.computation())


def _data(n: int, seed: int = 7) -> list[int]:
    rnd = random.Random(seed)
    return [rnd.randrange(-50, 50) for _ in range(n)]  # duplicates on purpose


def _join(p: ParallelFlowable[Any], join: str) -> Flowable[Any]:
    """The Flowable that ends ``p`` by ``join``."""
    if join == "reduce":
        return p.reduce(operator.add)
    if join == "sorted":
        return p.sorted()
    if join == "to_sorted_list":
        return p.to_sorted_list()
    if join == "sequential":
        return p.sequential()
    assert join == "sequential_delay_error"
    return p.sequential_delay_error()


class _Tracking(Scheduler):
    """A scheduler that remembers every worker it hands out (to check they are all disposed)."""

    def __init__(self, inner: Scheduler) -> None:
        self.inner = inner
        self.workers: list[Worker] = []
        self._lock = threading.Lock()

    def create_worker(self) -> Worker:
        w = self.inner.create_worker()
        with self._lock:
            self.workers.append(w)
        return w


def _wait_until(cond: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


# ---------------------------------------------------------------------------------------------
# reduce (one Flowable)


@pytest.mark.parametrize("run_on", RUN_ON)
@pytest.mark.parametrize("rails", [1, 2, 4])
@pytest.mark.parametrize("n", [0, 1, 7, 1000])
def test_reduce_matches_functools_reduce(run_on: str, rails: int, n: int) -> None:
    data = _data(n)
    for reducer in (operator.add, max):
        ts: TestSubscriber[int] = _par(Flowable.from_iterable(data), rails, run_on).reduce(reducer).test()
        ts.await_done(5)
        if data:
            ts.assert_result(functools.reduce(reducer, data))
        else:
            ts.assert_result()  # every rail empty: completes empty, as Flowable.reduce without seed
        ts.assert_no_violations()


def test_reduce_in_every_harness_scenario() -> None:
    data = list(range(50))
    check_scenarios(lambda f: f.parallel(3).reduce(operator.add), data, [sum(data)])
    check_scenarios(lambda f: f.parallel(3).reduce(operator.add), [], [])
    check_scenarios(
        lambda f: f.parallel(2).run_on(schedulers.computation()).map(lambda x: x * x).reduce(operator.add),
        data, [sum(x * x for x in data)],
    )


def test_reduce_result_waits_for_the_request() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.range(0, 10).parallel(2).reduce(operator.add).subscribe(ts)
    ts.assert_no_values().assert_not_complete()  # the rails are done (same thread): no demand yet
    ts.request(1)
    ts.assert_result(45).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# reduce_rails and collect (one value per rail: the rail count is kept)


@pytest.mark.parametrize("run_on", RUN_ON)
def test_reduce_rails_folds_each_rail_with_its_own_seed(run_on: str) -> None:
    calls: list[int] = []

    def seed() -> list[int]:
        calls.append(1)
        return []

    p = _par(Flowable.range(0, 100), 4, run_on).reduce_rails(seed, lambda acc, x: acc + [x])
    assert p.parallelism == 4
    ts: TestSubscriber[list[int]] = p.sequential().test()
    ts.await_done(5).assert_complete().assert_no_violations()
    assert len(ts.values) == 4 and len(calls) == 4
    assert sorted(x for v in ts.values for x in v) == list(range(100))
    assert len({id(v) for v in ts.values}) == 4  # never one shared seed


def test_reduce_rails_empty_rails_emit_their_seed() -> None:
    ts: TestSubscriber[int] = Flowable.empty().parallel(3).reduce_rails(lambda: 0, operator.add).sequential().test()
    ts.await_done(5).assert_result(0, 0, 0).assert_no_violations()


@pytest.mark.parametrize("run_on", RUN_ON)
def test_collect_one_container_per_rail(run_on: str) -> None:
    data = _data(500)
    p = _par(Flowable.from_iterable(data), 3, run_on).collect(list, list.append)
    assert p.parallelism == 3
    ts: TestSubscriber[list[int]] = p.sequential().test()
    ts.await_done(5).assert_complete().assert_no_violations()
    assert len(ts.values) == 3
    assert sorted(x for c in ts.values for x in c) == sorted(data)
    assert len({id(c) for c in ts.values}) == 3  # a container per rail


def test_collect_then_reduce_joins_the_containers() -> None:
    ts: TestSubscriber[set[int]] = (
        Flowable.range(0, 20).map(lambda x: x % 5).parallel(2).run_on(schedulers.computation())
        .collect(set, set.add).reduce(operator.or_).test()
    )
    ts.await_done(5).assert_result({0, 1, 2, 3, 4}).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# sorted and to_sorted_list


@pytest.mark.parametrize("run_on", RUN_ON)
@pytest.mark.parametrize("rails", [1, 2, 3])
@pytest.mark.parametrize("n", [0, 1, 10, 2000])
def test_sorted_matches_python_sorted(run_on: str, rails: int, n: int) -> None:
    data = _data(n)
    # the keys make equal keys equal values, so the merge order of ties cannot show
    cases: list[tuple[Callable[[int], Any] | None, bool]] = [(None, False), (None, True), (lambda x: (x % 7, x), False)]
    for key, reverse in cases:
        ts: TestSubscriber[int] = _par(Flowable.from_iterable(data), rails, run_on).sorted(key, reverse).test()
        ts.await_done(5)
        ts.assert_complete().assert_no_errors().assert_no_violations()
        assert ts.values == sorted(data, key=key, reverse=reverse)
        tl: TestSubscriber[list[int]] = _par(Flowable.from_iterable(data), rails, run_on).to_sorted_list(key, reverse).test()
        tl.await_done(5)
        tl.assert_result(sorted(data, key=key, reverse=reverse)).assert_no_violations()


def test_sorted_ties_across_rails_come_in_rail_order() -> None:
    # rail 0 gets the even positions, rail 1 the odd ones (same-thread rails, unbounded demand)
    data = [(1, "a"), (1, "b"), (0, "c"), (0, "d")]
    ts: TestSubscriber[tuple[int, str]] = Flowable.from_iterable(data).parallel(2).sorted(key=lambda t: t[0]).test()
    ts.assert_result((0, "c"), (0, "d"), (1, "a"), (1, "b")).assert_no_violations()


def test_sorted_and_to_sorted_list_in_every_harness_scenario() -> None:
    data = _data(60)
    check_scenarios(lambda f: f.parallel(2).sorted(), data, sorted(data))
    check_scenarios(lambda f: f.parallel(3).run_on(schedulers.computation()).sorted(reverse=True), data,
                    sorted(data, reverse=True))
    check_scenarios(lambda f: f.parallel(2).to_sorted_list(), data, [sorted(data)])
    check_scenarios(lambda f: f.parallel(2).to_sorted_list(), [], [[]])


@pytest.mark.parametrize("run_on", RUN_ON)
def test_sorted_honours_demand_one_at_a_time(run_on: str) -> None:
    data = _data(300)
    ts: TestSubscriber[int] = TestSubscriber(0)
    _par(Flowable.from_iterable(data), 3, run_on).sorted().subscribe(ts)
    want = sorted(data)
    for k in range(1, 6):
        ts.request(1)
        ts.await_count(k, 5)
        assert ts.values == want[:k]  # exactly what was requested, never more
    ts.request(len(data))
    ts.await_done(5)
    assert ts.values == want
    ts.assert_complete().assert_no_violations()
    ts1 = run_one_by_one(_par(Flowable.from_iterable(data), 3, run_on).sorted())
    ts1.await_done(5)
    assert ts1.values == want
    ts1.assert_complete().assert_no_violations()


@pytest.mark.parametrize("run_on", RUN_ON)
def test_sequential_honours_demand_one_at_a_time(run_on: str) -> None:
    data = list(range(500))
    ts = run_one_by_one(_par(Flowable.from_iterable(data), 3, run_on).map(lambda x: x * 2).sequential())
    ts.await_done(5)
    assert sorted(ts.values) == [x * 2 for x in data]
    ts.assert_complete().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# cancellation: the rails' workers are disposed, their threads end, the source is cancelled


@pytest.mark.parametrize("join", ["reduce", "sorted", "to_sorted_list", "sequential", "sequential_delay_error"])
@pytest.mark.parametrize("inner", ["new_thread", "computation"])
def test_cancel_disposes_every_rail_worker_and_cancels_the_source(join: str, inner: str) -> None:
    sched = _Tracking(schedulers.new_thread() if inner == "new_thread" else schedulers.computation())
    seen = threading.Event()
    count = [0]
    threads: set[threading.Thread] = set()
    lock = threading.Lock()
    source_cancelled = threading.Event()

    def work(x: int) -> int:
        with lock:
            threads.add(threading.current_thread())
            count[0] += 1
            if count[0] >= 200:
                seen.set()
        return x

    endless = Flowable.range(0, 10**12).do_on_cancel(source_cancelled.set)
    p = endless.parallel(3).run_on(sched).map(work)
    f = _join(p, join)
    ts: TestSubscriber[Any] = TestSubscriber(1)
    f.subscribe(ts)
    assert seen.wait(5)
    ts.cancel()
    assert source_cancelled.wait(5)
    assert len(sched.workers) == 3
    assert _wait_until(lambda: all(w.is_disposed for w in sched.workers)), "a rail's worker was left running"
    if inner == "new_thread":
        with lock:
            started = list(threads)
        for t in started:
            t.join(5)
            assert not t.is_alive(), f"rail thread {t.name} still running after cancel"
    ts.assert_no_errors().assert_no_violations()


def test_cancel_before_the_rails_are_subscribed_never_subscribes_the_source() -> None:
    subscribed = [0]
    src = Flowable.range(0, 10).do_on_subscribe(lambda s: subscribed.__setitem__(0, subscribed[0] + 1))
    ts: TestSubscriber[int] = TestSubscriber(0)
    ts.cancel()
    src.parallel(2).sorted().subscribe(ts)
    ts.assert_no_values().assert_not_complete().assert_no_errors().assert_no_violations()
    # the source may be subscribed (the dispatcher subscribes with the last rail) but is then cancelled
    assert subscribed[0] <= 1


# ---------------------------------------------------------------------------------------------
# errors: one rail fails -> the others are cancelled, the error is signalled once


@pytest.mark.parametrize("join", ["reduce", "sorted", "to_sorted_list", "sequential"])
@pytest.mark.parametrize("run_on", RUN_ON)
def test_error_in_one_rail_cancels_the_others_and_is_signalled_once(join: str, run_on: str) -> None:
    rails_cancelled = [0]
    lock = threading.Lock()
    source_cancelled = threading.Event()

    def on_cancel() -> None:
        with lock:
            rails_cancelled[0] += 1

    def boom_at_500(x: int) -> int:
        if x == 500:
            raise Boom("rail failed")
        return x

    # endless source: it ends only because the failure cancels it
    p = (
        _par(Flowable.range(0, 10**12).do_on_cancel(source_cancelled.set), 3, run_on)
        .map(boom_at_500)
        .compose(lambda f: f.do_on_cancel(on_cancel))
    )
    f = _join(p, join)
    with plugins.collect_errors() as undeliverable:
        ts: TestSubscriber[Any] = f.test()
        ts.await_done(5)
        assert source_cancelled.wait(5)
    ts.assert_error(Boom).assert_no_violations()
    assert len(ts.errors) == 1
    assert rails_cancelled[0] == 2  # the two healthy rails; the failed one terminated itself
    assert not undeliverable, undeliverable


@pytest.mark.parametrize("join", ["reduce", "sorted", "to_sorted_list"])
def test_upstream_error_reaches_every_rail_and_is_signalled_once(join: str) -> None:
    err = Boom("upstream")
    src = Flowable.concat(Flowable.range(0, 10), Flowable.error(err))
    p = src.parallel(3).run_on(schedulers.computation())
    f = _join(p, join)
    with plugins.collect_errors() as undeliverable:
        ts: TestSubscriber[Any] = f.test()
        ts.await_done(5)
    ts.assert_no_values().assert_error(Boom).assert_no_violations()
    assert ts.errors == [err]
    assert not undeliverable, undeliverable


def test_raising_reducer_per_rail_and_in_the_final_combine() -> None:
    def raises_on_3(a: int, b: int) -> int:
        if b == 3:
            raise Boom("reducer")
        return a + b

    check_raising(lambda f: f.parallel(2).reduce(raises_on_3), range(10))

    def raises_over_30(a: int, b: int) -> int:
        if a + b > 30:  # per rail: evens sum to 20, odds to 25; only the join of the two exceeds 30
            raise Boom("combine")
        return a + b

    for run_on in RUN_ON:
        ts: TestSubscriber[int] = _par(Flowable.range(0, 10), 2, run_on).reduce(raises_over_30).test()
        ts.await_done(5).assert_failure(Boom).assert_no_violations()


def test_raising_key_ends_the_sorted_stream() -> None:
    # the key runs when a rail sorts, i.e. after that rail's upstream completed (as Flowable.sorted)
    def key(x: int) -> int:
        if x == 7:
            raise Boom("key")
        return x

    for run_on in RUN_ON:
        with plugins.collect_errors() as undeliverable:
            ts: TestSubscriber[Any] = _par(Flowable.range(0, 20), 2, run_on).sorted(key=key).test()
            ts.await_done(5).assert_failure(Boom).assert_no_violations()
            tl: TestSubscriber[Any] = _par(Flowable.range(0, 20), 3, run_on).to_sorted_list(key=key).test()
            tl.await_done(5).assert_failure(Boom).assert_no_violations()
        assert len(ts.errors) == 1 and len(tl.errors) == 1
        assert not undeliverable, undeliverable

    def uncomparable(x: int) -> Any:
        return "s" if x == 4 else x

    tu: TestSubscriber[int] = Flowable.range(0, 10).parallel(2).sorted(key=uncomparable).test()
    tu.await_done(5).assert_failure(TypeError).assert_no_violations()


def test_raising_accumulator_cancels_the_upstream() -> None:
    def acc(c: list[int], x: int) -> None:
        if x == 5:
            raise Boom("accumulator")
        c.append(x)

    check_raising(lambda f: f.parallel(2).collect(list, acc).sequential(), range(10))
    check_raising(lambda f: f.parallel(2).collect(list, acc).reduce(operator.add), range(10))


def _recorded(events: list[str]) -> Flowable[int]:
    return Flowable.range(0, 10).do_on_subscribe(lambda s: events.append("subscribed")).do_on_cancel(
        lambda: events.append("cancelled"))


@pytest.mark.parametrize("stage", ["collect", "reduce_rails"])
def test_raising_container_factory_or_seed_factory_fails_the_stream(stage: str) -> None:
    def factory() -> list[int]:
        raise Boom("factory")

    events: list[str] = []
    p = _recorded(events).parallel(2)
    f = p.collect(factory, list.append) if stage == "collect" else p.reduce_rails(factory, lambda a, x: a + [x])
    ts: TestSubscriber[Any] = f.sequential().test()
    ts.await_done(5).assert_failure(Boom).assert_no_violations()
    assert len(ts.errors) == 1
    # the failing rail never subscribes, so the source is never subscribed (or, if it was, cancelled)
    assert events in ([], ["subscribed", "cancelled"]), events


@pytest.mark.parametrize("join", ["reduce", "sorted", "to_sorted_list", "sequential", "sequential_delay_error"])
def test_a_raising_rail_builder_fails_the_subscription(join: str) -> None:
    def bad(rail: Flowable[int]) -> Flowable[int]:
        raise Boom("compose")

    with plugins.collect_errors() as undeliverable:
        ts: TestSubscriber[Any] = _join(Flowable.range(0, 4).parallel(2).compose(bad), join).test()
        ts.await_done(5).assert_failure(Boom).assert_no_violations()
    assert not undeliverable, undeliverable


# ---------------------------------------------------------------------------------------------
# None results (rule 2.13: None is never an element)


# ---------------------------------------------------------------------------------------------
# flat_map / concat_map per rail


@pytest.mark.parametrize("run_on", RUN_ON)
def test_flat_map_and_concat_map_per_rail(run_on: str) -> None:
    data = list(range(200))
    p = _par(Flowable.from_iterable(data), 3, run_on).flat_map(lambda x: Flowable.just(x, -x))
    assert p.parallelism == 3
    ts: TestSubscriber[int] = p.sequential().test()
    ts.await_done(5).assert_complete().assert_no_violations()
    assert sorted(ts.values) == sorted([y for x in data for y in (x, -x)])

    pc = _par(Flowable.from_iterable(data), 3, run_on).concat_map(lambda x: Flowable.range(x * 10, 3))
    assert pc.parallelism == 3
    ts = pc.sorted().test()
    ts.await_done(5).assert_complete().assert_no_violations()
    assert ts.values == sorted(y for x in data for y in range(x * 10, x * 10 + 3))

    # concat_map keeps each rail's order: x*10, x*10+1, x*10+2 stay together within the rail
    tl: TestSubscriber[list[int]] = (
        _par(Flowable.from_iterable(data), 3, run_on).concat_map(lambda x: Flowable.range(x * 10, 3))
        .collect(list, list.append).sequential().test()
    )
    tl.await_done(5).assert_no_violations()
    assert len(tl.values) == 3
    for rail in tl.values:
        chunks = [rail[i : i + 3] for i in range(0, len(rail), 3)]
        assert all(c == [c[0], c[0] + 1, c[0] + 2] and c[0] % 10 == 0 for c in chunks), rail


def test_flat_map_async_inners_one_at_a_time() -> None:
    data = list(range(50))
    f = (Flowable.from_iterable(data).parallel(2).run_on(schedulers.computation())
         .flat_map(lambda x: Flowable.just(x).subscribe_on(schedulers.io()), max_concurrency=4).sequential())
    ts = run_one_by_one(f)
    ts.await_done(5)
    assert sorted(ts.values) == data
    ts.assert_complete().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# sequential_delay_error, do_on_error, do_on_complete


def test_sequential_delay_error_lets_the_other_rails_finish() -> None:
    def boom_at_3(x: int) -> int:
        if x == 3:
            raise Boom("rail")
        return x

    # 2 same-thread rails: rail 0 gets 0, 2, 4, ...; rail 1 gets 1, 3 (fails), nothing after
    ts: TestSubscriber[int] = Flowable.range(0, 10).parallel(2).map(boom_at_3).sequential_delay_error().test()
    ts.await_done(5).assert_error(Boom).assert_no_violations()
    assert sorted(ts.values) == [0, 1, 2, 4, 6, 8]
    tn: TestSubscriber[int] = Flowable.range(0, 10).parallel(2).map(boom_at_3).sequential().test()
    tn.await_done(5).assert_error(Boom).assert_no_violations()
    assert len(tn.errors) == 1


def test_sequential_delay_error_signals_an_upstream_error_once() -> None:
    err = Boom("upstream")
    ts: TestSubscriber[int] = (
        Flowable.concat(Flowable.range(0, 4), Flowable.error(err)).parallel(3).run_on(schedulers.computation())
        .sequential_delay_error().test()
    )
    ts.await_done(5).assert_no_violations()
    assert ts.errors == [err]  # not an ExceptionGroup of the same error n times
    assert set(ts.values) <= {0, 1, 2, 3}  # run_on's error may cut ahead of queued elements, as RxJava's


def test_sequential_delay_error_groups_distinct_errors() -> None:
    def boom(x: int) -> int:
        raise Boom(f"rail of {x}")

    ts: TestSubscriber[int] = Flowable.range(0, 2).parallel(2).map(boom).sequential_delay_error().test()
    ts.await_done(5).assert_no_violations()
    assert len(ts.errors) == 1 and isinstance(ts.errors[0], BaseExceptionGroup)
    assert len(ts.errors[0].exceptions) == 2


@pytest.mark.parametrize("run_on", RUN_ON)
def test_do_on_complete_and_do_on_error_run_once_per_rail(run_on: str) -> None:
    completed: list[str] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def done() -> None:
        with lock:
            completed.append(threading.current_thread().name)

    ts: TestSubscriber[int] = _par(Flowable.range(0, 30), 3, run_on).do_on_complete(done).reduce(operator.add).test()
    ts.await_done(5).assert_result(sum(range(30))).assert_no_violations()
    assert len(completed) == 3

    def failed(e: BaseException) -> None:
        with lock:
            errors.append(e)

    err = Boom("upstream")
    te: TestSubscriber[int] = (
        _par(Flowable.concat(Flowable.range(0, 3), Flowable.error(err)), 3, run_on).do_on_error(failed)
        .sequential_delay_error().test()
    )
    te.await_done(5).assert_error(Boom).assert_no_violations()
    assert _wait_until(lambda: len(errors) == 3)  # RxJava: once per rail the error reaches
    assert all(e is err for e in errors)


# ---------------------------------------------------------------------------------------------
# bad arguments: checked at assembly


@pytest.mark.parametrize(
    "stage",
    [
        lambda p: p.reduce(5),
        lambda p: p.reduce_rails(None, operator.add),
        lambda p: p.reduce_rails(lambda: 0, "add"),
        lambda p: p.collect(1, list.append),
        lambda p: p.collect(list, None),
        lambda p: p.sorted(key=3),
        lambda p: p.sorted(reverse="yes"),
        lambda p: p.to_sorted_list(key="k"),
        lambda p: p.to_sorted_list(reverse=1),
        lambda p: p.flat_map(None),
        lambda p: p.flat_map(Flowable.just, max_concurrency=0),
        lambda p: p.flat_map(Flowable.just, prefetch=True),
        lambda p: p.flat_map(Flowable.just, prefetch=-1),
        lambda p: p.concat_map(3),
        lambda p: p.concat_map(Flowable.just, prefetch=0),
        lambda p: p.sequential_delay_error(0),
        lambda p: p.sequential_delay_error("8"),
        lambda p: p.do_on_error(None),
        lambda p: p.do_on_complete(1),
    ],
)
def test_bad_arguments_are_rejected_at_assembly(stage: Callable[[ParallelFlowable[int]], Any]) -> None:
    with pytest.raises((TypeError, ValueError)):
        stage(Flowable.range(0, 3).parallel(2))
    ts: TestSubscriber[int] = Flowable.range(0, 3).parallel(2).sorted().test()
    ts.assert_result(0, 1, 2).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# races between rails finishing on their own workers (seeded, bounded)


@pytest.mark.parametrize("join", ["reduce", "sorted", "to_sorted_list"])
def test_rails_finishing_together_many_times(join: str) -> None:
    # race: the rails complete (or all fail with one upstream error) on 4 workers at about the
    # same moment; the last completer combines the slots, the first error wins, the rest is silent
    rnd = random.Random(11)
    with plugins.collect_errors() as undeliverable:
        for i in range(150):
            data = [rnd.randrange(100) for _ in range(rnd.randrange(0, 40))]
            fail = i % 3 == 0
            err = Boom(f"upstream {i}")
            src = Flowable.concat(Flowable.from_iterable(data), Flowable.error(err)) if fail else Flowable.from_iterable(data)
            ts: TestSubscriber[Any] = _join(src.parallel(4).run_on(schedulers.computation(), 4), join).test()
            ts.await_done(5).assert_no_violations()
            if fail:
                assert ts.errors == [err] and not ts.values
            elif join == "reduce":
                ts.assert_result(*([sum(data)] if data else []))
            elif join == "sorted":
                ts.assert_result(*sorted(data))
            else:
                ts.assert_result(sorted(data))
    assert not undeliverable, undeliverable


# ---------------------------------------------------------------------------------------------
# the dispatcher's completion after its last dealing pass


@pytest.mark.parametrize("hide", [False, True])
@pytest.mark.parametrize("rails, run_on_prefetch, n", [(1, 128, 200), (1, 16, 2000), (3, 7, 2001), (2, 128, 129)])
def test_completion_follows_the_last_elements_dealt_in_the_same_pass(
    hide: bool, rails: int, run_on_prefetch: int, n: int
) -> None:
    # a synchronous source emits its last elements and completes inside the dispatcher's
    # upstream.request; the pass that dealt them must also signal the completion: one rail whose
    # leftover demand never reaches run_on's replenish point used to wait forever for a request
    src = Flowable.range(0, n)
    ts: TestSubscriber[int] = (
        (src.hide() if hide else src).parallel(rails).run_on(schedulers.computation(), run_on_prefetch).sequential().test()
    )
    ts.await_done(5).assert_complete().assert_no_violations()
    assert sorted(ts.values) == list(range(n))
