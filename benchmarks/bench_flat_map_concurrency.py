"""5. Bounded-concurrency flat_map: 16 inner sources at a time, each waiting 1 ms (threads / asyncio)."""

from __future__ import annotations

import asyncio
import operator
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from benchmarks._common import aiostream, async_iterable, flowable, reactivex, schedulers
from benchmarks._harness import Context, Target, benchmark

CONCURRENCY = 16
WAIT_S = 0.001
add = operator.add


def _expect(ctx: Context) -> int:
    return ctx.n * (ctx.n - 1) // 2


B = benchmark(
    "flat_map_concurrency",
    "flat_map(fn, max_concurrency=16) / map_async(async_fn, max_concurrency=16) over N 1-ms tasks "
    "vs hand-written pools of 16",
    n=2_000,
    quick_n=64,
    order=50,
    expect=_expect,
)


def work(i: int) -> int:
    time.sleep(WAIT_S)
    return i


async def awork(i: int) -> int:
    await asyncio.sleep(WAIT_S)
    return i


# -- threads ------------------------------------------------------------------------------------------


@B.variant("threads: hand-written 16-thread worker pool", baseline=True)
def _thread_pool(ctx: Context) -> int:
    tasks: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    for i in range(ctx.n):
        tasks.put(i)
    results: list[int] = []

    def worker() -> None:
        get, append = tasks.get, results.append
        while (i := get()) is not None:
            append(work(i))

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(CONCURRENCY)]
    for t in threads:
        tasks.put(None)
        t.start()
    for t in threads:
        t.join()
    return sum(results)


@B.variant(
    "threads: Flowable flat_map(from_callable.subscribe_on(io()), max_concurrency=16)",
    targets=[Target(">= 0.83x (within 1.2x)", min_ratio=0.83)],
)
def _flowable_flat_map(ctx: Context) -> int:
    F, s = flowable(), schedulers()
    io = s.io()

    def inner(i: int) -> object:
        return F.from_callable(lambda: work(i)).subscribe_on(io)

    return F.range(0, ctx.n).flat_map(inner, max_concurrency=CONCURRENCY).reduce(add).blocking_first()  # type: ignore[no-any-return]


@B.variant("threads peer: ThreadPoolExecutor(16).map")
def _executor(ctx: Context) -> int:
    with ThreadPoolExecutor(CONCURRENCY) as ex:
        return sum(ex.map(work, range(ctx.n)))


@B.variant("threads peer: reactivex merge(max_concurrent=16) on ThreadPoolScheduler(16)")
def _rx_threads(ctx: Context) -> int:
    rx, ops = reactivex()
    from reactivex.scheduler import ThreadPoolScheduler

    sched = ThreadPoolScheduler(CONCURRENCY)
    try:

        def inner(i: int) -> object:
            return rx.from_callable(lambda: work(i)).pipe(ops.subscribe_on(sched))

        obs = rx.from_iterable(range(ctx.n)).pipe(
            ops.map(inner), ops.merge(max_concurrent=CONCURRENCY), ops.reduce(add)
        )
        total: int = obs.run()
        return total
    finally:
        sched.executor.shutdown(wait=False)


# -- asyncio ------------------------------------------------------------------------------------------


@B.variant("asyncio: hand-written pool of 16 worker tasks", baseline=True)
def _task_pool(ctx: Context) -> int:
    async def run() -> int:
        it = iter(range(ctx.n))
        total = 0

        async def worker() -> None:
            nonlocal total
            for i in it:
                x = await awork(i)  # not `total += await ...`: that reads total before awaiting
                total += x

        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
        return total

    return asyncio.run(run())


@B.variant(
    "asyncio: Flowable map_async(async_fn, max_concurrency=16), async for",
    targets=[Target(">= 0.83x (within 1.2x)", min_ratio=0.83)],
)
def _flowable_map_async(ctx: Context) -> int:
    F = flowable()

    async def run() -> int:
        total = 0
        async for x in async_iterable(F.range(0, ctx.n).map_async(awork, max_concurrency=CONCURRENCY)):
            total += x
        return total

    return asyncio.run(run())


@B.variant("asyncio peer: Semaphore(16) + gather")
def _semaphore(ctx: Context) -> int:
    async def run() -> int:
        sem = asyncio.Semaphore(CONCURRENCY)

        async def one(i: int) -> int:
            async with sem:
                return await awork(i)

        return sum(await asyncio.gather(*(one(i) for i in range(ctx.n))))

    return asyncio.run(run())


@B.variant("asyncio peer: aiostream map(task_limit=16)")
def _aiostream(ctx: Context) -> int:
    stream, pipe = aiostream()

    async def run() -> int:
        xs = stream.range(ctx.n) | pipe.map(awork, task_limit=CONCURRENCY, ordered=False)
        total = 0
        async with xs.stream() as it:
            async for x in it:
                total += x
        return total

    return asyncio.run(run())
