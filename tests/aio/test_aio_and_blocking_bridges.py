"""The asyncio bridge and the blocking bridges.

Each test states the documented behaviour it checks (docstrings of ``to_async_iterator``,
``__await__``, ``from_async_iterable``, ``map_async``, ``AsyncioScheduler``, ``blocking_*``,
``to_future``). No timed assertions: timeouts only bound hangs. The rule tests (test_rule_X_Y_*) are
in ``tests/spec/test_rules_aio_and_blocking_bridges.py``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from rstreams import Flowable, NoSuchElementError, schedulers
from rstreams.aio import AsyncioScheduler
from rstreams.testing import TestPublisher, TestSubscriber, Violation

from .util import own_threads, run


class Boom(Exception):
    pass


def _pending_tasks(baseline: set[asyncio.Task[Any]]) -> list[asyncio.Task[Any]]:
    """Tasks not done, besides the current one and those running before the test body."""
    return [t for t in asyncio.all_tasks() - baseline if t is not asyncio.current_task() and not t.done()]


class _RawPublisher:
    """A foreign (non-Flowable) Publisher that breaks rule 2.13: it emits ``items`` (``None``
    among them) synchronously on request, then ``on_complete`` or ``on_error(None)``. It records
    whether it was cancelled and what the subscriber raised at it."""

    def __init__(self, items: list[Any], terminal: str = "complete") -> None:
        self.items = items
        self.terminal = terminal
        self.cancelled = threading.Event()
        self.raised: list[BaseException] = []

    def subscribe(self, s: Any) -> None:
        pub = self

        class _Sub:
            sent = False

            def request(self, n: int) -> None:
                if self.sent:
                    return
                self.sent = True
                for x in pub.items:
                    try:
                        s.on_next(x)
                    except TypeError as e:  # rule 2.13: the subscriber answers None with TypeError
                        pub.raised.append(e)
                        return
                try:
                    if pub.terminal == "complete":
                        s.on_complete()
                    else:
                        s.on_error(None)
                except TypeError as e:
                    pub.raised.append(e)

            def cancel(self) -> None:
                pub.cancelled.set()

        s.on_subscribe(_Sub())


# ---------------------------------------------------------------------------------------------
# async for: prefetch, cancellation, errors, threads


def test_async_for_never_more_than_prefetch_ahead_with_a_producer_thread() -> None:
    """to_async_iterator: 'a slow consumer holds at most prefetch elements in memory'."""
    emitted = [0]
    peak = [0]
    cancelled: list[bool] = []

    async def main() -> list[int]:
        src = (
            Flowable.range(0, 300)
            .do_on_next(lambda _: emitted.__setitem__(0, emitted[0] + 1))
            .do_on_cancel(lambda: cancelled.append(True))
            .subscribe_on(schedulers.io())
        )
        got = []
        async for x in src.to_async_iterator(prefetch=8):
            got.append(x)
            peak[0] = max(peak[0], emitted[0] - len(got))
            if x % 16 == 0:
                await asyncio.sleep(0.001)  # let the producer run ahead if it could
        return got

    assert run(main(), timeout=10) == list(range(300))
    assert 0 <= peak[0] <= 8
    assert cancelled == []  # completed: nothing to cancel


def test_async_for_break_on_a_held_iterator_cancels_the_upstream() -> None:
    """The to_async_iterator docstring example: ``it = ...to_async_iterator(32); async for x in it:
    ... break  # cancels the upstream`` while ``it`` is still referenced."""
    cancelled: list[bool] = []

    async def main() -> list[int]:
        it = (
            Flowable.range(0, 1000)
            .do_on_cancel(lambda: cancelled.append(True))
            .to_async_iterator(prefetch=32)
        )
        got = []
        async for x in it:
            got.append(x)
            if x > 10:
                break
        assert cancelled == [True]  # before the next statement, with `it` alive
        with pytest.raises(StopAsyncIteration):
            await it.__anext__()
        return got

    assert run(main()) == list(range(12))


