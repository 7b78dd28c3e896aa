"""Producing from asyncio: ``from_async_iterable`` and ``from_coroutine``.

``from_async_iterable(aiterable, loop=None, prefetch=16)`` pulls one ``__anext__`` at a time, only
while there is demand (``prefetch`` is how much an ``async for`` over it asks ahead), on one event
loop (the given one, else the subscribing thread's running loop, else the
shared background loop thread ``rstreams-aio-loop``). Every downstream signal, ``on_subscribe``
included, is delivered on that loop's thread, so they are serial by construction (rule 1.3).

The pump is a task that exists only while demand is outstanding (seed 004's emission loop, with
``await __anext__()`` in the middle): it takes the demand in a local, emits, and publishes what it
produced once per batch with ``produced()``; when that brings the demand to 0 it returns. Race:
``request`` vs the pump going idle. ``add_request`` and ``produced`` are atomic read-modify-writes
on the same counter, so exactly one side sees the 0: either the pump sees the new demand and keeps
going, or the requester moves the counter from 0 and starts a new pump. Starting is idempotent on
the loop (a pump already running is left alone), so a duplicate start does no harm.

Cancellation (any thread) raises ``_cancelled`` and hands over to the loop: a pump suspended in
``__anext__`` is cancelled (``Task.cancel``), otherwise the iterator is closed with ``aclose()``
in a short task, so an async generator's ``finally`` blocks run. A bad ``request`` (rule 3.9) is
turned into ``on_error`` on the loop, after which the pump emits nothing more.

``from_coroutine(fn)`` is ``from_async_iterable`` over a one-element async generator that awaits
``fn()``: it runs when first requested, and cancelling the subscription cancels the coroutine.
"""

from __future__ import annotations

import asyncio
import contextvars
from asyncio import AbstractEventLoop
from asyncio.events import _get_running_loop
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import Any, Final, Generic, TypeVar, cast, final

from ..._internal import plugins
from ..._internal.atomics import AtomicFlag, AtomicInt
from ..._internal.event_loops import LoopClosedError, hidden_by_blocking_bridge, resolve_loop
from ..._internal.requests import add_request, produced, validate_request
from ..._internal.subscriptions import error_empty
from ..._spec import Subscriber
from ...errors import NoneElementError
from .._flowable import Flowable

__all__ = ["from_async_iterable", "from_coroutine", "AsyncIterableSubscription"]

T = TypeVar("T")


