"""concat_map_eager: subscribe to up to ``max_concurrency`` inner Publishers at once, but emit
their elements in the order of the outer elements (RxJava concatMapEager, Reactor
flatMapSequential).

Inner elements are buffered per inner (``prefetch``, replenished at 75% once consumed); only the
head inner's buffer is emitted. When the head finishes, the next inner becomes the head and the
outer is asked for one more element. One wip drain; inners may signal from any thread.

Batches (library-internal protocol): an inner takes a batch from a batch-capable source in one
``extend``, and the drain hands the head's queued run, bounded by the demand, to a batch-capable
downstream (``reduce``, ``to_list``, ``observe_on``...) in one call; otherwise one ``on_next`` per
element with a cancel check after each.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar, final

from ..._internal import plugins
from ..._internal.arguments import check_callable_arg, positive_int
from ..._internal.drain import enter, leave
from ..._internal.requests import DEFAULT_PREFETCH, MAX_DEMAND, produced, request_or_error
from ..._internal.subscriptions import EMPTY
from ..._spec import Publisher, Subscriber
from .._base import MappedInnersMain
from .._flowable import Flowable
from .._fused import batch_sink
from ..sources._basic import NOTHING, scalar_value
from ._inner import PrefetchInner, pop_run

__all__ = ["concat_map_eager"]

T = TypeVar("T")
R = TypeVar("R")


@final
class _EagerMain(MappedInnersMain):
    _op = "concat_map_eager"
    __slots__ = ("_max_concurrency", "_inners", "_lock")

    def __init__(self, downstream: Subscriber[Any], mapper: Callable[[Any], Publisher[Any]], max_concurrency: int, prefetch: int) -> None:
        super().__init__(downstream, mapper, prefetch)
        self._max_concurrency = max_concurrency
        self._inners: deque[PrefetchInner] = deque()  # in outer order; appended by the outer only
        self._lock = threading.Lock()  # guards snapshotting the inners to cancel vs appending a new one

    def _outer_request(self) -> int:
        return self._max_concurrency  # one more each time an inner finishes (the drain)

    def on_next(self, item: Any) -> None:
        if self._done or self._cancelled:
            return
        p = self._inner_publisher(item)
        if p is None:
            return
        is_scalar, value = scalar_value(p)
        inner = PrefetchInner(self, self._prefetch, "concat_map_eager")
        with self._lock:
            if self._cancelled:
                return
            self._inners.append(inner)
        if is_scalar:
            if value is not NOTHING:
                inner.queue.append(value)
            inner.done = True
            self._drain()
            return
        p.subscribe(inner)

    def on_error(self, error: BaseException) -> None:
        # after a cancel nobody will deliver it: to the hook, never lost
        if self._done or self._cancelled or self._errors.has_error() or not self._errors.add(error):
            plugins.on_error(error, "concat_map_eager: error after termination")
            return
        self._done = True
        self._upstream = EMPTY  # the outer terminated: nothing left to cancel there (rule 2.4)
        self._drain()

    def _inner_error(self, inner: PrefetchInner, error: BaseException) -> None:
        if self._errors.has_error() or not self._errors.add(error):  # the first error wins
            plugins.on_error(error)
            return
        inner.done = True
        self._done = True
        self._upstream.cancel()
        self._drain()

    def request(self, n: int) -> None:
        err = request_or_error(self._requested, n)
        if err is not None:
            self._upstream.cancel()
            self._errors.add(err)
            self._done = True
            self._drain()
            return
        self._drain()

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        self._cancel_all()
        if enter(self._wip):
            self._inners.clear()  # race: cancel vs a running drain; only the drain owner pops/clears
        self._downstream = None

    def _cancel_all(self) -> None:
        self._upstream.cancel()
        with self._lock:  # a snapshot; the deque itself belongs to the drain (it pops the head)
            inners = list(self._inners)
        for inner in inners:
            inner.cancel()

    def _drain(self) -> None:
        if not enter(self._wip):
            return
        missed = 1
        requested = self._requested
        inners = self._inners
        while True:
            d = self._downstream
            if self._cancelled or d is None:
                inners.clear()
                return
            if self._errors.has_error():
                self._terminate(d)
                return
            r = requested.get()
            e = 0
            finished = 0
            while True:
                head = inners[0] if inners else None
                if head is None:
                    break
                q = head.queue
                taken = 0
                if e != r and len(q) > 1 and (on_batch := batch_sink(d)) is not None:
                    # a batch-capable downstream gets the head's run in one call (looked up only
                    # when a run is queued: the one-by-one path never pays)
                    k = len(q) if r >= MAX_DEMAND else min(len(q), r - e)  # rule 1.1: within demand
                    on_batch(pop_run(q, k))  # a cancel inside the batch is the consumer's to honour
                    e += k
                    taken = k
                    if self._cancelled:
                        inners.clear()
                        return
                while e != r and q:
                    d.on_next(q.popleft())
                    e += 1
                    taken += 1
                    if self._cancelled:
                        inners.clear()
                        return
                if taken and not head.done:
                    head.consumed(taken)
                if head.done and not q:
                    inners.popleft()
                    finished += 1
                    continue
                break
            if e and r < MAX_DEMAND:
                produced(requested, e)
            if finished and not self._done:
                self._upstream.request(finished)
            if self._done and not inners and not self._errors.has_error():
                self._terminate(d)
                return
            missed = leave(self._wip, missed)
            if missed == 0:
                return

    def _terminate(self, d: Subscriber[Any]) -> None:
        self._cancelled = True
        self._downstream = None
        self._cancel_all()
        self._inners.clear()  # the drain owner
        self._errors.terminate_into(d)


@final
class _ConcatMapEagerFlowable(Flowable[R]):
    __slots__ = ("_source", "_mapper", "_max_concurrency", "_prefetch")

    def __init__(self, source: Flowable[T], mapper: Callable[[T], Publisher[R]], max_concurrency: int, prefetch: int) -> None:
        self._source = source
        self._mapper = mapper
        self._max_concurrency = max_concurrency
        self._prefetch = prefetch

    def _subscribe_actual(self, subscriber: Subscriber[R]) -> None:
        self._source.subscribe(_EagerMain(subscriber, self._mapper, self._max_concurrency, self._prefetch))


def concat_map_eager(
    source: Flowable[T], mapper: Callable[[T], Publisher[R]], max_concurrency: int = DEFAULT_PREFETCH, prefetch: int = DEFAULT_PREFETCH
) -> Flowable[R]:
    check_callable_arg("concat_map_eager", "mapper", mapper)
    positive_int("concat_map_eager", "max_concurrency", max_concurrency)
    positive_int("concat_map_eager", "prefetch", prefetch)
    return _ConcatMapEagerFlowable(source, mapper, max_concurrency, prefetch)