def test_async_for_break_cancels_a_thread_producer_and_leaks_nothing() -> None:
    cancelled = threading.Event()
    before = own_threads()

    async def main() -> list[int]:
        src = Flowable.interval(0.001, scheduler=schedulers.computation()).do_on_cancel(cancelled.set)
        got = []
        async for x in src:
            got.append(x)
            if len(got) == 5:
                break
        return got

    assert run(main(), timeout=10) == [0, 1, 2, 3, 4]
    assert cancelled.wait(5)
    assert own_threads() <= before


def test_async_for_raises_the_upstream_error_after_its_elements_from_a_thread() -> None:
    async def main() -> list[int]:
        got = []
        src = Flowable.range(0, 5).concat_with(Flowable.error(Boom("late"))).subscribe_on(schedulers.io())
        with pytest.raises(Boom, match="late"):
            async for x in src.to_async_iterator(prefetch=2):
                got.append(x)
        return got

    assert run(main(), timeout=10) == [0, 1, 2, 3, 4]


def test_async_for_task_cancel_cancels_a_thread_upstream() -> None:
    tp: TestPublisher[int] = TestPublisher.create()

    async def consume(seen: list[int]) -> None:
        async for x in Flowable.from_publisher(tp).to_async_iterator(prefetch=4):
            seen.append(x)

    async def main() -> list[int]:
        baseline = asyncio.all_tasks()
        seen: list[int] = []
        t = asyncio.create_task(consume(seen))
        while tp.subscriber_count == 0:
            await asyncio.sleep(0.001)
        th = threading.Thread(target=tp.next, args=(1, 2))  # emitted from another thread
        th.start()
        th.join()
        while len(seen) < 2:
            await asyncio.sleep(0.001)
        t.cancel()
        with pytest.raises(asyncio.CancelledError):
            await t
        assert not _pending_tasks(baseline)
        return seen

    assert run(main(), timeout=10) == [1, 2]
    tp.assert_was_cancelled()


def test_aclose_from_another_task_ends_a_waiting_consumer_and_cancels() -> None:
    """``aclose()`` cancels the stream, also while another task is iterating (it used to raise
    'asynchronous generator is already running' and leave the upstream running)."""
    tp: TestPublisher[int] = TestPublisher.create()

    async def main() -> list[int]:
        it = Flowable.from_publisher(tp).to_async_iterator(prefetch=4)

        async def consume() -> list[int]:
            return [x async for x in it]

        t = asyncio.create_task(consume())
        while tp.subscriber_count == 0:
            await asyncio.sleep(0.001)
        tp.next(7)
        await asyncio.sleep(0.01)
        await it.aclose()
        return await asyncio.wait_for(t, 5)

    assert run(main(), timeout=10) == [7]
    tp.assert_was_cancelled()


def test_close_ends_the_iteration_at_the_next_element() -> None:
    """After ``close()`` no buffered element is handed out (rule 3.13: the buffer is dropped)."""
    cancelled: list[bool] = []

    async def main() -> list[int]:
        it = Flowable.range(0, 100).hide().do_on_cancel(lambda: cancelled.append(True)).to_async_iterator(16)
        got = [await it.__anext__(), await it.__anext__()]
        it.close()
        assert cancelled == [True]
        with pytest.raises(StopAsyncIteration):
            await it.__anext__()
        return got

    assert run(main()) == [0, 1]


# ---------------------------------------------------------------------------------------------
# rule 2.13 where the bridges are Subscribers: a foreign publisher emitting None


# ---------------------------------------------------------------------------------------------
# await flowable


def test_await_aggregates_and_their_empty_cases() -> None:
    """``await f`` is the last element; empty -> NoSuchElementError (documented)."""

    async def main() -> None:
        assert await Flowable.range(1, 4).hide().reduce(lambda a, b: a + b) == 10
        assert await Flowable.range(0, 3).hide().to_list() == [0, 1, 2]
        assert await Flowable.empty().hide().to_list() == []
        assert await Flowable.range(5, 100).hide().first() == 5
        assert await Flowable.empty().hide().first(7) == 7
        assert await Flowable.range(0, 5).hide().count() == 5
        with pytest.raises(NoSuchElementError):
            await Flowable.empty().hide().reduce(lambda a, b: a + b)
        with pytest.raises(NoSuchElementError):
            await Flowable.empty().hide().first()
        with pytest.raises(Boom):
            await Flowable.error(Boom("x")).hide().to_list()

    run(main())


