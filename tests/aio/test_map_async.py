"""``map_async`` and ``flat_map_async``: bounded concurrency, bounded look-ahead, order, errors."""

from __future__ import annotations

import asyncio
import contextvars
import random
import threading
import traceback
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import Flowable, schedulers
from rstreams.testing import TestSubscriber

from .util import run


class Boom(Exception):
    pass


class Probe:
    """Counts concurrently running coroutines and how far the upstream ran ahead of the output."""

    def __init__(self) -> None:
        self.running = 0
        self.peak = 0
        self.requested = 0
        self.emitted = 0
        self.max_ahead = 0

    def on_request(self, n: int) -> None:
        self.requested += n
        self.max_ahead = max(self.max_ahead, self.requested - self.emitted)

    def on_output(self, _: Any) -> None:
        self.emitted += 1

    async def fn(self, x: int) -> int:
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            await asyncio.sleep(0.001 * random.random())
            return x * 10
        finally:
            self.running -= 1


@pytest.mark.parametrize("ordered", [True, False])
@pytest.mark.parametrize(("k", "prefetch"), [(1, 1), (4, None), (8, 3)])
def test_concurrency_and_lookahead_bounded(ordered: bool, k: int, prefetch: int | None) -> None:
    random.seed(k)
    p = Probe()

    async def main() -> list[int]:
        src = Flowable.range(0, 80).do_on_request(p.on_request)
        out = src.map_async(p.fn, max_concurrency=k, ordered=ordered, prefetch=prefetch).do_on_next(
            p.on_output
        )
        return [x async for x in out.to_async_iterator(prefetch=4)]

    got = run(main())
    want = [x * 10 for x in range(80)]
    assert got == want if ordered else sorted(got) == want
    assert 1 <= p.peak <= k
    window = k + (prefetch if prefetch is not None else k)
    # look-ahead: requested-but-not-emitted never exceeds the window (+ the initial request edge)
    assert p.max_ahead <= window


def test_ordered_emits_in_input_order_despite_completion_order() -> None:
    async def fn(x: int) -> int:
        await asyncio.sleep(0.001 * (5 - x % 5))
        return x

    async def main() -> tuple[list[int], list[int]]:
        a = await Flowable.range(0, 20).map_async(fn, max_concurrency=5).to_list()
        b = await Flowable.range(0, 20).map_async(fn, max_concurrency=5, ordered=False).to_list()
        return a, b

    a, b = run(main())
    assert a == list(range(20))
    assert sorted(b) == list(range(20)) and b != list(range(20))


def test_map_async_on_background_loop_with_test_subscriber() -> None:
    ts = Flowable.range(0, 50).map_async(lambda x: asyncio.sleep(0.0005, x + 1), max_concurrency=4).test()
    ts.await_done(2).assert_result(*range(1, 51)).assert_no_violations()
    assert set(ts.value_threads) == {"rstreams-aio-loop"}


def test_map_async_request_one_at_a_time() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.range(0, 10).map_async(lambda x: asyncio.sleep(0, x), max_concurrency=3).subscribe(ts)
    for i in range(10):
        ts.request(1)
        ts.await_count(i + 1, 2)
    ts.request(1)
    ts.await_done(2).assert_result(*range(10)).assert_no_violations()


def test_map_async_threaded_upstream() -> None:
    ts = (
        Flowable.range(0, 500)
        .subscribe_on(schedulers.io())
        .map_async(lambda x: asyncio.sleep(0, x), max_concurrency=8, ordered=True)
        .test()
    )
    ts.await_done(2).assert_result(*range(500)).assert_no_violations()


