"""observe_on: move the signals to a Scheduler's worker, through a bounded prefetch queue.

The classic queue-drain (seed 004): the upstream side appends to a deque and schedules the drain
on the worker only when no drain is active; the drain delivers everything available up to
demand and replenishes the upstream in batches (``limit = prefetch - prefetch // 4``).

Race: producer append vs drain exit (a lost wake-up would strand an element). The producer's fast
path reads the ``_active`` flag without a lock after appending; the drain clears the flag under
``_lock`` and then re-checks the queue before it leaves. Producer "append then read flag" and
drain "clear flag then read queue" are ordered by the deque's own lock (the GIL, or the deque's
critical section on free-threaded builds), so at least one side sees the other: either the drain
sees the element or the producer sees the cleared flag and schedules a new drain under ``_lock``.
Terminal signals and requests always take the locked path.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any, Generic, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicInt
from ..._internal.requests import DEFAULT_PREFETCH, MAX_DEMAND, add_request, produced, validate_request
from ..._internal.subscriptions import CANCELLED
from ..._spec import Subscriber, Subscription
from ...schedulers import Scheduler, Worker
from .._flowable import Flowable
from .._fused import batch_sink
from ._inner import overflow_error

__all__ = ["observe_on"]

T = TypeVar("T")


@final
class _Chunk:
    """A queued batch (a private wrapper, so that user elements that are lists stay elements)."""

    __slots__ = ("items",)

    def __init__(self, items: list[Any]) -> None:
        self.items = items


@final
class _ObserveOnSubscriber(Generic[T]):
    _rs_no_wrap = True
    __slots__ = (
        "_downstream", "_worker", "_prefetch", "_limit", "_queue", "_upstream", "_requested",
        "_active", "_lock", "_done", "_error", "_cancelled", "_delay_error", "_consumed", "_bad", "_sink",
        "__weakref__",
    )

    def __init__(self, downstream: Subscriber[T], worker: Worker, prefetch: int, delay_error: bool) -> None:
        self._downstream: Subscriber[T] | None = downstream
        self._worker = worker
        self._prefetch = prefetch
        self._limit = prefetch - (prefetch >> 2)
        self._queue: deque[Any] = deque()  # elements, or _Chunk wrappers of whole batches
        self._upstream: Subscription = CANCELLED
        self._requested = AtomicInt(0)
        self._active = False
        self._lock = threading.Lock()  # race: drain exit vs producer/request scheduling
        self._done = False
        self._error: BaseException | None = None
        self._cancelled = False
        self._delay_error = delay_error
        self._consumed = 0
        # rule 3.9 error: wins over queued elements and over an upstream terminal already queued
        self._bad: BaseException | None = None
        # (on_next, on_next_batch or None) of the downstream, looked up by the first drain and
        # kept: the downstream never changes, only drops to None (then the drain never runs again)
        self._sink: tuple[Any, Any] | None = None

    # -- upstream side -----------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if self._upstream is not CANCELLED:
            subscription.cancel()  # rule 2.5
            return
        self._upstream = subscription
        d = self._downstream
        if d is not None:
            d.on_subscribe(self)
        if not self._cancelled:
            subscription.request(self._prefetch)

    def on_next(self, item: T) -> None:
        if self._done:
            return
        q = self._queue
        q.append(item)
        if len(q) > self._prefetch:
            # the upstream broke rule 1.1 (the drain replenishes only after taking elements out):
            # RxJava's "Queue is full?!" MissingBackpressureException, ahead of the queued elements
            self._upstream.cancel()
            self.on_error(overflow_error("observe_on", self._prefetch))
            return
        if not self._active:  # fast path; see the module docstring for why this is safe
            self._schedule()

    def on_next_batch(self, items: list[T]) -> None:
        """Library-internal batch hand-off: the whole list is queued as one entry (its callers
        never touch a list again after handing it on) and reaches a batch-capable downstream as is."""
        if self._done:
            return
        self._queue.append(_Chunk(items))
        if not self._active:
            self._schedule()

    def on_error(self, error: BaseException) -> None:
        if self._done or self._cancelled:
            # after a cancel nobody will deliver it: to the hook, never lost
            plugins.on_error(error, "observe_on: on_error after termination")
            return
        self._error = error
        self._done = True
        self._schedule()

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        self._schedule()

    # -- downstream side ---------------------------------------------------------------------
    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                # rule 3.9: cancel upstream and deliver the error on the worker (serially with
                # on_next), even if the upstream already completed with elements still queued
                self._upstream.cancel()
                self._bad = err
                self._schedule()
                return
        add_request(self._requested, n)
        self._schedule()

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        self._upstream.cancel()
        self._worker.dispose()
        with self._lock:
            if not self._active:
                self._queue.clear()
        self._downstream = None  # rule 3.13
        self._sink = None

    def _schedule(self) -> None:
        lock = self._lock
        lock.acquire()  # a raw round trip (nothing in between can raise): race as in the docstring
        if self._active:
            lock.release()
            return
        self._active = True
        lock.release()
        self._worker.submit(self._drain)

    # -- the drain (on the worker) -----------------------------------------------------------
    def _drain(self) -> None:
        q = self._queue
        requested = self._requested
        limit = self._limit
        consumed = self._consumed
        sink = self._sink
        if sink is None:
            d0 = self._downstream  # only ever replaced by None (cancel, terminate): looked up once
            if d0 is None:
                q.clear()
                return  # as below: a cancelled or terminated subscriber never drains again
            sink = self._sink = (d0.on_next, batch_sink(d0))
            if self._downstream is None:
                self._sink = None  # race: a cancel on another thread dropped the downstream meanwhile
        on_next, on_batch = sink
        while True:
            while True:
                if self._cancelled:
                    q.clear()
                    return  # _active stays set: a cancelled subscriber never drains again
                d = self._downstream
                done = self._done  # read before the queue: everything before a terminal is queued
                if d is None:
                    q.clear()
                    return
                bad = self._bad
                if bad is not None:
                    q.clear()
                    self._error = bad
                    self._terminate(d)
                    return
                if done and self._error is not None and not self._delay_error:
                    q.clear()
                    self._terminate(d)
                    return
                r = requested._value  # a plain read (see atomics)
                if r == 0 or not q:
                    if done and not q:
                        self._terminate(d)
                        return
                    break
                # One pass over the entries queued now (bounded: a fast producer cannot keep the
                # pass going). Entries are elements, or _Chunk wrappers of whole batches that are
                # handed on without being split into elements unless demand ends inside one.
                unbounded = r >= MAX_DEMAND
                pop = q.popleft
                singles: list[T] | None = None
                e = 0
                for _ in range(len(q)):
                    if not unbounded and e >= r:
                        break
                    x = pop()
                    if type(x) is _Chunk:
                        items: list[T] = x.items
                        k = len(items)
                        if not unbounded and e + k > r:
                            m = r - e
                            q.appendleft(_Chunk(items[m:]))  # the rest stays first in line
                            items = items[:m]
                            k = m
                        if on_batch is not None:
                            if singles:
                                on_batch(singles)
                                singles = None
                            on_batch(items)
                        else:
                            for y in items:
                                if self._cancelled:
                                    break
                                on_next(y)
                        e += k
                    elif on_batch is not None:
                        if singles is None:
                            singles = [x]
                        else:
                            singles.append(x)
                        e += 1
                    else:
                        on_next(x)
                        e += 1
                    if self._cancelled:
                        q.clear()
                        return
                if singles:
                    on_batch(singles)
                    if self._cancelled:
                        q.clear()
                        return
                if not unbounded:
                    produced(requested, e)  # demand published once per pass
                consumed += e
                if consumed >= limit:
                    self._upstream.request(consumed)  # replenish in batches
                    consumed = 0
            self._consumed = consumed
            lock = self._lock
            lock.acquire()
            self._active = False
            lock.release()
            # is there work (a rule 3.9 error, a terminal, elements under demand)? the common exit
            # (queue empty, not done) reads two fields
            if not q:
                if not self._done and self._bad is None:
                    return
            elif requested._value == 0 and self._bad is None and not (
                self._done and self._error is not None and not self._delay_error
            ):
                return
            lock.acquire()
            if self._active:
                lock.release()
                return  # another thread scheduled a drain after we cleared the flag
            self._active = True
            lock.release()

    def _terminate(self, d: Subscriber[T]) -> None:
        self._cancelled = True
        self._downstream = None
        self._sink = None
        e = self._error
        try:
            if e is not None:
                d.on_error(e)
            else:
                d.on_complete()
        finally:
            self._worker.dispose()


@final
class _ObserveOnFlowable(Flowable[T]):
    __slots__ = ("_source", "_scheduler", "_prefetch", "_delay_error")

    def __init__(self, source: Flowable[T], scheduler: Scheduler, prefetch: int, delay_error: bool) -> None:
        self._source = source
        self._scheduler = scheduler
        self._prefetch = prefetch
        self._delay_error = delay_error

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        worker = self._scheduler.create_worker()
        self._source.subscribe(_ObserveOnSubscriber(subscriber, worker, self._prefetch, self._delay_error))


def observe_on(source: Flowable[T], scheduler: Scheduler, prefetch: int = DEFAULT_PREFETCH, delay_error: bool = False) -> Flowable[T]:
    if not isinstance(scheduler, Scheduler):
        raise TypeError(f"observe_on(): expected a Scheduler, got {type(scheduler).__name__}")
    if not isinstance(prefetch, int) or prefetch <= 0:
        raise ValueError(f"observe_on(): prefetch must be a positive int, got {prefetch!r}")
    return _ObserveOnFlowable(source, scheduler, prefetch, delay_error)

