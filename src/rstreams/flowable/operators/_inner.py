"""The inner subscriber shared by flat_map, switch_map and concat_map_eager.

It prefetches ``prefetch`` elements from its inner Publisher, hands each element to its parent
(``parent._inner_next(inner, item)``: emit directly or queue in ``inner.queue``), and replenishes
in batches once the parent reports elements consumed (``limit = prefetch - prefetch // 4``).
Errors go to ``parent._inner_error(inner, error)``; completion sets ``done`` and wakes the parent's
drain. ``cancel`` detaches it from the parent (rule 3.13) and cancels the inner Subscription.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Protocol

from ..._internal import plugins
from ..._internal.subscriptions import CANCELLED
from ..._spec import Subscription

__all__ = ["PrefetchInner", "InnerParent"]


class InnerParent(Protocol):
    _cancelled: bool

    def _inner_next(self, inner: PrefetchInner, item: Any) -> None: ...

    def _inner_error(self, inner: PrefetchInner, error: BaseException) -> None: ...

    def _drain(self) -> None: ...


class PrefetchInner:
    _rs_no_wrap = True
    __slots__ = ("_parent", "queue", "done", "upstream", "_prefetch", "_limit", "_consumed", "__weakref__")

    def __init__(self, parent: InnerParent, prefetch: int) -> None:
        self._parent: InnerParent | None = parent
        self.queue: deque[Any] = deque()
        self.done = False
        self.upstream: Subscription = CANCELLED
        self._prefetch = prefetch
        self._limit = prefetch - (prefetch >> 2)
        self._consumed = 0

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
            p._inner_next(self, item)

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
