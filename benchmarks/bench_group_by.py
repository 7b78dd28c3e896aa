"""8. group_by into 100 groups, each group reduced, vs a plain-Python dict-of-lists grouping."""

from __future__ import annotations

import gc
import operator
import random
import time
from collections import defaultdict
from itertools import groupby
from typing import Any

from benchmarks._common import flowable, reactivex
from benchmarks._harness import Context, Target, benchmark

GROUPS = 100
add = operator.add


def key(x: int) -> int:
    return x % GROUPS


def _setup(n: int, quick: bool) -> list[int]:
    rnd = random.Random(8)
    return [rnd.randrange(1_000_000) for _ in range(n)]


def _data(ctx: Context) -> list[int]:
    data: list[int] = ctx.data
    return data if len(data) == ctx.n else data[: ctx.n]


def _expect(ctx: Context) -> dict[int, int]:
    sums: dict[int, int] = defaultdict(int)
    for x in _data(ctx):
        sums[x % GROUPS] += x
    return dict(sums)


B = benchmark(
    "group_by",
    "Flowable.from_iterable(data).group_by(x % 100) each group reduced vs a dict-of-lists grouping",
    n=1_000_000,
    quick_n=5_000,
    order=80,
    setup=_setup,
    expect=_expect,
)


@B.variant("plain Python dict of lists, then sum each", baseline=True)
def _dict_of_lists(ctx: Context) -> dict[int, int]:
    groups: defaultdict[int, list[int]] = defaultdict(list)
    for x in _data(ctx):
        groups[key(x)].append(x)
    return {k: sum(v) for k, v in groups.items()}


@B.variant(
    "Flowable group_by(key).flat_map(g.reduce(add))",
    targets=[Target(">= 0.33x (within 3x)", min_ratio=0.33)],
)
def _flowable(ctx: Context) -> dict[int, int]:
    F = flowable()

    def per_group(g: Any) -> Any:
        k = g.key
        return g.reduce(add).map(lambda s: (k, s))

    pairs = F.from_iterable(_data(ctx)).group_by(key).flat_map(per_group).to_list().blocking_first()
    return dict(pairs)


@B.variant("peer: sorted + itertools.groupby")
def _sorted_groupby(ctx: Context) -> dict[int, int]:
    return {k: sum(g) for k, g in groupby(sorted(_data(ctx), key=key), key=key)}


@B.variant("peer: reactivex group_by + flat_map(reduce)", scale=0.2)
def _rx(ctx: Context) -> dict[int, int]:
    rx, ops = reactivex()

    def per_group(g: Any) -> Any:
        k = g.key
        return g.pipe(ops.reduce(add), ops.map(lambda s: (k, s)))

    pairs = rx.from_iterable(_data(ctx)).pipe(ops.group_by(key), ops.flat_map(per_group), ops.to_list()).run()
    return dict(pairs)


# ----------------------------------------------------------------------------------------------------
# many live groups: the cost per element must not grow with the number of open groups

MANY = 20_000


def many_key(x: int) -> int:
    return x % MANY


def _expect_many(ctx: Context) -> dict[int, int]:
    sums: dict[int, int] = defaultdict(int)
    for x in _data(ctx):
        sums[x % MANY] += x
    return dict(sums)


M = benchmark(
    "group_by_many_groups",
    "from_iterable(data).group_by(x % 20,000).flat_map(g.reduce(add), max_concurrency=None) vs a dict",
    n=200_000,
    quick_n=5_000,
    order=81,
    setup=_setup,
    expect=_expect_many,
    notes="every group stays open until the source completes: 20,000 live inners in flat_map",
)


@M.variant("plain Python dict of lists, then sum each", baseline=True)
def _many_dict_of_lists(ctx: Context) -> dict[int, int]:
    groups: defaultdict[int, list[int]] = defaultdict(list)
    for x in _data(ctx):
        groups[many_key(x)].append(x)
    return {k: sum(v) for k, v in groups.items()}


