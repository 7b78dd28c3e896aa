"""Flowable.from_future over asyncio futures and tasks (as well as concurrent.futures).

Cancelling the subscription does NOT cancel the future, asyncio or not (RxJava's ``fromFuture``
does not either): the future may be shared, and an asyncio future may only be cancelled on its own
loop. To cancel it with the subscription, say so:
``Flowable.from_future(fut).do_on_cancel(lambda: loop.call_soon_threadsafe(fut.cancel))``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from rstreams import Flowable, plugins
from rstreams.errors import NoneElementError
from rstreams.testing import TestSubscriber


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop running on its own thread (asyncio futures complete there)."""
    lp = asyncio.new_event_loop()
    t = threading.Thread(target=lp.run_forever, name="test-loop", daemon=True)
    t.start()
    try:
        yield lp
    finally:
        lp.call_soon_threadsafe(lp.stop)
        t.join(5)
        lp.close()


def _future(loop: asyncio.AbstractEventLoop) -> asyncio.Future[Any]:
    async def make() -> asyncio.Future[Any]:
        return asyncio.get_running_loop().create_future()

    return asyncio.run_coroutine_threadsafe(make(), loop).result(5)


def _on_loop(loop: asyncio.AbstractEventLoop, fn: Any, *args: Any) -> None:
    """Run ``fn(*args)`` on the loop's thread and wait for it."""
    done = threading.Event()

    def call() -> None:
        try:
            fn(*args)
        finally:
            done.set()

    loop.call_soon_threadsafe(call)
    assert done.wait(5)


# ---------------------------------------------------------------------------------------------
# values, errors, backpressure


def test_a_task_result_and_the_emitting_thread(loop: asyncio.AbstractEventLoop) -> None:
    gate = threading.Event()

    async def compute() -> int:
        while not gate.is_set():
            await asyncio.sleep(0.001)
        return 7

    async def make() -> asyncio.Task[int]:
        return asyncio.create_task(compute())

    task = asyncio.run_coroutine_threadsafe(make(), loop).result(5)
    ts: TestSubscriber[int] = Flowable.from_future(task).test()
    ts.assert_empty()
    gate.set()
    ts.await_done(5).assert_result(7).assert_no_violations()
    assert ts.last_thread == "test-loop"  # emitted from the loop's thread, no thread blocked


def test_an_already_done_future_emits_on_the_subscribing_thread_when_on_its_loop() -> None:
    async def main() -> TestSubscriber[str]:
        fut = asyncio.get_running_loop().create_future()
        fut.set_result("ready")
        return Flowable.from_future(fut).test()

    ts = asyncio.run(main())
    ts.assert_result("ready").assert_no_violations()


def test_exception_none_and_cancelled_futures(loop: asyncio.AbstractEventLoop) -> None:
    failed = _future(loop)
    ts1: TestSubscriber[Any] = Flowable.from_future(failed).test()
    _on_loop(loop, failed.set_exception, KeyError("k"))
    ts1.await_done(5).assert_failure(KeyError).assert_no_violations()

    none = _future(loop)
    ts2: TestSubscriber[Any] = Flowable.from_future(none).test()
    _on_loop(loop, none.set_result, None)
    ts2.await_done(5).assert_failure(NoneElementError, match="rule 2.13").assert_no_violations()

    cancelled = _future(loop)
    ts3: TestSubscriber[Any] = Flowable.from_future(cancelled).test()
    _on_loop(loop, cancelled.cancel)
    ts3.await_done(5).assert_failure(concurrent.futures.CancelledError).assert_no_violations()


def test_timeout_of_an_asyncio_future(loop: asyncio.AbstractEventLoop) -> None:
    fut = _future(loop)
    ts: TestSubscriber[Any] = Flowable.from_future(fut, timeout=0.01).test()
    ts.await_done(5).assert_failure(TimeoutError, match="did not complete within 0.01 s").assert_no_violations()
    _on_loop(loop, fut.set_result, 1)  # too late: nothing more is signalled
    ts.assert_failure(TimeoutError).assert_no_violations()
    assert not fut.cancelled()  # the timeout does not cancel the future either


