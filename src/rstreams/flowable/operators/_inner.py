"""The inner subscriber shared by flat_map, switch_map and concat_map_eager.

It prefetches ``prefetch`` elements from its inner Publisher, hands each element to its parent
(``parent._inner_next(inner, item)``: emit directly or queue in ``inner.queue``), and replenishes
in batches once the parent reports elements consumed (``limit = prefetch - prefetch // 4``).
Errors go to ``parent._inner_error(inner, error)``; completion sets ``done`` and wakes the parent's
drain. ``cancel`` detaches it from the parent (rule 3.13) and cancels the inner Subscription.

Both inners take the library-internal batch protocol (``on_next_batch``: an inner behind
``observe_on``/``subscribe_on``, or a fused synchronous source such as ``Flowable.range``): a batch
never exceeds the demand the inner signalled (rule 1.1), so it is queued with one ``extend`` and
handed to the parent in one call (``parent._inner_next_batch(inner, items)``), whose drain then
passes runs on (``pop_run``) to a batch-capable downstream in one call too.
"""

from __future__ import annotations

from collections import deque
from itertools import repeat, starmap
from typing import Any, Protocol

from ..._internal import plugins
from ..._internal.atomics import AtomicRef
from ..._internal.requests import MAX_DEMAND
from ..._internal.subscriptions import CANCELLED, cancel, set_once
from ..._spec import Subscription
from ...errors import MissingBackpressureError

__all__ = ["PrefetchInner", "InnerParent", "QueuedInner", "QueueParent", "overflow_error", "pop_run"]


def pop_run(q: deque[Any], k: int) -> list[Any]:
    """Pop exactly ``k`` elements in one C-level loop. Never ``list(q)`` + ``clear()``: an inner's
    queue is single-producer single-consumer, and its producer may append between the two (race: a
    lost element); ``k`` elements counted before stay in the deque until this consumer pops them."""
    return list(starmap(q.popleft, repeat((), k)))


class InnerParent(Protocol):
    _cancelled: bool

    def _inner_next(self, inner: PrefetchInner, item: Any) -> None: ...

    def _inner_next_batch(self, inner: PrefetchInner, items: list[Any]) -> None: ...

    def _inner_error(self, inner: PrefetchInner, error: BaseException) -> None: ...

    def _drain(self) -> None: ...


class PrefetchInner:
    _rs_no_wrap = True
    __slots__ = ("_parent", "queue", "done", "upstream", "_prefetch", "_limit", "_consumed", "_op", "__weakref__")

    def __init__(self, parent: InnerParent, prefetch: int, op: str) -> None:
        self._parent: InnerParent | None = parent
        self.queue: deque[Any] = deque()
        self.done = False
        self.upstream: Subscription = CANCELLED
        self._prefetch = prefetch
        self._limit = prefetch - (prefetch >> 2)
        self._consumed = 0
        self._op = op

    def on_subscribe(self, subscription: Subscription) -> None:
        if self.upstream is not CANCELLED:
            subscription.cancel()  # rule 2.5
            return
        self.upstream = subscription
        p = self._parent
        if p is None or p._cancelled:
            subscription.cancel()
            return
        subscription.request(self._prefetch)

    def on_next(self, item: Any) -> None:
        p = self._parent
        if p is not None:
            if len(self.queue) >= self._prefetch:
                # the source broke rule 1.1: a compliant one cannot deliver while ``prefetch``
                # elements wait (the parent replenishes only after taking them out of the queue)
                self.upstream.cancel()
                self._parent = None
                p._inner_error(self, overflow_error(self._op, self._prefetch))
                return
            p._inner_next(self, item)

    def on_next_batch(self, items: list[Any]) -> None:
        """Library-internal batch protocol: the run is queued and drained as one (see the module
        docstring). A batch that would overflow ``prefetch`` (rule 1.1 broken upstream) takes the
        one-by-one path, which queues what fits and then signals the error."""
        p = self._parent
        if p is None:
            return  # cancelled: late elements are dropped (rule 3.13 detached the parent)
        if len(self.queue) + len(items) > self._prefetch:
            for x in items:
                self.on_next(x)
                if self._parent is None:
                    return
            return
        p._inner_next_batch(self, items)

    def on_error(self, error: BaseException) -> None:
        p = self._parent
        if p is not None:
            p._inner_error(self, error)
        else:
            plugins.on_error(error, "an inner Publisher failed after its operator was cancelled")

    def on_complete(self) -> None:
        self.done = True
        p = self._parent
        if p is not None:
            p._drain()

    def consumed(self, n: int) -> None:
        """Called by the parent's emitter: ``n`` more elements of this inner were emitted."""
        c = self._consumed + n
        if c >= self._limit:
            self._consumed = 0
            self.upstream.request(c)  # replenish in batches
        else:
            self._consumed = c

    def cancel(self) -> None:
        self._parent = None
        self.upstream.cancel()


