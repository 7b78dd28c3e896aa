"""Every thread boundary against a hand-written floor with the same bound.

Each rstreams variant follows its own floor (its ratio is to that floor): a hand-written lockstep
hand-off between two threads with exactly the bound of the measured pipeline (at most 128 elements
between the threads, more requested when 96 were consumed), chunks materialised as lists, raw locks
as wake-ups, and the same per-element work as the rstreams consumer: ``on_next`` of the same
subscriber, ``total = add(total, x)``, ``extend``, a generator feeding ``sum``. No operator, no
scheduler, no rule checks: what any implementation of the same bounded pipeline has to pay here.
"""

from __future__ import annotations

import operator
import threading
from collections import deque
from collections.abc import Callable, Iterator
from itertools import chain
from typing import Any

from benchmarks._common import MAX_DEMAND, SumSubscriber, flowable, schedulers
from benchmarks._harness import Context, Target, benchmark

add = operator.add
_DONE = object()
_PREFETCH, _LIMIT = 128, 96  # observe_on's and blocking_iterable's defaults (limit = p - p // 4)


def _expect(ctx: Context) -> int:
    return ctx.n * (ctx.n - 1) // 2


B = benchmark(
    "boundaries",
    "each thread boundary (observe_on, subscribe_on, blocking_iterable) vs a hand-written floor with the same bound",
    n=1_000_000,
    quick_n=2_000,
    order=22,
    expect=_expect,
)


class _Lockstep:
    """The floor's channel: a producer thread emits ``list(range(i, i + d))`` for each demand ``d``
    (at most ``prefetch`` in flight); ``chunks()`` yields them on the consuming thread and asks for
    more once ``limit`` elements were consumed. One lock guards demand, the chunk queue and the two
    sleeping flags; two raw locks are the wake-ups (binary semaphores)."""

    def __init__(self, n: int, prefetch: int = _PREFETCH, limit: int = _LIMIT) -> None:
        self.n = n
        self.limit = limit
        self.lock = threading.Lock()
        self.producer_wake, self.consumer_wake = threading.Lock(), threading.Lock()
        self.producer_wake.acquire()
        self.consumer_wake.acquire()
        self.queue: deque[object] = deque()
        self.demand = prefetch
        self.producer_sleeps = False
        self.consumer_sleeps = False
        self.thread = threading.Thread(target=self._produce, daemon=True)
        self.thread.start()

    def _hand(self, item: object) -> None:
        with self.lock:
            self.queue.append(item)
            wake = self.consumer_sleeps
            self.consumer_sleeps = False
        if wake:
            self.consumer_wake.release()

    def _produce(self) -> None:
        i, n = 0, self.n
        while i < n:
            with self.lock:
                d = self.demand
                if d == 0:
                    self.producer_sleeps = True
                else:
                    d = min(d, n - i)
                    self.demand -= d
            if d == 0:
                self.producer_wake.acquire()
                continue
            self._hand(list(range(i, i + d)))
            i += d
        self._hand(_DONE)

    def _take(self) -> list[int] | None:
        """The next chunk on the consuming thread (sleeping while there is none); None at the end."""
        lock, q = self.lock, self.queue
        while True:
            with lock:
                chunk = q.popleft() if q else None
                if chunk is None:
                    self.consumer_sleeps = True
            if chunk is None:
                self.consumer_wake.acquire()
                continue
            if chunk is _DONE:
                self.thread.join()
                return None
            return chunk  # type: ignore[return-value]

    def _give_back(self, k: int) -> None:
        """Ask the producer for ``k`` more (waking it if it sleeps)."""
        with self.lock:
            self.demand += k
            wake = self.producer_sleeps
            self.producer_sleeps = False
        if wake:
            self.producer_wake.release()

    def chunks(self) -> Iterator[list[int]]:
        consumed = 0
        while (chunk := self._take()) is not None:
            yield chunk
            consumed += len(chunk)
            if consumed >= self.limit:
                self._give_back(consumed)
                consumed = 0


class _NoSubscription:
    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        pass


def _pipeline(F: Any, s: Any, n: int) -> Any:
    """The measured boundary: the range emits on subscribe_on's thread, the consumer runs on
    observe_on's (the hand-off the floors reproduce)."""
    return F.range(0, n).subscribe_on(s.single()).observe_on(s.new_thread())


# -- observe_on into a Subscriber (per-element on_next) ---------------------------------------