def test_error_in_coroutine_cancels_others_and_upstream() -> None:
    cancelled_tasks: list[int] = []
    upstream_cancelled = threading.Event()

    async def fn(x: int) -> int:
        if x == 3:
            await asyncio.sleep(0.005)
            raise Boom("coroutine 3")
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError:
            cancelled_tasks.append(x)
            raise
        return x

    async def main() -> None:
        src = Flowable.range(0, 100).do_on_cancel(upstream_cancelled.set)
        with pytest.raises(Boom) as ei:
            await src.map_async(fn, max_concurrency=5).to_list()
        assert "fn" in "".join(traceback.format_tb(ei.value.__traceback__))
        await asyncio.sleep(0)

    run(main())
    assert upstream_cancelled.is_set()
    assert sorted(cancelled_tasks) == [0, 1, 2, 4]


def test_error_with_test_subscriber_and_no_undeliverable(undeliverable: list[BaseException]) -> None:
    async def fn(x: int) -> int:
        await asyncio.sleep(0)
        if x == 7:
            raise Boom("x")
        return x

    ts = Flowable.range(0, 20).map_async(fn, max_concurrency=2).test()
    ts.await_done(2).assert_error(Boom).assert_no_violations()
    assert ts.values == list(range(7))
    assert not undeliverable


def test_upstream_error_cancels_running_coroutines() -> None:
    cancelled = threading.Event()

    async def fn(x: int) -> int:
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return x

    async def up() -> AsyncIterator[int]:
        yield 1
        await asyncio.sleep(0.01)
        raise Boom("up")

    class Up:
        def __aiter__(self) -> AsyncIterator[int]:
            return up()

    ts = Flowable.from_async_iterable(Up()).map_async(fn).test()
    ts.await_done(2).assert_error(Boom).assert_no_values().assert_no_violations()
    assert cancelled.wait(2)


def test_cancel_cancels_running_coroutines() -> None:
    started = threading.Event()
    cancelled = threading.Event()

    async def fn(x: int) -> int:
        started.set()
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return x

    ts = Flowable.range(0, 10).map_async(fn).test()
    assert started.wait(2)
    ts.cancel()
    assert cancelled.wait(2)
    ts.assert_no_values().assert_not_complete().assert_no_violations()


def test_asyncio_timeout_around_async_for_cancels_map_async() -> None:
    cancelled = threading.Event()

    async def fn(x: int) -> int:
        await asyncio.sleep(0.01)
        return x

    async def main() -> None:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                async for _ in (
                    Flowable.range(0, 10_000).do_on_cancel(cancelled.set).map_async(fn, max_concurrency=2)
                ):
                    pass

    run(main())
    assert cancelled.is_set()


