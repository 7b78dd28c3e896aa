"""skip_last(n): drop the last ``n`` elements (RxJava ``skipLast``).

Each element is held in a ``deque`` until ``n`` newer ones arrived; then it is emitted. The ``n``
elements the deque must hold are requested from the upstream once, up front (as ``skip`` does), so
every later downstream request passes straight through: one upstream element in, one out.
No lock is needed: the deque is touched only by the (serial, rule 1.3) upstream signals.
"""

from __future__ import annotations

from collections import deque
from typing import TypeVar, final

from ..._internal.arguments import non_negative_int
from ..._spec import Subscriber, Subscription
from .._base import BasicSubscriber
from .._flowable import Flowable

__all__ = ["skip_last"]

T = TypeVar("T")


@final
class _SkipLastSubscriber(BasicSubscriber[T, T]):
    __slots__ = ("_n", "_queue")

    def __init__(self, downstream: Subscriber[T], n: int) -> None:
        super().__init__(downstream)
        self._n = n
        self._queue: deque[T] = deque()

    def on_subscribe(self, subscription: Subscription) -> None:
        super().on_subscribe(subscription)
        if self.upstream is subscription:
            subscription.request(self._n)  # the held elements are asked for once, up front

    def on_next(self, item: T) -> None:
        if self.done:
            return
        q = self._queue
        q.append(item)
        if len(q) > self._n:
            self.downstream.on_next(q.popleft())

    def on_error(self, error: BaseException) -> None:
        self._queue.clear()
        super().on_error(error)

    def on_complete(self) -> None:
        self._queue.clear()
        super().on_complete()


@final
class _SkipLastFlowable(Flowable[T]):
    __slots__ = ("_source", "_n")

    def __init__(self, source: Flowable[T], n: int) -> None:
        self._source = source
        self._n = n

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(_SkipLastSubscriber(subscriber, self._n))


def skip_last(source: Flowable[T], count: int) -> Flowable[T]:
    n = non_negative_int("skip_last", "count", count)
    if n == 0:
        return source
    return _SkipLastFlowable(source, n)