def test_await_from_another_thread_and_cancel_on_timeout() -> None:
    cancelled = threading.Event()

    async def main() -> int:
        v = await Flowable.range(0, 50).subscribe_on(schedulers.io()).reduce(lambda a, b: a + b)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(Flowable.never().do_on_cancel(cancelled.set).first(), 0.05)
        return v

    assert run(main(), timeout=10) == sum(range(50))
    assert cancelled.is_set()


# ---------------------------------------------------------------------------------------------
# from_async_iterable / from_coroutine


def test_from_async_iterable_error_after_elements_on_the_background_loop() -> None:
    async def gen() -> AsyncIterator[int]:
        yield 1
        yield 2
        raise Boom("agen")

    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.from_async_iterable(gen()).subscribe(ts)
    ts.await_done(5).assert_failure(Boom, 1, 2).assert_no_violations()
    assert set(ts.value_threads) == {"rstreams-aio-loop"}


def test_from_async_iterable_cancel_while_awaiting_closes_it_from_another_thread() -> None:
    entered = threading.Event()
    closed = threading.Event()

    async def gen() -> AsyncIterator[int]:
        try:
            yield 0
            entered.set()
            await asyncio.sleep(30)
            yield 1
        finally:
            closed.set()

    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.from_async_iterable(gen()).subscribe(ts)
    assert entered.wait(5)
    ts.cancel()
    assert closed.wait(5)
    ts.assert_values(0).assert_not_complete().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# map_async


@pytest.mark.parametrize("ordered", [True, False])
def test_map_async_runs_max_concurrency_coroutines_when_elements_arrive_one_by_one(ordered: bool) -> None:
    """'running up to max_concurrency at once': elements that arrive one at a time (a hot or
    slow upstream) must not wait for a running coroutine while a slot is free."""
    tp: TestPublisher[int] = TestPublisher.create()
    running = [0]
    peak = [0]

    async def main() -> TestSubscriber[int]:
        gate = asyncio.Event()

        async def fn(x: int) -> int:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
            await gate.wait()
            running[0] -= 1
            return x * 10

        ts: TestSubscriber[int] = TestSubscriber()
        Flowable.from_publisher(tp).map_async(fn, max_concurrency=4, ordered=ordered).subscribe(ts)
        for i in range(6):
            tp.next(i)
            await asyncio.sleep(0.005)
        assert peak[0] == 4  # four running, two waiting for a slot
        gate.set()
        tp.complete()
        while not ts.is_terminated:
            await asyncio.sleep(0.001)
        return ts

    ts = run(main(), timeout=10)
    want = [0, 10, 20, 30, 40, 50]
    if ordered:
        ts.assert_result(*want)
    else:
        assert sorted(ts.values) == want
        ts.assert_complete()
    ts.assert_no_violations()
    assert peak[0] == 4


def test_map_async_ordered_keeps_input_order_for_elements_arriving_one_by_one() -> None:
    tp: TestPublisher[int] = TestPublisher.create()

    async def main() -> TestSubscriber[int]:
        events = {i: asyncio.Event() for i in range(4)}

        async def fn(x: int) -> int:
            await events[x].wait()
            return x

        ts: TestSubscriber[int] = TestSubscriber()
        Flowable.from_publisher(tp).map_async(fn, max_concurrency=4).subscribe(ts)
        for i in range(4):
            tp.next(i)
            await asyncio.sleep(0.002)
        for i in (3, 1, 2):  # finish out of order: nothing is emitted before 0
            events[i].set()
            await asyncio.sleep(0.002)
        assert ts.values == []
        events[0].set()
        tp.complete()
        while not ts.is_terminated:
            await asyncio.sleep(0.001)
        return ts

    run(main(), timeout=10).assert_result(0, 1, 2, 3).assert_no_violations()


