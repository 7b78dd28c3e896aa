"""Event-time tumbling windows keyed by user vs a plain-Python dict implementation of the same rule.

1,000,000 click events of 10,000 users over one hour of event time, slightly out of order (up to 5 s);
5-minute tumbling windows by event time, one count per user and window, a watermark of the latest
event time minus 10 s of allowed lateness (so no event is late: the baseline checks it). The
baseline is what one writes by hand: a dict of windows, each a dict of user -> count, fired in order
of end as the watermark passes them and all at the end; both produce the same rows in the same order
(windows by end, users in the order they first appeared in the window).
"""

from __future__ import annotations

import random
from operator import itemgetter
from typing import Any

from benchmarks._common import flowable
from benchmarks._harness import Context, Target, benchmark

USERS = 10_000
SPAN = 3600.0  # seconds of event time
SIZE = 300.0  # 5-minute windows
LATENESS = 10.0
JITTER = 5.0

Row = tuple[Any, float, float, int]


def _setup(n: int, quick: bool) -> list[tuple[int, float]]:
    rnd = random.Random(23)
    step = SPAN / n
    rand = rnd.random
    users = rnd.randrange
    return [(users(USERS), max(0.0, i * step - JITTER * rand())) for i in range(n)]


def _data(ctx: Context) -> list[tuple[int, float]]:
    data: list[tuple[int, float]] = ctx.data
    return data if len(data) == ctx.n else data[: ctx.n]


def _by_hand(events: list[tuple[int, float]]) -> list[Row]:
    wins: dict[float, dict[int, int]] = {}
    out: list[Row] = []
    maxts = float("-inf")
    wm = float("-inf")
    next_end = float("inf")
    late = 0
    size = SIZE
    lateness = LATENESS
    for user, t in events:
        if t > maxts:
            maxts = t
            wm = t - lateness
            if next_end <= wm:
                for q in sorted(wins):
                    end = q * size + size
                    if end > wm:
                        next_end = end
                        break
                    out.extend((u, q * size, end, c) for u, c in wins.pop(q).items())
                else:
                    next_end = float("inf")
        q = t // size
        if t < wm and q * size + size <= wm:
            late += 1
            continue
        w = wins.get(q)
        if w is None:
            w = wins[q] = {}
            end = q * size + size
            if end < next_end:
                next_end = end
        w[user] = w.get(user, 0) + 1
    for q in sorted(wins):
        out.extend((u, q * size, q * size + size, c) for u, c in wins[q].items())
    if late:
        raise AssertionError(f"{late} late events: the data set is meant to have none")
    return out


def _expect(ctx: Context) -> list[Row]:
    return _by_hand(_data(ctx))


B = benchmark(
    "event_time_windows",
    "tumbling 5-min event-time windows, count per user (10,000 users, 1 h) vs a hand-written dict",
    n=1_000_000,
    quick_n=20_000,
    order=85,
    setup=_setup,
    expect=_expect,
)


@B.variant("plain Python dict of windows of dicts, watermark by hand", baseline=True)
def _baseline(ctx: Context) -> list[Row]:
    return _by_hand(_data(ctx))


@B.variant(
    "Flowable tumbling_window(300, key=user, aggregate='count')",
    targets=[Target(">= 0.8x", min_ratio=0.8)],
)
def _operator(ctx: Context) -> list[Row]:
    F = flowable()
    windows = (
        F.from_iterable(_data(ctx))
        .tumbling_window(SIZE, timestamp=itemgetter(1), key=itemgetter(0), allowed_lateness=LATENESS, aggregate="count")
        .to_list()
        .blocking_first()
    )
    return windows  # type: ignore[no-any-return]  # Window is a NamedTuple: equal to the baseline's tuples


@B.variant("peer: the same with lambda timestamp/key (the per-element loop, no one-window batch path)")
def _operator_lambdas(ctx: Context) -> list[Row]:
    F = flowable()
    windows = (
        F.from_iterable(_data(ctx))
        .tumbling_window(SIZE, timestamp=lambda e: e[1], key=lambda e: e[0], allowed_lateness=LATENESS,
                         aggregate="count")
        .to_list()
        .blocking_first()
    )
    return windows  # type: ignore[no-any-return]


@B.variant("peer: the same with early_every=4 (about two early results per user and window, filtered out)")
def _operator_early(ctx: Context) -> list[Row]:
    F = flowable()
    windows = (
        F.from_iterable(_data(ctx))
        .tumbling_window(SIZE, timestamp=itemgetter(1), key=itemgetter(0), allowed_lateness=LATENESS,
                         aggregate="count", early_every=4)
        .filter(lambda w: w.final)
        .to_list()
        .blocking_first()
    )
    return windows  # type: ignore[no-any-return]
