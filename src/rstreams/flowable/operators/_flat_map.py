"""flat_map: map each element to a Publisher and merge the inner streams (RxJava FlowableFlatMap).

One wip drain serves every inner queue, the queue of scalar results and the downstream demand:

* The outer source is backpressured: at most ``max_concurrency`` elements are requested ahead,
  and one more each time an inner (or a scalar result) is finished.
* Each inner is prefetched with ``prefetch`` and replenished at 75% of it, once per batch.
* Scalar shortcut: a mapper result that is ``Flowable.just(x)`` is emitted directly when the
  drain is free and there is demand (no inner subscription); ``Flowable.empty()`` only asks the
  outer for one more element.
* An inner may signal from any thread. Whoever moves ``_wip`` from 0 emits (race: several inners
  and the downstream's request all wanting to emit; rule 1.3 keeps on_next serial); the others
  queue their element and bump ``_wip`` so the emitter loops again (no lost wake-up).
* Errors: without ``delay_error`` the first error cancels everything and is signalled; with it,
  errors are collected and signalled at the end (several become an ExceptionGroup).
* Cost per element independent of the number of live inners (``group_by`` into 20,000 groups):
  the live inners are a dict used as an ordered set (O(1) add and remove, under ``_lock``), and
  the drain visits only inners with work: ``_ready``, a deque that gets one entry per element an
  inner queues (and one when it completes), appended *after* the element (race: an inner's
  thread queueing vs the emitter popping; an entry is never seen before its element, so no
  wake-up is lost, and without a "queued" flag nothing is checked-then-set across threads). An
  entry whose element went out with an earlier entry finds an empty queue and costs one pop; an
  inner whose run is cut short by demand goes back to the front. Completions go to ``_finished``
  (an entry after ``done`` was set), visited on every pass even without demand: an inner with an
  empty queue is removed there; one with elements left is removed by the ``_ready`` visit that
  empties it (it reads ``done`` after emptying).
* Group folds: a mapper result that is an aggregate (``count``, ``reduce``, ``to_list``, ...) of a
  fresh ``group_by`` group, optionally followed by ``map``, is not subscribed: the group folds its
  elements in place (group_by's ``GroupFold``, which is then this element's inner: the same
  ``_inners``/``_ready``/``_finished`` bookkeeping, its result through ``_inner_last``). Same
  signals, a fraction of the per-group objects and calls.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from itertools import repeat, starmap
from typing import Any, TypeVar, final

from ..._internal import plugins
from ..._internal.arguments import check_bool, check_callable_arg, positive_int, positive_int_or_none
from ..._internal.atomics import AtomicInt
from ..._internal.drain import enter, leave
from ..._internal.requests import DEFAULT_PREFETCH, MAX_DEMAND, add_request, produced, validate_request
from ..._internal.subscriptions import EMPTY
from ..._spec import Publisher, Subscriber
from .._base import MappedInnersMain, none_result_error
from .._flowable import Flowable
from .._fused import batch_sink
from ..sources._basic import NOTHING, scalar_value
from ._group_by import FOLDABLE, group_fold
from ._inner import PrefetchInner

__all__ = ["flat_map", "FlatMapSubscriber"]

T = TypeVar("T")
R = TypeVar("R")


class FlatMapSubscriber(MappedInnersMain):
    """The outer subscriber and the downstream's Subscription."""

    _op = "flat_map"
    __slots__ = (
        "_max_concurrency",
        "_delay_error",
        "_inners",
        "_lock",
        "_scalars",
        "_outer_pending",
        "_unbounded_outer",
        "_scalar_limit",
        "_ready",
        "_finished",
    )

    def __init__(
        self,
        downstream: Subscriber[Any],
        mapper: Callable[[Any], Publisher[Any]],
        max_concurrency: int | None,
        prefetch: int,
        delay_error: bool,
    ) -> None:
        super().__init__(downstream, mapper, prefetch)
        self._max_concurrency = max_concurrency
        self._unbounded_outer = max_concurrency is None
        self._delay_error = delay_error
        # live inners, a dict as an ordered set (O(1) add/remove); race: the outer's thread adds,
        # the emitter removes, cancel swaps it: every access that mutates or iterates holds _lock
        self._inners: dict[PrefetchInner, None] = {}
        self._lock = threading.Lock()
        # inners with work, one entry per queued element or completion (see the module docstring)
        self._ready: deque[PrefetchInner] = deque()
        self._finished: deque[PrefetchInner] = deque()  # completed inners, one entry each
        self._scalars: deque[Any] = deque()
        # scalar and empty() results whose slot was freed but not yet re-requested from the outer.
        # One counter for both (race: the emitter and the outer's thread add to it): two separate
        # counters could each hold up to _scalar_limit - 1 slots, together max_concurrency, and the
        # outer would never be asked again (a stall).
        self._outer_pending = AtomicInt(0)
        # scalar results free their slot at once; the outer is re-requested for them in batches
        self._scalar_limit = (
            1 if max_concurrency is None else max(1, max_concurrency - (max_concurrency >> 2))
        )

    # -- outer --------------------------------------------------------------------------------
    def _outer_request(self) -> int:
        mc = self._max_concurrency
        return MAX_DEMAND if mc is None else mc

    def on_next(self, item: Any, mapped: Any = NOTHING) -> None:
        if self._done or self._cancelled:
            return
        if mapped is NOTHING:
            try:
                p = self._mapper(item)
            except Exception as e:
                self._upstream.cancel()
                self.on_error(e)
                return
        else:
            p = mapped  # on_next_batch mapped it already
        if p is None:
            self._upstream.cancel()
            self.on_error(none_result_error("flat_map", "the mapper"))
            return
        if type(p) in FOLDABLE:
            # group.<aggregate>()[.map(f)] over a fresh group: the group folds in place, and the
            # fold is this element's inner (group_by's GroupFold: same signals, no subscriber chain)
            # (registered in _inners and started by group_fold: see its _claim_attach for the order)
            if group_fold(p, self, True) is not None:
                return
        else:
            is_scalar, value = scalar_value(p)
            if is_scalar:
                if value is NOTHING:
                    self._slots_freed(1)
                else:
                    self._scalar_next(value)
                return
        if not callable(getattr(p, "subscribe", None)):
            self._upstream.cancel()
            self.on_error(TypeError(f"flat_map(): the mapper returned a {type(p).__name__}, not a Publisher"))
            return
        inner = _FlatMapInner(self, self._prefetch, "flat_map")
        with self._lock:
            self._inners[inner] = None
        p.subscribe(inner)

    # library-internal batch protocol (a fused or batching upstream): the elements arrive within
    # the outer demand, so mapping them all now is what the one-by-one path does; runs of scalar
    # results go downstream as one batch through one pass of the emitter
    accepts_batches = True

    def on_next_batch(self, items: list[Any]) -> None:
        if self._done or self._cancelled:
            return
        mapper = self._mapper
        values: list[Any] = []
        empties = 0
        for item in items:
            try:
                p = mapper(item)
            except Exception as e:
                self._flush_scalars(values, empties)
                self._upstream.cancel()
                self.on_error(e)
                return
            if p is not None:
                is_scalar, value = scalar_value(p)
                if is_scalar:
                    if value is NOTHING:
                        empties += 1
                    else:
                        values.append(value)
                    continue
            # an inner to subscribe (or a bad result): what came before goes first, in order
            self._flush_scalars(values, empties)
            values = []
            empties = 0
            self.on_next(item, p)
            if self._done or self._cancelled:
                return
        self._flush_scalars(values, empties)

    def _flush_scalars(self, values: list[Any], empties: int) -> None:
        if empties:
            self._slots_freed(empties)
        if not values:
            return
        wip = self._wip
        n = len(values)
        if wip._value == 0 and wip.compare_and_set(0, 1):
            # the emitter (rule 1.3): emit what demand allows now, queue the rest behind it
            d = self._downstream
            r = self._requested._value
            k = 0
            if d is not None and r != 0 and not self._scalars:
                k = n if r >= n else r
                head = values if k == n else values[:k]
                nb = batch_sink(d)
                if nb is not None:
                    nb(head)
                else:
                    on_next = d.on_next
                    for v in head:
                        if self._cancelled:  # rule 3.12: a cancel from on_next stops at once
                            break
                        on_next(v)
                if r < MAX_DEMAND:
                    produced(self._requested, k)
                self._slots_freed(k)
            if k < n:
                self._scalars.extend(values[k:] if k else values)
            if wip.decrement_and_get() == 0:
                return
        else:
            self._scalars.extend(values)
            if not enter(wip):
                return
        self._drain_loop()

    def on_error(self, error: BaseException) -> None:
        if self._done or self._cancelled or (not self._delay_error and self._errors.has_error()):
            # the first error wins; after a cancel nobody will deliver it: to the hook, never lost
            plugins.on_error(error, "flat_map: on_error after termination")
            return
        if not self._errors.add(error):
            plugins.on_error(error)
            return
        self._done = True
        self._upstream = EMPTY  # the outer terminated: nothing left to cancel there (rule 2.4)
        if not self._delay_error:
            with self._lock:
                inners = list(self._inners)
            for inner in inners:
                inner.cancel()
        self._drain()

    def _slots_freed(self, n: int) -> None:
        """``n`` scalar/empty results freed their slots: re-request the outer in batches."""
        if self._unbounded_outer:
            return
        pending = self._outer_pending
        if pending.add_and_get(n) >= self._scalar_limit:
            k = pending.get_and_set(0)  # race: several callers past the limit; one takes the batch
            if k:
                self._request_outer(k)

    def _request_outer(self, n: int) -> None:
        if not self._unbounded_outer and not self._done:
            self._upstream.request(n)

    # -- downstream ---------------------------------------------------------------------------
    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                self._cancel_all()
                self._errors.add(err)
                self._done = True
                self._delay_error = False
                self._drain()
                return
        add_request(self._requested, n)
        self._drain()

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        self._cancel_all()
        if enter(self._wip):
            self._clear()
        self._downstream = None  # rule 3.13

    def _cancel_all(self) -> None:
        self._upstream.cancel()
        with self._lock:
            inners, self._inners = self._inners, {}
        for inner in inners:
            inner.cancel()

    def _clear(self) -> None:
        self._scalars.clear()
        self._ready.clear()
        self._finished.clear()
        with self._lock:
            inners = list(self._inners)
        for inner in inners:
            q = inner.queue
            if q:  # a group fold has no queue until its result
                q.clear()

    # -- emission -----------------------------------------------------------------------------
    def _emit_or_queue(self, queue: deque[Any], value: Any) -> bool:
        """As the emitter (``_wip`` owner): emit ``value`` now if there is demand and nothing is
        queued ahead of it in ``queue`` (True), else queue it for the drain loop (False)."""
        d = self._downstream
        r = self._requested._value
        if d is not None and r != 0 and not queue:
            d.on_next(value)
            if r < MAX_DEMAND:
                produced(self._requested, 1)
            return True
        queue.append(value)
        return False

    def _scalar_next(self, value: Any) -> None:
        wip = self._wip
        if wip._value == 0 and wip.compare_and_set(0, 1):
            if self._emit_or_queue(self._scalars, value):
                self._slots_freed(1)
            if wip.decrement_and_get() == 0:
                return
        else:
            self._scalars.append(value)
            if not enter(wip):
                return
        self._drain_loop()

    def _inner_next(self, inner: PrefetchInner, value: Any) -> None:
        wip = self._wip
        if wip._value == 0 and wip.compare_and_set(0, 1):
            if self._emit_or_queue(inner.queue, value):
                inner.consumed(1)
            else:
                self._ready.append(inner)  # after its element (see the module docstring)
            if wip.decrement_and_get() == 0:
                return
        else:
            inner.queue.append(value)
            self._ready.append(inner)  # after its element: the emitter never pops it too early
            if not enter(wip):
                return
        self._drain_loop()

    def _inner_next_batch(self, inner: PrefetchInner, items: list[Any]) -> None:
        inner.queue.extend(items)  # behind what this inner queued before (its order)
        self._ready.append(inner)  # one entry for the run, after it
        if not enter(self._wip):
            return  # the emitter loops again (race: several inners and requests, rule 1.3)
        self._drain_loop()

    def _inner_last(self, inner: PrefetchInner, value: Any) -> None:
        """An inner's only/last value and its completion in one signal (library-internal, from a
        single-valued source such as ``from_callable(...).subscribe_on(s)``): one pass through
        the emitter instead of two, and the slot is freed at once when the value goes out."""
        wip = self._wip
        if wip._value == 0 and wip.compare_and_set(0, 1):
            inner.done = True
            if self._emit_or_queue(inner.queue, value):
                if self._remove(inner):
                    self._request_outer(1)  # the finished inner frees its slot
            else:
                self._ready.append(inner)
                self._finished.append(inner)
            if not self._done and wip.decrement_and_get() == 0:
                return
            # more signals arrived meanwhile, or the outer is done (this may have been the last
            # inner): the drain loop decides, still as the emitter
        else:
            inner.queue.append(value)
            inner.done = True
            self._ready.append(inner)
            self._finished.append(inner)
            if not enter(wip):
                return
        self._drain_loop()

    def _inners_last(self, inners: list[Any], values: list[Any]) -> None:
        """Several inners' only values and completions at once, in this order (library-internal:
        group_by completing the groups it folded in place): one pass through the emitter, the values
        that demand allows as one list for a batch-capable downstream, the inners removed under one
        lock; what demand does not allow is queued as :meth:`_inner_last` queues it."""
        for inner in inners:
            inner.done = True
        wip = self._wip
        if wip._value == 0 and wip.compare_and_set(0, 1):
            d = self._downstream
            n = len(values)
            k = 0
            if d is not None and not self._ready and not self._scalars:  # nothing queued ahead
                r = self._requested._value
                k = n if r >= n else r
                if k:
                    head = values if k == n else values[:k]
                    nb = batch_sink(d)
                    if nb is not None:
                        nb(head)
                    else:
                        on_next = d.on_next
                        e = 0
                        for v in head:
                            on_next(v)
                            e += 1
                            if self._cancelled:  # rule 3.12: a cancel from on_next stops at once
                                break
                        k = e
                    if r < MAX_DEMAND:
                        produced(self._requested, k)
                    freed = 0
                    with self._lock:  # O(1) each, identity (see _remove)
                        pop = self._inners.pop
                        for inner in inners[:k] if k < n else inners:
                            if pop(inner, 0) is None:
                                freed += 1
                    if freed:
                        self._request_outer(freed)  # the finished inners free their slots
            if k < n:
                self._queue_last(inners[k:], values[k:])
            if not self._done and wip.decrement_and_get() == 0:
                return
        else:
            self._queue_last(inners, values)
            if not enter(wip):
                return
        self._drain_loop()

    def _queue_last(self, inners: list[Any], values: list[Any]) -> None:
        ready = self._ready
        finished = self._finished
        for inner, v in zip(inners, values, strict=True):
            q = inner.queue
            if q is None:
                q = inner.queue = deque()
            q.append(v)
            ready.append(inner)  # after its element (see the module docstring)
            finished.append(inner)

    def _inner_error(self, inner: PrefetchInner, error: BaseException) -> None:
        if (not self._delay_error and self._errors.has_error()) or not self._errors.add(error):
            plugins.on_error(error)
            return
        inner.done = True
        self._finished.append(inner)  # delay_error: the drain removes it once its queue is empty
        if not self._delay_error:
            self._done = True
            self._cancel_all()
        self._drain()

    def _drain(self) -> None:
        if enter(self._wip):
            self._drain_loop()

    def _inner_done(self, inner: PrefetchInner) -> None:
        """An inner completed: the drain removes it once its queue is empty."""
        self._finished.append(inner)  # after ``done`` was set
        self._drain()

    def _remove(self, inner: PrefetchInner) -> bool:
        """O(1); True when ``inner`` was live (it frees its slot once: entries may repeat)."""
        with self._lock:
            return self._inners.pop(inner, 0) is None  # identity: inners define no __eq__

    def _drain_loop(self) -> None:
        missed = 1
        wip = self._wip
        requested = self._requested
        scalars = self._scalars
        while True:
            if self._cancelled:
                self._clear()
                return
            d = self._downstream
            if d is None:
                self._clear()
                return
            if self._done and self._errors.has_error() and not self._delay_error:
                self._terminate(d)
                return
            r = requested.get()
            e = 0
            replenish = 0
            scalar_count = 0
            on_next = d.on_next
            nb = batch_sink(d)
            if nb is not None and scalars and r != 0:
                # a batch-capable downstream takes what demand allows as one list (one call)
                k = _run_length(r, e, len(scalars))
                nb(_pop_run(scalars, k))
                e += k
                scalar_count += k
                if self._cancelled:
                    self._clear()
                    return
            while e != r and scalars:
                on_next(scalars.popleft())
                e += 1
                scalar_count += 1
                if self._cancelled:
                    self._clear()
                    return
            ready = self._ready
            while ready:
                if e == r and r < MAX_DEMAND:
                    break  # no demand left: the entries stay for the next pass
                inner = ready.popleft()
                q = inner.queue
                taken = 0
                if nb is not None and e != r and q:
                    # an inner's run (a boundary hands them over in batches) in one call
                    k = _run_length(r, e, len(q))
                    nb(_pop_run(q, k))
                    e += k
                    taken = k
                    if self._cancelled:
                        self._clear()
                        return
                while e != r and q:
                    on_next(q.popleft())
                    e += 1
                    taken += 1
                    if self._cancelled:
                        self._clear()
                        return
                if taken:
                    inner.consumed(taken)
                if q:
                    ready.appendleft(inner)  # cut short by demand: first in the next pass
                elif inner.done and self._remove(inner):
                    replenish += 1
            finished = self._finished
            while finished:
                inner = finished.popleft()
                if not inner.queue and self._remove(inner):
                    replenish += 1
            if e and r < MAX_DEMAND:
                produced(requested, e)
            if replenish:
                self._request_outer(replenish)  # finished inners free their slots at once
            if scalar_count:
                self._slots_freed(scalar_count)
            if self._done and not self._inners and not scalars:
                self._terminate(d)
                return
            if self._done and self._errors.has_error() and not self._delay_error:
                self._terminate(d)
                return
            missed = leave(wip, missed)
            if missed == 0:
                return

    def _terminate(self, d: Subscriber[Any]) -> None:
        self._cancelled = True
        self._downstream = None
        self._cancel_all()
        self._clear()
        self._errors.terminate_into(d)


