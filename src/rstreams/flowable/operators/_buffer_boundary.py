"""buffer(boundary): lists cut by the signals of a boundary Publisher (RxJava 3 ``buffer(Publisher)``).

Each element of ``boundary`` emits the list collected since the previous one, an empty list too (as
RxJava). When the source completes, or the boundary completes, the last list (possibly empty, as
RxJava) is emitted and the stream completes; the other source is cancelled. An error of either
fails the stream at once, dropping the list being collected.

Backpressure (RxJava 3): the source and the boundary are requested unbounded: the boundary is a
clock, it cannot be slowed down. A boundary signal that finds no downstream demand cancels both and
signals ``MissingBackpressureError`` rather than buffering lists without bound. Departure from
RxJava: the last list at completion waits for a request instead of failing (no time presses then).

Races and guards: the list is appended to on the source's thread and swapped for a new one on the
boundary's thread: a ``threading.Lock`` guards that one step (race: boundary swap vs append; an
element lands in exactly one list). The emission and every state change run inside
:meth:`SerializedOut.run` (race: boundary thread vs source thread vs a request delivering the last
list, rule 1.3); ``_last`` is the list waiting for demand after completion, read by the request
thread and the completing thread inside those sections only.
"""

from __future__ import annotations

import threading
from typing import Any, TypeVar, final

from ..._internal.requests import MAX_DEMAND
from ..._spec import Publisher, Subscriber, Subscription
from .._flowable import Flowable
from ._boundary_common import DrivenBase, OtherSubscriber, check_publisher
from ._time_common import none_refused

__all__ = ["buffer_boundary"]

T = TypeVar("T")


@final
class _BufferBoundarySubscriber(DrivenBase):
    __slots__ = ("_boundary", "_other", "_lock", "_buf", "_last")

    def __init__(self, downstream: Subscriber[Any], boundary: Publisher[Any]) -> None:
        super().__init__(downstream, "buffer")
        self._boundary = boundary
        self._other = OtherSubscriber(self)
        self._lock = threading.Lock()  # race: the boundary's swap vs the source's append
        self._buf: list[Any] | None = []
        self._last: list[Any] | None = None  # the last list, waiting for demand (sections only)

    def _dispose_others(self) -> None:
        self._other.dispose()

    # -- source ----------------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if not self.set_upstream(subscription):
            return
        self.subscribe_downstream()
        subscription.request(MAX_DEMAND)
        self._boundary.subscribe(self._other)

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        with self._lock:
            b = self._buf
            if b is not None:
                b.append(item)

    def on_next_batch(self, items: list[Any]) -> None:
        """Library-internal batch protocol (elements already checked): one lock acquisition per batch."""
        with self._lock:
            b = self._buf
            if b is not None:
                b.extend(items)

    # -- inside serialized sections (DrivenBase runs the hooks at the terminal and boundary signals)
    def _take(self, keep: bool) -> list[Any] | None:
        with self._lock:
            b = self._buf
            self._buf = [] if keep else None
        return b

    def _at_signal(self) -> None:
        if self._done:
            return
        b = self._take(True)
        if b is not None:
            self.try_emit(b, "the list at a boundary signal")

    def _at_error(self, error: BaseException) -> None:
        self._take(False)
        self.fail(error)

    def _at_end(self) -> None:
        if self._done:
            return
        self._done = True
        self.cancel_all()  # the source or the boundary is done; the other one stops
        self._last = self._take(False)
        self._emit_last()

    def _emit_last(self) -> None:
        b = self._last
        if b is None or self._requested.get() == 0:
            return  # waits for a request (_on_request)
        self._last = None
        self._out.emit_next(b)
        self._out.emit_complete()

    def _on_request(self) -> None:
        if self._done:
            self._out.run(self._emit_last)

    def cancel(self) -> None:
        super().cancel()
        with self._lock:
            self._buf = None


@final
class _BufferBoundaryFlowable(Flowable[list[T]]):
    __slots__ = ("_source", "_boundary")

    def __init__(self, source: Flowable[T], boundary: Publisher[Any]) -> None:
        self._source = source
        self._boundary = boundary

    def _subscribe_actual(self, subscriber: Subscriber[list[T]]) -> None:
        self._source.subscribe(_BufferBoundarySubscriber(subscriber, self._boundary))


def buffer_boundary(source: Flowable[T], boundary: Publisher[Any]) -> Flowable[list[T]]:
    check_publisher("buffer", "boundary", boundary)
    return _BufferBoundaryFlowable(source, boundary)
