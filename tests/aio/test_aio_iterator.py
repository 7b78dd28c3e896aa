"""``async for x in flowable`` / ``to_async_iterator`` / ``await flowable``."""

from __future__ import annotations

import asyncio
import threading
import traceback
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import Flowable, NoSuchElementError, schedulers
from rstreams.aio import FlowableAsyncIterator

from .util import own_threads, run


class Boom(Exception):
    pass


def _raise_boom(x: int) -> int:
    if x == 3:
        raise Boom("from the mapper")
    return x


async def collect(f: Any) -> list[Any]:
    return [x async for x in f]


# ---------------------------------------------------------------------------------------------
# values, fused and unfused


def test_async_for_fused_chain() -> None:
    f = Flowable.range(0, 1000).map(lambda x: x * 2).filter(lambda x: x % 3 == 0)
    assert run(collect(f)) == [x * 2 for x in range(1000) if (x * 2) % 3 == 0]


def test_async_for_unfused_chain() -> None:
    f = Flowable.range(0, 1000).hide().map(lambda x: x * 2).filter(lambda x: x % 3 == 0)
    assert run(collect(f)) == [x * 2 for x in range(1000) if (x * 2) % 3 == 0]


def test_to_async_iterator_small_prefetch() -> None:
    f = Flowable.range(0, 100).hide()
    assert run(collect(f.to_async_iterator(prefetch=1))) == list(range(100))
    assert run(collect(Flowable.range(0, 100).to_async_iterator(prefetch=3))) == list(range(100))


def test_async_for_empty_and_error() -> None:
    assert run(collect(Flowable.empty())) == []
    assert run(collect(Flowable.empty().hide())) == []
    with pytest.raises(Boom):
        run(collect(Flowable.error(Boom("x"))))


def test_error_from_fused_mapper_keeps_traceback() -> None:
    for f in (Flowable.range(0, 10).map(_raise_boom), Flowable.range(0, 10).hide().map(_raise_boom)):
        seen: list[int] = []

        async def body(f: Any = f, seen: list[int] = seen) -> None:
            async for x in f:
                seen.append(x)

        with pytest.raises(Boom) as ei:
            run(body())
        assert seen == [0, 1, 2]
        assert "_raise_boom" in "".join(traceback.format_tb(ei.value.__traceback__))