# ---------------------------------------------------------------------------------------------
# cancellation: the subscription, not the future


def test_cancelling_the_subscription_does_not_cancel_an_asyncio_future(loop: asyncio.AbstractEventLoop) -> None:
    fut = _future(loop)
    with plugins.collect_errors() as undeliverable:
        ts: TestSubscriber[int] = Flowable.from_future(fut).test()
        ts.cancel()
        _on_loop(loop, lambda: None)  # the done callback was added on the loop: let it settle
        assert not fut.done() and not fut.cancelled()
        _on_loop(loop, fut.set_result, 5)
        ts.assert_empty().assert_no_violations()  # nothing after the cancel (rule 3.13)
    assert not undeliverable
    # a second subscriber to the same (now done) future still gets its result: it was shared
    Flowable.from_future(fut).test().await_done(5).assert_result(5).assert_no_violations()


def test_cancelling_the_subscription_does_not_cancel_a_task(loop: asyncio.AbstractEventLoop) -> None:
    gate = threading.Event()

    async def compute() -> int:
        while not gate.is_set():
            await asyncio.sleep(0.001)
        return 3

    async def make() -> asyncio.Task[int]:
        return asyncio.create_task(compute())

    task = asyncio.run_coroutine_threadsafe(make(), loop).result(5)
    ts: TestSubscriber[int] = Flowable.from_future(task).test()
    ts.cancel()
    gate.set()
    assert asyncio.run_coroutine_threadsafe(asyncio.wait_for(asyncio.shield(task), 5), loop).result(5) == 3
    ts.assert_empty().assert_no_violations()


def test_cancelling_the_subscription_does_not_cancel_a_concurrent_future() -> None:
    fut: concurrent.futures.Future[int] = concurrent.futures.Future()
    ts: TestSubscriber[int] = Flowable.from_future(fut).test()
    ts.cancel()
    assert not fut.cancelled()
    fut.set_result(1)
    ts.assert_empty().assert_no_violations()


def test_cancelling_the_future_with_the_subscription_when_asked(loop: asyncio.AbstractEventLoop) -> None:
    fut = _future(loop)
    f = Flowable.from_future(fut).do_on_cancel(lambda: loop.call_soon_threadsafe(fut.cancel))
    ts: TestSubscriber[Any] = f.test()
    ts.cancel()
    _on_loop(loop, lambda: None)
    assert fut.cancelled()
    # do_on_cancel runs its function before the cancel reaches from_future, so the future's
    # CancelledError may still get through (rule 3.13 stops signals "eventually"); no value can
    ts.assert_no_values().assert_not_complete().assert_no_violations()
    assert all(isinstance(e, concurrent.futures.CancelledError) for e in ts.errors)


def test_cancel_racing_the_result_gives_one_value_or_nothing(loop: asyncio.AbstractEventLoop) -> None:
    for i in range(50):
        fut = _future(loop)
        ts: TestSubscriber[int] = Flowable.from_future(fut).test()
        loop.call_soon_threadsafe(fut.set_result, i)
        ts.cancel()
        _on_loop(loop, lambda: None)
        assert ts.values in ([], [i])
        ts.assert_no_errors().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# bad input


def test_from_future_refuses_what_is_not_a_future() -> None:
    async def coro() -> int:
        return 1

    c = coro()
    try:
        with pytest.raises(TypeError, match=r"expected a concurrent.futures.Future or an asyncio Future/Task, got coroutine; for a coroutine use Flowable.from_coroutine"):
            Flowable.from_future(c)  # type: ignore[arg-type]
    finally:
        c.close()
    with pytest.raises(TypeError, match="got int"):
        Flowable.from_future(42)  # type: ignore[arg-type]
    fut: concurrent.futures.Future[int] = concurrent.futures.Future()
    with pytest.raises(ValueError, match="timeout must be >= 0"):
        Flowable.from_future(fut, timeout=-1)
    with pytest.raises(TypeError, match="timeout must be a number of seconds"):
        Flowable.from_future(fut, timeout="1")  # type: ignore[arg-type]
