"""2. Thread hand-off: a range produced on one thread, consumed on another, vs queue.Queue(128)."""

from __future__ import annotations

import queue
import threading

from benchmarks._common import SumSubscriber, flowable, schedulers
from benchmarks._harness import Context, Target, benchmark

_DONE = object()


def _expect(ctx: Context) -> int:
    return ctx.n * (ctx.n - 1) // 2


B = benchmark(
    "thread_handoff",
    "Flowable.range(0, N).subscribe_on(single()).observe_on(new_thread()) vs queue.Queue(maxsize=128) threads",
    n=1_000_000,
    quick_n=2_000,
    order=20,
    expect=_expect,
)


# queue.Queue moves ~0.2 M items/s here: a fifth of N keeps the full run near one second per repeat.
@B.variant("queue.Queue(128) producer/consumer threads", baseline=True, scale=0.2)
def _queue(ctx: Context) -> int:
    q: queue.Queue[object] = queue.Queue(maxsize=128)
    n = ctx.n

    def produce() -> None:
        put = q.put
        for i in range(n):
            put(i)
        put(_DONE)

    t = threading.Thread(target=produce, daemon=True)
    t.start()
    total = 0
    get = q.get
    while (x := get()) is not _DONE:
        total += x  # type: ignore[operator]
    t.join()
    return total


@B.variant(
    "Flowable subscribe_on/observe_on -> subscriber",
    targets=[Target(">= 10x", min_ratio=10.0)],
)
def _flowable(ctx: Context) -> int:
    F, s = flowable(), schedulers()
    sub = SumSubscriber()
    F.range(0, ctx.n).subscribe_on(s.single()).observe_on(s.new_thread()).subscribe(sub)
    return sub.wait(ctx.timeout)


@B.variant("Flowable subscribe_on(single()) -> blocking_iterable()")
def _blocking_iterable(ctx: Context) -> int:
    F, s = flowable(), schedulers()
    return sum(F.range(0, ctx.n).subscribe_on(s.single()).blocking_iterable())


@B.variant("peer: queue.Queue(128) of 128-item lists")
def _queue_batched(ctx: Context) -> int:
    q: queue.Queue[object] = queue.Queue(maxsize=128)
    n = ctx.n

    def produce() -> None:
        put = q.put
        for lo in range(0, n, 128):
            put(list(range(lo, min(lo + 128, n))))
        put(_DONE)

    t = threading.Thread(target=produce, daemon=True)
    t.start()
    total = 0
    get = q.get
    while (batch := get()) is not _DONE:
        for x in batch:  # type: ignore[attr-defined]
            total += x
    t.join()
    return total


@B.variant("peer: queue.SimpleQueue (unbounded)", scale=0.2)
def _simple_queue(ctx: Context) -> int:
    q: queue.SimpleQueue[object] = queue.SimpleQueue()
    n = ctx.n

    def produce() -> None:
        put = q.put
        for i in range(n):
            put(i)
        put(_DONE)

    t = threading.Thread(target=produce, daemon=True)
    t.start()
    total = 0
    get = q.get
    while (x := get()) is not _DONE:
        total += x  # type: ignore[operator]
    t.join()
    return total