@final
class AsyncIterableSubscription(Generic[T]):
    """The Subscription of ``from_async_iterable``: a demand-driven pump task on one loop."""

    __slots__ = (
        "_downstream",
        "_aiterable",
        "_loop",
        "_requested",
        "_once",
        "_cancelled",
        "_done",
        "_task",
        "_it",
        "_name",
        "_single",
        "_context",
        "__weakref__",
    )

    def __init__(
        self, downstream: Subscriber[T], aiterable: AsyncIterable[T], loop: AbstractEventLoop, name: str
    ) -> None:
        self._downstream: Subscriber[T] | None = downstream
        self._aiterable: AsyncIterable[T] | None = aiterable
        self._loop = loop
        self._requested = AtomicInt(0)  # race: request (any thread) vs the pump going idle
        self._once = AtomicFlag()  # race: cancel vs cancel vs bad request: one of them wins
        self._cancelled = False  # plain read by the pump; written after _once was won
        self._done = False  # loop thread only
        self._task: asyncio.Task[None] | None = None  # loop thread only
        self._it: AsyncIterator[T] | None = None  # loop thread only
        self._name = name
        self._single = isinstance(aiterable, _CoroutineIterable)  # complete right after its value
        self._context = contextvars.copy_context()  # captured at subscribe time (DESIGN.md 3)

    # -- any thread ---------------------------------------------------------------------------
    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                if self._once.try_set():
                    self._cancelled = True
                    self._on_loop(self._signal_error, err)  # rule 3.9, delivered in order on the loop
                return
        if add_request(self._requested, n) == 0:  # 0 -> n: the pump is idle, start one
            self._on_loop(self._start_pump)

    def cancel(self) -> None:
        if not self._once.try_set():
            return
        self._cancelled = True
        self._downstream = None  # rule 3.13
        self._aiterable = None
        self._on_loop(self._shutdown)

    def _on_loop(self, fn: Callable[..., Any], *args: Any) -> None:
        loop = self._loop
        if _get_running_loop() is loop:
            fn(*args)
            return
        try:
            loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the loop is closed: nothing runs there any more
            if fn == self._shutdown:
                return
            if self._once.try_set() or fn == self._signal_error:
                self._cancelled = True
                d = self._downstream
                self._downstream = None
                if d is not None and not self._done:
                    self._done = True
                    d.on_error(LoopClosedError(f"{self._name}(): the event loop {loop!r} is closed"))

    # -- loop thread --------------------------------------------------------------------------
    def start(self) -> None:
        """On the loop thread: get the iterator (``__aiter__`` runs no user body for an async
        generator) and signal on_subscribe; an ``__aiter__`` that raises fails the subscription
        right away, without waiting for demand (rule 1.9: on_subscribe, then on_error)."""
        d = self._downstream
        if d is None:
            return
        src = self._aiterable
        self._aiterable = None  # __aiter__ once per subscription
        failure: Exception | None = None
        if src is not None:
            try:
                self._it = src.__aiter__()
            except Exception as ex:
                failure = ex
        d.on_subscribe(self)
        if failure is not None:
            self._finish(failure)

    def _start_pump(self) -> None:
        if self._cancelled or self._done:
            return
        t = self._task
        if t is not None and not t.done():
            return  # a pump is running: it sees the new demand itself
        self._task = self._loop.create_task(self._pump(), context=self._context)  # pumps never overlap

    def _signal_error(self, error: BaseException) -> None:
        if self._done:
            plugins.on_error(error, f"{self._name}: error after termination")
            return
        self._done = True
        d = self._downstream
        self._downstream = None
        self._shutdown()
        if d is not None:
            d.on_error(error)

    def _shutdown(self) -> None:
        t = self._task
        if t is not None and not t.done():
            if asyncio.current_task() is not t:
                t.cancel()  # interrupts a pending __anext__; the pump's finally closes the iterator
            return  # (when called from inside the pump, it sees _cancelled after on_next)
        it = self._it
        self._it = None
        if it is not None and hasattr(it, "aclose"):
            self._task = self._loop.create_task(_aclose(it, self._name))

    def _finish(self, error: BaseException | None) -> None:
        if self._done or self._cancelled:
            if error is not None:
                plugins.on_error(error, f"{self._name}: error after cancellation")
            return
        self._done = True
        self._it = None
        d = self._downstream
        self._downstream = None
        if d is not None:
            if error is None:
                d.on_complete()
            else:
                d.on_error(error)

    async def _pump(self) -> None:
        it = self._it
        if it is None:
            return
        anext = it.__anext__
        requested = self._requested
        r = requested.get()
        e = 0
        try:
            while True:
                while e != r:
                    if self._cancelled:
                        return
                    try:
                        x = await anext()
                    except StopAsyncIteration:
                        self._finish(None)
                        return
                    except Exception as ex:  # the iterator's own error, with its traceback
                        self._finish(ex)
                        return
                    if self._cancelled:
                        return
                    d = self._downstream
                    if d is None:
                        return
                    if x is None:
                        self._finish(
                            NoneElementError(f"{self._name}(): the async iterable produced None (rule 2.13)")
                        )
                        await _aclose(it, self._name)
                        return
                    d.on_next(x)
                    e += 1
                    if self._single:  # from_coroutine: completes with its value, no extra request
                        self._finish(None)
                        await _aclose(it, self._name)
                        return
                r = requested.get()
                if e == r:
                    r = produced(requested, e)  # published once per batch
                    e = 0
                    if r == 0:
                        return  # idle: the next request from 0 starts a new pump
        except asyncio.CancelledError as ce:
            if not self._cancelled:  # not our cancel: the loop is shutting down (asyncio.run exit)
                self._finish(ce)
            raise
        finally:
            if self._cancelled:
                self._it = None
                await _aclose(it, self._name)


async def _aclose(it: Any, name: str) -> None:
    close = getattr(it, "aclose", None)
    if close is None:
        return
    try:
        await close()
    except RuntimeError as e:
        if "already running" not in str(e):  # being closed elsewhere (a cancelled __anext__)
            plugins.on_error(e, f"{name}: closing the async iterator failed")
    except Exception as e:
        plugins.on_error(e, f"{name}: closing the async iterator failed")


#: the default ``prefetch`` of ``from_async_iterable``: how many elements an ``async for`` over it
#: asks ahead (see ``_iterator.default_prefetch``). Small: each element is an ``__anext__`` (I/O,
#: usually), so 16 in flight already overlap producer and consumer, and the generator never runs
#: far ahead of use; 16 is also the default concurrency of map_async/flat_map_async.
ASYNC_SOURCE_PREFETCH: Final = 16