@M.variant(
    "peer: floor: the dict of lists, plus building each group's inner Flowable (the mapper's own work)"
)
def _many_floor(ctx: Context) -> dict[int, int]:
    """What any group_by with a per-group Flowable pays at least: the dict's grouping, and once per
    group the user's mapper assembling its inner chain (``g.reduce(add).map(...)``, here over a
    stand-in Flowable; no subscription, no element). With 10 elements per group the assembly alone
    costs more than the dict does for the group's elements."""
    F = flowable()
    groups: defaultdict[int, list[int]] = defaultdict(list)
    for x in _data(ctx):
        groups[many_key(x)].append(x)
    stand_in = F.just(0)
    for k in groups:
        stand_in.reduce(add).map(lambda s, k=k: (k, s))
    return {k: sum(v) for k, v in groups.items()}


@M.variant(
    "peer: floor: the dict, each group's inner Flowable assembled, and one fold object per group "
    "taking its elements through a method call (what any per-group subscriber pays)"
)
def _many_floor_fold_objects(ctx: Context) -> dict[int, int]:
    """The floor above plus the least a group_by whose groups are consumed by subscribers pays:
    one object per group (created with the group) whose method folds each element, and the
    results collected at the end. No protocol: no subscription, demand, completion signal or
    flat_map bookkeeping."""
    F = flowable()
    stand_in = F.just(0)
    folds: dict[int, _FloorFold] = {}
    get = folds.get
    for x in _data(ctx):
        k = many_key(x)
        f = get(k)
        if f is None:
            stand_in.reduce(add).map(lambda s, k=k: (k, s))
            f = folds[k] = _FloorFold()
        f.on_next(x)
    return {k: f.acc for k, f in folds.items()}


class _FloorFold:
    __slots__ = ("acc",)

    def __init__(self) -> None:
        self.acc: Any = None

    def on_next(self, x: int) -> None:
        acc = self.acc
        self.acc = x if acc is None else add(acc, x)


@M.variant(
    "Flowable group_by(key).flat_map(g.reduce(add), max_concurrency=None)",
    targets=[Target(">= 0.33x (within 3x)", min_ratio=0.33)],
)
def _many_flowable(ctx: Context) -> dict[int, int]:
    F = flowable()

    def per_group(g: Any) -> Any:
        k = g.key
        return g.reduce(add).map(lambda s: (k, s))

    pairs = (
        F.from_iterable(_data(ctx))
        .group_by(many_key)
        .flat_map(per_group, max_concurrency=None)
        .to_list()
        .blocking_first()
    )
    return dict(pairs)


@M.variant(
    "peer: diagnostic: the same Flowable chain with the garbage collector paused during the run "
    "(what collecting 20,000 live groups' objects costs; not a way to run it)"
)
def _many_flowable_gc_paused(ctx: Context) -> dict[int, int]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _many_flowable(ctx)
    finally:
        if was_enabled:
            gc.enable()


def _expect_many_counts(ctx: Context) -> dict[int, int]:
    counts: dict[int, int] = defaultdict(int)
    for x in _data(ctx):
        counts[x % MANY] += 1
    return dict(counts)


@M.variant("plain Python dict, count per key", baseline=True, expect=_expect_many_counts)
def _many_dict_count(ctx: Context) -> dict[int, int]:
    counts: defaultdict[int, int] = defaultdict(int)
    for x in _data(ctx):
        counts[many_key(x)] += 1
    return dict(counts)


@M.variant(
    "Flowable group_by(key).flat_map(g.count(), max_concurrency=None)",
    targets=[Target(">= 0.33x (within 3x)", min_ratio=0.33)],
    expect=_expect_many_counts,
)
def _many_flowable_count(ctx: Context) -> dict[int, int]:
    F = flowable()

    def per_group(g: Any) -> Any:
        k = g.key
        return g.count().map(lambda n: (k, n))

    pairs = (
        F.from_iterable(_data(ctx))
        .group_by(many_key)
        .flat_map(per_group, max_concurrency=None)
        .to_list()
        .blocking_first()
    )
    return dict(pairs)


# ----------------------------------------------------------------------------------------------------
# the curve: cost per element against the number of live groups (100 to 100,000), each against a
# plain dict counting the same keys, and against the 100-group rate (flatness)

CURVE = (100, 1_000, 10_000, 100_000)
_FLOWABLE_100 = "Flowable, 100 live groups: group_by(x % G).flat_map(g.count())"

C = benchmark(
    "group_by_live_groups",
    "from_iterable(data).group_by(x % G).flat_map(g.count(), max_concurrency=None), G = 100 .. 100,000",
    n=1_000_000,
    quick_n=5_000,
    order=82,
    setup=_setup,
    notes=(
        "every group stays open until the source completes; N/G elements per group, so 100,000 "
        "groups also pay 10 group creations per 100 elements"
    ),
)


