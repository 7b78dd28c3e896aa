"""4. Asyncio chain: ``async for`` over Flowable.range(0, N).map(f).filter(p) vs async generators."""

from __future__ import annotations

import asyncio
import operator
from collections.abc import AsyncIterator, Callable

from benchmarks._common import aiostream, async_iterable, flowable, reactivex
from benchmarks._harness import Context, Target, benchmark


def f(x: int) -> int:
    return x * 3


def p(x: int) -> bool:
    return x % 2 == 0


def _expect(ctx: Context) -> int:
    return sum(filter(p, map(f, range(ctx.n))))


B = benchmark(
    "asyncio_chain",
    "async for x in Flowable.range(0, N).map(f).filter(p) vs an async generator chain",
    n=200_000,
    quick_n=2_000,
    order=40,
    expect=_expect,
)


async def _arange(n: int) -> AsyncIterator[int]:
    for i in range(n):
        yield i


async def _amap(fn: Callable[[int], int], src: AsyncIterator[int]) -> AsyncIterator[int]:
    async for x in src:
        yield fn(x)


async def _afilter(pred: Callable[[int], bool], src: AsyncIterator[int]) -> AsyncIterator[int]:
    async for x in src:
        if pred(x):
            yield x


@B.variant("async generator chain", baseline=True)
def _agen(ctx: Context) -> int:
    async def run() -> int:
        total = 0
        async for x in _afilter(p, _amap(f, _arange(ctx.n))):
            total += x
        return total

    return asyncio.run(run())


@B.variant("Flowable async for", targets=[Target(">= 1.0x", min_ratio=1.0)])
def _flowable(ctx: Context) -> int:
    F = flowable()

    async def run() -> int:
        total = 0
        async for x in async_iterable(F.range(0, ctx.n).map(f).filter(p)):
            total += x
        return total

    return asyncio.run(run())


@B.variant("Flowable hidden async for")
def _flowable_hidden(ctx: Context) -> int:
    F = flowable()

    async def run() -> int:
        total = 0
        async for x in async_iterable(F.range(0, ctx.n).hide().map(f).filter(p)):
            total += x
        return total

    return asyncio.run(run())


@B.variant("peer: aiostream range | map | filter")
def _aiostream(ctx: Context) -> int:
    stream, pipe = aiostream()

    async def run() -> int:
        xs = stream.range(ctx.n) | pipe.map(f) | pipe.filter(p)
        total = 0
        async with xs.stream() as it:
            async for x in it:
                total += x
        return total

    return asyncio.run(run())


@B.variant("peer: reactivex from_iterable, awaited (push, no async for)")
def _reactivex(ctx: Context) -> int:
    rx, ops = reactivex()

    async def run() -> int:
        obs = rx.from_iterable(range(ctx.n)).pipe(ops.map(f), ops.filter(p), ops.reduce(operator.add))
        return await obs  # type: ignore[no-any-return]

    return asyncio.run(run())
