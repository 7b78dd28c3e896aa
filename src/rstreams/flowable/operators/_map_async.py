"""``map_async`` and ``flat_map_async``: coroutines as operators, with backpressure.

``map_async(async_fn, max_concurrency=k, ordered=True, prefetch=k)``
    Each upstream element becomes a task ``async_fn(x)`` on one event loop (the subscribing
    thread's running loop, else the background loop thread ``rstreams-aio-loop``, and then the
    upstream is subscribed and requested on an ``io()`` worker: the drain replenishes from the
    loop thread, and a synchronous upstream's callbacks must not run on a loop nobody asked for,
    DESIGN 3). At most ``k`` tasks run at once; the drain hands each new worker its element. The
    upstream is asked for a window of ``k + prefetch`` elements and replenished in batches
    (``prefetch - prefetch // 4``) as results leave towards the downstream, so elements waiting to
    start, running, or finished but not yet requested never exceed that window. ``ordered=True``
    emits in input order (the deque of slots is the reorder buffer: only a finished head is
    emitted); ``ordered=False`` emits results in the order they finish.

    Queue-drain pinned to the loop thread: on the loop thread every event (a finished task, an
    element or request from a synchronous upstream or downstream) bumps ``_wip`` and whoever
    moves it from 0 runs the drain at once, so a finished result is emitted before the loop runs
    anything else (in particular before a later coroutine's error). Another thread (an upstream
    element, a request, cancel) never takes ``_wip``: it hands over to the loop with one
    ``call_soon_threadsafe`` per burst (``_hop``; race: many signals vs one pending hand-over: the
    hand-over clears the flag before it drains, so a signal either sees the flag set and is
    drained by that hand-over, or schedules a new one). Tasks may only be created, inspected and
    cancelled on their loop, and rule 1.3 wants one emitter, so task bookkeeping is touched by
    the loop thread only and needs no lock. ``_wip`` starts at 1 and is released after
    ``on_subscribe`` returns, so nothing is emitted while the downstream is still inside
    ``on_subscribe``.

    Errors are eager: the first failed task (or upstream error, or rule 3.9 bad request) cancels
    the upstream and every running task, and is signalled with its traceback; later errors go to
    the undeliverable hook.

``flat_map_async(async_fn, max_concurrency=k, prefetch=p)``
    ``flat_map`` over ``from_async_iterable(async_fn(x))`` on the loop chosen at subscribe time:
    at most ``k`` inner async iterables at once, each pulled one ``__anext__`` at a time under a
    prefetch of ``p``.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import types
from asyncio import AbstractEventLoop, Task
from asyncio.events import _get_running_loop
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterable, Awaitable, Callable
from typing import Any, Final, Generic, TypeVar, cast, final

from ..._internal import plugins
from ..._internal.arguments import positive_int
from ..._internal.atomics import AtomicInt
from ..._internal.drain import enter, leave
from ..._internal.event_loops import LoopClosedError, resolve_loop
from ..._internal.requests import MAX_DEMAND, add_request, produced, validate_request
from ..._internal.subscriptions import CANCELLED
from ..._spec import Publisher, Subscriber, Subscription
from .._base import accept_upstream, none_result_error
from .._flowable import Flowable
from ..sources._async import _FromAsyncIterable

__all__ = ["map_async", "flat_map_async", "do_on_next_async"]

T = TypeVar("T")
R = TypeVar("R")
_MAX: Final = MAX_DEMAND


_PENDING: Final = object()
_CoroutineType: Final = types.CoroutineType


def _name_of(fn: object) -> str:
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__)


def not_awaitable_error(op: str, fn: object, result: object) -> TypeError:
    """The error of an async operator whose function returned something that cannot be awaited."""
    return TypeError(
        f"{op}(): {_name_of(fn)} returned {type(result).__name__}, not an awaitable: {op} needs an "
        "async function (async def) or a callable returning an awaitable; for a plain function use "
        "map()"
    )


def require_async_function(op: str, fn: object) -> None:
    """At assembly: refuse a function that is certainly not async (``map_async(int)``,
    ``map_async(str.upper)``, a generator or async generator function); a plain ``def`` or a
    lambda may return an awaitable, so it is checked at its first element instead."""
    if inspect.iscoroutinefunction(fn):
        return
    f: Any = fn
    if inspect.isasyncgenfunction(f):
        raise TypeError(
            f"{op}(): {_name_of(fn)} is an async generator function: it returns an async iterable, "
            "not an awaitable; use flat_map_async to emit what it yields"
        )
    sync = isinstance(f, type) and not hasattr(f, "__await__")  # a class whose instances are not awaitable
    if isinstance(f, types.BuiltinFunctionType | types.MethodDescriptorType):
        # len, print, str.upper: Python's own builtins never return awaitables (a C or Cython
        # extension's may, so only the builtins module and the builtin types are refused here)
        owner = getattr(f, "__objclass__", None) or getattr(f, "__self__", None)
        if owner is None or isinstance(owner, types.ModuleType):
            sync = sync or getattr(f, "__module__", None) == "builtins"  # len, print (not math.sqrt)
        else:
            cls = owner if isinstance(owner, type) else type(owner)
            sync = sync or cls.__module__ == "builtins"  # str.upper, "abc".upper, [].append
    code = getattr(getattr(f, "__func__", f), "__code__", None)
    if (
        code is not None
        and inspect.isgeneratorfunction(f)
        and not code.co_flags & inspect.CO_ITERABLE_COROUTINE
    ):
        sync = True  # a generator is not awaitable (unless made with @types.coroutine)
    if sync:
        raise TypeError(
            f"{op}(): {_name_of(fn)} is not an async function: {op} needs an async function "
            "(async def) or a callable returning an awaitable; for a plain function use map()"
        )


@final
class _MapAsyncSubscriber(Generic[T, R]):
    _rs_no_wrap = True
    __slots__ = (
        "_downstream",
        "_fn",
        "_k",
        "_ordered",
        "_window",
        "_limit",
        "_loop",
        "_upstream",
        "_inbox",
        "_out",
        "_workers",
        "_nworkers",
        "_starting",
        "_requested",
        "_wip",
        "_hop",
        "_error",
        "_done",
        "_cancelled",
        "_consumed",
        "_context",
        "__weakref__",
    )

    def __init__(
        self,
        downstream: Subscriber[R],
        fn: Callable[[T], Awaitable[R]],
        k: int,
        ordered: bool,
        prefetch: int,
        loop: AbstractEventLoop,
    ) -> None:
        self._downstream: Subscriber[R] | None = downstream
        self._fn = fn
        self._k = k
        self._ordered = ordered
        self._window = k + prefetch
        self._limit = max(1, prefetch - (prefetch >> 2))
        self._loop = loop
        self._upstream: Subscription = CANCELLED
        self._inbox: deque[T] = deque()  # upstream (any thread) -> workers (loop thread)
        # ordered: one slot per started element, in input order (the reorder buffer);
        # unordered: finished results in completion order. Loop thread only.
        self._out: deque[Any] = deque()
        self._workers: set[Task[None]] = set()  # loop thread only
        self._nworkers = 0  # loop thread only
        # tasks created but not started yet (loop thread only). While one is pending, a worker
        # that finished does not take the next element itself: it would call async_fn on it
        # before the pending task calls it on an earlier one. So async_fn is called in input order.
        self._starting = 0
        self._requested = AtomicInt(0)
        # rule 1.3: one drain at a time on the loop (re-entrant signals there just count); held (1)
        # during on_subscribe, whose release may come from another thread
        self._wip = AtomicInt(1)
        self._hop = AtomicInt(0)  # race: signals from other threads vs one pending hand-over
        self._error: BaseException | None = None
        self._done = False
        self._cancelled = False
        self._consumed = 0  # loop thread only (inside the drain)
        self._context = contextvars.copy_context()  # captured at subscribe time (DESIGN.md 3)

    # -- upstream -----------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if not accept_upstream(self, subscription, self._window):
            return
        if self._wip.add_and_get(-1) != 0:  # signals arrived while we held the drain
            self._run_drain()

    def on_next(self, item: T) -> None:
        if self._done:
            return
        self._inbox.append(item)
        self._drain()

    def on_error(self, error: BaseException) -> None:
        if self._done:
            plugins.on_error(error, "map_async: on_error after termination")
            return
        self._done = True
        self._fail(error)

    def on_complete(self) -> None:
        self._done = True
        self._drain()

    # -- downstream ---------------------------------------------------------------------------
    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                self._upstream.cancel()
                self._fail(err)  # rule 3.9, delivered by the drain
                return
        add_request(self._requested, n)
        self._drain()

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        self._upstream.cancel()
        self._drain()  # the drain (on the loop) cancels the running coroutines
        self._downstream = None  # rule 3.13

    def _fail(self, error: BaseException) -> None:
        if self._error is None and not self._cancelled:
            self._error = error
        elif not isinstance(error, asyncio.CancelledError):
            plugins.on_error(error, "map_async: error after termination")
        self._drain()

    # -- workers (loop thread) ----------------------------------------------------------------
    async def _work(self, item: T, slot: list[Any] | None) -> None:
        """One of at most k workers, started with the element the drain took for it (so a worker
        that has not run yet is never mistaken for one that will take a waiting element). When its
        coroutine finishes it takes the next waiting element at once (no extra loop iteration),
        unless a newer task has not started yet (see ``_starting``)."""
        self._starting -= 1
        inbox = self._inbox
        out = self._out
        fn = self._fn
        ordered = self._ordered
        try:
            while True:
                try:
                    aw = fn(item)
                    if type(aw) is not _CoroutineType and not hasattr(aw, "__await__"):
                        raise not_awaitable_error("map_async", fn, aw)  # a sync function: say so at once
                    v = await aw
                except asyncio.CancelledError:
                    if self._cancelled or self._error is not None:
                        raise  # our own cancel (downstream cancel or another coroutine failed)
                    self._fail(asyncio.CancelledError("map_async(): a coroutine was cancelled"))
                    raise
                except Exception as ex:  # the coroutine's error, with its traceback
                    self._fail(ex)
                    return
                if v is None:
                    self._fail(none_result_error("map_async", "the coroutine"))
                    return
                if slot is not None:
                    slot[0] = v
                else:
                    out.append(v)
                self._drain()
                if not inbox or self._starting or self._cancelled or self._error is not None:
                    return  # (a new task holds an earlier element: leave the next one to the drain)
                item = inbox.popleft()
                if ordered:
                    slot = [_PENDING]
                    out.append(slot)  # the reorder slot, taken in input order (loop thread)
        finally:
            self._nworkers -= 1
            self._drain()

    def _on_worker_done(self, task: Task[None]) -> None:
        self._workers.discard(task)

    # -- the drain (loop thread) --------------------------------------------------------------
    def _drain(self) -> None:
        if _get_running_loop() is self._loop:
            if enter(self._wip):  # rule 1.3: one drain at a time
                self._drain_loop()
            return
        hop = self._hop  # race: many signals from other threads vs one pending hand-over
        if hop.get() == 0 and hop.compare_and_set(0, 1):
            self._call_on_loop(self._hop_run)

    def _hop_run(self) -> None:
        """On the loop: clear the hand-over flag *before* draining (a signal after the clear
        schedules a new hand-over; one before it is seen by this drain)."""
        self._hop.set(0)
        self._drain()

    def _run_drain(self) -> None:
        """Run the drain whose ``_wip`` the caller owns (the release after ``on_subscribe``)."""
        if _get_running_loop() is self._loop:
            self._drain_loop()
        else:
            self._call_on_loop(self._drain_loop)

    def _call_on_loop(self, fn: Callable[[], None]) -> None:
        loop = self._loop
        try:
            loop.call_soon_threadsafe(fn)  # once per burst
        except RuntimeError:  # the loop is closed: fail the stream from here (nothing else runs)
            self._upstream.cancel()
            self._cancelled = True
            d = self._downstream
            self._downstream = None
            if d is not None:
                d.on_error(LoopClosedError(f"map_async(): the event loop {loop!r} is closed"))

    def _drain_loop(self) -> None:
        missed = 1
        wip = self._wip
        requested = self._requested
        inbox = self._inbox
        out = self._out
        ordered = self._ordered
        k = self._k
        loop = self._loop
        while True:
            if self._cancelled:
                self._cleanup()
                return
            d = self._downstream
            if d is None:
                self._cleanup()
                return
            err = self._error
            if err is not None:
                self._terminate(d, err)
                return
            # 1. emit finished results up to demand
            r = requested.get()
            e = 0
            while e != r and out:
                if ordered:
                    v = out[0][0]
                    if v is _PENDING:
                        break  # the head is still running: the reorder buffer waits
                    out.popleft()
                else:
                    v = out.popleft()
                d.on_next(v)
                e += 1
                if self._cancelled:
                    self._cleanup()
                    return
            if e:
                if r < _MAX:
                    produced(requested, e)  # published once per batch
                c = self._consumed + e
                if c >= self._limit and not self._done:
                    self._consumed = 0
                    self._upstream.request(c)  # replenish the window in batches
                else:
                    self._consumed = c
            # 2. start a worker per waiting element while fewer than k run; each worker is handed
            # its element here, so running workers never hide waiting elements from the count
            n = self._nworkers
            while n < k and inbox:
                item = inbox.popleft()
                slot: list[Any] | None = None
                if ordered:
                    slot = [_PENDING]
                    out.append(slot)  # the reorder slot, in input order
                self._nworkers = n = n + 1
                self._starting += 1
                t = loop.create_task(self._work(item, slot), context=self._context.copy())
                self._workers.add(t)
                t.add_done_callback(self._on_worker_done)
            if self._done and n == 0 and not inbox and not out and self._error is None:
                self._terminate(d, None)
                return
            missed = leave(wip, missed)
            if missed == 0:
                return

    def _cleanup(self) -> None:
        self._inbox.clear()
        self._out.clear()
        workers = self._workers
        self._workers = set()
        me = asyncio.current_task()
        for t in workers:
            if t is not me:
                t.cancel()

    def _terminate(self, d: Subscriber[R], error: BaseException | None) -> None:
        self._cancelled = True
        self._downstream = None
        if not self._done:  # rule 2.4: a terminated upstream is not cancelled after the fact
            self._upstream.cancel()
        self._cleanup()
        if error is None:
            d.on_complete()
        else:
            d.on_error(error)


@final
class _MapAsyncFlowable(Flowable[R]):
    __slots__ = ("_source", "_fn", "_k", "_ordered", "_prefetch")

    def __init__(
        self, source: Publisher[T], fn: Callable[[T], Awaitable[R]], k: int, ordered: bool, prefetch: int
    ) -> None:
        self._source = source
        self._fn = fn
        self._k = k
        self._ordered = ordered
        self._prefetch = prefetch

    def _subscribe_actual(self, subscriber: Subscriber[R]) -> None:
        loop, source = _loop_and_source(self._source)
        source.subscribe(
            _MapAsyncSubscriber(subscriber, self._fn, self._k, self._ordered, self._prefetch, loop)
        )


def _loop_and_source(source: Publisher[T]) -> tuple[AbstractEventLoop, Publisher[T]]:
    """The loop for the coroutines, and the upstream to subscribe to. The operator requests its
    upstream from the loop thread (its drain replenishes there), so a synchronous upstream would
    run its user callbacks (``map``, ``filter``...) on that loop. On the subscriber's own running
    loop that is its choice (as ``async for`` is); the shared background loop was never asked
    for (DESIGN 3), so there the upstream is subscribed and requested on an io worker instead."""
    running = _get_running_loop()
    if running is not None:
        return running, source
    from ... import schedulers

    return resolve_loop(None), Flowable.from_publisher(source).subscribe_on(schedulers.io())


def map_async(
    source: Publisher[T],
    async_fn: Callable[[T], Awaitable[R]],
    max_concurrency: int = 16,
    ordered: bool = True,
    prefetch: int | None = None,
) -> Flowable[R]:
    """``source.map_async(async_fn, ...)`` as a function: see :meth:`Flowable.map_async`.

    Example::

        async def upper(s):
            await asyncio.sleep(0.01)
            return s.upper()
        aio.map_async(Flowable.just("a", "b"), upper, max_concurrency=2).to_list().blocking_first()
        # ['A', 'B']

    Backpressure: at most ``max_concurrency + prefetch`` elements requested ahead of the results
    emitted; results wait for downstream demand.
    Scheduler: the coroutines run on the subscribing thread's running loop, else on the
    background loop thread ``rstreams-aio-loop``; results are emitted on that loop's thread.
    """
    if not callable(async_fn):
        raise TypeError("map_async(): async_fn must be callable (element -> awaitable)")
    require_async_function("map_async", async_fn)
    positive_int("map_async", "max_concurrency", max_concurrency)
    if prefetch is None:
        prefetch = max_concurrency
    positive_int("map_async", "prefetch", prefetch)
    return _MapAsyncFlowable(source, async_fn, max_concurrency, bool(ordered), prefetch)


# ---------------------------------------------------------------------------------------------
# flat_map_async


@final
class _AwaitedIterable(Generic[R]):
    """An awaitable that resolves to an (async) iterable, seen as an async iterable."""

    __slots__ = ("_aw",)

    def __init__(self, aw: Awaitable[Any]) -> None:
        self._aw = aw

    def __aiter__(self) -> AsyncGenerator[R, None]:
        return self._run()

    async def _run(self) -> AsyncGenerator[R, None]:
        src = await self._aw
        if hasattr(src, "__aiter__"):
            async for x in src:
                yield x
        else:
            for x in src:
                yield x


@final
class _FlatMapAsyncFlowable(Flowable[R]):
    __slots__ = ("_source", "_fn", "_k", "_prefetch")

    def __init__(
        self, source: Flowable[T], fn: Callable[[T], AsyncIterable[R]], k: int, prefetch: int
    ) -> None:
        self._source = source
        self._fn = fn
        self._k = k
        self._prefetch = prefetch

    def _subscribe_actual(self, subscriber: Subscriber[R]) -> None:
        from ._flat_map import flat_map

        loop, source = _loop_and_source(self._source)
        fn = self._fn

        def mapper(x: Any) -> Any:
            res: Any = fn(x)
            if res is None:
                return None
            if not hasattr(res, "__aiter__"):
                if not hasattr(res, "__await__"):
                    raise TypeError(
                        f"flat_map_async(): async_fn must return an async iterable or an awaitable, "
                        f"got {type(res).__name__}"
                    )
                res = _AwaitedIterable(res)
            return _FromAsyncIterable(res, loop, "flat_map_async")

        flat_map(cast("Flowable[Any]", source), mapper, self._k, self._prefetch).subscribe(subscriber)


def flat_map_async(
    source: Flowable[T],
    async_fn: Callable[[T], AsyncIterable[R]],
    max_concurrency: int = 16,
    prefetch: int = 32,
) -> Flowable[R]:
    """``source.flat_map_async(async_fn, ...)`` as a function: see :meth:`Flowable.flat_map_async`.

    Example::

        async def pages(user):
            for p in range(2):
                yield f"{user}-{p}"
        sorted(aio.flat_map_async(Flowable.just("a", "b"), pages).blocking_iterable())
        # ['a-0', 'a-1', 'b-0', 'b-1']

    Backpressure: ``max_concurrency`` upstream elements ahead, then one per finished inner; each
    inner is prefetched with ``prefetch`` elements, replenished at 75%.
    Scheduler: as :func:`map_async`.
    """
    if not callable(async_fn):
        raise TypeError("flat_map_async(): async_fn must be callable (element -> async iterable)")
    positive_int("flat_map_async", "max_concurrency", max_concurrency)
    positive_int("flat_map_async", "prefetch", prefetch)
    return _FlatMapAsyncFlowable(source, async_fn, max_concurrency, prefetch)


def do_on_next_async(source: Publisher[T], async_fn: Callable[[T], Awaitable[Any]]) -> Flowable[T]:
    """``map_async`` with one coroutine at a time that passes each element through.

    Example::

        async def log(x): print("saw", x)
        aio.do_on_next_async(Flowable.range(0, 3), log).test().await_done(1).assert_result(0, 1, 2)

    Backpressure: as :func:`map_async` with ``max_concurrency=1``.
    Scheduler: as :func:`map_async`.
    """
    if not callable(async_fn):
        raise TypeError("do_on_next_async(): async_fn must be callable (element -> awaitable)")
    require_async_function("do_on_next_async", async_fn)

    async def tap(x: T) -> T:
        aw = async_fn(x)
        if type(aw) is not _CoroutineType and not hasattr(aw, "__await__"):
            raise TypeError(
                f"do_on_next_async(): {_name_of(async_fn)} returned {type(aw).__name__}, not an awaitable: "
                "do_on_next_async needs an async function (async def); for a plain function use do_on_next()"
            )
        await aw
        return x

    return _MapAsyncFlowable(source, tap, 1, True, 1)
