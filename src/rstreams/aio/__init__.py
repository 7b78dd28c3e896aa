"""rstreams.aio: one backpressured model across synchronous code, threads and asyncio coroutines.

Consuming (methods of :class:`~rstreams.Flowable`)::

    async for x in flowable: ...                      # prefetch 128 (16 over an async source), replenished at 75%
    async for x in flowable.to_async_iterator(prefetch=32): ...
    last = await flowable                             # also await f.first(), f.to_list(), ...
    task = asyncio.create_task(f.to_list())           # a Flowable is a coroutine for asyncio

Producing::

    Flowable.from_async_iterable(agen(), prefetch=16) # pulls one __anext__ at a time, on demand
    Flowable.from_coroutine(fetch)                    # awaits fetch() when requested
    flowable.map_async(fetch, max_concurrency=16, ordered=True)
    flowable.flat_map_async(pages, max_concurrency=16)
    flowable.do_on_next_async(log)                    # await a side effect per element, in order

Scheduling: :class:`AsyncioScheduler` runs a Worker's tasks on an event loop, entered safely from
any thread (``flowable.observe_on(AsyncioScheduler(loop))``). Coroutines of the sources and async
operators run on the subscribing thread's running loop, or, when there is none, on one shared
daemon thread ``rstreams-aio-loop`` (:func:`background_loop`), started lazily.

Context: ``contextvars`` captured at subscribe time are visible inside the coroutines.

Cancellation: leaving an ``async for``, cancelling the consuming task or an ``asyncio.timeout`` is
a Reactive Streams ``cancel``; errors raised in coroutines reach ``on_error`` with their traceback.
"""

from __future__ import annotations

# The bridge lives below this package: in the flowable layer (Flowable's own methods use it), in
# rstreams.schedulers (a scheduler is a scheduler) and in the toolkit (the loop helpers). This
# module is its public face: the same objects, under the names users import.
from .._internal.event_loops import LoopClosedError, background_loop, stop_background_loop
from ..flowable.lowlevel import (
    AsyncIteratorSubscriber,
    FlowableAsyncIterator,
    await_last,
    do_on_next_async,
    flat_map_async,
    from_async_iterable,
    from_coroutine,
    map_async,
    to_async_iterator,
)
from ..schedulers import AsyncioScheduler, AsyncioWorker

__all__ = [
    "AsyncIteratorSubscriber",
    "AsyncioScheduler",
    "AsyncioWorker",
    "FlowableAsyncIterator",
    "LoopClosedError",
    "await_last",
    "do_on_next_async",
    "background_loop",
    "flat_map_async",
    "from_async_iterable",
    "from_coroutine",
    "map_async",
    "stop_background_loop",
    "to_async_iterator",
]
