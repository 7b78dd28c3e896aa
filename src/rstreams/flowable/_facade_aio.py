"""Facade methods of Flowable for the aio operators (a mixin of :class:`Flowable`).

Methods here follow the same rules as ``_flowable.py``: thin, calling their implementation in
``operators/_async_iterator.py``, ``operators/_map_async.py`` and ``sources/_async.py`` (the
asyncio bridge lives in the flowable layer; ``rstreams.aio`` re-exports its public names) through
``lazy_function`` (imported on first use, so ``import rstreams`` does not import asyncio), each
with a docstring holding a small example and "Backpressure:"/"Scheduler:" notes.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Coroutine, Generator
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from ._lazy import lazy_function

if TYPE_CHECKING:
    from asyncio import AbstractEventLoop

    from ._flowable import Flowable
    from .operators._async_iterator import FlowableAsyncIterator

# The asyncio bridge, imported on first use (``import rstreams`` does not import asyncio),
# through the facade's one wiring mechanism (``lazy_function``).
if TYPE_CHECKING:
    from .operators._async_iterator import aiter_of as _i_aiter_of
    from .operators._async_iterator import await_generator as _i_await_generator
    from .operators._async_iterator import task_close as _i_task_close
    from .operators._async_iterator import task_send as _i_task_send
    from .operators._async_iterator import task_throw as _i_task_throw
    from .operators._async_iterator import to_async_iterator as _i_to_async_iterator
    from .operators._map_async import do_on_next_async as _i_do_on_next_async
    from .operators._map_async import flat_map_async as _i_flat_map_async
    from .operators._map_async import map_async as _i_map_async
    from .sources._async import from_async_iterable as _i_from_async_iterable
    from .sources._async import from_coroutine as _i_from_coroutine
else:
    _i_aiter_of = lazy_function(".operators._async_iterator", "aiter_of", "_i_aiter_of", globals())
    _i_await_generator = lazy_function(".operators._async_iterator", "await_generator", "_i_await_generator", globals())
    _i_do_on_next_async = lazy_function(".operators._map_async", "do_on_next_async", "_i_do_on_next_async", globals())
    _i_flat_map_async = lazy_function(".operators._map_async", "flat_map_async", "_i_flat_map_async", globals())
    _i_from_async_iterable = lazy_function(".sources._async", "from_async_iterable", "_i_from_async_iterable", globals())
    _i_from_coroutine = lazy_function(".sources._async", "from_coroutine", "_i_from_coroutine", globals())
    _i_map_async = lazy_function(".operators._map_async", "map_async", "_i_map_async", globals())
    _i_task_close = lazy_function(".operators._async_iterator", "task_close", "_i_task_close", globals())
    _i_task_send = lazy_function(".operators._async_iterator", "task_send", "_i_task_send", globals())
    _i_task_throw = lazy_function(".operators._async_iterator", "task_throw", "_i_task_throw", globals())
    _i_to_async_iterator = lazy_function(".operators._async_iterator", "to_async_iterator", "_i_to_async_iterator", globals())

__all__ = ["AsyncioMixin"]

T = TypeVar("T")
R = TypeVar("R")

if TYPE_CHECKING:

    class _CoroutineFace(Coroutine[Any, Any, T]):
        """For type checkers: a Flowable is a coroutine resolving to its last element (so
        ``asyncio.create_task(f.to_list())`` is typed ``Task[list[T]]``). At run time it is one
        without the ABC as a base (an ``isinstance(x, Flowable)`` stays a plain type check):
        ``collections.abc.Coroutine`` recognises it by its methods."""

else:

    class _CoroutineFace(Generic[T]):
        __slots__ = ()


def _this(mixin: AsyncioMixin[T]) -> Flowable[T]:
    """The Flowable a mixin method was called on (``self: Flowable[T]`` annotations on a mixin are
    rejected by mypy --strict: the mixin is not a subclass of Flowable)."""
    return cast("Flowable[T]", mixin)


class AsyncioMixin(_CoroutineFace[T]):
    __slots__ = ()

    # ------------------------------------------------------------------------------------------
    # Consuming from asyncio

    def __aiter__(self) -> AsyncIterator[T]:
        """``async for x in flowable``: iterate with the default prefetch (see :meth:`to_async_iterator`).

        Example::

            async for x in Flowable.range(0, 5).map(lambda x: x * 2):
                print(x)

        Backpressure: requests 128, then 96 at a time as elements are consumed; over a chain rooted
        in :meth:`from_async_iterable`, that source's ``prefetch`` (16 by default) instead.

        Scheduler: the loop body runs on the awaiting task; the upstream runs where it runs.
        """

        return _i_aiter_of(_this(self))

    def to_async_iterator(self, prefetch: int | None = None) -> FlowableAsyncIterator[T]:
        """An async iterator over this Flowable, buffering at most ``prefetch`` elements (default
        128; over a chain rooted in :meth:`from_async_iterable`, that source's ``prefetch``).

        Example::

            it = Flowable.range(0, 1000).to_async_iterator(prefetch=32)
            async for x in it:
                if x > 10:
                    break            # cancels the upstream

        The subscription is made on the first ``__anext__`` (on the loop that awaits it), so the
        iterator can be created in one coroutine and consumed in another task. Leaving the loop
        (``break``, an exception, task cancellation, ``asyncio.timeout``) or ``aclose()`` cancels
        the upstream; the stream's error is raised from ``__anext__`` with its traceback.

        Backpressure: requests ``prefetch``, then replenishes in batches of ``prefetch - prefetch//4``
        as elements are consumed: a slow consumer holds at most ``prefetch`` elements in memory.

        Scheduler: a synchronous upstream (e.g. a fused ``range().map().filter()``) emits on the
        loop thread inside the consumer's request, with no thread hop; a producer on another thread
        hands elements over with one ``call_soon_threadsafe`` per burst, never per element.
        """

        return _i_to_async_iterator(_this(self), prefetch)

    def __await__(self) -> Generator[Any, None, T]:
        """``await flowable``: the last element (``NoSuchElementError`` if the stream is empty).

        Example::

            total = await Flowable.range(1, 4).reduce(lambda a, b: a + b)   # 10
            items = await Flowable.range(0, 3).to_list()                    # [0, 1, 2]
            first = await Flowable.range(5, 100).first()                    # 5

        The stream's error is raised with its traceback; cancelling the awaiting task (or an
        ``asyncio.timeout``) cancels the subscription.

        Backpressure: requests unbounded demand (use ``first()``/``take(n)`` to bound it).

        Scheduler: no thread of its own; a synchronous upstream completes without suspending, a
        producer on another thread resolves the await with one ``call_soon_threadsafe``.
        """

        return _i_await_generator(_this(self))

    # The coroutine protocol, so that asyncio.create_task / asyncio.run / loop.run_until_complete
    # (which take coroutines only) accept a Flowable; see operators/_async_iterator.py.

    def send(self, value: Any, /) -> Any:
        """Coroutine protocol: one step of ``await flowable`` driven by an asyncio Task.

        This is what ``asyncio.create_task(flowable)`` and ``asyncio.run(flowable)`` call; code
        never calls it directly (inside a coroutine, ``await flowable``). Each Task that runs the
        Flowable gets its own subscription, so one Flowable may run in several Tasks at once.

        Example::

            task = asyncio.create_task(Flowable.range(0, 3).to_list())
            assert await task == [0, 1, 2]

        Backpressure: as ``await flowable``: unbounded demand.

        Scheduler: no thread of its own; the Task's loop runs it.
        """

        return _i_task_send(_this(self), value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None, /) -> Any:
        """Coroutine protocol: throw into the run of the current Task (its cancellation).

        Example::

            task = asyncio.create_task(Flowable.never().to_list())
            task.cancel()             # the Task throws CancelledError in: the subscription is cancelled

        Backpressure: none (it cancels the run's subscription when the exception ends the run).

        Scheduler: no thread of its own; the Task's loop runs it.
        """

        return _i_task_throw(_this(self), typ, val, tb)

    def close(self) -> None:
        """Coroutine protocol: close the current Task's run, if any (cancelling its subscription).

        Example::

            Flowable.range(0, 3).close()     # outside a Task run: nothing to close

        Backpressure: none (a running subscription is cancelled).

        Scheduler: no thread of its own.
        """

        _i_task_close(_this(self))

    # ------------------------------------------------------------------------------------------
    # Producing from asyncio

    @staticmethod
    def from_async_iterable(
        aiterable: AsyncIterable[R], loop: AbstractEventLoop | None = None, *, prefetch: int = 16
    ) -> Flowable[R]:
        """A Flowable that pulls from an async iterable, one ``__anext__`` at a time, on demand.

        Example::

            async def ticks():
                for i in range(3):
                    await asyncio.sleep(0.01)
                    yield i

            Flowable.from_async_iterable(ticks()).test().await_done(1).assert_result(0, 1, 2)

        Each subscription calls ``aiterable.__aiter__()`` (an async generator *object* can be
        iterated only once: pass a fresh one per subscription, or an object whose ``__aiter__``
        makes a new iterator). Cancelling closes the iterator (``aclose()``) on the loop. An
        exception from ``__anext__`` becomes ``on_error`` with its traceback; ``None`` -> TypeError.

        Backpressure: pulls only while there is demand; no buffering. ``prefetch`` is how many
        elements an ``async for`` (or ``to_async_iterator()``) over it asks ahead, directly or
        through operators: 16 by default, so the generator runs at most 16 ``__anext__`` ahead of
        the loop body (each is an await, I/O usually: a few in flight already overlap producer and
        consumer; 128, the default for synchronous chains, would run far ahead of use).

        Scheduler: runs on ``loop`` if given, else on the subscribing thread's running loop, else
        on the shared background loop thread ``rstreams-aio-loop``. Every signal is delivered on
        that loop's thread.
        """

        return _i_from_async_iterable(aiterable, loop, prefetch)

    @staticmethod
    def from_coroutine(fn: Callable[[], Awaitable[R]]) -> Flowable[R]:
        """A single-valued Flowable: awaits ``fn()`` when first requested, then completes.

        Example::

            async def fetch():
                await asyncio.sleep(0.01)
                return 42

            assert await Flowable.from_coroutine(fetch) == 42

        ``fn`` is called once per subscription (a coroutine object cannot be awaited twice).
        Cancelling the subscription cancels the running coroutine. A ``None`` result is a
        TypeError; an exception becomes ``on_error`` with its traceback.

        Backpressure: nothing runs until the first ``request``.

        Scheduler: like :meth:`from_async_iterable` (running loop at subscribe time, else the
        background loop thread ``rstreams-aio-loop``).
        """

        return _i_from_coroutine(fn)

    # ------------------------------------------------------------------------------------------
    # Async operators

    def map_async(
        self,
        async_fn: Callable[[T], Awaitable[R]],
        max_concurrency: int = 16,
        ordered: bool = True,
        *,
        prefetch: int | None = None,
    ) -> Flowable[R]:
        """Map each element with a coroutine function, running up to ``max_concurrency`` at once.

        Example::

            async def fetch(url):
                await asyncio.sleep(0.01)
                return url.upper()

            result = await Flowable.just("a", "b", "c").map_async(fetch, max_concurrency=2).to_list()
            # ['A', 'B', 'C']  (ordered=False: in completion order)

        ``ordered=True`` emits results in input order (a reorder buffer holds the ones that finish
        early); ``ordered=False`` emits them as they complete. An exception in a coroutine cancels
        the other running coroutines and the upstream, then signals ``on_error`` with its
        traceback. A ``None`` result is a TypeError.

        Backpressure: the upstream is asked for at most ``max_concurrency + prefetch`` elements
        ahead (``prefetch`` defaults to ``max_concurrency``), replenished in batches as results are
        emitted; results wait for downstream demand, so memory is bounded by that window.

        Scheduler: the coroutines run on the subscribing thread's running loop, else on the
        background loop thread ``rstreams-aio-loop``; results are emitted on that loop's thread
        (add ``observe_on`` to move them elsewhere). On the background loop the upstream is
        subscribed and requested on an ``io()`` worker, so its callbacks never run on that loop.
        """

        return _i_map_async(_this(self), async_fn, max_concurrency, ordered, prefetch)

    def flat_map_async(
        self,
        async_fn: Callable[[T], AsyncIterable[R]],
        max_concurrency: int = 16,
        *,
        prefetch: int = 32,
    ) -> Flowable[R]:
        """Map each element to an async iterable (e.g. an async generator) and merge them.

        Example::

            async def pages(user):
                for p in range(2):
                    await asyncio.sleep(0.001)
                    yield f"{user}-{p}"

            await Flowable.just("a", "b").flat_map_async(pages).to_list()
            # ['a-0', 'b-0', 'a-1', 'b-1'] (interleaved as they arrive)

        At most ``max_concurrency`` inner async iterables are consumed at once; each is pulled one
        ``__anext__`` at a time under demand (see :meth:`from_async_iterable`). ``async_fn`` may
        also be a coroutine function returning an (async) iterable. Errors cancel everything and
        are signalled with their traceback.

        Backpressure: the upstream is asked for ``max_concurrency`` elements ahead, then one per
        finished inner; each inner is prefetched with ``prefetch`` elements, replenished at 75%.

        Scheduler: the async iterables run on the subscribing thread's running loop, else on the
        background loop thread ``rstreams-aio-loop`` (then the upstream is subscribed and requested
        on an ``io()`` worker, as in :meth:`map_async`); elements are emitted on that loop's thread.
        """

        return _i_flat_map_async(_this(self), async_fn, max_concurrency, prefetch)

    def do_on_next_async(self, async_fn: Callable[[T], Awaitable[Any]]) -> Flowable[T]:
        """Await ``async_fn(x)`` for each element, then pass ``x`` on unchanged (in order).

        Example::

            async def log(x):
                await db.insert(x)

            await Flowable.range(0, 3).do_on_next_async(log).to_list()   # [0, 1, 2]

        The callbacks run one at a time, in order. An exception becomes ``on_error`` (and cancels
        the upstream); the result of ``async_fn`` is ignored.

        Backpressure: as :meth:`map_async` with ``max_concurrency=1``.

        Scheduler: as :meth:`map_async`: the callbacks run on the subscribing thread's running
        loop, else on the background loop thread ``rstreams-aio-loop``; elements are emitted on
        that loop's thread.
        """

        return _i_do_on_next_async(_this(self), async_fn)
