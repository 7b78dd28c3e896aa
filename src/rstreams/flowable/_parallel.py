"""``ParallelFlowable``: split a Flowable into ``n`` rails, run each rail's stages on a Scheduler,
and merge them back (RxJava ``parallel()`` / ``run_on()`` / ``sequential()``).

Example::

    (Flowable.range(0, 1000)
        .parallel(4)
        .run_on(schedulers.computation())
        .map(cpu_heavy)
        .sequential()
        .blocking_subscribe(print))

Operators (RxJava 3's): per rail and keeping the rail count, ``map``, ``filter``,
``do_on_next``, ``do_on_error``, ``do_on_complete``, ``flat_map``, ``concat_map``, ``compose``,
``collect`` and ``reduce_rails`` (one value per rail); back to one Flowable, ``sequential``,
``sequential_delay_error``, ``reduce``, ``sorted`` and ``to_sorted_list`` (the joins live in
``operators/_parallel_reduce.py``).

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
from typing import Any, Generic, TypeVar

from .._internal import plugins
from .._internal.arguments import check_bool, check_callable, positive_int
from .._internal.atomics import AtomicFlag, AtomicInt
from .._internal.drain import enter, leave
from .._internal.requests import DEFAULT_PREFETCH, MAX_DEMAND, add_request, produced, validate_request
from .._internal.subscriptions import CANCELLED
from .._spec import Publisher, Subscriber, Subscription
from ..schedulers import Scheduler
from ._flowable import Flowable
from ._fused import batch_sink

__all__ = ["ParallelFlowable", "parallel"]

T = TypeVar("T")
R = TypeVar("R")

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
        ready = False
        with self._lock:
            if self._rails[index] is not None:
                dup = True
            else:
                self._rails[index] = rail
                self._subscribed += 1
                dup = False
                ready = self._subscribed == self._n
        if dup:
            from .._internal.subscriptions import error_empty
            from ..errors import ProtocolViolationError

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
        if not enter(self._wip):
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
                if self._done and not q:
                    # the last elements went out and the source is done: signal it in this pass
                    # (a synchronous source completes inside the upstream.request above; no later
                    # request need come, e.g. one rail whose remaining demand it never uses up)
                    continue
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
                        if rail.requested.get() < MAX_DEMAND:  # type: ignore[union-attr]
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
                if self._done and not q and consumed:
                    continue  # as above: the completion after the last elements, in this pass
            missed = leave(self._wip, missed)
            if missed == 0:
                return


    def _deal_runs(self, rails: list[_Rail | None], q: deque[Any], n: int) -> bool:
        """The drain's dealing when every live rail takes batches (observe_on from run_on does):
        the same round-robin assignment as one by one, against a snapshot of each rail's demand,
        but each rail gets its elements of this pass as one list. False (nothing dealt) when a
        rail takes elements one by one. Drain owner only."""
        # one pass over the rails (no comprehension per list: this runs once per batch)
        sinks: list[Callable[[list[Any]], Any] | None] = []
        left: list[int] = []
        for rail in rails:
            s = rail.subscriber if rail is not None else None
            if s is None:
                sinks.append(None)
                left.append(0)
                continue
            b = batch_sink(s)
            if b is None:
                return False
            sinks.append(b)
            left.append(rail.requested._value)  # type: ignore[union-attr]  # a plain read (see atomics)
        i = self._next
        runs: list[list[Any] | None] = [None] * n
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
                run = runs[r]
                runs[r] = part if run is None else run + part
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
                req = rail.requested
                if req._value < MAX_DEMAND:
                    produced(req, len(run))
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

    def run_on(self, scheduler: Any, prefetch: int = DEFAULT_PREFETCH) -> ParallelFlowable[T]:
        """Move each rail onto its own worker of ``scheduler`` (observe_on per rail; RxJava
        ``runOn``: one ``create_worker()`` per rail, whatever the scheduler's own size).

        The arguments are checked here, at assembly (as every Flowable operator does), not when
        the rails are built at subscription.

        Example::

            Flowable.range(0, 100).parallel(4).run_on(schedulers.io()).map(fetch).sequential()

        Backpressure: each rail asks the dispatcher for ``prefetch`` elements and ``prefetch -
        prefetch // 4`` more each time that many were consumed (RxJava's ``runOn(scheduler,
        prefetch)``; ``sequential(prefetch)`` is the separate prefetch of the merge from each rail).
        Scheduler: the rail's later stages run on its worker; the worker is disposed when the
        rail terminates or is cancelled.
        """
        positive_int("parallel().run_on", "prefetch", prefetch)
        if not isinstance(scheduler, Scheduler):
            raise TypeError(f"parallel().run_on(): expected a Scheduler, got {type(scheduler).__name__}")
        return self._with(lambda f: f.observe_on(scheduler, prefetch))

    def map(self, mapper: Callable[[T], R]) -> ParallelFlowable[R]:
        """Map on every rail (``mapper`` may run on several threads at once).

        Example::

            Flowable.range(0, 4).parallel(2).map(lambda x: x * 10).sequential()

        Backpressure: passes requests and elements through, per rail.
        Scheduler: none; ``mapper`` runs on the rail's thread.
        """
        check_callable("parallel().map", mapper)
        return self._with(lambda f: f.map(mapper))

    def filter(self, predicate: Callable[[T], object]) -> ParallelFlowable[T]:
        """Filter on every rail (``predicate`` may run on several threads at once).

        Example::

            Flowable.range(0, 10).parallel(2).filter(lambda x: x % 3 == 0).sequential()

        Backpressure: passes requests through; a dropped element is replaced by a request of one.
        Scheduler: none; ``predicate`` runs on the rail's thread.
        """
        check_callable("parallel().filter", predicate)
        return self._with(lambda f: f.filter(predicate))

    def do_on_next(self, fn: Callable[[T], Any]) -> ParallelFlowable[T]:
        """Side effect on every rail (``fn`` may run on several threads at once).

        Example::

            Flowable.range(0, 4).parallel(2).do_on_next(print).sequential()

        Backpressure: passes requests and elements through untouched.
        Scheduler: none; ``fn`` runs on the rail's thread.
        """
        check_callable("parallel().do_on_next", fn)
        return self._with(lambda f: f.do_on_next(fn))

    def compose(self, fn: Callable[[Flowable[T]], Flowable[R]]) -> ParallelFlowable[R]:
        """Apply any ``Flowable -> Flowable`` function to every rail (called once per rail and
        subscription).

        Example::

            Flowable.range(0, 10).parallel(2).compose(lambda rail: rail.take(2)).sequential()

        Backpressure: as the stages ``fn`` adds.
        Scheduler: as the stages ``fn`` adds; they run on the rail's thread.
        """
        check_callable("parallel().compose", fn)
        return self._with(fn)

    def _rails(self) -> list[Flowable[Any]]:
        """The ``n`` rails with their stages, over one new dispatcher (one per subscription)."""
        d = _Dispatcher(self._source, self._n, self._prefetch)
        rails: list[Flowable[Any]] = []
        for i in range(self._n):
            f: Flowable[Any] = d.rail(i)
            for op in self._ops:
                f = op(f)
            rails.append(f)
        return rails

    def sequential(self, prefetch: int = DEFAULT_PREFETCH) -> Flowable[T]:
        """Merge the rails back into one Flowable (elements in arrival order).

        Example::

            Flowable.range(0, 4).parallel(2).map(lambda x: x * 10).sequential().to_list().blocking_first()

        Backpressure: each rail is prefetched with ``prefetch`` (replenished at 75%), as RxJava's
        ``sequential(prefetch)``; the downstream's demand is honoured exactly. (``run_on``'s own
        ``prefetch`` is what each rail asks of the dispatcher.)
        Scheduler: none; elements go out serially on whichever rail's thread delivers them.
        Errors: the first rail error cancels the other rails and is signalled once.
        """
        positive_int("parallel().sequential", "prefetch", prefetch)
        return self._merge(prefetch, delay_error=False)

    def sequential_delay_error(self, prefetch: int = DEFAULT_PREFETCH) -> Flowable[T]:
        """Merge the rails as :meth:`sequential`, but a rail's error waits until every rail has
        terminated (RxJava ``sequentialDelayError``); several errors become one
        ``ExceptionGroup``, an upstream error (which reaches every rail) is signalled once.

        Example::

            (Flowable.range(0, 6).parallel(2).map(lambda x: 1 // (x - 3))
                .sequential_delay_error().test().await_done(5))  # 4 values, then ZeroDivisionError

        Backpressure: as :meth:`sequential`.
        Scheduler: none; elements and the final error go out on the rails' threads.
        """
        positive_int("parallel().sequential_delay_error", "prefetch", prefetch)
        return self._merge(prefetch, delay_error=True)

    def _merge(self, prefetch: int, delay_error: bool) -> Flowable[T]:
        def build() -> Flowable[T]:
            rails = self._rails()
            merged: Flowable[T] = Flowable.from_iterable(rails).flat_map(
                lambda r: r, max_concurrency=len(rails), prefetch=prefetch, delay_error=delay_error
            )
            if delay_error:
                merged = merged.on_error_resume_next(_distinct_errors)
            return merged

        return Flowable.defer(build)

    # ------------------------------------------------------------------------------------------
    # per-rail folds and stages that keep the rails

    def reduce_rails(self, seed_factory: Callable[[], R], reducer: Callable[[R, T], R]) -> ParallelFlowable[R]:
        """Fold every rail into one value with its own seed (RxJava ``reduce(Supplier,
        BiFunction)``): ``n`` rails of one value each (an empty rail emits its seed).

        A separate name, not an overload of :meth:`reduce`: RxJava overloads ``reduce`` on the
        argument count, but the two return different kinds (``n`` rails here, one Flowable
        there) and take the seed differently from :meth:`Flowable.reduce` (a value, second); a
        name that says "per rail" reads better than an overload whose result kind flips with
        the number of arguments. ``seed_factory`` is called once per rail and subscription, so
        a mutable seed is never shared between rails.

        Example::

            (Flowable.range(0, 10).parallel(2).reduce_rails(lambda: 0, lambda a, x: a + x)
                .sequential().to_list().blocking_first())  # [20, 25] (rail order may vary)

        Backpressure: each rail consumes its upstream unbounded; its one value waits for the
        rail's request.
        Scheduler: none; ``seed_factory`` runs when the rail is subscribed, ``reducer`` on the
        rail's thread (the ``run_on`` worker), concurrently across rails.
        """
        check_callable("parallel().reduce_rails", seed_factory)
        check_callable("parallel().reduce_rails", reducer)

        def seed() -> R:
            s = seed_factory()
            if s is None:
                from ..errors import NoneElementError

                raise NoneElementError("parallel().reduce_rails(): seed_factory returned None (rule 2.13)")
            return s

        return self._with(lambda f: Flowable.defer(lambda: f.reduce(reducer, seed())))

    def collect(self, container_factory: Callable[[], R], accumulator: Callable[[R, T], Any]) -> ParallelFlowable[R]:
        """Collect every rail into its own container (RxJava ``collect``): ``n`` rails of one
        container each; ``accumulator(container, element)`` mutates it (its result is ignored).

        Example::

            (Flowable.range(0, 10).parallel(2).collect(list, list.append)
                .sequential().to_list().blocking_first())  # [[0, 2, 4, 6, 8], [1, 3, 5, 7, 9]]

        Backpressure: each rail consumes its upstream unbounded; its container waits for the
        rail's request.
        Scheduler: none; ``container_factory`` runs when the rail is subscribed, ``accumulator``
        on the rail's thread, concurrently across rails (each on its own container).
        """
        check_callable("parallel().collect", container_factory)
        check_callable("parallel().collect", accumulator)
        return self._with(lambda f: f.collect(container_factory, accumulator))

    def flat_map(
        self,
        mapper: Callable[[T], Publisher[R]],
        max_concurrency: int | None = DEFAULT_PREFETCH,
        prefetch: int = DEFAULT_PREFETCH,
        delay_error: bool = False,
    ) -> ParallelFlowable[R]:
        """``Flowable.flat_map`` on every rail (RxJava ``flatMap``; the defaults are RxJava's,
        ``bufferSize()`` for both). The rail count is kept.

        Example::

            (Flowable.range(0, 3).parallel(2).run_on(schedulers.io())
                .flat_map(lambda x: Flowable.just(x, -x)).sequential())

        Backpressure: each rail asks its upstream for ``max_concurrency`` elements ahead and one
        more per finished inner; each inner is prefetched with ``prefetch``.
        Scheduler: none; ``mapper`` runs on the rail's thread, inner elements go out on the
        inner's thread, serially per rail.
        """
        check_callable("parallel().flat_map", mapper)
        if max_concurrency is not None:
            positive_int("parallel().flat_map", "max_concurrency", max_concurrency)
        positive_int("parallel().flat_map", "prefetch", prefetch)
        check_bool("parallel().flat_map", "delay_error", delay_error)
        return self._with(lambda f: f.flat_map(mapper, max_concurrency, prefetch, delay_error))

    def concat_map(self, mapper: Callable[[T], Publisher[R]], prefetch: int = 2) -> ParallelFlowable[R]:
        """``Flowable.concat_map`` on every rail (RxJava ``concatMap``, prefetch 2): each rail's
        inners one after another, in that rail's order. The rail count is kept.

        Example::

            Flowable.range(0, 4).parallel(2).concat_map(lambda x: Flowable.just(x, x)).sequential()

        Backpressure: each rail prefetches ``prefetch`` upstream elements; demand carries
        across a rail's inners.
        Scheduler: none; ``mapper`` runs on the rail's thread; inner elements go out on the
        inner's thread.
        """
        check_callable("parallel().concat_map", mapper)
        positive_int("parallel().concat_map", "prefetch", prefetch)
        return self._with(lambda f: f.concat_map(mapper, prefetch))

    def do_on_error(self, fn: Callable[[BaseException], Any]) -> ParallelFlowable[T]:
        """Call ``fn(error)`` when a rail fails (RxJava ``doOnError``: once per failing rail, so
        an upstream error, which reaches every rail, calls it ``n`` times).

        Example::

            Flowable.error(ValueError("x")).parallel(2).do_on_error(print).sequential()

        Backpressure: passes requests and elements through untouched.
        Scheduler: none; ``fn`` runs on the thread of the failing rail.
        """
        check_callable("parallel().do_on_error", fn)
        return self._with(lambda f: f.do_on_error(fn))

    def do_on_complete(self, fn: Callable[[], Any]) -> ParallelFlowable[T]:
        """Call ``fn()`` when a rail completes (RxJava ``doOnComplete``: once per rail).

        Example::

            Flowable.range(0, 4).parallel(2).do_on_complete(lambda: print("rail done")).sequential()

        Backpressure: passes requests and elements through untouched.
        Scheduler: none; ``fn`` runs on the thread of the completing rail.
        """
        check_callable("parallel().do_on_complete", fn)
        return self._with(lambda f: f.do_on_complete(fn))

    # ------------------------------------------------------------------------------------------
    # joins: every rail into one Flowable

    def reduce(self, reducer: Callable[[T, T], T]) -> Flowable[T]:
        """Reduce every rail, then the rails' values (in rail order) with the same ``reducer``,
        into one value (RxJava ``reduce(BiFunction)``). Empty rails take no part; if every rail
        is empty the result completes empty. ``reducer`` should be associative (the split is by
        demand, not by position). For a seed per rail see :meth:`reduce_rails`.

        Example::

            (Flowable.range(0, 100).parallel(4).run_on(schedulers.computation())
                .map(lambda x: x * x).reduce(operator.add).blocking_first())  # 328350

        Backpressure: the rails are consumed unbounded; the one result waits for a request.
        Scheduler: none; the per-rail folds run on the rails' threads; the final fold of the
        ``n`` rail values runs, and the result goes out, on the thread of the last rail to
        complete (or on the requesting thread if the request comes later).
        Errors: the first rail error (or a raising ``reducer``) cancels the other rails and is
        signalled once; a ``None`` from ``reducer`` is a NoneElementError (rule 2.13).
        """
        check_callable("parallel().reduce", reducer)
        from .operators._parallel_reduce import reduce_rails_full

        return reduce_rails_full(lambda: [f.reduce(reducer) for f in self._rails()], reducer)

    def sorted(self, key: Callable[[T], Any] | None = None, reverse: bool = False) -> Flowable[T]:
        """Sort every rail on its own thread, then emit the merge of the sorted rails in order
        (RxJava ``sorted``), as the downstream requests them. ``key`` and ``reverse`` as
        :meth:`Flowable.sorted` (Python sorts by key where RxJava takes a comparator: wrap one
        with ``functools.cmp_to_key``). Stable within a rail; equal elements of different rails
        come in rail order.

        Example::

            (Flowable.range(0, 10).map(lambda x: 9 - x).parallel(2)
                .run_on(schedulers.computation()).sorted().test().await_done(5))  # 0, 1, ..., 9

        Backpressure: the rails are consumed unbounded (every element is held until every rail
        completes); then the sorted elements go out as the downstream requests them, the k-way
        merge (``heapq.merge``) advancing one element per element requested.
        Scheduler: none; ``key`` runs on each rail's thread for its sort, and again in the merge
        on the thread that drains (the last rail's, or the requesting one).
        Errors: the first rail error (or a raising ``key``) cancels the other rails and is
        signalled once.
        """
        from .operators._sorted import _check

        _check("sorted", key, reverse)
        from .operators._parallel_reduce import sorted_rails

        return sorted_rails(lambda: [f.to_sorted_list(key, reverse) for f in self._rails()], key, reverse)

    def to_sorted_list(self, key: Callable[[T], Any] | None = None, reverse: bool = False) -> Flowable[list[T]]:
        """Sort every rail on its own thread, then merge the sorted rails into one list (RxJava
        ``toSortedList``). An empty source gives ``[]``. ``key`` and ``reverse`` as :meth:`sorted`.

        Example::

            Flowable.just(3, 1, 2).parallel(2).to_sorted_list().test().assert_result([1, 2, 3])

        Backpressure: the rails are consumed unbounded; the one list waits for a request.
        Scheduler: none; the per-rail sorts run on the rails' threads; the merge runs, and the
        list goes out, on the thread of the last rail to complete (or the requesting thread).
        Errors: as :meth:`sorted`.
        """
        from .operators._sorted import _check

        _check("to_sorted_list", key, reverse)
        from .operators._parallel_reduce import to_sorted_list_rails

        return to_sorted_list_rails(lambda: [f.to_sorted_list(key, reverse) for f in self._rails()], key, reverse)


def _distinct_errors(error: BaseException) -> Flowable[Any]:
    """The delayed errors of the rails, each error object once: an upstream error reaches every
    rail, and is one error, not ``n`` (RxJava's composite of delayed errors drops duplicates too)."""
    if isinstance(error, BaseExceptionGroup):
        seen: dict[int, BaseException] = {}
        for e in error.exceptions:
            seen.setdefault(id(e), e)
        unique = list(seen.values())
        if len(unique) == 1:
            return Flowable.error(unique[0])
        if len(unique) < len(error.exceptions):
            return Flowable.error(error.derive(unique))
    return Flowable.error(error)


def parallel(source: Flowable[T], n: int | None = None, prefetch: int = DEFAULT_PREFETCH) -> ParallelFlowable[T]:
    """Split ``source`` into ``n`` rails (default: the CPU count), dealt round-robin by demand."""
    import os

    if n is None:
        n = os.cpu_count() or 1
    positive_int("parallel", "the number of rails", n)
    positive_int("parallel", "prefetch", prefetch)
    return ParallelFlowable(source, n, prefetch)
