"""6. flat_map / concat_map of many short inner sources: the scalar shortcut for Flowable.just."""

from __future__ import annotations

import operator
from itertools import chain

from benchmarks._common import flowable, reactivex
from benchmarks._harness import Context, Target, benchmark

add = operator.add


def _expect(ctx: Context) -> int:
    return ctx.n * (ctx.n - 1) // 2


B = benchmark(
    "flat_map_scalar",
    "Flowable.range(0, N).flat_map(lambda x: Flowable.just(x)) / concat_map vs .map(lambda x: x)",
    n=300_000,
    quick_n=2_000,
    order=60,
    expect=_expect,
)


# The baseline is the same per-element work without the inner Publisher: an unfused map (a fused
# map runs as a C loop, which no per-element inner Publisher can approach).
@B.variant("Flowable hide().map(lambda x: x)", baseline=True)
def _map(ctx: Context) -> int:
    F = flowable()
    return F.range(0, ctx.n).hide().map(lambda x: x).reduce(add).blocking_first()  # type: ignore[no-any-return]


@B.variant("Flowable map(lambda x: x) (fused)")
def _map_fused(ctx: Context) -> int:
    F = flowable()
    return F.range(0, ctx.n).map(lambda x: x).reduce(add).blocking_first()  # type: ignore[no-any-return]


# The floor: the user's mapper alone, which builds one Flowable.just per element and already costs
# several times the unfused map above, so the targets below are relative to it (since 2026-11-25; the
# first target, 0.5x of the unfused map, was above what the mapper alone reaches, ~0.25-0.3x).
@B.variant("floor: the mapper alone, for x in range: just(x)", baseline=True)
def _mapper_alone(ctx: Context) -> int:
    F = flowable()
    just = F.just
    mapper = lambda x: just(x)  # noqa: E731 - the same lambda the variants pass
    total = 0
    for x in range(ctx.n):
        total += mapper(x).items[0]
    return total


@B.variant("Flowable flat_map(just) (scalar shortcut)", targets=[Target(">= 0.5x", min_ratio=0.5)])
def _flat_map_just(ctx: Context) -> int:
    F = flowable()
    just = F.just
    return F.range(0, ctx.n).flat_map(lambda x: just(x)).reduce(add).blocking_first()  # type: ignore[no-any-return]


@B.variant("Flowable concat_map(just) (scalar shortcut)", targets=[Target(">= 0.5x", min_ratio=0.5)])
def _concat_map_just(ctx: Context) -> int:
    F = flowable()
    just = F.just
    return F.range(0, ctx.n).concat_map(lambda x: just(x)).reduce(add).blocking_first()  # type: ignore[no-any-return]


@B.variant("Flowable concat_map(just, prefetch=128)")
def _concat_map_just_prefetch(ctx: Context) -> int:
    F = flowable()
    just = F.just
    return F.range(0, ctx.n).concat_map(lambda x: just(x), prefetch=128).reduce(add).blocking_first()  # type: ignore[no-any-return]


# A one-item range is not a scalar source: one full inner subscription per item.
@B.variant("Flowable flat_map(range(x, 1)) (no shortcut)", scale=0.2)
def _flat_map_range(ctx: Context) -> int:
    F = flowable()
    rng = F.range
    return F.range(0, ctx.n).flat_map(lambda x: rng(x, 1)).reduce(add).blocking_first()  # type: ignore[no-any-return]


@B.variant("peer: builtin sum(chain.from_iterable(map(lambda x: (x,), range)))")
def _builtin(ctx: Context) -> int:
    return sum(chain.from_iterable(map(lambda x: (x,), range(ctx.n))))


@B.variant("peer: reactivex from_iterable flat_map(just)", scale=0.005)
def _rx(ctx: Context) -> int:
    rx, ops = reactivex()
    just = rx.just
    return rx.from_iterable(range(ctx.n)).pipe(ops.flat_map(lambda x: just(x)), ops.reduce(add)).run()  # type: ignore[no-any-return]