def _run_length(r: int, e: int, available: int) -> int:
    """How many of ``available`` queued elements demand allows after ``e`` of ``r`` were emitted."""
    if r >= MAX_DEMAND:
        return available
    left = r - e
    return available if available < left else left


def _pop_run(q: deque[Any], k: int) -> list[Any]:
    """Pop exactly ``k`` elements in one C-level loop. Never ``list(q)`` + ``clear()``: the queue is
    single-producer single-consumer, and its producer may append between the two (race: a lost
    element); ``k`` elements counted before stay in the deque until this consumer pops them."""
    return list(starmap(q.popleft, repeat((), k)))


@final
class _FlatMapInner(PrefetchInner):
    """flat_map's inner: also takes ``on_last(value)`` (value + completion, library-internal)."""

    __slots__ = ()

    def on_next_batch(self, items: list[Any]) -> None:
        """Library-internal batch protocol (an inner behind a boundary: ``subscribe_on``,
        ``observe_on``): queued with one ``extend``, then one drain pass, which hands the run to a
        batch-capable downstream in one call."""
        p = self._parent
        if p is None:
            return
        if len(self.queue) + len(items) > self._prefetch:
            for x in items:  # rule 1.1 broken: the one-by-one path emits what fits, then the error
                self.on_next(x)
                if self._parent is None:
                    return
            return
        p._inner_next_batch(self, items)

    def on_complete(self) -> None:
        self.done = True
        p = self._parent
        if p is not None:
            p._inner_done(self)  # type: ignore[attr-defined]

    def on_last(self, item: Any) -> None:
        p = self._parent
        if p is not None:
            p._inner_last(self, item)  # type: ignore[attr-defined]


