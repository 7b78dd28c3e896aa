"""asyncio edges: ``asyncio.create_task(flowable.to_list())``, ``from_future`` over
asyncio futures, ``map_async`` given a plain function, and the prefetch of an async source."""

from __future__ import annotations

import asyncio
import collections.abc
import concurrent.futures
import math
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

from rstreams import Flowable, schedulers
from rstreams.testing import TestSubscriber

from .util import run

# ---------------------------------------------------------------------------------------------
# create_task / asyncio.run accept a Flowable (the coroutine protocol)


@pytest.mark.parametrize("hide", [False, True], ids=["fused", "unfused"])
def test_create_task_accepts_to_list(hide: bool) -> None:
    src = Flowable.range(0, 5).hide() if hide else Flowable.range(0, 5)

    async def main() -> list[int]:
        task = asyncio.create_task(src.to_list())  # before: TypeError, a coroutine was required
        return await task

    assert run(main()) == [0, 1, 2, 3, 4]
    src.to_list().test().assert_result([0, 1, 2, 3, 4]).assert_no_violations()


def test_a_flowable_is_a_coroutine_for_asyncio() -> None:
    f = Flowable.just(1)
    assert asyncio.iscoroutine(f)
    assert isinstance(f, collections.abc.Coroutine)
    assert asyncio.run(Flowable.range(1, 4).reduce(lambda a, b: a + b)) == 10  # type: ignore[arg-type]
    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(Flowable.just("a", "b").to_list()) == ["a", "b"]
    finally:
        loop.close()


def test_one_flowable_runs_in_several_tasks_at_once_each_with_its_own_subscription() -> None:
    subscriptions: list[int] = []
    f = (
        Flowable.range(0, 50)
        .hide()
        .do_on_subscribe(lambda s: subscriptions.append(1))
        .observe_on(schedulers.io())
        .to_list()
    )

    async def main() -> list[list[int]]:
        return await asyncio.gather(*(asyncio.create_task(f) for _ in range(4)))

    assert run(main()) == [list(range(50))] * 4
    assert len(subscriptions) == 4


def test_cancelling_the_task_cancels_the_subscription() -> None:
    cancelled = threading.Event()
    f = Flowable.never().do_on_cancel(cancelled.set).to_list()

    async def main() -> None:
        task = asyncio.create_task(f)
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main())
    assert cancelled.wait(1)


def test_a_task_cancelled_before_its_first_step_never_subscribes() -> None:
    subscribed: list[int] = []
    f = Flowable.just(1).do_on_subscribe(lambda s: subscribed.append(1))

    async def main() -> None:
        task = asyncio.create_task(f)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main())
    assert subscribed == []


def test_the_stream_error_fails_the_task() -> None:
    async def main() -> None:
        task = asyncio.create_task(Flowable.error(ValueError("boom")).to_list())
        with pytest.raises(ValueError, match="boom"):
            await task

    run(main())


def test_send_outside_a_task_says_how_to_await() -> None:
    with pytest.raises(RuntimeError, match="await flowable"):
        Flowable.just(1).send(None)
    Flowable.just(1).close()  # nothing to close outside a Task: no error


# ---------------------------------------------------------------------------------------------
# from_future over asyncio futures


def test_from_future_accepts_an_asyncio_future_completed_on_its_loop() -> None:
    async def main() -> TestSubscriber[int]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[int] = loop.create_future()
        ts = Flowable.from_future(fut).test()
        ts.assert_empty()
        loop.call_later(0.01, fut.set_result, 42)
        await asyncio.sleep(0.05)
        return ts

    ts = run(main())
    ts.assert_result(42).assert_no_violations()


def test_from_future_of_an_asyncio_future_subscribed_from_another_thread() -> None:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:

        async def make() -> asyncio.Future[str]:
            return asyncio.get_running_loop().create_future()

        fut = asyncio.run_coroutine_threadsafe(make(), loop).result(2)
        ts = Flowable.from_future(fut).test()  # the done callback is added on the loop's thread
        loop.call_soon_threadsafe(fut.set_result, "done")
        ts.await_done(2).assert_result("done").assert_no_violations()
        assert ts.last_thread != threading.current_thread().name  # emitted from the loop's thread

        async def make_task() -> asyncio.Task[int]:
            async def compute() -> int:
                await asyncio.sleep(0.01)
                return 7

            return asyncio.create_task(compute())

        task = asyncio.run_coroutine_threadsafe(make_task(), loop).result(2)
        assert Flowable.from_future(task).blocking_first(timeout=2) == 7
        Flowable.from_future(task).test().await_done(2).assert_result(7).assert_no_violations()

        failed = asyncio.run_coroutine_threadsafe(make(), loop).result(2)
        ts2 = Flowable.from_future(failed).test()
        loop.call_soon_threadsafe(failed.set_exception, KeyError("k"))
        ts2.await_done(2).assert_failure(KeyError).assert_no_violations()

        cancelled = asyncio.run_coroutine_threadsafe(make(), loop).result(2)
        ts3 = Flowable.from_future(cancelled).test()
        loop.call_soon_threadsafe(cancelled.cancel)
        ts3.await_done(2).assert_failure(concurrent.futures.CancelledError).assert_no_violations()
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(2)
        loop.close()


def test_from_future_of_a_closed_loop_is_an_error() -> None:
    loop = asyncio.new_event_loop()
    fut = loop.create_future()
    loop.close()
    Flowable.from_future(fut).test().assert_failure(RuntimeError, match="closed").assert_no_violations()