def test_assembly_time_argument_checks() -> None:
    f = Flowable.range(0, 3)
    with pytest.raises(TypeError):
        f.map_async(None)  # type: ignore[arg-type]
    # a wrong type is a TypeError, a value out of range a ValueError (as every operator's argument)
    for bad, error in ((0, ValueError), (-2, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match="max_concurrency"):
            f.map_async(lambda x: asyncio.sleep(0, x), max_concurrency=bad)  # type: ignore[arg-type]
        with pytest.raises(error, match="max_concurrency"):
            f.flat_map_async(lambda x: None, max_concurrency=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        f.map_async(lambda x: asyncio.sleep(0, x), prefetch=0)


# ---------------------------------------------------------------------------------------------
# flat_map_async


async def pages(x: int) -> AsyncIterator[tuple[int, int]]:
    for i in range(3):
        await asyncio.sleep(0.0005)
        yield (x, i)


def test_flat_map_async_values_and_concurrency() -> None:
    active = [0]
    peak = [0]

    async def tracked(x: int) -> AsyncIterator[tuple[int, int]]:
        active[0] += 1
        peak[0] = max(peak[0], active[0])
        try:
            async for v in pages(x):
                yield v
        finally:
            active[0] -= 1

    async def main() -> list[tuple[int, int]]:
        return await Flowable.range(0, 12).flat_map_async(tracked, max_concurrency=3).to_list()

    got = run(main())
    assert sorted(got) == [(x, i) for x in range(12) for i in range(3)]
    for x in range(12):
        assert [v for v in got if v[0] == x] == [(x, 0), (x, 1), (x, 2)]
    assert 1 <= peak[0] <= 3


def test_flat_map_async_coroutine_returning_iterable() -> None:
    async def fetch(x: int) -> list[int]:
        await asyncio.sleep(0)
        return [x, x]

    ts = Flowable.range(0, 3).flat_map_async(fetch, max_concurrency=1).test()  # type: ignore[arg-type]
    ts.await_done(2).assert_result(0, 0, 1, 1, 2, 2).assert_no_violations()


def test_flat_map_async_error_and_cancel() -> None:
    closed = threading.Event()

    async def failing(x: int) -> AsyncIterator[int]:
        yield x
        raise Boom("inner")

    async def endless(x: int) -> AsyncIterator[int]:
        try:
            while True:
                await asyncio.sleep(0.001)
                yield x
        finally:
            closed.set()

    Flowable.range(0, 3).flat_map_async(failing).test().await_done(2).assert_error(
        Boom
    ).assert_no_violations()
    ts = Flowable.just(1).flat_map_async(endless).test(5)
    ts.await_count(5, 2)
    ts.cancel()
    assert closed.wait(2)
    ts.assert_value_count(5).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# property


@settings(max_examples=50, deadline=None)
@given(
    data=st.lists(st.integers(-100, 100), max_size=30),
    k=st.integers(1, 6),
    ordered=st.booleans(),
    hidden=st.booleans(),
    requests=st.lists(st.integers(1, 5), min_size=1, max_size=8),
)
def test_property_map_async_equals_model(
    data: list[int], k: int, ordered: bool, hidden: bool, requests: list[int]
) -> None:
    async def fn(x: int) -> int:
        if x % 3 == 0:
            await asyncio.sleep(0)
        return x * 2

    src = Flowable.from_iterable(data)
    if hidden:
        src = src.hide()
    ts: TestSubscriber[int] = TestSubscriber(0)
    src.map_async(fn, max_concurrency=k, ordered=ordered).subscribe(ts)
    total = 0
    for r in requests:
        total += r
        ts.request(r)
        ts.await_count(min(total, len(data)), 2)
    ts.request(len(data) + 1)
    ts.await_done(2).assert_no_errors().assert_complete().assert_no_violations()
    model = [x * 2 for x in data]
    assert ts.values == model if ordered else sorted(ts.values) == sorted(model)


def test_do_on_next_async_passes_elements_in_order() -> None:
    seen: list[int] = []

    async def log(x: int) -> str:
        await asyncio.sleep(0)
        seen.append(x)
        return "ignored"

    async def boom(x: int) -> None:
        raise Boom("tap")

    ts = Flowable.range(0, 10).do_on_next_async(log).test()
    ts.await_done(2).assert_result(*range(10)).assert_no_violations()
    assert seen == list(range(10))
    Flowable.range(0, 3).do_on_next_async(boom).test().await_done(2).assert_error(Boom).assert_no_violations()


_request_id: contextvars.ContextVar[str] = contextvars.ContextVar("_request_id", default="none")


def test_contextvars_captured_at_subscribe_reach_the_coroutines() -> None:
    async def fn(x: int) -> str:
        await asyncio.sleep(0)
        return f"{_request_id.get()}-{x}"

    async def gen() -> AsyncIterator[str]:
        yield _request_id.get()

    class It:
        def __aiter__(self) -> AsyncIterator[str]:
            return gen()

    def subscribe_in_context() -> tuple[TestSubscriber[str], TestSubscriber[str]]:
        _request_id.set("req-42")
        return (
            Flowable.range(0, 3).map_async(fn).test(),  # runs on the background loop thread
            Flowable.from_async_iterable(It()).test(),
        )

    a, b = contextvars.copy_context().run(subscribe_in_context)
    a.await_done(2).assert_result("req-42-0", "req-42-1", "req-42-2").assert_no_violations()
    b.await_done(2).assert_result("req-42").assert_no_violations()