@final
class _FromAsyncIterable(Flowable[T]):
    __slots__ = ("_aiterable", "_loop", "_name", "_async_prefetch")

    def __init__(
        self,
        aiterable: AsyncIterable[T],
        loop: AbstractEventLoop | None,
        name: str,
        prefetch: int = ASYNC_SOURCE_PREFETCH,
    ) -> None:
        self._aiterable = aiterable
        self._loop = loop
        self._name = name
        self._async_prefetch = prefetch  # read by async for / to_async_iterator (default_prefetch)

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        loop = resolve_loop(self._loop)
        if loop is hidden_by_blocking_bridge():
            # bound (loop=...) to the event loop of the thread that is about to block in a blocking
            # bridge: its coroutine could never run there (a deadlock); say so instead
            error_empty(
                cast("Subscriber[Any]", subscriber),
                RuntimeError(
                    f"{self._name}(loop=...) is bound to the event loop of this thread, which a blocking "
                    "call (blocking_first/last/iterable/subscribe) is about to block: it could never "
                    "run. Use `await`/`async for` on that loop, or call the blocking method from "
                    "another thread"
                ),
            )
            return
        sub = AsyncIterableSubscription(subscriber, self._aiterable, loop, self._name)
        if _get_running_loop() is loop:
            sub.start()
            return
        try:
            loop.call_soon_threadsafe(sub.start)  # every signal on the loop thread (rule 1.3)
        except RuntimeError:
            error_empty(
                cast("Subscriber[Any]", subscriber),
                LoopClosedError(f"{self._name}(): the event loop {loop!r} is closed"),
            )

    def __repr__(self) -> str:
        return f"Flowable.{self._name}({self._aiterable!r})"


def from_async_iterable(
    aiterable: AsyncIterable[T], loop: AbstractEventLoop | None = None, prefetch: int = ASYNC_SOURCE_PREFETCH
) -> Flowable[T]:
    """``Flowable.from_async_iterable`` as a function: see :meth:`Flowable.from_async_iterable`.

    Example::

        async def ticks():
            for i in range(3):
                await asyncio.sleep(0.01)
                yield i
        aio.from_async_iterable(ticks()).test().await_done(1).assert_result(0, 1, 2)

    Backpressure: one ``__anext__`` per requested element, none ahead of demand; ``prefetch`` is
    how far an ``async for`` over it asks ahead.
    Scheduler: ``loop`` if given, else the subscribing thread's running loop, else the background
    loop thread ``rstreams-aio-loop``; every signal comes from that loop's thread.
    """
    if isinstance(prefetch, bool) or not isinstance(prefetch, int) or prefetch <= 0:
        raise ValueError(f"from_async_iterable(): prefetch must be a positive int, got {prefetch!r}")
    if aiterable is None:
        raise NoneElementError("from_async_iterable(): the async iterable is None (rule 2.13)")
    if not hasattr(aiterable, "__aiter__"):
        raise TypeError(
            f"from_async_iterable(): expected an async iterable (with __aiter__), got {type(aiterable).__name__}"
        )
    if loop is not None and not isinstance(loop, asyncio.AbstractEventLoop):
        raise TypeError(
            f"from_async_iterable(): loop must be an asyncio event loop, got {type(loop).__name__}"
        )
    return _FromAsyncIterable(aiterable, loop, "from_async_iterable", prefetch)


@final
class _CoroutineIterable(Generic[T]):
    """An async iterable of one element: the result of ``fn()`` (called per iteration)."""

    __slots__ = ("_fn",)

    def __init__(self, fn: Callable[[], Awaitable[T]]) -> None:
        self._fn = fn

    def __aiter__(self) -> AsyncGenerator[T, None]:
        return self._run()

    async def _run(self) -> AsyncGenerator[T, None]:
        yield await self._fn()

    def __repr__(self) -> str:
        return repr(self._fn)


def from_coroutine(fn: Callable[[], Awaitable[T]]) -> Flowable[T]:
    """``Flowable.from_coroutine`` as a function: see :meth:`Flowable.from_coroutine`.

    Example::

        async def fetch(): return 42
        aio.from_coroutine(fetch).blocking_first()     # 42, awaited on the background loop

    Backpressure: ``fn()`` is called and awaited only at the first ``request``.
    Scheduler: as :func:`from_async_iterable` (without a ``loop`` argument).
    """
    if fn is None:
        raise NoneElementError("from_coroutine(): fn is None (rule 2.13)")
    if not callable(fn):
        raise TypeError(
            f"from_coroutine(): fn must be a callable returning an awaitable, got {type(fn).__name__}"
        )
    return _FromAsyncIterable(_CoroutineIterable(fn), None, "from_coroutine")