def test_to_async_iterator_rejects_bad_prefetch() -> None:
    for bad, error in ((0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match="prefetch"):
            Flowable.range(0, 3).to_async_iterator(prefetch=bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# fast path and batched hand-off


def _count_threadsafe(loop: asyncio.AbstractEventLoop) -> list[int]:
    calls = [0]
    orig = loop.call_soon_threadsafe

    def counting(*a: Any, **k: Any) -> Any:
        calls[0] += 1
        return orig(*a, **k)

    loop.call_soon_threadsafe = counting  # type: ignore[method-assign]
    return calls


def test_sync_upstream_needs_no_call_soon_threadsafe() -> None:
    async def main() -> tuple[int, int]:
        calls = _count_threadsafe(asyncio.get_running_loop())
        n = 0
        async for _ in Flowable.range(0, 5000).hide().map(lambda x: x + 1):
            n += 1
        return n, calls[0]

    n, calls = run(main())
    assert n == 5000
    assert calls == 0


def test_producer_thread_hands_over_per_burst_not_per_item() -> None:
    async def main() -> tuple[list[int], int, set[int]]:
        calls = _count_threadsafe(asyncio.get_running_loop())
        tids: set[int] = set()
        out: list[int] = []
        src = (
            Flowable.range(0, 20_000)
            .subscribe_on(schedulers.io())
            .do_on_next(lambda _: tids.add(threading.get_ident()))
        )
        async for x in src.to_async_iterator(prefetch=256):
            out.append(x)
        return out, calls[0], tids

    out, calls, tids = run(main())
    assert out == list(range(20_000))
    assert threading.get_ident() not in tids  # produced on another thread
    assert calls < 20_000 // 10, f"{calls} call_soon_threadsafe for 20000 items"


def test_producer_thread_with_small_prefetch() -> None:
    async def main() -> list[int]:
        return [
            x
            async for x in Flowable.range(0, 2000).subscribe_on(schedulers.io()).to_async_iterator(prefetch=2)
        ]

    assert run(main()) == list(range(2000))


# ---------------------------------------------------------------------------------------------
# cancellation


def test_exception_in_body_cancels_upstream() -> None:
    cancelled: list[bool] = []

    async def main() -> None:
        async for x in Flowable.range(0, 10_000).do_on_cancel(lambda: cancelled.append(True)):
            if x == 5:
                raise Boom("body")

    with pytest.raises(Boom):
        run(main())
    assert cancelled == [True]


def test_task_cancellation_cancels_upstream() -> None:
    cancelled = threading.Event()

    async def consume(started: asyncio.Event) -> None:
        async for _ in Flowable.never().do_on_cancel(cancelled.set):
            pass
        started.set()

    async def main() -> None:
        started = asyncio.Event()
        t = asyncio.create_task(consume(started))
        await asyncio.sleep(0.01)
        t.cancel()
        with pytest.raises(asyncio.CancelledError):
            await t

    run(main())
    assert cancelled.is_set()


def test_asyncio_timeout_cancels_upstream() -> None:
    cancelled = threading.Event()
    produced = [0]

    async def main() -> None:
        src = (
            Flowable.interval(0.001)
            .do_on_next(lambda _: produced.__setitem__(0, produced[0] + 1))
            .do_on_cancel(cancelled.set)
        )
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                async for _ in src:
                    pass

    threads_before = own_threads()
    run(main())
    assert cancelled.is_set()
    n = produced[0]
    # nothing is produced after the cancel
    threading.Event().wait(0.02)
    assert produced[0] == n
    assert own_threads() <= threads_before


def test_aclose_cancels() -> None:
    cancelled: list[bool] = []

    async def main() -> list[int]:
        it = Flowable.range(0, 100).hide().do_on_cancel(lambda: cancelled.append(True)).to_async_iterator(8)
        got = [await it.__anext__(), await it.__anext__()]
        await it.aclose()
        with pytest.raises(StopAsyncIteration):
            await it.__anext__()
        return got

    assert run(main()) == [0, 1]
    assert cancelled == [True]


def test_iterator_created_in_one_coroutine_consumed_in_another_task() -> None:
    async def make() -> FlowableAsyncIterator[int]:
        return Flowable.range(0, 50).subscribe_on(schedulers.io()).to_async_iterator(prefetch=4)

    async def consume(it: FlowableAsyncIterator[int]) -> list[int]:
        return [x async for x in it]

    async def main() -> list[int]:
        it = await make()
        return await asyncio.create_task(consume(it))

    assert run(main()) == list(range(50))


def test_iterator_created_outside_any_loop() -> None:
    it = Flowable.range(0, 5).hide().to_async_iterator()
    assert run(collect(it)) == [0, 1, 2, 3, 4]


# ---------------------------------------------------------------------------------------------
# slow consumer: memory bounded by prefetch


@pytest.mark.parametrize("prefetch", [4, 32])
def test_slow_consumer_memory_bounded_by_prefetch(prefetch: int) -> None:
    requested = [0]
    consumed = [0]
    max_ahead = [0]

    def on_request(n: int) -> None:
        requested[0] += n

    async def main() -> None:
        src = Flowable.range(0, 200).subscribe_on(schedulers.io()).do_on_request(on_request)
        async for _ in src.to_async_iterator(prefetch=prefetch):
            consumed[0] += 1
            max_ahead[0] = max(max_ahead[0], requested[0] - consumed[0])
            if consumed[0] % 20 == 0:
                await asyncio.sleep(0.001)

    run(main())
    assert consumed[0] == 200
    assert max_ahead[0] <= prefetch


# ---------------------------------------------------------------------------------------------
# await flowable


def test_await_last_first_to_list() -> None:
    async def main() -> None:
        assert await Flowable.range(0, 10) == 9
        assert await Flowable.range(0, 10).hide() == 9
        assert await Flowable.range(5, 100).first() == 5
        assert await Flowable.range(0, 4).last() == 3
        assert await Flowable.range(0, 3).to_list() == [0, 1, 2]
        assert await Flowable.range(1, 4).reduce(lambda a, b: a + b) == 10
        assert await Flowable.range(0, 1000).subscribe_on(schedulers.io()).to_list() == list(range(1000))

    run(main())


def test_await_empty_raises_no_such_element() -> None:
    async def main() -> None:
        with pytest.raises(NoSuchElementError):
            await Flowable.empty()
        with pytest.raises(NoSuchElementError):
            await Flowable.empty().hide()
        with pytest.raises(NoSuchElementError):
            await Flowable.empty().subscribe_on(schedulers.io())

    run(main())


def test_await_raises_stream_error_with_traceback() -> None:
    async def main() -> None:
        with pytest.raises(Boom) as ei:
            await Flowable.range(0, 10).hide().map(_raise_boom)
        assert "_raise_boom" in "".join(traceback.format_tb(ei.value.__traceback__))
        with pytest.raises(Boom):
            await Flowable.range(0, 10).map(_raise_boom)
        with pytest.raises(Boom):
            await Flowable.error(Boom("x")).subscribe_on(schedulers.io())

    run(main())


def test_await_cancellation_cancels_upstream() -> None:
    cancelled = threading.Event()

    async def main() -> None:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.02):
                await Flowable.never().do_on_cancel(cancelled.set)

    run(main())
    assert cancelled.is_set()


# ---------------------------------------------------------------------------------------------
# properties


@settings(max_examples=50, deadline=None)
@given(
    data=st.lists(st.integers(-1000, 1000), max_size=60),
    prefetch=st.integers(1, 20),
    hidden=st.booleans(),
    threaded=st.booleans(),
    stop=st.none() | st.integers(0, 60),
)
def test_property_async_for_equals_model(
    data: list[int], prefetch: int, hidden: bool, threaded: bool, stop: int | None
) -> None:
    f = Flowable.from_iterable(data)
    if hidden:
        f = f.hide()
    f = f.map(lambda x: x * 3).filter(lambda x: x % 2 == 0)
    if threaded:
        f = f.subscribe_on(schedulers.io())
    model = [x * 3 for x in data if (x * 3) % 2 == 0]

    async def main() -> list[int]:
        out: list[int] = []
        async for x in f.to_async_iterator(prefetch=prefetch):
            if stop is not None and len(out) == stop:
                break
            out.append(x)
        return out

    got = run(main())
    assert got == (model if stop is None else model[:stop])


def test_close_from_another_thread_ends_fused_and_unfused_iteration() -> None:
    for f in (Flowable.range(0, 10**9), Flowable.range(0, 10**9).hide()):

        async def main(f: Any = f) -> int:
            it = f.to_async_iterator(prefetch=8)
            n = 0
            async for _ in it:
                n += 1
                if n == 100:
                    t = threading.Thread(target=it.close)
                    t.start()
                    t.join()
            return n

        assert 100 <= run(main()) <= 100 + 8
