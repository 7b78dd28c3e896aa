"""``ParallelFlowable``: split a Flowable into ``n`` rails, run each rail's stages on a Scheduler,
and merge them back (RxJava ``parallel()`` / ``run_on()`` / ``sequential()``).

Example::

    (Flowable.range(0, 1000)
        .parallel(4)
        .run_on(schedulers.computation())
        .map(cpu_heavy)
        .sequential()
        .blocking_subscribe(print))

Backpressure: the source is consumed with a bounded prefetch (replenished at 75%); each element
goes to the next rail (round-robin) that has demand, so a slow rail never makes the others
overflow. ``sequential()`` merges the rails with bounded prefetch per rail.
Under the GIL, rails give concurrency for I/O-bound or GIL-releasing work, not CPU parallelism
for pure-Python code (they do on free-threaded builds).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from itertools import repeat, starmap
from typing import Any, Final, Generic, TypeVar

from .._internal import plugins
from .._internal.arguments import positive_int
from .._internal.atomics import AtomicFlag, AtomicInt
from .._internal.requests import MAX_DEMAND, add_request, produced, validate_request
from .._internal.subscriptions import CANCELLED
from .._spec import Subscriber, Subscription
from ._flowable import Flowable
from ._fused import batch_sink

__all__ = ["ParallelFlowable", "parallel"]

T = TypeVar("T")
R = TypeVar("R")
_MAX: Final = MAX_DEMAND

RailOp = Callable[[Flowable[Any]], Flowable[Any]]


class _Rail:
    """The Subscription of one rail's subscriber."""

    __slots__ = ("_parent", "_index", "requested", "subscriber", "cancelled")

    def __init__(self, parent: _Dispatcher, index: int, subscriber: Subscriber[Any]) -> None:
        self._parent = parent
        self._index = index
        self.requested = AtomicInt(0)
        self.subscriber: Subscriber[Any] | None = subscriber
        # rule 3.5: a rail counts once towards "every rail cancelled" (race: two cancels of the
        # same rail, possibly on two threads, used to count twice and cancel the source early)
        self.cancelled = AtomicFlag()

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                self._parent._fail(err)
                return
        add_request(self.requested, n)
        self._parent._drain()

    def cancel(self) -> None:
        if not self.cancelled.try_set():
            return  # rule 3.5: idempotent
        self.subscriber = None
        self._parent._rail_cancelled()


