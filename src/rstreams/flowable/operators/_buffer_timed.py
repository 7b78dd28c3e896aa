"""buffer_timed(duration, count): collect elements into lists closed by time (or by size).

A list is emitted every ``duration`` seconds (possibly empty, as RxJava's ``buffer(time)``), or as
soon as it holds ``count`` elements (then the timer restarts so the next list gets a full period).
On completion the last list is emitted if it is not empty.

Backpressure (documented choice: RxJava's, not Reactor's "fair" mode): the upstream is requested
unbounded because time cannot be slowed down. When a list is due and the downstream has no
outstanding demand, the operator cancels the upstream and signals ``MissingBackpressureError`` naming
buffer_timed and the fix (``on_backpressure_buffer(n)``/``on_backpressure_drop()`` after it, or a
longer ``duration``). It never emits beyond demand and never buffers more than one list (at most
``count`` elements when ``count`` is given). The final list at completion is the exception: it waits
for demand (post-complete) instead of failing, since no further lists can follow it.

Race: timer close vs on_next vs on_complete: every state change and emission runs inside
:meth:`SerializedOut.run`, so each element lands in exactly one list and lists are emitted in order,
never overlapping (rule 1.3). A restarted timer carries a generation number; a stale tick is ignored.
The timer and that serialization are :class:`TimedChunks` (``_timed_chunks.py``, shared with
``window_timed`` and, for the Subscription side, the throttle operators).
"""

from __future__ import annotations

from typing import Any, TypeVar, final

from ..._internal.requests import MAX_DEMAND, produced
from ..._spec import Subscriber
from ...schedulers import Scheduler, Worker
from .._flowable import Flowable
from ._time_common import check_count, check_duration, missing_backpressure, resolve_scheduler
from ._timed_chunks import TimedChunks

__all__ = ["buffer_timed"]

T = TypeVar("T")


@final
class _BufferTimedSubscriber(TimedChunks):
    __slots__ = ("_buffer", "_final")

    def __init__(
        self, downstream: Subscriber[Any], worker: Worker, duration: float, count: int | None
    ) -> None:
        super().__init__(downstream, worker, "buffer_timed", duration, count)
        self._buffer: list[Any] = []  # inside serialized sections only
        self._final: list[Any] | None = None  # the last list, waiting for demand after completion

    def _emit(self, buf: list[Any]) -> None:
        # inside a serialized section
        r = self._requested
        if r.get() != 0:
            self._out.emit_next(buf)
            if r.get() < MAX_DEMAND:
                produced(r, 1)
            return
        self.cancel_all()
        self._out.emit_error(
            missing_backpressure(
                "buffer_timed",
                f"could not emit a list of {len(buf)} elements",
                "apply on_backpressure_buffer(n) or on_backpressure_drop() after buffer_timed(), use a longer "
                "duration, or request more",
            )
        )

    def _rotate(self) -> None:
        buf = self._buffer
        self._buffer = []
        self._emit(buf)

    def _on_item(self, item: Any) -> None:
        if self._done:
            return
        buf = self._buffer
        buf.append(item)
        c = self._count
        if c is not None and len(buf) >= c:
            self._full()

    def _ended(self, error: BaseException | None) -> None:
        buf = self._buffer
        self._buffer = []
        if error is not None:
            self._out.emit_error(error)
            return
        if buf:
            if self._requested.get() == 0:
                self._final = buf  # post-complete: wait for demand
                return
            self._out.emit_next(buf)
        self._out.emit_complete()

    def _flush_final(self) -> None:
        buf = self._final
        if buf is not None and self._requested.get() != 0:
            self._final = None
            self._out.emit_next(buf)
            self._out.emit_complete()

    def request(self, n: int) -> None:
        super().request(n)  # an invalid n: rule 3.9 error, after which the run below is a no-op
        if self._done:  # race: request vs _end parking the final list: _end ran or runs after this
            self._out.run(self._flush_final)

    # cancel: TimedBase's (cancel the upstream, dispose the worker, drop the downstream: rule 3.13)


@final
class _BufferTimedFlowable(Flowable[list[Any]]):
    __slots__ = ("_source", "_duration", "_count", "_scheduler")

    def __init__(
        self, source: Flowable[Any], duration: float, count: int | None, scheduler: Scheduler
    ) -> None:
        self._source = source
        self._duration = duration
        self._count = count
        self._scheduler = scheduler

    def _subscribe_actual(self, subscriber: Subscriber[list[Any]]) -> None:
        w = self._scheduler.create_worker()
        self._source.subscribe(_BufferTimedSubscriber(subscriber, w, self._duration, self._count))


def buffer_timed(
    source: Flowable[T], duration: float, count: int | None = None, scheduler: Scheduler | None = None
) -> Flowable[list[T]]:
    d = check_duration("buffer_timed", duration, positive=True)
    c = None if count is None else check_count("buffer_timed", count)
    return _BufferTimedFlowable(source, d, c, resolve_scheduler("buffer_timed", scheduler))
