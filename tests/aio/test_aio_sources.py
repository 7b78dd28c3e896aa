"""``Flowable.from_async_iterable`` and ``Flowable.from_coroutine``."""

from __future__ import annotations

import asyncio
import threading
import traceback
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import Flowable
from rstreams.testing import TestSubscriber

from .util import run


class Boom(Exception):
    pass


class Counting:
    """An async iterable that counts how far it was pulled and whether it was closed."""

    def __init__(self, n: int, delay: float = 0.0, fail_at: int | None = None) -> None:
        self.n = n
        self.delay = delay
        self.fail_at = fail_at
        self.pulled = 0
        self.closed = threading.Event()
        self.threads: set[str] = set()

    def __aiter__(self) -> AsyncIterator[int]:
        return self._gen()

    async def _gen(self) -> AsyncIterator[int]:
        try:
            for i in range(self.n):
                if self.delay:
                    await asyncio.sleep(self.delay)
                if i == self.fail_at:
                    raise Boom(f"failed at {i}")
                self.pulled += 1
                self.threads.add(threading.current_thread().name)
                yield i
        finally:
            self.closed.set()


def _wait_subscribed(ts: TestSubscriber[Any]) -> None:
    for _ in range(400):
        if ts.subscription is not None:
            return
        threading.Event().wait(0.005)
    raise AssertionError("not subscribed")


# ---------------------------------------------------------------------------------------------
# from_async_iterable on the background loop (no running loop at subscribe time)


def test_from_async_iterable_values_on_background_loop() -> None:
    src = Counting(20)
    ts = Flowable.from_async_iterable(src).test()
    ts.await_done(2).assert_result(*range(20)).assert_no_violations()
    assert src.threads == {"rstreams-aio-loop"}
    assert set(ts.value_threads) == {"rstreams-aio-loop"}


def test_request_one_at_a_time() -> None:
    src = Counting(10, delay=0.0005)
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_async_iterable(src).subscribe(ts)
    _wait_subscribed(ts)
    for i in range(10):
        ts.request(1)
        ts.await_count(i + 1, 2)
    ts.request(1)
    ts.await_done(2).assert_result(*range(10)).assert_no_violations()


def test_error_from_anext_with_traceback() -> None:
    ts = Flowable.from_async_iterable(Counting(10, fail_at=4)).test()
    ts.await_done(2).assert_values(0, 1, 2, 3).assert_error(Boom).assert_no_violations()
    tb = "".join(traceback.format_tb(ts.errors[0].__traceback__))
    assert "_gen" in tb


def test_assembly_time_argument_checks() -> None:
    with pytest.raises(TypeError):
        Flowable.from_async_iterable(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Flowable.from_async_iterable([1, 2])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Flowable.from_coroutine(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Flowable.from_coroutine(42)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# on the caller's running loop


def test_from_async_iterable_on_running_loop() -> None:
    async def main() -> tuple[list[int], set[str]]:
        src = Counting(30, delay=0.0001)
        got = [x async for x in Flowable.from_async_iterable(src).to_async_iterator(prefetch=4)]
        return got, src.threads

    got, threads = run(main())
    assert got == list(range(30))
    assert threads == {threading.main_thread().name}


def test_from_async_iterable_given_loop() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        src = Counting(5)
        ts: TestSubscriber[int] = TestSubscriber()
        # subscribed from another thread, but run on our loop
        t = threading.Thread(target=lambda: Flowable.from_async_iterable(src, loop=loop).subscribe(ts))
        t.start()
        t.join()
        for _ in range(100):
            if ts.is_terminated:
                break
            await asyncio.sleep(0.002)
        ts.assert_result(0, 1, 2, 3, 4).assert_no_violations()
        assert src.threads == {threading.main_thread().name}

    run(main())


def test_break_closes_async_generator_on_running_loop() -> None:
    async def main() -> Counting:
        src = Counting(1000)
        async for x in Flowable.from_async_iterable(src):
            if x == 3:
                break
        for _ in range(5):
            await asyncio.sleep(0)
        return src

    src = run(main())
    assert src.closed.is_set()
    assert src.pulled <= 4 + 128


def test_one_pump_at_a_time_with_concurrent_requests() -> None:
    src = Counting(2000)
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_async_iterable(src).subscribe(ts)
    _wait_subscribed(ts)
    threads = [threading.Thread(target=lambda: [ts.request(1) for _ in range(500)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ts.await_count(2000, 2)
    ts.request(1)
    ts.await_done(2).assert_result(*range(2000)).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# from_coroutine


def test_from_coroutine_is_lazy_and_single_valued() -> None:
    calls: list[int] = []

    async def fetch() -> int:
        calls.append(1)
        await asyncio.sleep(0.001)
        return 42

    f = Flowable.from_coroutine(fetch)
    ts: TestSubscriber[int] = TestSubscriber(0)
    f.subscribe(ts)
    _wait_subscribed(ts)
    threading.Event().wait(0.02)
    assert calls == []  # nothing runs before the request
    ts.request(1)
    ts.await_done(2).assert_result(42).assert_no_violations()
    assert run(_await(f)) == 42
    assert len(calls) == 2  # once per subscription


async def _await(f: Any) -> Any:
    return await f


def test_from_coroutine_error_and_none() -> None:
    async def bad() -> int:
        raise Boom("coro")

    async def nothing() -> None:
        return None

    Flowable.from_coroutine(bad).test().await_done(2).assert_error(Boom).assert_no_violations()
    Flowable.from_coroutine(nothing).test().await_done(2).assert_error(TypeError).assert_no_violations()

    async def main() -> None:
        with pytest.raises(Boom) as ei:
            await Flowable.from_coroutine(bad)
        assert "bad" in "".join(traceback.format_tb(ei.value.__traceback__))

    run(main())


def test_from_coroutine_cancel_cancels_the_coroutine() -> None:
    cancelled = threading.Event()

    async def slow() -> int:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return 1

    ts = Flowable.from_coroutine(slow).test()
    _wait_subscribed(ts)
    threading.Event().wait(0.02)
    ts.cancel()
    assert cancelled.wait(2)
    ts.assert_no_values().assert_not_complete().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# property


@settings(max_examples=50, deadline=None)
@given(
    data=st.lists(st.integers(), max_size=40), requests=st.lists(st.integers(1, 7), min_size=1, max_size=10)
)
def test_property_from_async_iterable_equals_model(data: list[int], requests: list[int]) -> None:
    async def gen() -> AsyncIterator[int]:
        for x in data:
            yield x

    class It:
        def __aiter__(self) -> AsyncIterator[int]:
            return gen()

    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_async_iterable(It()).map(lambda x: x + 1).subscribe(ts)
    _wait_subscribed(ts)
    total = 0
    for r in requests:
        total += r
        ts.request(r)
        ts.await_count(min(total, len(data)), 2)
    ts.request(len(data) + 1)
    ts.await_done(2).assert_result(*[x + 1 for x in data]).assert_no_violations()
