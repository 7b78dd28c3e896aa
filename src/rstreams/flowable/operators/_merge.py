"""merge(*sources, max_concurrency, prefetch): interleave several sources as their elements arrive.

This is RxJava's flatMap with an identity mapper over a fixed list of sources, built on one
queue-drain (seed 004):

* Each subscribed source has an inner subscriber with its own queue; it asks its source for
  ``prefetch`` elements and is replenished by ``limit = prefetch - prefetch // 4`` each time the
  drain has consumed that many of its elements. Sources may emit from any thread: ``on_next``
  only appends to the inner's queue (single producer per queue) and bumps the shared ``wip``.
* Whoever moves ``wip`` from 0 runs the drain and is the only one to call the downstream (rule
  1.3: never two ``on_next`` at once, whatever threads the sources emit on). The drain emits up to
  the downstream demand (rule 1.1: demand read once per pass, ``produced`` published once per
  pass), round-robin over the inners starting where the previous pass stopped.
* ``max_concurrency`` sources are subscribed at once (others wait in order); the drain subscribes
  the next one when an inner finishes. Subscribing inside the drain keeps the stack flat: a
  synchronous source emits into its queue during ``subscribe`` and the drain loop goes on.
* ``just(x)`` sources take a scalar path (no subscription: the value goes to a scalar queue) and
  ``empty()`` sources are skipped.
* Errors: the first error (from a source, or a rule 3.9 bad request) is stored once (race: errors
  from several threads) and the drain cancels every inner, drops the queues and signals it.
  ``cancel`` does the same without a signal (the drain owner cleans up: race cancel vs drain).
"""

from __future__ import annotations

from collections import deque
from typing import Any, TypeVar, final

from ..._internal.arguments import check_bool, positive_int
from ..._internal.atomics import AtomicInt, AtomicRef
from ..._internal.drain import enter, leave
from ..._internal.requests import DEFAULT_PREFETCH, MAX_DEMAND, produced
from ..._internal.subscribers import NOOP_SUBSCRIBER
from ..._spec import Publisher, Subscriber
from .._base import FirstErrorDrain, as_flowable, variadic_sources
from .._flowable import Flowable
from .._fused import batch_sink
from ..sources._basic import NOTHING, scalar_value
from ._inner import QueuedInner

__all__ = ["merge"]

T = TypeVar("T")



