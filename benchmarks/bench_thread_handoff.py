"""2. Thread hand-off: a range produced on one thread, consumed on another, vs queue.Queue(128)."""

from __future__ import annotations

import operator
import queue
import threading
from collections import deque

from benchmarks._common import SumSubscriber, flowable, schedulers
from benchmarks._harness import Context, Target, benchmark

_DONE = object()
add = operator.add


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


@B.variant("Flowable subscribe_on/observe_on -> subscriber, assembly tracing on")
def _flowable_traced(ctx: Context) -> int:
    """The same hand-off with ``rstreams.plugins.enable_assembly_tracing()``: a pass-through
    subscriber behind each traced stage (one call per element per stage; nothing else)."""
    from rstreams import plugins

    F, s = flowable(), schedulers()
    sub = SumSubscriber()
    plugins.enable_assembly_tracing()
    try:
        F.range(0, ctx.n).subscribe_on(s.single()).observe_on(s.new_thread()).subscribe(sub)
    finally:
        plugins.disable_assembly_tracing()
    return sub.wait(ctx.timeout)


@B.variant("peer: Flowable subscribe_on/observe_on -> reduce(add) (batches, no per-element call)")
def _flowable_reduce(ctx: Context) -> int:
    """The same hand-offs with a consumer that takes whole batches: what the boundary itself
    moves when the subscriber's per-element call is not part of the cost."""
    F, s = flowable(), schedulers()
    return F.range(0, ctx.n).subscribe_on(s.single()).observe_on(s.new_thread()).reduce(add).blocking_first()  # type: ignore[no-any-return]


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



class _NoSubscription:
    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        pass


@B.variant("peer: hand-written lockstep hand-off, 128 in flight, same subscriber (the floor)")
def _lockstep_floor(ctx: Context) -> int:
    """What any implementation of the measured pipeline can reach here: the same bound as
    ``observe_on``'s default prefetch (at most 128 elements between the threads, 96 re-requested
    after 96 are consumed), whole chunks per hand-off, raw locks as wake-ups, and every element
    delivered through the same ``SumSubscriber.on_next``. No operator, no scheduler, no rule checks."""
    n = ctx.n
    prefetch, limit = 128, 96
    sub = SumSubscriber()
    sub.on_subscribe(_NoSubscription())
    lock = threading.Lock()  # guards demand, the chunk queue and the two sleeping flags
    producer_wake, consumer_wake = threading.Lock(), threading.Lock()  # binary semaphores
    producer_wake.acquire()
    consumer_wake.acquire()
    chunks: deque[object] = deque()
    state = {"demand": prefetch, "producer_sleeps": False, "consumer_sleeps": False}

    def hand(item: object) -> None:
        with lock:
            chunks.append(item)
            wake = state["consumer_sleeps"]
            state["consumer_sleeps"] = False
        if wake:
            consumer_wake.release()

    def produce() -> None:
        i = 0
        while i < n:
            with lock:
                d = state["demand"]
                if d == 0:
                    state["producer_sleeps"] = True
                else:
                    d = min(d, n - i)
                    state["demand"] -= d
            if d == 0:
                producer_wake.acquire()
                continue
            hand(list(range(i, i + d)))
            i += d
        hand(_DONE)

    t = threading.Thread(target=produce, daemon=True)
    t.start()
    on_next = sub.on_next
    consumed = 0
    while True:
        with lock:
            chunk = chunks.popleft() if chunks else None
            if chunk is None:
                state["consumer_sleeps"] = True
        if chunk is None:
            consumer_wake.acquire()
            continue
        if chunk is _DONE:
            break
        for x in chunk:  # type: ignore[attr-defined]
            on_next(x)
        consumed += len(chunk)  # type: ignore[arg-type]
        if consumed >= limit:
            with lock:
                state["demand"] += consumed
                wake = state["producer_sleeps"]
                state["producer_sleeps"] = False
            consumed = 0
            if wake:
                producer_wake.release()
    t.join()
    return sub.total