@B.variant("floor: lockstep, 128 in flight, SumSubscriber.on_next per element", baseline=True)
def _floor_subscriber(ctx: Context) -> int:
    sub = SumSubscriber()
    sub.on_subscribe(_NoSubscription())
    on_next = sub.on_next
    for chunk in _Lockstep(ctx.n).chunks():
        for x in chunk:
            on_next(x)
    return sub.total


@B.variant("observe_on -> Subscriber (on_next per element)", targets=[Target(">= 0.95x the floor", min_ratio=0.95)])
def _observe_on_subscriber(ctx: Context) -> int:
    F, s = flowable(), schedulers()
    sub = SumSubscriber()
    _pipeline(F, s, ctx.n).subscribe(sub)
    return sub.wait(ctx.timeout)


def _lockstep_on_workers(n: int, on_chunk: Callable[[list[int]], None]) -> None:
    """The floor's lockstep with its two hand-offs made through rstreams Workers instead of raw
    locks: the producer is a task on a ``single()`` worker, the consumer a drain on a
    ``new_thread()`` worker, scheduled only when idle (one lock round trip for the flag), the
    demand handed back as a task on the producer's worker. No operator, no rule check: what the
    schedulers' hops alone cost against the raw-lock floor."""
    s = schedulers()
    producer, consumer = s.single().create_worker(), s.new_thread().create_worker()
    queue: deque[list[int]] = deque()
    lock = threading.Lock()
    done = threading.Event()
    state = {"i": 0, "active": False, "consumed": 0, "seen": 0}

    def produce(d: int) -> None:
        i = state["i"]
        d = min(d, n - i)
        if d <= 0:
            return
        queue.append(list(range(i, i + d)))
        state["i"] = i + d
        with lock:
            if state["active"]:
                return
            state["active"] = True
        consumer.submit(drain)

    def drain() -> None:
        while True:
            while queue:
                chunk = queue.popleft()
                on_chunk(chunk)
                state["seen"] += len(chunk)
                c = state["consumed"] + len(chunk)
                if c >= _LIMIT:
                    producer.submit(lambda c=c: produce(c))
                    c = 0
                state["consumed"] = c
            if state["seen"] >= n:
                done.set()
                return
            with lock:
                state["active"] = False
            if not queue:
                return
            with lock:
                if state["active"]:
                    return
                state["active"] = True

    producer.submit(lambda: produce(_PREFETCH))
    done.wait()
    producer.dispose()
    consumer.dispose()


@B.variant("peer: the floor's lockstep with its hand-offs through rstreams Workers (the schedulers' own cost)")
def _floor_on_workers(ctx: Context) -> int:
    sub = SumSubscriber()
    sub.on_subscribe(_NoSubscription())
    on_next = sub.on_next

    def consume(chunk: list[int]) -> None:
        for x in chunk:
            on_next(x)

    _lockstep_on_workers(ctx.n, consume)
    return sub.total


# -- observe_on into reduce(add) -----------------------------------------------------------------


@B.variant("floor: lockstep, 128 in flight, total = add(total, x) per element", baseline=True)
def _floor_reduce(ctx: Context) -> int:
    total = 0
    for chunk in _Lockstep(ctx.n).chunks():
        for x in chunk:
            total = add(total, x)
    return total


@B.variant("observe_on -> reduce(add) (a batch is one C-level fold)", targets=[Target(">= 1.0x the floor", min_ratio=1.0)])
def _observe_on_reduce(ctx: Context) -> int:
    F, s = flowable(), schedulers()
    return _pipeline(F, s, ctx.n).reduce(add).blocking_first(timeout=ctx.timeout)  # type: ignore[no-any-return]


@B.variant("peer: lockstep, 128 in flight, sum(chunk) per chunk (the physical floor)")
def _floor_reduce_sum(ctx: Context) -> int:
    total = 0
    for chunk in _Lockstep(ctx.n).chunks():
        total += sum(chunk)
    return total


# -- observe_on into to_list ---------------------------------------------------------------------


def _expect_len(ctx: Context) -> int:
    return ctx.n


@B.variant("floor: lockstep, 128 in flight, out.extend(chunk)", baseline=True, expect=_expect_len)
def _floor_to_list(ctx: Context) -> int:
    out: list[int] = []
    for chunk in _Lockstep(ctx.n).chunks():
        out.extend(chunk)
    assert out[-1] == ctx.n - 1
    return len(out)