class _MergeSubscription(FirstErrorDrain):
    _rs_no_wrap = True
    _op = "merge"
    __slots__ = (
        "_downstream",
        "_sources",
        "_next_index",
        "_max_concurrency",
        "_prefetch",
        "_inners",
        "_scalars",
        "_start",
        "_requested",
        "_wip",
        "_error",
        "_cancelled",
    )

    def __init__(
        self, downstream: Subscriber[Any], sources: tuple[Flowable[Any], ...], max_concurrency: int, prefetch: int
    ) -> None:
        self._downstream: Subscriber[Any] = downstream
        self._sources = sources
        self._next_index = 0  # drain-local: the next source to subscribe
        self._max_concurrency = max_concurrency
        self._prefetch = prefetch
        self._inners: list[QueuedInner] = []  # drain-local: the running inners
        self._scalars: deque[Any] = deque()  # drain-local: values of just(x) sources
        self._start = 0  # drain-local: round-robin start
        self._requested = AtomicInt(0)  # rule 1.1 (race: request vs drain)
        self._wip = AtomicInt(0)  # queue-drain: one drainer at a time (rule 1.3)
        self._error: AtomicRef[BaseException | None] = AtomicRef(None)  # first error wins
        self._cancelled = False

    # signals (FirstErrorDrain: inner_error, request) ---------------------------------------------
    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        if enter(self._wip):  # race: cancel vs a running drain (it cleans up)
            self._cleanup()

    def _cleanup(self) -> None:
        for inner in self._inners:
            inner.cancel()
            inner.queue.clear()
        self._inners = []
        self._scalars.clear()
        self._sources = ()
        self._downstream = NOOP_SUBSCRIBER  # rule 3.13

    # the drain ---------------------------------------------------------------------------------
    def drain(self) -> None:
        if not enter(self._wip):
            return
        missed = 1
        requested = self._requested
        while True:
            again = False
            if self._cancelled:
                self._cleanup()
                return
            if self._error.get() is not None:
                self._fail()
                return
            d = self._downstream
            nb = batch_sink(d)
            r = requested.get()
            e = 0
            scalars = self._scalars
            while e != r and scalars and not self._cancelled:  # rule 3.12: stop soon after cancel
                d.on_next(scalars.popleft())
                e += 1
            inners = self._inners
            n = len(inners)
            finished = False
            if n:
                start = self._start
                if start >= n:
                    start = 0
                i = start
                stop = -1
                # every inner is visited (even without demand) so finished ones are removed
                # and completion is not delayed until the next request
                for _ in range(n):
                    if self._cancelled:
                        self._cleanup()
                        return
                    if self._error.get() is not None:
                        self._fail()
                        return
                    inner = inners[i]
                    q = inner.queue
                    done = inner.done  # read before the queue (race: last on_next vs on_complete)
                    k = 0
                    if nb is not None and q:
                        # a batch-capable downstream: the whole run in one call (it stops at a
                        # cancel itself, rule 3.12)
                        k = len(q) if r - e >= len(q) else r - e
                        if k:
                            pop = q.popleft
                            nb([pop() for _ in range(k)])
                            e += k
                    else:
                        while e != r and q and not self._cancelled:
                            d.on_next(q.popleft())
                            e += 1
                            k += 1
                    if k:
                        inner.replenish(k)
                        if e == r and stop < 0:
                            stop = i  # out of demand: the next pass starts here (fairness)
                    if done and not q:
                        finished = True
                    i += 1
                    if i == n:
                        i = 0
                self._start = stop if stop >= 0 else i
                if finished:
                    self._inners = [x for x in inners if not (x.done and not x.queue)]
                    again = True
            if e and r < MAX_DEMAND:
                produced(requested, e)
            if self._cancelled:
                self._cleanup()
                return
            # subscribe more sources while there is room (subscribing may emit into queues: again)
            if self._subscribe_more():
                again = True
            if not self._inners and not self._scalars and self._next_index >= len(self._sources):
                if self._error.get() is not None:
                    self._fail()
                    return
                self._cancelled = True
                self._sources = ()
                self._downstream = NOOP_SUBSCRIBER  # rule 3.13
                d.on_complete()
                return
            if again:
                continue
            missed = leave(self._wip, missed)
            if missed == 0:
                return

    def _subscribe_more(self) -> bool:
        sources = self._sources
        count = len(sources)
        idx = self._next_index
        if idx >= count:
            return False
        inners = self._inners
        mc = self._max_concurrency
        started = False
        while idx < count and len(inners) < mc:
            if self._cancelled or self._error.get() is not None:
                break
            src = sources[idx]
            idx += 1
            self._next_index = idx
            started = True
            ok, v = scalar_value(src)
            if ok:
                if v is not NOTHING:
                    self._scalars.append(v)
                continue
            inner = QueuedInner(self, self._prefetch, "merge")
            inners.append(inner)
            src.subscribe(inner)
            if inner.queue or inner.done:
                # it emitted synchronously: emit that before subscribing the next source, so
                # synchronous sources come out in order when demand allows (as RxJava's merge)
                break
        return started

    def _fail(self) -> None:
        e = self._error.get()
        d = self._downstream
        self._cancelled = True
        self._cleanup()
        if e is not None:
            d.on_error(e)


@final
class _MergeFlowable(Flowable[T]):
    __slots__ = ("_sources", "_max_concurrency", "_prefetch")

    def __init__(self, sources: tuple[Flowable[Any], ...], max_concurrency: int, prefetch: int) -> None:
        self._sources = sources
        self._max_concurrency = max_concurrency
        self._prefetch = prefetch

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        s = _MergeSubscription(subscriber, self._sources, self._max_concurrency, self._prefetch)
        subscriber.on_subscribe(s)
        s.drain()  # subscribes the first sources (and completes at once if there are none)

    def __repr__(self) -> str:
        return f"Flowable.merge(<{len(self._sources)} sources>)"



def merge(
    *sources: Publisher[T], max_concurrency: int | None = None, prefetch: int = DEFAULT_PREFETCH, delay_error: bool = False
) -> Flowable[T]:
    flows = tuple(as_flowable("merge", s) for s in variadic_sources(sources))  # merge([a, b]): merge(Iterable)
    mc = MAX_DEMAND if max_concurrency is None else positive_int("merge", "max_concurrency", max_concurrency)
    pf = positive_int("merge", "prefetch", prefetch)
    check_bool("merge", "delay_error", delay_error)
    if not flows:
        from ..sources._basic import empty

        return empty()
    if len(flows) == 1:
        return flows[0]
    if delay_error:
        # RxJava's mergeDelayError: flat_map's error accumulation over the sources as inners (every
        # source runs to its end; the errors arrive together at the end, one or an ExceptionGroup)
        from ..sources._basic import from_iterable
        from ._flat_map import flat_map

        return flat_map(from_iterable(flows), _identity, None if mc == MAX_DEMAND else mc, pf, True)
    return _MergeFlowable(flows, mc, pf)


def _identity(source: Flowable[T]) -> Flowable[T]:
    return source