def test_from_future_blocking_on_the_futures_own_loop_fails_at_once() -> None:
    async def main() -> None:
        fut = asyncio.get_running_loop().create_future()
        with pytest.raises(RuntimeError, match="about to block"):
            Flowable.from_future(fut).blocking_first(timeout=5)

    run(main(), timeout=3)


def test_from_future_refuses_a_coroutine_naming_from_coroutine() -> None:
    async def compute() -> int:
        return 1

    coro = compute()
    try:
        with pytest.raises(TypeError, match="from_coroutine"):
            Flowable.from_future(coro)  # type: ignore[arg-type]
    finally:
        coro.close()


# ---------------------------------------------------------------------------------------------
# map_async needs an async function


def test_map_async_refuses_functions_that_are_certainly_not_async_at_assembly() -> None:
    def gen(x: int) -> Any:
        yield x

    async def agen(x: int) -> AsyncIterator[int]:
        yield x

    for fn in (int, str, len, str.upper, gen):
        with pytest.raises(TypeError, match=r"needs an async function .*use map\(\)"):
            Flowable.just(1).map_async(fn)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="flat_map_async"):
        Flowable.just(1).map_async(agen)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="do_on_next"):
        Flowable.just(1).do_on_next_async(print)  # type: ignore[arg-type]


def test_map_async_of_a_sync_function_fails_at_the_first_element_with_a_clear_error() -> None:
    def double(x: int) -> int:
        return x * 2

    ts: TestSubscriber[int] = Flowable.just(1, 2, 3).map_async(double).test()  # type: ignore[arg-type]
    ts.await_done(2).assert_failure(TypeError, match=r"double returned int, not an awaitable.*use map\(\)")
    ts.assert_no_violations()
    # an extension function may return an awaitable, so it is not refused at assembly: at its first element
    ts3: TestSubscriber[float] = Flowable.just(4.0).map_async(math.sqrt).test()  # type: ignore[arg-type]
    ts3.await_done(2).assert_failure(TypeError, match="sqrt returned float, not an awaitable").assert_no_violations()
    ts2: TestSubscriber[int] = Flowable.just(1).do_on_next_async(lambda x: x).test()  # type: ignore[arg-type, return-value]
    ts2.await_done(2).assert_failure(TypeError, match="not an awaitable").assert_no_violations()


def test_map_async_accepts_callables_returning_awaitables() -> None:
    async def inc(x: int) -> int:
        await asyncio.sleep(0)
        return x + 1

    Flowable.just(1, 2).map_async(lambda x: inc(x)).test().await_done(2).assert_result(2, 3).assert_no_violations()
    Flowable.just(1, 2).map_async(lambda x: asyncio.sleep(0, x)).test().await_done(2).assert_result(
        1, 2
    ).assert_no_violations()
    Flowable.just(1, 2).map_async(lambda x: Flowable.just(x * 10)).test().await_done(2).assert_result(
        10, 20
    ).assert_no_violations()


def test_map_async_coroutine_type_error_is_not_relabelled() -> None:
    async def bad(x: int) -> int:
        raise TypeError("the coroutine's own TypeError")

    ts = Flowable.just(1).map_async(bad).test().await_done(2)
    ts.assert_failure(TypeError, match="own TypeError").assert_no_violations()


# ---------------------------------------------------------------------------------------------
# from_async_iterable prefetch


def _counting_agen(pulled: list[int], n: int = 200) -> AsyncIterator[int]:
    async def agen() -> AsyncIterator[int]:
        for i in range(n):
            pulled.append(i)
            yield i

    return agen()


@pytest.mark.parametrize("through_map", [False, True], ids=["direct", "through-map"])
def test_async_for_over_an_async_source_asks_its_small_prefetch_ahead(through_map: bool) -> None:
    pulled: list[int] = []

    async def main() -> int:
        f = Flowable.from_async_iterable(_counting_agen(pulled))
        if through_map:
            f = f.map(lambda x: x)
        async for _ in f:
            await asyncio.sleep(0.02)  # the generator had all the time it wanted to run ahead
            break
        return len(pulled)

    assert run(main()) == 16  # before: 128


def test_from_async_iterable_prefetch_is_a_parameter() -> None:
    pulled: list[int] = []

    async def main() -> list[int]:
        out = []
        async for x in Flowable.from_async_iterable(_counting_agen(pulled, 10), prefetch=2):
            out.append(x)
            await asyncio.sleep(0.005)
            assert len(pulled) <= len(out) + 2  # never more than 2 ahead of the loop body
        return out

    assert run(main()) == list(range(10))
    with pytest.raises(ValueError, match="prefetch"):
        Flowable.from_async_iterable(_counting_agen([]), prefetch=0)


def test_an_explicit_consumer_prefetch_wins_and_sync_chains_keep_128() -> None:
    pulled: list[int] = []

    async def main() -> int:
        it = Flowable.from_async_iterable(_counting_agen(pulled)).to_async_iterator(prefetch=40)
        async for _ in it:
            await asyncio.sleep(0.02)
            break
        return len(pulled)

    assert run(main()) == 40

    async def sync_chain() -> list[int]:
        requests: list[int] = []
        async for _ in Flowable.range(0, 500).hide().do_on_request(requests.append):
            break
        return requests

    assert run(sync_chain()) == [128]