def _curve_expect(groups: int) -> Any:
    def expect(ctx: Context) -> int:
        return min(groups, len(set(x % groups for x in _data(ctx))))

    return expect


def _curve_variants(groups: int) -> None:
    expect = _curve_expect(groups)

    @C.variant(f"plain Python dict, {groups:,} keys", baseline=True, expect=expect)
    def _dict(ctx: Context) -> int:
        counts: defaultdict[int, int] = defaultdict(int)
        for x in _data(ctx):
            counts[x % groups] += 1
        return len(counts)

    name = _FLOWABLE_100 if groups == 100 else f"Flowable, {groups:,} live groups"
    targets = [Target(">= 0.33x the dict (within 3x)", min_ratio=0.33)]
    if groups != 100:
        targets.append(Target(">= 0.5x the 100-group rate (flat)", min_ratio=0.5, against=_FLOWABLE_100))

    @C.variant(name, targets=targets, expect=expect)
    def _flowable(ctx: Context) -> int:
        F = flowable()
        counts = (
            F.from_iterable(_data(ctx))
            .group_by(lambda x: x % groups)
            .flat_map(lambda g: g.count(), max_concurrency=None)
            .to_list()
            .blocking_first()
        )
        assert sum(counts) == len(_data(ctx))
        return len(counts)


for _g in CURVE:
    _curve_variants(_g)


# ----------------------------------------------------------------------------------------------------
# the steady state: every group opened first (not timed), then N elements over G live groups


STEADY = (100, 1_000, 10_000, 100_000)
_STEADY_100 = "Flowable, 100 live groups, steady state: group_by(x % G).flat_map(g.count())"

S = benchmark(
    "group_by_steady_state",
    "the cost per element over G live groups (opened before timing), G = 100 .. 100,000",
    n=1_000_000,
    quick_n=5_000,
    order=83,
    setup=_setup,
    notes=(
        "the source first yields the G keys once (opening every group), then N elements over them; "
        "the variant times only the N elements (the opening and the completion of the G groups "
        "are excluded: group_by_live_groups has the whole run). Both sides read the same generator"
    ),
)


def _phased(keys: int, data: list[int], marks: list[float]) -> Any:
    """Yield 0..keys-1 (opening every group), then ``data``; mark when each phase ends."""
    yield from range(keys)
    marks.append(time.perf_counter())
    yield from data
    marks.append(time.perf_counter())


def _steady_expect(groups: int) -> Any:
    def expect(ctx: Context) -> int:
        return len(_data(ctx)) + groups

    return expect


def _steady_variants(groups: int) -> None:
    expect = _steady_expect(groups)

    @S.variant(f"plain Python dict, {groups:,} keys, steady state", baseline=True, expect=expect)
    def _dict(ctx: Context) -> int:
        start = time.perf_counter()
        marks: list[float] = []
        counts: defaultdict[int, int] = defaultdict(int)
        for x in _phased(groups, _data(ctx), marks):
            counts[x % groups] += 1
        end = time.perf_counter()
        ctx.excluded_s = (marks[0] - start) + (end - marks[1])
        return sum(counts.values())

    name = _STEADY_100 if groups == 100 else f"Flowable, {groups:,} live groups, steady state"
    targets = [Target(">= 0.33x the dict (within 3x)", min_ratio=0.33)]
    if groups != 100:
        # flat: the ratio to the dict holds as G grows (the dict itself slows with G: its keys
        # and counts stop fitting in the caches, and so do the groups)
        targets.append(
            Target(">= 0.5x the 100-group ratio (flat)", against=_STEADY_100, min_ratio_of_ratio=0.5)
        )

    @S.variant(name, targets=targets, expect=expect)
    def _flowable(ctx: Context) -> int:
        F = flowable()
        start = time.perf_counter()
        marks: list[float] = []
        counts = (
            F.from_iterable(_phased(groups, _data(ctx), marks))
            .group_by(lambda x: x % groups)
            .flat_map(lambda g: g.count(), max_concurrency=None)
            .to_list()
            .blocking_first()
        )
        end = time.perf_counter()
        ctx.excluded_s = (marks[0] - start) + (end - marks[1])
        return int(sum(counts))


for _g in STEADY:
    _steady_variants(_g)