def test_map_async_cancel_cancels_running_coroutines_and_the_upstream() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    cancelled: list[int] = []

    async def main() -> TestSubscriber[int]:
        baseline = asyncio.all_tasks()

        async def fn(x: int) -> int:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.append(x)
                raise
            return x

        ts: TestSubscriber[int] = TestSubscriber()
        Flowable.from_publisher(tp).map_async(fn, max_concurrency=3).subscribe(ts)
        for i in range(3):
            tp.next(i)
            await asyncio.sleep(0.002)
        ts.cancel()
        for _ in range(5):
            await asyncio.sleep(0)
        assert not _pending_tasks(baseline)
        return ts

    ts = run(main(), timeout=10)
    assert sorted(cancelled) == [0, 1, 2]
    tp.assert_was_cancelled()
    ts.assert_no_values().assert_not_complete().assert_no_errors().assert_no_violations()


def test_map_async_error_cancels_the_others_and_the_upstream() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    cancelled: list[int] = []

    async def main() -> TestSubscriber[int]:
        baseline = asyncio.all_tasks()

        async def fn(x: int) -> int:
            if x == 2:
                raise Boom("fn")
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.append(x)
                raise
            return x

        ts: TestSubscriber[int] = TestSubscriber()
        Flowable.from_publisher(tp).map_async(fn, max_concurrency=4).subscribe(ts)
        for i in range(3):
            tp.next(i)
            await asyncio.sleep(0.002)
        while not ts.is_terminated:
            await asyncio.sleep(0.001)
        for _ in range(5):
            await asyncio.sleep(0)
        assert not _pending_tasks(baseline)
        return ts

    ts = run(main(), timeout=10)
    ts.assert_failure(Boom).assert_no_violations()
    assert sorted(cancelled) == [0, 1]
    tp.assert_was_cancelled()


# ---------------------------------------------------------------------------------------------
# AsyncioScheduler


def test_asyncio_scheduler_delayed_tasks_from_another_thread_and_dispose() -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        loop_thread = threading.current_thread().name
        sch = AsyncioScheduler(loop)
        ran: list[str] = []
        done = asyncio.Event()

        def record(tag: str) -> Callable[[], None]:
            def task() -> None:
                assert threading.current_thread().name == loop_thread
                ran.append(tag)
                if tag == "last":
                    loop.call_soon(done.set)

            return task

        def other() -> None:
            w = sch.create_worker()
            w.schedule(record("a"), 0.02)
            h = w.schedule(record("disposed-handle"), 0.01)
            h.dispose()
            w.schedule(record("b"))
            w2 = sch.create_worker()
            w2.schedule(record("disposed-worker"), 0.01)
            w2.dispose()
            assert w2.schedule(record("after-dispose")).is_disposed
            w.schedule(record("last"), 0.04)

        th = threading.Thread(target=other)
        th.start()
        th.join()
        await asyncio.wait_for(done.wait(), 5)
        await asyncio.sleep(0.03)
        return ran

    assert run(main(), timeout=10) == ["b", "a", "last"]


# ---------------------------------------------------------------------------------------------
# blocking bridges


def test_blocking_first_timeout_cancels_and_raises() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    with pytest.raises(TimeoutError):
        Flowable.from_publisher(tp).blocking_first(timeout=0.05)
    tp.assert_was_cancelled()


def test_blocking_first_last_defaults_and_errors() -> None:
    assert Flowable.empty().hide().blocking_first(5) == 5
    assert Flowable.empty().hide().blocking_last(6) == 6
    with pytest.raises(NoSuchElementError):
        Flowable.empty().hide().blocking_first()
    with pytest.raises(Boom):
        Flowable.error(Boom("x")).hide().blocking_last(default=1)
    assert Flowable.range(3, 5).subscribe_on(schedulers.io()).blocking_last(timeout=5) == 7


def test_to_future_cancel_cancels_the_upstream_and_error_is_the_exception() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    fut = Flowable.from_publisher(tp).to_future()
    assert fut.cancel()
    tp.assert_was_cancelled()
    fut2 = Flowable.error(Boom("f")).subscribe_on(schedulers.io()).to_future()
    assert isinstance(fut2.exception(5), Boom)
    fut3: concurrent.futures.Future[int] = Flowable.empty().hide().to_future()
    assert isinstance(fut3.exception(5), NoSuchElementError)


