"""1. Sync chain: range -> map -> filter -> reduce, fused and hidden, against the builtin C chain."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

from benchmarks._common import flowable, reactivex
from benchmarks._harness import Context, Target, benchmark


def f(x: int) -> int:
    return x * 3


def p(x: int) -> bool:
    return x % 2 == 0


add = operator.add


def _expect(ctx: Context) -> int:
    return sum(filter(p, map(f, range(ctx.n))))


B = benchmark(
    "sync_chain",
    "Flowable.range(0, N).map(f).filter(p).reduce(add) vs sum(filter(p, map(f, range(N))))",
    n=1_000_000,
    quick_n=2_000,
    order=10,
    expect=_expect,
)


@B.variant("builtin sum(filter(map(range)))", baseline=True)
def _builtin(ctx: Context) -> int:
    return sum(filter(p, map(f, range(ctx.n))))


@B.variant(
    "Flowable.range fused",
    targets=[
        Target(">= 0.8x", min_ratio=0.8),
        Target(">= 1.0x from_iterable", min_ratio=1.0, against="Flowable.from_iterable fused"),
    ],
)
def _fused(ctx: Context) -> int:
    F = flowable()
    return F.range(0, ctx.n).map(f).filter(p).reduce(add).blocking_first()  # type: ignore[no-any-return]


@B.variant("Flowable.from_iterable fused")
def _from_iterable(ctx: Context) -> int:
    F = flowable()
    return F.from_iterable(range(ctx.n)).map(f).filter(p).reduce(add).blocking_first()  # type: ignore[no-any-return]


@B.variant("Flowable.range hidden (unfused)", targets=[Target(">= 0.4x", min_ratio=0.4)])
def _hidden(ctx: Context) -> int:
    F = flowable()
    return F.range(0, ctx.n).hide().map(f).filter(p).reduce(add).blocking_first()  # type: ignore[no-any-return]


@B.variant("peer: functools.reduce(add, filter(map))")
def _functools(ctx: Context) -> int:
    return functools.reduce(add, filter(p, map(f, range(ctx.n))))


@B.variant("peer: generator expressions")
def _genexp(ctx: Context) -> int:
    mapped = (f(x) for x in range(ctx.n))
    return sum(y for y in mapped if p(y))


@B.variant("peer: reactivex from_iterable")
def _rx_from_iterable(ctx: Context) -> int:
    rx, ops = reactivex()
    return rx.from_iterable(range(ctx.n)).pipe(ops.map(f), ops.filter(p), ops.reduce(add)).run()  # type: ignore[no-any-return]


# reactivex.range schedules one trampoline action per item (~4 k items/s here): a small slice only.
@B.variant("peer: reactivex range", scale=0.004)
def _rx_range(ctx: Context) -> int:
    rx, ops = reactivex()
    return rx.range(0, ctx.n).pipe(ops.map(f), ops.filter(p), ops.reduce(add)).run()  # type: ignore[no-any-return]


def _traced(chain: Callable[[Any], int]) -> int:
    from rstreams import plugins

    plugins.enable_assembly_tracing()
    try:
        return chain(flowable())
    finally:
        plugins.disable_assembly_tracing()


# Assembly tracing on (rstreams.plugins.enable_assembly_tracing()): fused, the chain stays folded
# and only its last stage is traced; unfused, one pass-through call per element per stage.
@B.variant("Flowable.range fused, assembly tracing on")
def _fused_traced(ctx: Context) -> int:
    return _traced(lambda F: F.range(0, ctx.n).map(f).filter(p).reduce(add).blocking_first())


@B.variant("Flowable.range hidden, assembly tracing on")
def _hidden_traced(ctx: Context) -> int:
    return _traced(lambda F: F.range(0, ctx.n).hide().map(f).filter(p).reduce(add).blocking_first())