@final
class _FlatMapFlowable(Flowable[R]):
    __slots__ = ("_source", "_mapper", "_max_concurrency", "_prefetch", "_delay_error")

    def __init__(
        self,
        source: Flowable[T],
        mapper: Callable[[T], Publisher[R]],
        max_concurrency: int | None,
        prefetch: int,
        delay_error: bool,
    ) -> None:
        self._source = source
        self._mapper = mapper
        self._max_concurrency = max_concurrency
        self._prefetch = prefetch
        self._delay_error = delay_error

    def _subscribe_actual(self, subscriber: Subscriber[R]) -> None:
        self._source.subscribe(
            FlatMapSubscriber(
                subscriber, self._mapper, self._max_concurrency, self._prefetch, self._delay_error
            )
        )


def flat_map(
    source: Flowable[T],
    mapper: Callable[[T], Publisher[R]],
    max_concurrency: int | None = DEFAULT_PREFETCH,
    prefetch: int = DEFAULT_PREFETCH,
    delay_error: bool = False,
) -> Flowable[R]:
    check_callable_arg("flat_map", "mapper", mapper)
    mc = positive_int_or_none("flat_map", "max_concurrency", max_concurrency)
    pf = positive_int("flat_map", "prefetch", prefetch)
    check_bool("flat_map", "delay_error", delay_error)
    return _FlatMapFlowable(source, mapper, mc, pf, delay_error)