@B.variant("observe_on -> to_list (a batch is one extend)", targets=[Target(">= 1.0x the floor", min_ratio=1.0)], expect=_expect_len)
def _observe_on_to_list(ctx: Context) -> int:
    F, s = flowable(), schedulers()
    out: list[int] = _pipeline(F, s, ctx.n).to_list().blocking_first(timeout=ctx.timeout)
    assert out[-1] == ctx.n - 1
    return len(out)


# -- blocking_iterable (subscribe_on, consumed on the calling thread) ---------------------------


class _LockstepCut(_Lockstep):
    """:class:`_Lockstep` with RxJava's ``BlockingFlowableIterable`` replenish: ``limit`` is requested
    each time ``limit`` elements were consumed, a chunk cut where that point falls inside it (so
    after the first chunk the producer hands over ``limit`` elements per hand-off, not
    ``prefetch``). Same bound: at most ``prefetch`` in flight."""

    def chunks(self) -> Iterator[list[int]]:
        consumed, lim = 0, self.limit
        while (items := self._take()) is not None:
            at, k = 0, len(items)
            while at < k:
                m = min(lim - consumed, k - at)
                yield items if m == k else items[at : at + m]
                at += m
                consumed += m
                if consumed == lim:
                    consumed = 0
                    self._give_back(lim)


@B.variant("floor: lockstep, 128 in flight, a generator over the chunks into sum()", baseline=True)
def _floor_iterable(ctx: Context) -> int:
    return sum(x for chunk in _Lockstep(ctx.n).chunks() for x in chunk)


@B.variant("subscribe_on -> blocking_iterable() into sum()", targets=[Target(">= 1.0x the floor", min_ratio=1.0)])
def _blocking_iterable(ctx: Context) -> int:
    F, s = flowable(), schedulers()
    return sum(F.range(0, ctx.n).subscribe_on(s.single()).blocking_iterable())


@B.variant("peer: the floor with itertools.chain over the chunks into sum() (no generator resume per element)")
def _floor_iterable_chain(ctx: Context) -> int:
    return sum(chain.from_iterable(_Lockstep(ctx.n).chunks()))


@B.variant("peer: the floor with RxJava's replenish (96 requested per 96 consumed, chunks cut there: 96 per hand-off)")
def _floor_iterable_cut(ctx: Context) -> int:
    return sum(x for chunk in _LockstepCut(ctx.n).chunks() for x in chunk)


# -- subscribe_on alone (the subscriber runs on the worker; requests there go straight up) -------


def _chunked_on_thread(n: int, consume: Callable[[list[int]], None]) -> None:
    done = threading.Event()

    def run() -> None:
        for lo in range(0, n, _PREFETCH):
            consume(list(range(lo, min(lo + _PREFETCH, n))))
        done.set()

    threading.Thread(target=run, daemon=True).start()
    done.wait()


@B.variant("floor: one worker thread, 128-element lists, SumSubscriber(batch=128).on_next per element", baseline=True)
def _floor_subscribe_on(ctx: Context) -> int:
    # the measured subscriber's per-element work exactly: it counts down and requests 128 every
    # 128 elements (here into a subscription that does nothing)
    sub = SumSubscriber(batch=_PREFETCH)
    sub.on_subscribe(_NoSubscription())
    on_next = sub.on_next

    def consume(chunk: list[int]) -> None:
        for x in chunk:
            on_next(x)

    _chunked_on_thread(ctx.n, consume)
    return sub.total


@B.variant("subscribe_on(single()) -> Subscriber requesting 128 at a time", targets=[Target(">= 0.95x the floor", min_ratio=0.95)])
def _subscribe_on(ctx: Context) -> int:
    F, s = flowable(), schedulers()
    sub = SumSubscriber(batch=_PREFETCH)
    F.range(0, ctx.n).subscribe_on(s.single()).subscribe(sub)
    return sub.wait(ctx.timeout)


@B.variant("peer: subscribe_on(single()) -> Subscriber, unbounded demand")
def _subscribe_on_unbounded(ctx: Context) -> int:
    F, s = flowable(), schedulers()
    sub = SumSubscriber()
    assert MAX_DEMAND  # SumSubscriber() requests MAX_DEMAND
    F.range(0, ctx.n).subscribe_on(s.single()).subscribe(sub)
    return sub.wait(ctx.timeout)


# -- flat_map of 8 async inners; parallel(2).run_on(computation()).map(f).sequential() -----------


