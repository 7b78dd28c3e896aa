"""The TCK on the asyncio bridge: the async-iterator Subscriber (blackbox and whitebox) and
``from_async_iterable`` / ``from_coroutine`` as Publishers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from rstreams import Flowable
from rstreams.aio import AsyncIteratorSubscriber, FlowableAsyncIterator, background_loop
from rstreams.tck import (
    PublisherVerification,
    SubscriberBlackboxVerification,
    SubscriberWhiteboxVerification,
    WhiteboxSubscriberProbe,
)


class _Fast:
    default_timeout_ms = 1000
    no_signals_timeout_ms = 25
    poll_timeout_ms = 2
    optional_timeout_ms = 200  # an unimplemented OPTIONAL rule is an xfail after this wait


# ---------------------------------------------------------------------------------------------
# Subscriber: the async iterator's subscriber, consumed by a task on the background loop


def _consume_on_background_loop(
    sub: AsyncIteratorSubscriber[Any],
    probe: WhiteboxSubscriberProbe[Any] | None = None,
    completed: Any = None,
) -> None:
    it: FlowableAsyncIterator[Any] = FlowableAsyncIterator(None, subscriber=sub)

    async def consume() -> None:
        try:
            async for x in it:
                if probe is not None:
                    probe.register_on_next(x)
        except Exception as e:  # noqa: BLE001
            if probe is not None:
                probe.register_on_error(e)
            return
        if probe is not None and completed is not None and completed():
            probe.register_on_complete()

    asyncio.run_coroutine_threadsafe(consume(), background_loop())


def _blackbox_subscriber(prefetch: int) -> AsyncIteratorSubscriber[int]:
    sub: AsyncIteratorSubscriber[int] = AsyncIteratorSubscriber(prefetch)
    _consume_on_background_loop(sub)
    return sub


class TestAsyncIteratorSubscriberBlackbox(_Fast, SubscriberBlackboxVerification[int]):
    def create_subscriber(self) -> AsyncIteratorSubscriber[int]:
        return _blackbox_subscriber(4)


class TestAsyncIteratorSubscriberBlackboxPrefetch1(_Fast, SubscriberBlackboxVerification[int]):
    def create_subscriber(self) -> AsyncIteratorSubscriber[int]:
        return _blackbox_subscriber(1)


class _Probed:
    """Whitebox wrapper: the async-iterator subscriber, reporting to the probe as its consumer
    task processes signals; the puppet's request/cancel run on the loop, serially with the
    consumer's own replenishing requests (rule 2.7)."""

    _rs_no_wrap = True

    def __init__(self, probe: WhiteboxSubscriberProbe[int]) -> None:
        self.sub: AsyncIteratorSubscriber[int] = AsyncIteratorSubscriber(1)
        self.probe = probe
        self.loop = background_loop()
        self._registered = False
        self._completed = False
        _consume_on_background_loop(self.sub, probe, lambda: self._completed)

    def on_subscribe(self, s: Any) -> None:
        first = self.sub.upstream.get() is None
        self.sub.on_subscribe(s)
        if first and s is not None and not self._registered:
            self._registered = True
            self.probe.register_on_subscribe(self)

    def on_next(self, x: int) -> None:
        self.sub.on_next(x)

    def on_error(self, e: BaseException) -> None:
        self.sub.on_error(e)

    def on_complete(self) -> None:
        self._completed = True
        self.sub.on_complete()

    # puppet
    def trigger_request(self, n: int) -> None:
        def req() -> None:
            s = self.sub.upstream.get()
            if s is not None:
                s.request(n)

        self.loop.call_soon_threadsafe(req)

    def signal_cancel(self) -> None:
        self.loop.call_soon_threadsafe(self.sub.cancel)


class TestAsyncIteratorSubscriberWhitebox(_Fast, SubscriberWhiteboxVerification[int]):
    def create_subscriber(self, probe: WhiteboxSubscriberProbe[int]) -> Any:
        return _Probed(probe)


# ---------------------------------------------------------------------------------------------
# Publishers


class _Range:
    def __init__(self, n: int) -> None:
        self.n = n

    def __aiter__(self) -> AsyncIterator[int]:
        return self._gen()

    async def _gen(self) -> AsyncIterator[int]:
        for i in range(self.n):
            if i % 7 == 3:
                await asyncio.sleep(0)
            yield i


class _Failing:
    """An async iterable that cannot be iterated: ``__aiter__`` raises."""

    def __aiter__(self) -> AsyncIterator[int]:
        raise RuntimeError("failed async iterable")


class TestFromAsyncIterablePublisher(_Fast, PublisherVerification[int]):
    stochastic_iterations = 10

    def create_publisher(self, elements: int) -> Flowable[int]:
        return Flowable.from_async_iterable(_Range(elements))

    def create_failed_publisher(self) -> Flowable[int]:
        return Flowable.from_async_iterable(_Failing())

    def max_elements_from_publisher(self) -> int:
        return 10_000


class TestFromCoroutinePublisher(_Fast, PublisherVerification[int]):
    stochastic_iterations = 10

    def create_publisher(self, elements: int) -> Flowable[int]:
        async def one() -> int:
            await asyncio.sleep(0)
            return 1

        if elements == 0:
            return Flowable.from_coroutine(one).filter(lambda x: False)
        return Flowable.from_coroutine(one)

    def create_failed_publisher(self) -> None:
        return None  # from_coroutine is lazy: it cannot fail before it is requested

    def max_elements_from_publisher(self) -> int:
        return 1
