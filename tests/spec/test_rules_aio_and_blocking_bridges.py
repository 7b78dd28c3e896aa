"""Reactive Streams rule tests (``test_rule_*``) of the asyncio bridge (``to_async_iterator``,
``__await__``, ``from_async_iterable``, ``map_async``) and the blocking bridges (``blocking_*``).

Their other tests (scenarios, properties, arguments) are in ``tests/aio/test_aio_and_blocking_bridges.py``."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from aio.test_aio_and_blocking_bridges import Boom, _RawPublisher
from aio.util import run
from rstreams import Flowable
from rstreams.aio import AsyncIteratorSubscriber
from rstreams.testing import TestSubscriber


def test_rule_2_13_async_for_over_a_none_element_raises_type_error() -> None:
    pub = _RawPublisher([1, None, 2])

    async def main() -> list[int]:
        got = []
        with pytest.raises(TypeError, match="2.13"):
            async for x in Flowable.from_publisher(pub).to_async_iterator(prefetch=4):
                got.append(x)
        return got

    assert run(main()) == [1]
    assert pub.cancelled.is_set()
    assert len(pub.raised) == 1 and isinstance(pub.raised[0], TypeError)


def test_rule_2_13_async_iterator_subscriber_on_error_none_fails_the_consumer() -> None:
    pub = _RawPublisher([1], terminal="error-none")

    async def main() -> list[int]:
        got = []
        with pytest.raises(TypeError):
            async for x in Flowable.from_publisher(pub).to_async_iterator(prefetch=4):
                got.append(x)
        return got

    assert run(main()) == [1]  # not a normal completion
    assert len(pub.raised) == 1


def test_rule_2_13_async_iterator_subscriber_raises_for_none_arguments() -> None:
    for where in ("on_subscribe", "on_next", "on_error"):
        sub: AsyncIteratorSubscriber[int] = AsyncIteratorSubscriber(4)
        with pytest.raises(TypeError):
            getattr(sub, where)(None)


@pytest.mark.parametrize("terminal", ["complete", "error-none"])
def test_rule_2_13_await_never_takes_none_for_a_result(terminal: str) -> None:
    pub = _RawPublisher([1, None] if terminal == "complete" else [1], terminal)

    async def main() -> Any:
        return await Flowable.from_publisher(pub)

    with pytest.raises(TypeError, match="2.13"):
        run(main())
    assert len(pub.raised) == 1


@pytest.mark.parametrize("terminal", ["complete", "error-none"])
@pytest.mark.parametrize("bridge", ["blocking_iterable", "blocking_last", "blocking_subscribe", "to_future"])
def test_rule_2_13_blocking_bridges_raise_type_error_for_none(bridge: str, terminal: str) -> None:
    pub = _RawPublisher([1, None, 2] if terminal == "complete" else [1], terminal)
    f = Flowable.from_publisher(pub)
    seen: list[Any] = []
    calls: dict[str, Callable[[], Any]] = {
        "blocking_iterable": lambda: seen.extend(f.blocking_iterable(prefetch=4)),
        "blocking_last": lambda: f.blocking_last(timeout=5),
        "blocking_subscribe": lambda: f.blocking_subscribe(seen.append),
        "to_future": lambda: f.to_future().result(5),
    }
    with pytest.raises(TypeError, match="2.13"):
        calls[bridge]()
    assert None not in seen
    assert len(pub.raised) == 1
    if terminal == "complete":
        assert pub.cancelled.is_set()


def test_rule_2_13_blocking_first_none_first_element_is_type_error() -> None:
    pub = _RawPublisher([None, 1])
    with pytest.raises(TypeError, match="2.13"):
        Flowable.from_publisher(pub).blocking_first(timeout=5)
    assert pub.cancelled.is_set()


def test_rule_2_13_blocking_first_on_error_none_is_not_an_empty_completion() -> None:
    pub = _RawPublisher([], terminal="error-none")
    with pytest.raises(TypeError, match="2.13"):
        Flowable.from_publisher(pub).blocking_first(default=42, timeout=5)


def test_rule_1_1_from_async_iterable_pulls_only_what_is_requested() -> None:
    pulled: list[int] = []
    closed = threading.Event()

    async def gen() -> AsyncIterator[int]:
        try:
            for i in range(100):
                pulled.append(i)
                yield i
        finally:
            closed.set()

    async def main() -> TestSubscriber[int]:
        ts: TestSubscriber[int] = TestSubscriber(0)
        Flowable.from_async_iterable(gen()).subscribe(ts)
        await asyncio.sleep(0.01)
        assert pulled == []
        ts.request(3)
        while len(ts.values) < 3:
            await asyncio.sleep(0.001)
        await asyncio.sleep(0.01)
        assert pulled == [0, 1, 2]
        ts.cancel()  # idle (no demand): the generator is closed with aclose()
        while not closed.is_set():
            await asyncio.sleep(0.001)
        return ts

    ts = run(main())
    ts.assert_values(0, 1, 2).assert_not_complete().assert_no_errors().assert_no_violations()


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, None])
@pytest.mark.parametrize("which", ["from_async_iterable", "from_coroutine", "map_async", "do_on_next_async"])
def test_rule_3_9_bad_request_on_the_async_sources_and_operators(which: str, bad: Any) -> None:
    async def gen() -> AsyncIterator[int]:
        for i in range(3):
            yield i

    async def one() -> int:
        return 1

    async def ident(x: int) -> int:
        return x

    makers: dict[str, Callable[[], Flowable[int]]] = {
        "from_async_iterable": lambda: Flowable.from_async_iterable(gen()),
        "from_coroutine": lambda: Flowable.from_coroutine(one),
        "map_async": lambda: Flowable.range(0, 3).map_async(ident),
        "do_on_next_async": lambda: Flowable.range(0, 3).do_on_next_async(ident),
    }
    ts: TestSubscriber[int] = TestSubscriber(0)
    makers[which]().subscribe(ts)
    ts.request(bad)
    ts.await_done(5).assert_no_values().assert_error(ValueError)
    assert "3.9" in str(ts.errors[0])
    ts.assert_no_violations()


def test_rule_2_4_bridges_do_not_cancel_a_terminated_upstream() -> None:
    cancels: list[str] = []

    def src(tag: str, fail: bool = False) -> Flowable[int]:
        f: Flowable[int] = Flowable.range(0, 10).hide()
        if fail:
            f = f.concat_with(Flowable.error(Boom(tag)))
        return f.do_on_cancel(lambda: cancels.append(tag))

    assert list(src("blocking_iterable").blocking_iterable(4)) == list(range(10))
    with pytest.raises(Boom):
        list(src("blocking_iterable-error", True).blocking_iterable(4))
    src("blocking_subscribe").blocking_subscribe(lambda _: None)
    assert src("blocking_last").blocking_last() == 9
    assert src("to_future").to_future().result(5) == 9

    async def ident(x: int) -> int:
        return x

    async def main() -> None:
        assert [x async for x in src("async for")] == list(range(10))
        with pytest.raises(Boom):
            [x async for x in src("async for-error", True).to_async_iterator(4)]
        assert await src("await") == 9
        assert await src("map_async").map_async(ident, 3).to_list() == list(range(10))
        assert await src("do_on_next_async").do_on_next_async(ident).to_list() == list(range(10))

    run(main())
    ts: TestSubscriber[int] = TestSubscriber()
    src("map_async-test").map_async(ident, 2).subscribe(ts)
    ts.await_done(5).assert_result(*range(10)).assert_no_violations()
    assert cancels == []


@pytest.mark.parametrize(
    ("bad", "error"), [(0, ValueError), (-1, ValueError), (True, TypeError), (1.5, TypeError)]
)
def test_rule_3_9_the_async_iterator_subscriber_never_requests_a_bad_amount(
    bad: Any, error: type[Exception]
) -> None:
    # a wrong type is a TypeError, a value out of range a ValueError (as every operator's argument)
    with pytest.raises(error, match="prefetch"):
        AsyncIteratorSubscriber(bad)
    with pytest.raises(error, match="prefetch"):
        Flowable.range(0, 3).to_async_iterator(prefetch=bad)
