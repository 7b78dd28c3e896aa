"""7. merge / zip of 8 sources vs itertools.chain / builtin zip (N items in total, N/8 per source)."""

from __future__ import annotations

import operator
from itertools import chain

from benchmarks._common import call_varargs_or_list, flowable, reactivex
from benchmarks._harness import Context, Target, benchmark

SOURCES = 8
add = operator.add


def _bounds(n: int) -> list[tuple[int, int]]:
    m = n // SOURCES
    return [(i * m, m) for i in range(SOURCES)]


def _ranges(n: int) -> list[range]:
    return [range(lo, lo + m) for lo, m in _bounds(n)]


def zipper(*xs: int) -> int:
    return sum(xs)


def _expect(ctx: Context) -> int:
    return sum(chain(*_ranges(ctx.n)))


B = benchmark(
    "merge_zip",
    "Flowable.merge(8 ranges) / Flowable.zip(8 ranges, fn) vs itertools.chain / builtin zip",
    n=1_000_000,
    quick_n=8_000,
    order=70,
    expect=_expect,
    notes="items = source elements consumed (N in total); no other issue names a target.",
)


@B.variant("merge: builtin sum(chain(*ranges))", baseline=True)
def _chain(ctx: Context) -> int:
    return sum(chain(*_ranges(ctx.n)))


@B.variant(
    "merge: Flowable.merge(*ranges).reduce(add)", targets=[Target(">= 0.1x (proposed)", min_ratio=0.1)]
)
def _merge(ctx: Context) -> int:
    F = flowable()
    srcs = [F.range(lo, m) for lo, m in _bounds(ctx.n)]
    return call_varargs_or_list(F.merge, srcs).reduce(add).blocking_first()  # type: ignore[no-any-return]


@B.variant("merge peer: reactivex merge(from_iterable x 8)", scale=0.1)
def _rx_merge(ctx: Context) -> int:
    rx, ops = reactivex()
    srcs = [rx.from_iterable(r) for r in _ranges(ctx.n)]
    return rx.merge(*srcs).pipe(ops.reduce(add)).run()  # type: ignore[no-any-return]


@B.variant("zip: builtin sum(map(fn, *ranges))", baseline=True)
def _zip_builtin(ctx: Context) -> int:
    return sum(map(zipper, *_ranges(ctx.n)))


@B.variant(
    "zip: Flowable.zip(*ranges, fn).reduce(add)", targets=[Target(">= 0.3x (proposed)", min_ratio=0.3)]
)
def _zip(ctx: Context) -> int:
    F = flowable()
    srcs = [F.range(lo, m) for lo, m in _bounds(ctx.n)]
    return call_varargs_or_list(F.zip, srcs, zipper).reduce(add).blocking_first()  # type: ignore[no-any-return]


@B.variant("zip peer: builtin zip + starmap-like genexp")
def _zip_genexp(ctx: Context) -> int:
    return sum(zipper(*t) for t in zip(*_ranges(ctx.n), strict=True))


@B.variant("zip peer: reactivex zip(from_iterable x 8)", scale=0.02)
def _rx_zip(ctx: Context) -> int:
    rx, ops = reactivex()
    srcs = [rx.from_iterable(r) for r in _ranges(ctx.n)]
    return rx.zip(*srcs).pipe(ops.map(lambda t: zipper(*t)), ops.reduce(add)).run()  # type: ignore[no-any-return]