def test_blocking_iterable_break_cancels_a_thread_upstream_and_errors_are_raised() -> None:
    cancelled = threading.Event()
    before = own_threads()
    it = (
        Flowable.interval(0.001, scheduler=schedulers.computation())
        # a consumer starved by a loaded machine must not make interval fail (rule 1.1 overflow ends
        # the stream, and then there is nothing left to cancel): keep the latest instead
        .on_backpressure_latest()
        .do_on_cancel(cancelled.set)
        .blocking_iterable(4)
    )
    got = []
    for x in it:
        got.append(x)
        if len(got) == 3:
            break
    assert got == [0, 1, 2]
    assert cancelled.wait(5)
    with pytest.raises(Boom):
        for _ in (
            Flowable.just(1)
            .concat_with(Flowable.error(Boom("e")))
            .subscribe_on(schedulers.io())
            .blocking_iterable()
        ):
            pass
    assert own_threads() <= before


# ---------------------------------------------------------------------------------------------
# rule 2.4: a bridge that received on_complete/on_error never cancels that upstream afterwards


def test_late_errors_after_a_timeout_or_a_cancelled_future_reach_the_plugins(
    undeliverable: list[BaseException],
) -> None:
    """'Errors that cannot be delivered go to rstreams.plugins, never silently' (README)."""
    tp: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.DEFER_CANCELLATION)
    with pytest.raises(TimeoutError):
        Flowable.from_publisher(tp).blocking_first(timeout=0.02)
    tp.error(Boom("after the timeout"))
    tp2: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.DEFER_CANCELLATION)
    fut = Flowable.from_publisher(tp2).to_future()
    assert fut.cancel()
    tp2.error(Boom("after cancel"))
    assert sorted(str(e) for e in undeliverable if isinstance(e, Boom)) == [
        "after cancel",
        "after the timeout",
    ]


def test_blocking_first_value_racing_the_timeout_is_never_lost() -> None:
    """Either the value or TimeoutError (then the upstream is cancelled), for every interleaving."""
    for i in range(30):
        tp: TestPublisher[int] = TestPublisher.create()
        timer = threading.Timer(0.001 * (i % 3), lambda tp=tp: tp.next(5) if tp.requested else None)
        timer.start()
        try:
            assert Flowable.from_publisher(tp).blocking_first(timeout=0.002) == 5
        except TimeoutError:
            timer.join()
            tp.assert_was_cancelled()
        timer.join()


def test_blocking_bridges_called_on_a_loop_thread_do_not_deadlock_on_that_loop() -> None:
    """The asyncio sources pick the subscribing thread's running loop; a blocking call on that
    thread blocks the loop, so the bridges subscribe with it hidden (background loop instead)."""

    async def one() -> int:
        return 1

    async def double(x: int) -> int:
        return x * 2

    async def main() -> None:
        loop = asyncio.get_running_loop()
        assert Flowable.from_coroutine(one).blocking_first(timeout=5) == 1
        assert Flowable.range(0, 3).map_async(double).blocking_last(timeout=5) == 4
        assert list(Flowable.range(0, 3).map_async(double).blocking_iterable(2)) == [0, 2, 4]
        got: list[int] = []
        Flowable.range(0, 3).do_on_next_async(one_arg_noop).blocking_subscribe(got.append)
        assert got == [0, 1, 2]
        assert asyncio.get_running_loop() is loop  # restored

    async def one_arg_noop(_: int) -> None:
        return None

    run(main(), timeout=20)


@pytest.mark.parametrize("op", ["map_async", "do_on_next_async", "flat_map_async"])
def test_upstream_callbacks_never_run_on_the_background_loop_thread(op: str) -> None:
    """DESIGN 3: 'User callbacks never run on the asyncio loop thread unless the user asked for
    that scheduler.' Subscribed from a thread with no loop, the async operators run their
    coroutines on the shared background loop; the upstream's ``map`` must not follow them there
    (the replenishing requests come from that loop)."""
    threads: set[str] = set()

    def spy(x: int) -> int:
        threads.add(threading.current_thread().name)
        return x

    async def ident(x: int) -> int:
        return x

    async def one(x: int) -> AsyncIterator[int]:
        yield x

    src = Flowable.range(0, 500).map(spy)
    f: Flowable[int] = {
        "map_async": lambda: src.map_async(ident, 4),
        "do_on_next_async": lambda: src.do_on_next_async(ident),
        "flat_map_async": lambda: src.flat_map_async(one, 4),
    }[op]()
    ts: TestSubscriber[int] = TestSubscriber()
    f.subscribe(ts)
    ts.await_done(10).assert_value_count(500).assert_complete().assert_no_violations()
    assert sorted(ts.values) == list(range(500))
    assert threads and not any(t.startswith("rstreams-aio-loop") for t in threads)


