"""Consuming a Flowable from asyncio: ``async for x in flowable`` and ``await flowable``.

``async for`` (:class:`FlowableAsyncIterator`)
    A prefetching subscriber (:class:`AsyncIteratorSubscriber`) requests ``prefetch`` elements,
    then replenishes in batches of ``limit = prefetch - prefetch // 4`` as the consumer takes them
    (seed 004, "replenishing"), so at most ``prefetch`` elements are ever buffered. The producer
    (any thread) appends to a deque; the consumer is an async generator that pops a whole chunk
    with a plain ``for`` loop and ``yield``s, so an element already buffered costs one generator
    resume and no Future.

    Fast path: when the upstream emits on the requesting thread (a synchronous, fused chain such as
    ``range(...).map(f).filter(p)``), the consumer's ``request`` from the loop thread fills the
    deque synchronously. There is no thread hop, no Future and no ``call_soon_threadsafe`` at all.

    Slow path (producer on another thread): the consumer, finding the deque empty, creates a Future,
    raises ``waiting`` and *re-checks the deque* before it awaits. The producer appends and *then*
    reads ``waiting``. Race: producer append vs consumer going to sleep (a lost wake-up would hang
    the consumer). Each side writes before it reads the other's write, and both writes go through
    the deque's / flag's own critical section, so at least one side sees the other: either the
    consumer sees the element or the producer sees ``waiting``. A producer that sees ``waiting``
    wakes the consumer once per burst: ``_wake`` (an AtomicInt) lets one signal through per wake-up
    (race: many on_next calls vs one pending ``call_soon_threadsafe``); the wake-up callback clears
    ``waiting`` and ``_wake`` on the loop before it resolves the Future. A spurious wake-up is
    harmless: the consumer loops and re-checks.

    A fused chain never suspends (exactly like a hand-written async generator over a synchronous
    iterable): its elements are computed inline, between the consumer's loop iterations.

    Leaving the loop cancels the subscription: ``break`` or an exception in the ``async for`` body
    drops the iterator, whose ``__del__`` closes the generator synchronously (so the upstream is
    cancelled before the next statement runs). An ``async for`` over an iterator the caller still
    holds (``it = f.to_async_iterator(); async for x in it``) iterates a handle of its own
    (``__aiter__``), dropped in the same way. Task cancellation and ``asyncio.timeout`` throw
    ``CancelledError`` into the generator while it awaits, and its ``finally`` cancels (rule 3.13:
    the subscription drops the buffer and the upstream). A terminated stream is never cancelled
    afterwards (rule 2.4: ``on_complete``/``on_error`` mark the subscription cancelled).

    Rule 2.13: ``None`` as an element, error or Subscription raises TypeError to the caller and,
    since the stream is then broken, cancels it and ends the iteration (or the await) with a
    TypeError, rather than handing out ``None`` or waiting forever.

``await flowable``
    Subscribes with unbounded demand and resolves to the last element (``NoSuchElementError`` when
    the stream is empty; the stream's error is raised with its traceback). A synchronous upstream
    completes inside ``subscribe`` and the await does not suspend at all. Cancelling the awaiting
    task cancels the subscription.

``asyncio.create_task(flowable)`` / ``asyncio.run(flowable)``
    ``create_task`` and ``run`` take coroutines only (``asyncio.iscoroutine``: an object with
    ``send``/``throw``/``close``/``__await__``), so a Flowable also speaks the coroutine protocol:
    the Task drives the object it was given with ``send``/``throw``. A Flowable is reusable (each
    ``await`` subscribes anew), so the state of one run cannot live on it: it lives with the Task
    that drives it (``_RUNS``, keyed by the Task, which ``asyncio.current_task()`` names inside
    every step). One Flowable may thus be run by several Tasks at once, each with its own
    subscription. Race: Tasks on several loops (threads) add and remove entries at once; the
    map is touched only under ``_RUNS_LOCK``, never while user code runs.

Default prefetch of ``async for`` over an asyncio source
    ``async for`` asks ``prefetch`` elements ahead (128, as RxJava's buffer size) so a synchronous
    or threaded upstream is drained in batches. A chain rooted in ``from_async_iterable`` (the
    root found by following ``_source`` up through single-source operators) uses that source's
    ``prefetch`` instead (16 by default): each element of an async source is an ``__anext__``
    (I/O, usually), so a small window already overlaps the producer with the consumer, while the
    generator never runs far ahead of what is used.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from asyncio import AbstractEventLoop, Future
from asyncio.events import _get_running_loop
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Generator
from typing import TYPE_CHECKING, Any, Final, Generic, NoReturn, TypeVar, final

from ..._internal import plugins
from ..._internal.arguments import positive_int
from ..._internal.atomics import AtomicInt, AtomicRef
from ..._internal.requests import DEFAULT_PREFETCH, MAX_DEMAND
from ..._internal.subscriptions import CANCELLED, cancel, set_once
from ..._spec import Publisher, Subscription, null_element_message
from ...errors import NoneElementError, NoSuchElementError

if TYPE_CHECKING:
    from .._fused import Fusion

__all__ = ["FlowableAsyncIterator", "AsyncIteratorSubscriber", "to_async_iterator", "await_last"]

T = TypeVar("T")
_MAX: Final = MAX_DEMAND


@final
class AsyncIteratorSubscriber(Generic[T]):
    """The Subscriber half of the async iterator: a bounded buffer filled from any thread.

    It is a rule-abiding Subscriber on its own (the TCK checks it): it requests ``prefetch`` in
    ``on_subscribe`` and more only as the consumer (:func:`_consume`) takes elements.

    Example::

        async def main():
            sub = aio.AsyncIteratorSubscriber(prefetch=4)   # requests 4, then 3 per 3 consumed
            Flowable.range(0, 10).subscribe(sub)
            return [x async for x in aio.FlowableAsyncIterator(None, subscriber=sub)]
        asyncio.run(main())                                 # [0, 1, ..., 9]
    """

    _rs_no_wrap = True
    __slots__ = (
        "queue",
        "upstream",
        "done",
        "error",
        "waiting",
        "waiter",
        "_wake",
        "loop",
        "prefetch",
        "limit",
        "closed",
        "__weakref__",
    )

    def __init__(self, prefetch: int) -> None:
        positive_int("to_async_iterator", "prefetch", prefetch)  # rule 3.9: it never requests a bad amount itself
        self.queue: deque[T] = deque()
        self.upstream: AtomicRef[Subscription | None] = AtomicRef(None)  # race: cancel vs on_subscribe
        self.done = False
        self.error: BaseException | None = None
        self.waiting = False
        self.waiter: Future[None] | None = None
        self._wake = AtomicInt(0)  # race: many producer signals vs one pending wake-up per burst
        self.loop: AbstractEventLoop | None = None
        self.prefetch = prefetch
        self.limit = prefetch - (prefetch >> 2)
        self.closed = False  # cancel() was called (any thread): the consumer stops at its next element

    # -- Subscriber (any thread, serial) ------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            self._none_argument("on_subscribe")
        if set_once(self.upstream, subscription, "async iterator"):  # rule 2.5
            subscription.request(self.prefetch)

    def on_next(self, item: T) -> None:
        if item is None:
            self._none_argument("on_next")
        if self.done:
            return  # cancelled (or a rule 1.7 signal): the consumer's buffer is gone (rule 3.13)
        self.queue.append(item)
        if self.waiting:  # read after the append: see the module docstring (lost wake-up race)
            self._signal()

    def on_next_batch(self, items: list[T]) -> None:
        """Library-internal batch hand-off (a boundary's batch): one ``extend``, at most one wake-up."""
        if self.done:
            return  # cancelled (or a rule 1.7 signal): the consumer's buffer is gone (rule 3.13)
        self.queue.extend(items)
        if self.waiting:  # read after the extend, as on_next's append (lost wake-up race)
            self._signal()

    def _none_argument(self, where: str) -> NoReturn:
        """Rule 2.13: raise TypeError to the caller; the stream is broken, so the upstream is
        cancelled and the consumer gets the TypeError too (instead of waiting forever)."""
        cancel(self.upstream)
        if not self.done:
            self.error = NoneElementError(null_element_message(where, "2.13"))
            self.done = True  # after error: the consumer reads done first
            if self.waiting:
                self._signal()
        raise NoneElementError(null_element_message(where, "2.13"))

    def on_error(self, error: BaseException) -> None:
        if error is None:
            self._none_argument("on_error")
        if self.done:
            plugins.on_error(error, "async iterator: on_error after termination")
            return
        self.upstream.set(CANCELLED)  # rule 2.4: terminated, so the consumer's final cancel is a no-op
        self.error = error
        self.done = True
        if self.waiting:
            self._signal()

    def on_complete(self) -> None:
        self.upstream.set(CANCELLED)  # rule 2.4: no cancel reaches a completed upstream
        self.done = True
        if self.waiting:
            self._signal()

    # -- wake-up ------------------------------------------------------------------------------
    def _signal(self) -> None:
        wake = self._wake
        if wake.get() != 0 or not wake.compare_and_set(0, 1):
            return  # a wake-up is already on its way
        loop = self.loop
        if loop is None:
            return
        if _get_running_loop() is loop:
            self.wake_now()
            return
        try:
            loop.call_soon_threadsafe(self.wake_now)
        except RuntimeError:  # the loop is closed: nobody will ever consume
            self.cancel()

    def wake_now(self) -> None:
        """On the loop thread: clear the flags, then resolve the consumer's Future."""
        self.waiting = False
        self._wake.set(0)
        w = self.waiter
        self.waiter = None
        if w is not None and not w.done():
            w.set_result(None)

    def cancel(self) -> None:
        """Cancel the upstream (rule 3.13: the reference becomes CANCELLED) and end the iteration:
        a consumer waiting right now (cancelled from another thread) wakes up and stops."""
        self.closed = True
        cancel(self.upstream)
        # The buffer is the consumer's: it is cleared in the consumer's finally, not here (a
        # cancel from another thread must not empty the deque under a consumer mid-chunk).
        if not self.done:
            self.done = True
            if self.waiting:
                self._signal()

    @property
    def is_cancelled(self) -> bool:
        """True once :meth:`cancel` was called (not merely terminated)."""
        return self.closed


def _fusion_of(source: object) -> Fusion[Any] | None:
    fz = getattr(source, "_fused", None)
    return fz() if fz is not None else None


async def _consume_fused(fusion: Fusion[T]) -> AsyncGenerator[T, None]:
    """Fused fast path: a synchronous chain is one builtin iterator; pull it as the loop asks."""
    for x in fusion.factory():
        if x is None:
            raise fusion.none_error()
        yield x


async def _consume(sub: AsyncIteratorSubscriber[T], source: Publisher[T] | None) -> AsyncGenerator[T, None]:
    if source is not None:
        fusion = _fusion_of(source)
        if fusion is not None:
            # Fused fast path: no subscription, no buffer. Pulling a builtin iterator one element
            # per __anext__ is exactly "request(1) per element" with nothing to account, and
            # closing the generator drops the iterator (the fused equivalent of cancel).
            for x in fusion.factory():
                if x is None:
                    raise fusion.none_error()
                if sub.done:  # close() from any thread
                    return
                yield x
            return
    loop = asyncio.get_running_loop()
    sub.loop = loop
    if source is not None:
        source.subscribe(sub)
    q = sub.queue
    popleft = q.popleft
    limit = sub.limit
    consumed = 0
    try:
        while True:
            n = len(q)
            if n:
                room = limit - consumed
                if n > room:
                    n = room
                consumed += n
                for _ in range(n):
                    if sub.closed:  # close()/aclose(), any thread: nothing more after the cancel
                        return
                    yield popleft()
                if consumed >= limit:
                    consumed = 0
                    s = sub.upstream.get()
                    if s is not None:
                        s.request(limit)  # replenish in batches; a sync upstream refills q right here
                continue
            if sub.done:
                if q:
                    continue
                e = sub.error
                if e is not None:
                    sub.error = None
                    raise e
                return
            fut: Future[None] = loop.create_future()
            sub.waiter = fut
            sub.waiting = True
            if q or sub.done:  # re-check after publishing `waiting` (race: lost wake-up)
                sub.waiting = False
                sub.waiter = None
                continue
            await fut
    finally:
        sub.cancel()
        q.clear()  # rule 3.13: drop buffered elements


@final
class FlowableAsyncIterator(Generic[T]):
    """The async iterator over a Flowable (``flowable.to_async_iterator(prefetch)``).

    It subscribes on the first ``__anext__`` (on the loop that awaits it), so it may be created in
    one coroutine and consumed in another task. ``aclose()`` (or dropping it) cancels the stream.

    Example::

        async def main():
            it = Flowable.range(0, 10).to_async_iterator(prefetch=4)
            first = await anext(it)                 # subscribes here
            await it.aclose()                       # cancels the upstream
            return first                            # 0
    """

    __slots__ = ("_agen", "_next", "_sub")

    def __init__(
        self,
        source: Publisher[T] | None,
        prefetch: int = DEFAULT_PREFETCH,
        subscriber: AsyncIteratorSubscriber[T] | None = None,
    ) -> None:
        sub = subscriber if subscriber is not None else AsyncIteratorSubscriber(prefetch)
        self._sub = sub
        self._agen = _consume(sub, source)
        self._next = self._agen.__anext__

    def __aiter__(self) -> AsyncIterator[T]:
        """What an ``async for`` holds: a handle of its own, so that leaving the loop (``break``,
        ``return``, an exception) cancels even while the caller still holds this iterator (the
        same as ``blocking_iterable``); ``__anext__`` on the iterator itself works as usual."""
        return _LoopHandle(self)

    def __anext__(self) -> Any:
        return self._next()

    async def aclose(self) -> None:
        """Cancel the subscription and close the iterator (also while another task is iterating:
        that task's ``async for`` then ends without further elements)."""
        self._sub.cancel()  # first: a consumer waiting in another task wakes up and ends
        try:
            await self._agen.aclose()
        except RuntimeError as e:
            if "already running" not in str(e):
                raise  # pragma: no cover - our finally never raises
            # driven by another task right now: it sees the cancel and finishes by itself

    def close(self) -> None:
        """Cancel the subscription now, from any thread: the upstream is cancelled at once and the
        iteration ends at the consumer's next element (buffered elements are dropped, rule 3.13;
        the generator itself is left to its own task: it is never driven from a foreign thread)."""
        self._sub.cancel()

    @property
    def subscriber(self) -> AsyncIteratorSubscriber[T]:
        return self._sub

    def _close_now(self) -> None:
        agen: Any = self._agen
        if agen.ag_frame is None or agen.ag_running:
            return
        aw = agen.aclose()
        try:
            aw.send(None)
        except StopIteration:
            return
        except RuntimeError:
            return  # being awaited by a task right now: that task will finish or be cancelled
        except BaseException as e:  # pragma: no cover - the finally block does not raise
            plugins.on_error(e, "async iterator: closing failed")
            return
        aw.close()  # pragma: no cover - our finally never awaits

    def __del__(self) -> None:
        try:
            self._close_now()
        except Exception:  # pragma: no cover - never raise from __del__
            pass


@final
class _LoopHandle(Generic[T]):
    """The iterator an ``async for`` over a :class:`FlowableAsyncIterator` holds, and only it: the
    loop drops it when it ends, which closes the iteration (its ``__del__``; a loop that ran to
    the end finds nothing left to cancel)."""

    __slots__ = ("_it", "_next")

    def __init__(self, it: FlowableAsyncIterator[T]) -> None:
        self._it = it
        self._next = it._next

    def __aiter__(self) -> _LoopHandle[T]:
        return self

    def __anext__(self) -> Any:
        return self._next()

    def __del__(self) -> None:
        try:
            self._it._close_now()
        except Exception:  # pragma: no cover - never raise from __del__
            pass


_MAX_CHAIN: Final = 256  # how far up a chain of operators the async source is looked for


def default_prefetch(source: object) -> int:
    """The default prefetch of an ``async for`` over ``source``: the ``prefetch`` of the
    ``from_async_iterable`` at the root of its chain of single-source operators, else 128."""
    node = source
    for _ in range(_MAX_CHAIN):
        hint = getattr(node, "_async_prefetch", None)
        if type(hint) is int:
            return hint
        node = getattr(node, "_source", None)
        if node is None:
            break
    return DEFAULT_PREFETCH  # a chain not rooted in an async source


def aiter_of(source: Publisher[T]) -> AsyncIterator[T]:
    """``Flowable.__aiter__``: the bare async generator over a fused chain (nothing to cancel, one
    call fewer per element), else a :class:`FlowableAsyncIterator` with the default prefetch."""
    fusion = _fusion_of(source)
    if fusion is not None:
        return _consume_fused(fusion)
    return FlowableAsyncIterator(source, default_prefetch(source))



def to_async_iterator(source: Publisher[T], prefetch: int | None = None) -> FlowableAsyncIterator[T]:
    """``source.to_async_iterator(prefetch)`` as a function: see :meth:`Flowable.to_async_iterator`.

    Example::

        async def main():
            async for x in aio.to_async_iterator(Flowable.range(0, 1000), prefetch=32):
                if x == 10:
                    break                           # cancels the upstream

    Backpressure: requests ``prefetch``, then ``prefetch - prefetch // 4`` at a time as the
    consumer takes elements.
    """
    if prefetch is None:
        prefetch = default_prefetch(source)
    positive_int("to_async_iterator", "prefetch", prefetch)
    return FlowableAsyncIterator(source, prefetch)


# ---------------------------------------------------------------------------------------------
# await flowable


@final
class _AwaitSubscriber(Generic[T]):
    _rs_no_wrap = True
    __slots__ = ("upstream", "last", "loop", "fut", "__weakref__")

    def __init__(self, loop: AbstractEventLoop, fut: Future[T]) -> None:
        self.upstream: AtomicRef[Subscription | None] = AtomicRef(None)  # race: cancel vs on_subscribe
        self.last: T | None = None
        self.loop = loop
        self.fut = fut

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            self._none_argument("on_subscribe")
        if set_once(self.upstream, subscription, "await"):
            subscription.request(_MAX)

    def on_next(self, item: T) -> None:
        if item is None:
            self._none_argument("on_next")
        self.last = item

    def on_next_batch(self, items: list[T]) -> None:
        """Library-internal batch hand-off: only the batch's last element can be the result."""
        if items:
            self.last = items[-1]

    def on_error(self, error: BaseException) -> None:
        if error is None:
            self._none_argument("on_error")
        self._finish(error)

    def _none_argument(self, where: str) -> NoReturn:
        """Rule 2.13: raise TypeError to the caller, cancel the broken stream and fail the await
        with a TypeError too (a None element is never taken for a result)."""
        cancel(self.upstream)
        self._finish(NoneElementError(null_element_message(where, "2.13")))
        raise NoneElementError(null_element_message(where, "2.13"))

    def on_complete(self) -> None:
        self._finish(None)

    def _finish(self, error: BaseException | None) -> None:
        self.upstream.set(CANCELLED)  # terminated: a late cancel is a no-op (rule 3.13)
        loop = self.loop
        if _get_running_loop() is loop:
            self._resolve(error)
            return
        try:
            loop.call_soon_threadsafe(self._resolve, error)
        except RuntimeError:  # the loop is closed: nobody awaits any more
            if error is not None:
                plugins.on_error(error, "await flowable: the event loop is closed")

    def _resolve(self, error: BaseException | None) -> None:
        fut = self.fut
        if fut.done():  # the awaiting task was cancelled
            if error is not None:
                plugins.on_error(error, "await flowable: the awaiting task was cancelled")
            return
        if error is not None:
            fut.set_exception(error)
        elif self.last is None:
            fut.set_exception(NoSuchElementError("await flowable: the stream completed without elements"))
        else:
            fut.set_result(self.last)
        self.last = None

    def cancel(self) -> None:
        cancel(self.upstream)


async def await_last(source: Publisher[T]) -> T:
    """Subscribe to ``source`` and return its last element (see the module docstring).

    Example::

        asyncio.run(aio.await_last(Flowable.range(0, 5)))    # 4, as ``await Flowable.range(0, 5)``
    """
    fusion = _fusion_of(source)
    if fusion is not None:  # fused fast path: run the builtin iterator to its last element
        last: Any = None
        for last in fusion.factory():  # noqa: B007
            if last is None:
                raise fusion.none_error()
        if last is None:
            raise NoSuchElementError("await flowable: the stream completed without elements")
        return last  # type: ignore[no-any-return]
    loop = asyncio.get_running_loop()
    fut: Future[T] = loop.create_future()
    sub: _AwaitSubscriber[T] = _AwaitSubscriber(loop, fut)
    source.subscribe(sub)
    try:
        return await fut
    finally:
        if not fut.done() or fut.cancelled():
            sub.cancel()  # task cancellation / asyncio.timeout -> Reactive Streams cancel


def await_generator(source: Publisher[T]) -> Generator[Any, None, T]:
    """``Flowable.__await__``."""
    return await_last(source).__await__()


# ---------------------------------------------------------------------------------------------
# asyncio.create_task(flowable): the coroutine protocol (see the module docstring)

_RUNS: weakref.WeakKeyDictionary[asyncio.Task[Any], Generator[Any, None, Any]] = weakref.WeakKeyDictionary()
_RUNS_LOCK: Final = threading.Lock()  # race: Tasks on several loops (threads) adding/removing runs


def _driving_task(what: str) -> asyncio.Task[Any]:
    task = asyncio.current_task() if _get_running_loop() is not None else None
    if task is None:
        raise RuntimeError(
            f"Flowable.{what}(): a Flowable runs as a coroutine only when an asyncio Task drives it "
            "(asyncio.create_task(flowable), asyncio.run(flowable), gather); in a coroutine, use "
            "`await flowable`"
        )
    return task


def _end_run(task: asyncio.Task[Any]) -> None:
    with _RUNS_LOCK:
        _RUNS.pop(task, None)


def task_send(source: Publisher[T], value: Any) -> Any:
    """``Flowable.send``: one step of the run that the current Task drives."""
    task = _driving_task("send")
    with _RUNS_LOCK:
        run = _RUNS.get(task)
    if run is None:
        if value is not None:
            raise TypeError("can't send non-None value to a just-started coroutine")
        run = await_generator(source)
        with _RUNS_LOCK:
            _RUNS[task] = run
    try:
        return run.send(value)
    except BaseException:  # StopIteration (the result), the stream's error: the run is over
        _end_run(task)
        raise


def task_throw(source: Publisher[T], typ: Any, val: Any = None, tb: Any = None) -> Any:
    """``Flowable.throw``: throw into the current Task's run (its cancellation, mostly); a run not
    started yet raises the exception at once, as a coroutine that never ran does."""
    exc: BaseException
    if isinstance(typ, BaseException):
        exc = typ
    elif isinstance(val, BaseException):
        exc = val
    else:
        exc = typ() if val is None else typ(val)
    if tb is not None:
        exc = exc.with_traceback(tb)
    task = _driving_task("throw")
    with _RUNS_LOCK:
        run = _RUNS.get(task)
    if run is None:
        raise exc
    try:
        return run.throw(exc)
    except BaseException:
        _end_run(task)
        raise


def task_close(source: Publisher[T]) -> None:
    """``Flowable.close``: close the current Task's run, if any (cancelling its subscription)."""
    if _get_running_loop() is None:
        return
    task = asyncio.current_task()
    if task is None:
        return
    with _RUNS_LOCK:
        run = _RUNS.pop(task, None)
    if run is not None:
        run.close()