class _Dispatcher:
    """Subscribes to the source once all rails are subscribed and deals elements round-robin to
    rails with demand. One wip drain (race: rails request from their own threads)."""

    _rs_no_wrap = True
    __slots__ = (
        "_source", "_n", "_prefetch", "_limit", "_rails", "_subscribed", "_lock", "_upstream",
        "_queue", "_wip", "_done", "_error", "_next", "_consumed", "_cancelled_rails", "_all_cancelled",
        "__weakref__",
    )

    def __init__(self, source: Flowable[Any], n: int, prefetch: int) -> None:
        self._source: Flowable[Any] | None = source
        self._n = n
        self._prefetch = prefetch
        self._limit = prefetch - (prefetch >> 2)
        self._rails: list[_Rail | None] = [None] * n
        self._subscribed = 0
        self._lock = threading.Lock()  # guards rail registration
        self._upstream: Subscription = CANCELLED
        self._queue: deque[Any] = deque()
        self._wip = AtomicInt(0)
        self._done = False
        self._error: BaseException | None = None
        self._next = 0
        self._consumed = 0
        self._cancelled_rails = AtomicInt(0)
        # set when every rail cancelled; the queue is then cleared by the drain owner only (race:
        # a rail cancelling on its own thread vs the drain popping the queue on the upstream thread)
        self._all_cancelled = False

    def rail(self, index: int) -> Flowable[Any]:
        return _RailFlowable(self, index)

    def _subscribe_rail(self, index: int, subscriber: Subscriber[Any]) -> None:
        rail = _Rail(self, index, subscriber)
        with self._lock:
            if self._rails[index] is not None:
                from ..errors import ProtocolViolationError

                dup = True
            else:
                self._rails[index] = rail
                self._subscribed += 1
                dup = False
                ready = self._subscribed == self._n
        if dup:
            from .._internal.subscriptions import error_empty

            error_empty(subscriber, ProtocolViolationError("1.10", f"parallel rail {index} can be subscribed only once"))
            return
        subscriber.on_subscribe(rail)
        if self._done:
            self._drain()  # the stream already failed (rule 3.9 on an earlier rail): this rail gets it too
        if ready:
            src = self._source
            self._source = None
            if src is not None:
                src.subscribe(self)

    # -- upstream --
    def on_subscribe(self, subscription: Subscription) -> None:
        if self._upstream is not CANCELLED or self._done or self._all_cancelled:
            subscription.cancel()  # rule 2.5; or the rails already failed or all cancelled
            return
        self._upstream = subscription
        subscription.request(self._prefetch)

    def on_next(self, item: Any) -> None:
        if self._done:
            return  # rule 1.7: nothing after a terminal signal (or a rule 3.9 failure)
        self._queue.append(item)
        self._drain()

    def on_next_batch(self, items: list[Any]) -> None:
        """Library-internal batch protocol: queued with one ``extend`` (within the prefetch
        requested, as the one-by-one path), then one drain pass deals them."""
        if self._done:
            return
        self._queue.extend(items)
        self._drain()

    def on_error(self, error: BaseException) -> None:
        if self._done:
            plugins.on_error(error)
            return
        self._error = error
        self._done = True
        self._drain()

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        self._drain()

    def _fail(self, error: BaseException) -> None:
        self._upstream.cancel()
        self.on_error(error)

    def _rail_cancelled(self) -> None:
        if self._cancelled_rails.increment_and_get() == self._n:
            self._all_cancelled = True
            self._upstream.cancel()
            self._drain()  # the drain owner clears the queue

    def _drain(self) -> None:
        if self._wip.get_and_increment() != 0:
            return
        missed = 1
        q = self._queue
        n = self._n
        while True:
            rails = self._rails
            if self._all_cancelled:
                q.clear()
            elif self._done and (not q or self._error is not None):
                q.clear()
                err = self._error
                # every rail subscribed so far gets the terminal signal once; a rail subscribed
                # later (only after a rule 3.9 failure) gets it from its own _subscribe_rail drain
                for r in rails:
                    s = r.subscriber if r is not None else None
                    if s is not None:
                        r.subscriber = None  # type: ignore[union-attr]
                        if err is not None:
                            s.on_error(err)
                        else:
                            s.on_complete()
            elif q and self._deal_runs(rails, q, n):
                pass
            else:
                idle = 0
                i = self._next
                consumed = 0
                while q and idle < n:
                    rail = rails[i]
                    # read the subscriber once: a rail cancelling on another thread sets it to None
                    # between a check and a use (the element may still reach it: rule 3.6 allows that)
                    s = rail.subscriber if rail is not None else None
                    if s is not None and rail.requested.get() > 0:  # type: ignore[union-attr]
                        s.on_next(q.popleft())
                        if rail.requested.get() < _MAX:  # type: ignore[union-attr]
                            produced(rail.requested, 1)  # type: ignore[union-attr]
                        consumed += 1
                        idle = 0
                    else:
                        idle += 1
                    i = (i + 1) % n
                self._next = i
                if consumed:
                    c = self._consumed + consumed
                    if c >= self._limit:
                        self._consumed = 0
                        self._upstream.request(c)
                    else:
                        self._consumed = c
            missed = self._wip.add_and_get(-missed)
            if missed == 0:
                return


    def _deal_runs(self, rails: list[_Rail | None], q: deque[Any], n: int) -> bool:
        """The drain's dealing when every live rail takes batches (observe_on from run_on does):
        the same round-robin assignment as one by one, against a snapshot of each rail's demand,
        but each rail gets its elements of this pass as one list. False (nothing dealt) when a
        rail takes elements one by one. Drain owner only."""
        subs = [r.subscriber if r is not None else None for r in rails]
        sinks = [batch_sink(s) if s is not None else None for s in subs]
        for s, b in zip(subs, sinks, strict=True):
            if s is not None and b is None:
                return False
        left = [r.requested.get() if r is not None and s is not None else 0 for r, s in zip(rails, subs, strict=True)]
        i = self._next
        runs: list[list[Any]] = [[] for _ in range(n)]
        consumed = 0
        # The one-by-one dealing gives each element to the next rail (from i) that has demand.
        # While the rails with demand keep it, that is a slice per rail: the j-th of the m rails
        # with demand (in rail order from i) gets elements j, j + m, ... of the next k, where k
        # lets each take at most the smallest demand among them; then that rail drops out and
        # the rest is dealt again (at most n rounds). Popped in one C loop per round (the drain
        # owner is the only popper: the k counted stay in the deque until popped).
        while q:
            active = [r for r in (*range(i, n), *range(i)) if left[r] > 0]
            if not active:
                break
            m = len(active)
            k = min(len(q), min([left[r] for r in active]) * m)
            taken = list(starmap(q.popleft, repeat((), k)))
            for j in range(min(m, k)):
                r = active[j]
                part = taken[j::m]
                runs[r] += part
                left[r] -= len(part)
            consumed += k
            i = (active[(k - 1) % m] + 1) % n
        self._next = i
        for k in range(n):
            run = runs[k]
            b = sinks[k]
            rail = rails[k]
            if run and b is not None and rail is not None:
                b(run)
                if rail.requested.get() < _MAX:
                    produced(rail.requested, len(run))
        if consumed:
            c = self._consumed + consumed
            if c >= self._limit:
                self._consumed = 0
                self._upstream.request(c)
            else:
                self._consumed = c
        return True


