"""Seeded, bounded races of the time operators (issue 9): timeout vs on_complete, debounce vs
on_complete, group_by cancel vs new group, window close vs on_next; plus "no timer or thread
survives a cancel" on real schedulers. Short by default; RSTREAMS_STRESS=long for longer runs.

Timers run on a hand-fired scheduler: a test thread fires the due timer at the same instant (a
Barrier) as another thread signals the operator, so each round really races the two sides.
"""

from __future__ import annotations

import os
import random
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from rstreams import Flowable, plugins, schedulers
from rstreams.errors import MissingBackpressureError
from rstreams.schedulers import DISPOSED, Scheduler, TaskHandle, Worker
from rstreams.testing import TestPublisher, TestSubscriber

pytestmark = pytest.mark.stress

ROUNDS = 300 if os.environ.get("RSTREAMS_STRESS") == "long" else 40


@pytest.fixture(autouse=True)
def _fine_grained_switching() -> Any:
    """Make the interpreter switch threads every microsecond so the two sides really interleave."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


class _ManualWorker(Worker):
    __slots__ = ("_tasks", "_lock")

    def __init__(self) -> None:
        super().__init__()
        self._tasks: list[TaskHandle] = []
        self._lock = threading.Lock()  # the test fires tasks from one thread at a time

    def schedule(self, task: Callable[[], Any], delay: float = 0.0) -> Any:
        if self.is_disposed:
            return DISPOSED
        h = TaskHandle(task)
        with self._lock:
            self._tasks.append(h)
        return h

    def fire(self) -> int:
        """Run every pending task once (serially, on the calling thread)."""
        with self._lock:
            tasks, self._tasks = self._tasks, []
        n = 0
        for h in tasks:
            t = h.take()
            if t is not None and not self.is_disposed:
                t()
                n += 1
        return n

    def schedule_periodic(self, task: Callable[[], Any], initial_delay: float, period: float) -> Any:
        h = TaskHandle(task)

        def again() -> None:
            t = h.take()
            if t is not None:
                t()
                if not h.is_disposed:
                    self.schedule(again)

        self.schedule(again)
        return h


class _ManualScheduler(Scheduler):
    def __init__(self) -> None:
        self.workers: list[_ManualWorker] = []

    def create_worker(self) -> Worker:
        w = _ManualWorker()
        self.workers.append(w)
        return w

    def fire(self) -> None:
        for w in list(self.workers):
            w.fire()


def _race(a: Callable[[], Any], b: Callable[[], Any], rng: random.Random) -> None:
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def run(fn: Callable[[], Any], spin: int) -> None:
        try:
            barrier.wait(5)
            for _ in range(spin):
                pass
            fn()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    fns = [a, b]
    rng.shuffle(fns)  # either side may start first
    ts = [threading.Thread(target=run, args=(fn, rng.randint(0, 3000))) for fn in fns]
    for t in ts:
        t.start()
    for t in ts:
        t.join(10)
    assert not errors, errors


def test_timeout_vs_on_complete() -> None:
    with plugins.collect_errors() as undeliverable:

        def one_round(seed: int) -> None:
            rng = random.Random(seed)
            sch = _ManualScheduler()
            tp: TestPublisher[int] = TestPublisher.create()
            sub = Flowable.from_publisher(tp).timeout(1.0, scheduler=sch).test()
            _race(tp.complete, sch.fire, rng)
            sub.assert_no_values().assert_terminated().assert_no_violations()
            assert len(sub.errors) + sub.completions == 1, f"seed {seed}: {sub.errors} {sub.completions}"
            if sub.errors:
                sub.assert_error(TimeoutError)

        for seed in range(ROUNDS):
            one_round(seed)
    assert not undeliverable


def test_timeout_vs_on_next() -> None:
    def one_round(seed: int) -> None:
        rng = random.Random(seed)
        sch = _ManualScheduler()
        tp: TestPublisher[int] = TestPublisher.create()
        sub = Flowable.from_publisher(tp).timeout(1.0, Flowable.just(-1), sch).test()
        _race(lambda: tp.next(1), sch.fire, rng)
        sub.assert_no_violations()
        # the element won (and maybe its re-armed timer fired too: then the fallback follows it),
        # or the timeout won (switched; the element is dropped). Never the element after the switch.
        assert sub.values in ([1], [-1], [1, -1]), f"seed {seed}: {sub.values}"
        if sub.values[-1] == -1:
            sub.assert_complete()

    for seed in range(ROUNDS):
        one_round(seed)


def test_debounce_vs_on_complete() -> None:
    with plugins.collect_errors() as undeliverable:

        def one_round(seed: int) -> None:
            rng = random.Random(seed)
            sch = _ManualScheduler()
            tp: TestPublisher[int] = TestPublisher.create()
            sub = Flowable.from_publisher(tp).debounce(1.0, sch).test()
            tp.next(1, 2)
            _race(tp.complete, sch.fire, rng)
            sub.assert_result(2).assert_no_violations()  # exactly once, before the completion

        for seed in range(ROUNDS):
            one_round(seed)
    assert not undeliverable


def test_sample_tick_vs_on_complete_emit_last() -> None:
    def one_round(seed: int) -> None:
        rng = random.Random(seed)
        sch = _ManualScheduler()
        tp: TestPublisher[int] = TestPublisher.create()
        sub = Flowable.from_publisher(tp).sample(1.0, sch, emit_last=True).test()
        tp.next(1)
        _race(tp.complete, sch.fire, rng)
        sub.assert_result(1).assert_no_violations()

    for seed in range(ROUNDS):
        one_round(seed)


def test_group_by_cancel_vs_new_group() -> None:
    with plugins.collect_errors() as undeliverable:

        def one_round(seed: int) -> None:
            rng = random.Random(seed)
            tp: TestPublisher[int] = TestPublisher.create()
            inner: list[TestSubscriber[int]] = []
            lock = threading.Lock()

            def on_group(g: Any) -> None:
                t: TestSubscriber[int] = TestSubscriber()
                with lock:
                    inner.append(t)
                g.subscribe(t)

            main = Flowable.from_publisher(tp).group_by(lambda x: x % 7).do_on_next(on_group).test()
            tp.next(0, 1)

            def cancel_all() -> None:
                main.cancel()
                for _ in range(3):
                    with lock:
                        subs = list(inner)
                    for t in subs:
                        t.cancel()

            _race(lambda: tp.next(*range(2, 40)), cancel_all, rng)
            with lock:
                subs = list(inner)
            for t in subs:
                t.cancel()  # groups created after cancel_all's last pass
            tp.next(40, 41, 42)
            main.assert_no_errors().assert_no_violations()
            for t in subs:
                t.assert_no_violations()
                assert t.values == sorted(t.values)
            assert tp.was_cancelled, f"seed {seed}: upstream not cancelled after every subscriber cancelled"

        for seed in range(ROUNDS):
            one_round(seed)
    assert not undeliverable


def test_group_by_request_vs_on_next_keeps_order() -> None:
    def one_round(seed: int) -> None:
        rng = random.Random(seed)
        tp: TestPublisher[int] = TestPublisher.create()
        inner: list[TestSubscriber[int]] = []
        Flowable.from_publisher(tp).group_by(lambda x: 0, buffer_size=512).do_on_next(
            lambda g: (inner.append(TestSubscriber(1)), g.subscribe(inner[-1]))
        ).test()
        tp.next(0)

        def requests() -> None:
            for _ in range(30):
                inner[0].request(rng.randint(1, 10))
            inner[0].request(2**63 - 1)  # switch to the fast path mid-stream

        _race(lambda: tp.next(*range(1, 300)), requests, rng)
        tp.complete()
        inner[0].assert_result(*range(300)).assert_no_violations()

    for seed in range(ROUNDS):
        one_round(seed)


def test_window_close_vs_on_next() -> None:
    def one_round(seed: int) -> None:
        rng = random.Random(seed)
        sch = _ManualScheduler()
        tp: TestPublisher[int] = TestPublisher.create()
        wins: list[TestSubscriber[int]] = []
        lock = threading.Lock()

        def on_window(w: Any) -> None:
            t: TestSubscriber[int] = TestSubscriber()
            with lock:
                wins.append(t)
            w.subscribe(t)

        main = Flowable.from_publisher(tp).window_timed(1.0, scheduler=sch).do_on_next(on_window).test()

        def ticks() -> None:
            for _ in range(20):
                sch.fire()

        _race(lambda: tp.next(*range(200)), ticks, rng)
        tp.complete()
        main.assert_complete().assert_no_violations()
        got = [x for t in wins for x in t.values]
        assert got == list(range(200)), f"seed {seed}: an element was lost, duplicated or reordered"
        for t in wins:
            t.assert_complete().assert_no_violations()

    for seed in range(ROUNDS):
        one_round(seed)


def test_buffer_timed_close_vs_on_next() -> None:
    def one_round(seed: int) -> None:
        rng = random.Random(seed)
        sch = _ManualScheduler()
        tp: TestPublisher[int] = TestPublisher.create()
        sub = Flowable.from_publisher(tp).buffer_timed(1.0, count=7, scheduler=sch).test()

        def ticks() -> None:
            for _ in range(20):
                sch.fire()

        _race(lambda: tp.next(*range(200)), ticks, rng)
        tp.complete()
        sub.assert_complete().assert_no_violations()
        assert [x for xs in sub.values for x in xs] == list(range(200))
        assert all(len(xs) <= 7 for xs in sub.values)

    for seed in range(ROUNDS):
        one_round(seed)


def _rstreams_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("rstreams-new")}


def test_no_thread_survives_cancel_on_real_schedulers() -> None:
    before = _rstreams_threads()
    s = schedulers.new_thread()
    subs = [
        Flowable.interval(0.001, scheduler=s).on_backpressure_drop().test(),
        Flowable.never().timeout(5, scheduler=s).test(),
        Flowable.interval(0.001, scheduler=s).debounce(0.01, s).test(),
        Flowable.interval(0.001, scheduler=s).sample(0.002, s).on_backpressure_drop().test(),
        Flowable.interval(0.001, scheduler=s).buffer_timed(0.002, scheduler=s).on_backpressure_drop().test(),
        Flowable.interval(0.001, scheduler=s)
        .window_timed(0.002, scheduler=s)
        .flat_map(lambda w: w.count())
        .on_backpressure_drop()
        .test(),
        Flowable.never().delay_subscription(5, s).test(),
        Flowable.interval(0.001, scheduler=s).delay(0.001, s).on_backpressure_drop().test(),
    ]
    time.sleep(0.05)
    for sub in subs:
        sub.cancel()
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and _rstreams_threads() - before:
        time.sleep(0.02)
    assert not (_rstreams_threads() - before), f"threads left: {_rstreams_threads() - before}"
    for sub in subs:
        sub.assert_no_violations()


def test_interval_on_computation_delivers_in_order() -> None:
    sub = Flowable.interval(0.001).take(20).test()
    sub.await_done(5)
    sub.assert_result(*range(20)).assert_no_violations()


def test_group_by_groups_consumed_on_other_threads() -> None:
    # slow asynchronous group consumers: with slow_group="wait" it is plain backpressure
    for seed in range(max(3, ROUNDS // 10)):
        rng = random.Random(seed)
        n = 3000
        keys = rng.randint(1, 8)
        sub = (
            Flowable.range(0, n)
            .group_by(lambda x, k=keys: x % k, buffer_size=rng.choice([4, 16, 128]), slow_group="wait")
            .flat_map(
                lambda g, p=rng.choice([1, 8, 64]): g.observe_on(
                    schedulers.computation(), prefetch=p
                ).to_list(),
                max_concurrency=keys,
            )
            .test()
        )
        sub.await_done(20)
        sub.assert_complete().assert_no_violations()
        got = sorted(x for xs in sub.values for x in xs)
        assert got == list(range(n)), f"seed {seed}"
        for xs in sub.values:
            assert xs == sorted(xs), f"seed {seed}: a group's order broke"


def test_windows_consumed_on_other_threads() -> None:
    for seed in range(max(3, ROUNDS // 10)):
        rng = random.Random(seed)
        n = 2000
        count = rng.randint(1, 50)
        sub = (
            Flowable.range(0, n)
            .window(count)
            .concat_map(
                lambda w, p=rng.choice([1, 16]): w.observe_on(schedulers.computation(), prefetch=p).to_list()
            )
            .test()
        )
        sub.await_done(20)
        sub.assert_complete().assert_no_violations()
        assert [x for xs in sub.values for x in xs] == list(range(n)), f"seed {seed}"


def test_group_by_slow_async_groups_error_or_complete_cleanly() -> None:
    # the default slow_group="error": either everything arrives or a clear MissingBackpressureError
    for seed in range(max(3, ROUNDS // 10)):
        n = 3000
        sub = (
            Flowable.range(0, n)
            .group_by(lambda x: x % 3, buffer_size=16)
            .flat_map(
                lambda g: g.observe_on(schedulers.computation(), prefetch=1).to_list(), max_concurrency=3
            )
            .test()
        )
        sub.await_done(20)
        sub.assert_no_violations()
        if sub.errors:
            # the main and the groups all fail with it; flat_map may group concurrent copies
            e = sub.errors[0]
            leaves = e.exceptions if isinstance(e, BaseExceptionGroup) else (e,)
            assert all(isinstance(x, MissingBackpressureError) and "group_by" in str(x) for x in leaves), e
        else:
            assert sorted(x for xs in sub.values for x in xs) == list(range(n)), f"seed {seed}"


def test_group_by_with_buffer_inside_the_group_never_fails() -> None:
    n = 3000
    sub = (
        Flowable.range(0, n)
        .group_by(lambda x: x % 3, buffer_size=16)
        .flat_map(
            lambda g: g.on_backpressure_buffer().observe_on(schedulers.computation(), prefetch=1).to_list(),
            max_concurrency=3,
        )
        .test()
    )
    sub.await_done(20)
    sub.assert_complete().assert_no_violations()
    assert sorted(x for xs in sub.values for x in xs) == list(range(n))
