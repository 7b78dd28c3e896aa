"""3. Slow consumer: peak RSS growth across a thread boundary when the consumer is slower.

The consumer sleeps 1 ms every 1000 items. Each variant runs in its own subprocess, which reports the
growth of its peak RSS (VmHWM reset through /proc/self/clear_refs, or ru_maxrss) over its RSS at start.
"""

from __future__ import annotations

import queue
import threading
import time

from benchmarks._common import SumSubscriber, flowable, schedulers
from benchmarks._harness import Context, Target, benchmark

PAUSE_EVERY = 1000
PAUSE_S = 0.001
_DONE = object()


def _expect(ctx: Context) -> int:
    return ctx.n * (ctx.n - 1) // 2


B = benchmark(
    "slow_consumer",
    "Flowable.range(0, N).observe_on(new_thread()) into a consumer pausing 1 ms / 1000 items: peak RSS",
    n=2_000_000,
    quick_n=20_000,
    order=30,
    expect=_expect,
)


def _consume(get: object, n: int) -> int:
    total = 0
    count = 0
    while (x := get()) is not _DONE:  # type: ignore[operator]
        total += x
        count += 1
        if count % PAUSE_EVERY == 0:
            time.sleep(PAUSE_S)
    return total


def _threads(q: queue.Queue[object] | queue.SimpleQueue[object], n: int) -> int:
    def produce() -> None:
        put = q.put
        for i in range(n):
            put(i)
        put(_DONE)

    t = threading.Thread(target=produce, daemon=True)
    t.start()
    total = _consume(q.get, n)
    t.join()
    return total


# queue.Queue itself moves only ~0.15 M items/s here: a quarter of N keeps a run near 3 s.
@B.variant("queue.Queue(128) producer/consumer", baseline=True, isolated=True, scale=0.25)
def _bounded(ctx: Context) -> int:
    return _threads(queue.Queue(maxsize=128), ctx.n)


@B.variant(
    "Flowable observe_on(new_thread()) -> slow subscriber",
    isolated=True,
    targets=[Target("RSS +<= 5 MB", max_rss_mb=5.0)],
)
def _flowable(ctx: Context) -> int:
    F, s = flowable(), schedulers()
    sub = SumSubscriber(pause_every=PAUSE_EVERY, pause_s=PAUSE_S)
    F.range(0, ctx.n).observe_on(s.new_thread()).subscribe(sub)
    return sub.wait(ctx.timeout)


@B.variant(
    "Flowable subscribe_on(single()).observe_on(new_thread()) -> slow subscriber",
    isolated=True,
    targets=[Target("RSS +<= 5 MB", max_rss_mb=5.0)],
)
def _flowable_two_threads(ctx: Context) -> int:
    F, s = flowable(), schedulers()
    sub = SumSubscriber(pause_every=PAUSE_EVERY, pause_s=PAUSE_S)
    F.range(0, ctx.n).subscribe_on(s.single()).observe_on(s.new_thread()).subscribe(sub)
    return sub.wait(ctx.timeout)


@B.variant("peer: queue.SimpleQueue (unbounded, no backpressure)", isolated=True, scale=0.5)
def _unbounded(ctx: Context) -> int:
    return _threads(queue.SimpleQueue(), ctx.n)