class QueueParent(Protocol):
    def drain(self) -> None: ...

    def inner_error(self, error: BaseException) -> None: ...


def overflow_error(op: str, prefetch: int) -> MissingBackpressureError:
    return MissingBackpressureError(
        f"{op}(): a source emitted more than the {prefetch} elements requested from it (rule 1.1); "
        "put on_backpressure_buffer()/drop()/latest() on that source"
    )


class QueuedInner:
    """Queues one source's elements for the parent's drain (merge, zip); the drain replenishes it
    in batches (``replenish(n)``). A source that over-delivers (rule 1.1) ends the stream with
    ``MissingBackpressureError``."""

    _rs_no_wrap = True
    __slots__ = ("_parent", "_op", "queue", "done", "consumed", "_upstream", "_prefetch", "_limit")

    def __init__(self, parent: QueueParent, prefetch: int, op: str) -> None:
        self._parent = parent
        self._op = op
        self.queue: deque[Any] = deque()  # SPSC: the source appends, the drain pops
        self.done = False
        self.consumed = 0  # drain-local
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)  # race: cancel vs on_subscribe
        self._prefetch = prefetch
        self._limit = prefetch - (prefetch >> 2)

    def on_subscribe(self, subscription: Subscription) -> None:
        if set_once(self._upstream, subscription, self._op):
            subscription.request(self._prefetch)

    def on_next(self, item: Any) -> None:
        q = self.queue
        q.append(item)
        if len(q) > self._prefetch:  # the source broke rule 1.1 (RxJava: "queue is full")
            self.cancel()
            self.on_error(overflow_error(self._op, self._prefetch))
            return
        self._parent.drain()

    # library-internal batch protocol: the elements arrive within this inner's prefetch demand;
    # queued at once, one drain pass for all of them
    accepts_batches = True

    def on_next_batch(self, items: list[Any]) -> None:
        q = self.queue
        q.extend(items)
        if len(q) > self._prefetch:  # the source broke rule 1.1 (RxJava: "queue is full")
            self.cancel()
            self.on_error(overflow_error(self._op, self._prefetch))
            return
        self._parent.drain()

    def on_error(self, error: BaseException) -> None:
        if self.done:
            plugins.on_error(error, f"{self._op}: a source signalled on_error after terminating")
            return
        self.done = True
        self._parent.inner_error(error)

    def on_complete(self) -> None:
        self.done = True
        self._parent.drain()

    def until_replenish(self) -> int:
        """How many more consumed elements make the next replenishing request. A drain that takes
        runs of elements ends a run there, so the requests go out where the one-by-one path sends
        them (and what they make a synchronous source signal, an eager error too, arrives there)."""
        if self._prefetch >= MAX_DEMAND:
            return MAX_DEMAND
        return self._limit - self.consumed

    def replenish(self, n: int) -> None:
        """Called by the drain after it consumed ``n`` more elements of this inner."""
        if self._prefetch >= MAX_DEMAND:
            return
        c = self.consumed + n
        limit = self._limit
        if c >= limit:
            up = self._upstream.get()
            if up is not None and up is not CANCELLED:
                up.request(c)
            c = 0
        self.consumed = c

    def cancel(self) -> None:
        cancel(self._upstream)