@pytest.mark.parametrize("k", [1, 3, 8])
def test_map_async_calls_the_function_in_input_order_with_a_thread_upstream(k: int) -> None:
    """A finished worker never starts a later element before a new task started an earlier one:
    ``async_fn`` sees the elements in input order (so equal-latency results finish in order)."""
    calls: list[int] = []

    async def fn(x: int) -> int:
        calls.append(x)
        await asyncio.sleep(0)
        return x

    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.range(0, 300).subscribe_on(schedulers.io()).map_async(fn, k).subscribe(ts)
    ts.await_done(10).assert_result(*range(300)).assert_no_violations()
    assert calls == list(range(300))


def test_blocking_iterable_close_from_another_thread_wakes_a_blocked_consumer() -> None:
    """RxJava: disposing a blocking iterator ends a hasNext() that waits; it used to wait forever."""
    tp: TestPublisher[int] = TestPublisher.create()
    it: Any = Flowable.from_publisher(tp).blocking_iterable(4)  # a BlockingIterator (has close())
    got: list[Any] = []
    ended = threading.Event()

    def consume() -> None:
        for x in it:
            got.append(x)
        ended.set()

    th = threading.Thread(target=consume, daemon=True)
    th.start()
    while tp.subscriber_count == 0:
        threading.Event().wait(0.001)
    tp.next(1)
    while not got:
        threading.Event().wait(0.001)
    it.close()  # the consumer is blocked waiting for element 2
    assert ended.wait(5)
    th.join(5)
    assert got == [1]
    tp.assert_was_cancelled()


def test_blocking_iterable_next_after_close_from_another_thread_stops() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    it: Any = Flowable.from_publisher(tp).blocking_iterable(4)  # a BlockingIterator (has close())
    res: list[Any] = []

    def consume() -> None:
        try:
            res.append(next(it))
        except StopIteration:
            res.append("stop")

    th = threading.Thread(target=consume, daemon=True)
    th.start()
    while tp.subscriber_count == 0:
        threading.Event().wait(0.001)
    it.close()
    th.join(5)
    assert res == ["stop"]
    tp.assert_was_cancelled()


def test_asyncio_scheduler_task_handle_is_disposed_once_its_task_ran() -> None:
    """The Worker contract (schedulers/_base.py): a one-shot task's handle reports is_disposed
    after the task ran (RxJava's Disposable of a scheduled task); a pending one does not."""

    async def main() -> None:
        w = AsyncioScheduler(asyncio.get_running_loop()).create_worker()
        ran = asyncio.Event()
        h = w.schedule(ran.set)
        later = w.schedule(lambda: None, 60)
        await asyncio.wait_for(ran.wait(), 5)
        assert h.is_disposed
        assert not later.is_disposed
        w.dispose()
        assert later.is_disposed

    run(main())


def test_blocking_call_on_a_source_bound_to_the_blocked_loop_is_a_clear_error_not_a_deadlock() -> None:
    import time as _time

    async def agen() -> Any:
        yield 1

    async def main() -> tuple[float, BaseException | None, Any]:
        loop = asyncio.get_running_loop()
        t0 = _time.monotonic()
        err: BaseException | None = None
        try:
            Flowable.from_async_iterable(agen(), loop=loop).blocking_first(timeout=5)
        except RuntimeError as e:
            err = e
        # unbound, the same call runs on the background loop and works
        ok = Flowable.from_async_iterable(agen()).blocking_first(timeout=5)
        return _time.monotonic() - t0, err, ok

    elapsed, err, ok = asyncio.run(main())
    assert err is not None and "bound to the event loop of this thread" in str(err)
    assert elapsed < 4  # no wait for the timeout: the error came at subscription
    assert ok == 1