class _RailFlowable(Flowable[Any]):
    __slots__ = ("_dispatcher", "_index")

    def __init__(self, dispatcher: _Dispatcher, index: int) -> None:
        self._dispatcher = dispatcher
        self._index = index

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        self._dispatcher._subscribe_rail(self._index, subscriber)


class ParallelFlowable(Generic[T]):
    """``n`` rails of a Flowable; build per-rail stages, then :meth:`sequential`.

    Example::

        squares = Flowable.range(0, 100).parallel(4).run_on(schedulers.computation()) \\
            .map(lambda x: x * x).sequential().to_list().blocking_first()
        sorted(squares)[:3]              # [0, 1, 4] (the rails interleave)
    """

    __slots__ = ("_source", "_n", "_prefetch", "_ops")

    def __init__(self, source: Flowable[Any], n: int, prefetch: int, ops: tuple[RailOp, ...] = ()) -> None:
        self._source = source
        self._n = n
        self._prefetch = prefetch
        self._ops = ops

    @property
    def parallelism(self) -> int:
        return self._n

    def _with(self, op: RailOp) -> ParallelFlowable[Any]:
        return ParallelFlowable(self._source, self._n, self._prefetch, self._ops + (op,))

    def run_on(self, scheduler: Any, prefetch: int = 128) -> ParallelFlowable[T]:
        """Move each rail onto its own worker of ``scheduler`` (observe_on per rail).

        The arguments are checked here, at assembly (as every Flowable operator does), not when
        the rails are built at subscription.
        """
        positive_int("run_on", "prefetch", prefetch)
        Flowable.never().observe_on(scheduler, prefetch)  # raises TypeError for a bad scheduler
        return self._with(lambda f: f.observe_on(scheduler, prefetch))

    def map(self, mapper: Callable[[T], R]) -> ParallelFlowable[R]:
        """Map on every rail."""
        _check_callable("map", mapper)
        return self._with(lambda f: f.map(mapper))

    def filter(self, predicate: Callable[[T], object]) -> ParallelFlowable[T]:
        """Filter on every rail."""
        _check_callable("filter", predicate)
        return self._with(lambda f: f.filter(predicate))

    def do_on_next(self, fn: Callable[[T], Any]) -> ParallelFlowable[T]:
        """Side effect on every rail."""
        _check_callable("do_on_next", fn)
        return self._with(lambda f: f.do_on_next(fn))

    def compose(self, fn: Callable[[Flowable[T]], Flowable[R]]) -> ParallelFlowable[R]:
        """Apply any ``Flowable -> Flowable`` function to every rail."""
        _check_callable("compose", fn)
        return self._with(fn)

    def sequential(self, prefetch: int = 128) -> Flowable[T]:
        """Merge the rails back into one Flowable (elements in arrival order)."""
        positive_int("sequential", "prefetch", prefetch)
        src, n, pf, ops = self._source, self._n, self._prefetch, self._ops

        def build() -> Flowable[T]:
            d = _Dispatcher(src, n, pf)
            rails = []
            for i in range(n):
                f: Flowable[Any] = d.rail(i)
                for op in ops:
                    f = op(f)
                rails.append(f)
            return Flowable.from_iterable(rails).flat_map(lambda r: r, max_concurrency=n, prefetch=prefetch)

        return Flowable.defer(build)


def _check_callable(op: str, fn: object) -> None:
    if not callable(fn):
        raise TypeError(f"parallel().{op}(): expected a callable, got {type(fn).__name__}")



def parallel(source: Flowable[T], n: int | None = None, prefetch: int = 128) -> ParallelFlowable[T]:
    """Split ``source`` into ``n`` rails (default: the CPU count), dealt round-robin by demand."""
    import os

    if n is None:
        n = os.cpu_count() or 1
    positive_int("parallel", "the number of rails", n)
    positive_int("parallel", "prefetch", prefetch)
    return ParallelFlowable(source, n, prefetch)