class _Fan:
    """The floor of several producers into one consumer: producer ``i`` runs on its own thread over
    ``ranges[i]`` (``fn`` applied to each element as it makes its chunk), with its own bound of
    ``prefetch`` in flight and ``limit`` re-requested, exactly as :class:`_Lockstep` per producer.
    One lock guards every demand, the shared chunk queue and the sleeping flags."""

    def __init__(self, ranges: list[range], fn: Callable[[int], int] | None = None) -> None:
        k = len(ranges)
        self.lock = threading.Lock()
        self.queue: deque[tuple[int, object]] = deque()
        self.consumer_wake = threading.Lock()
        self.consumer_wake.acquire()
        self.consumer_sleeps = False
        self.demand = [_PREFETCH] * k
        self.sleeps = [False] * k
        self.wakes = [threading.Lock() for _ in range(k)]
        for w in self.wakes:
            w.acquire()
        self.threads = [threading.Thread(target=self._produce, args=(i, r, fn), daemon=True) for i, r in enumerate(ranges)]
        for t in self.threads:
            t.start()

    def _hand(self, i: int, item: object) -> None:
        with self.lock:
            self.queue.append((i, item))
            wake = self.consumer_sleeps
            self.consumer_sleeps = False
        if wake:
            self.consumer_wake.release()

    def _produce(self, i: int, r: range, fn: Callable[[int], int] | None) -> None:
        pos, n = 0, len(r)
        while pos < n:
            with self.lock:
                d = self.demand[i]
                if d == 0:
                    self.sleeps[i] = True
                else:
                    d = min(d, n - pos)
                    self.demand[i] -= d
            if d == 0:
                self.wakes[i].acquire()
                continue
            part = r[pos : pos + d]
            self._hand(i, list(part) if fn is None else list(map(fn, part)))
            pos += d
        self._hand(i, _DONE)

    def chunks(self) -> Iterator[list[int]]:
        lock, q = self.lock, self.queue
        live = len(self.threads)
        consumed = [0] * live
        while live:
            with lock:
                entry = q.popleft() if q else None
                if entry is None:
                    self.consumer_sleeps = True
            if entry is None:
                self.consumer_wake.acquire()
                continue
            i, chunk = entry
            if chunk is _DONE:
                live -= 1
                continue
            yield chunk  # type: ignore[misc]
            c = consumed[i] + len(chunk)  # type: ignore[arg-type]
            if c >= _LIMIT:
                with lock:
                    self.demand[i] += c
                    wake = self.sleeps[i]
                    self.sleeps[i] = False
                c = 0
                if wake:
                    self.wakes[i].release()
            consumed[i] = c
        for t in self.threads:
            t.join()


def _eighths(n: int) -> list[range]:
    m = -(-n // 8)
    return [range(lo, min(lo + m, n)) for lo in range(0, n, m)]


@B.variant("floor: 8 producer threads, 128 in flight each, total = add(total, x) per element", baseline=True)
def _floor_flat_map(ctx: Context) -> int:
    total = 0
    for chunk in _Fan(_eighths(ctx.n)).chunks():
        for x in chunk:
            total = add(total, x)
    return total


@B.variant("flat_map of 8 inners on computation() -> reduce(add)", targets=[Target(">= 1.0x the floor", min_ratio=1.0)])
def _flat_map_inners(ctx: Context) -> int:
    F, s = flowable(), schedulers()
    parts = _eighths(ctx.n)
    return F.from_iterable(parts).flat_map(lambda r: F.range(r).subscribe_on(s.computation())).reduce(add).blocking_first(timeout=ctx.timeout)  # type: ignore[no-any-return]


def _inc(x: int) -> int:
    return x + 1


def _expect_inc(ctx: Context) -> int:
    return ctx.n * (ctx.n - 1) // 2 + ctx.n


@B.variant("floor: 2 threads map f over their half, 128 in flight each, add per element", baseline=True, expect=_expect_inc)
def _floor_parallel(ctx: Context) -> int:
    total = 0
    for chunk in _Fan([range(0, ctx.n, 2), range(1, ctx.n, 2)], _inc).chunks():
        for x in chunk:
            total = add(total, x)
    return total


@B.variant(
    "parallel(2).run_on(computation()).map(f).sequential() -> reduce(add)",
    targets=[Target(">= 1.0x the floor", min_ratio=1.0)],
    expect=_expect_inc,
)
def _parallel(ctx: Context) -> int:
    F, s = flowable(), schedulers()
    return F.range(0, ctx.n).parallel(2).run_on(s.computation()).map(_inc).sequential().reduce(add).blocking_first(timeout=ctx.timeout)  # type: ignore[no-any-return]
