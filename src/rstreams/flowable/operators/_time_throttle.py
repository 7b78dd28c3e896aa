"""debounce, sample (= throttle_last), throttle_first and throttle_latest: rate limiting by time.

All four request unbounded demand upstream (they drop elements by design) and emit on either the
upstream thread or the Scheduler worker's thread. Time cannot be slowed down, so when one of them must
emit and the downstream has no outstanding demand it cancels the upstream and signals
``MissingBackpressureError`` naming itself (RxJava 3), rather than buffering without bound.

Races and their guards:

* debounce: the timer of the pending element vs ``on_complete`` (which emits the pending element
  first) vs a newer ``on_next``. The "is it still the latest, was it emitted" check and the emission
  run inside :meth:`SerializedOut.run`, so the pending element is emitted exactly once and before
  ``on_complete`` (rule 1.3). The index is written by the upstream thread only.
* sample: the periodic tick vs ``on_next`` vs ``on_complete(emit_last)``. The latest element lives in a
  ``deque(maxlen=1)``: ``append`` replaces and ``pop`` takes atomically, with no lock per element; the
  tick and the final emission are serialized by ``SerializedOut``.
* throttle_first: emits on the upstream thread only; the timer only reopens the gate (one bool).
* throttle_latest: the window timer vs ``on_next`` vs ``on_complete``; all state changes run inside
  ``SerializedOut.run``.

The Publisher-driven forms, ``debounce(selector)`` and ``sample(sampler)``, are
``_debounce_selector.py`` and ``_sample_publisher.py``; the functions here dispatch to them.

Cancelling disposes the worker: no timer survives (rule 3.13: the downstream is dropped). The
Subscriber/Subscription plumbing common to the four is :class:`TimedBase` (``_timed_chunks.py``,
shared with buffer_timed and window_timed).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar, final

from ..._spec import Publisher, Subscriber, Subscription
from ...schedulers import Scheduler, Worker
from .._flowable import Flowable
from ._debounce_selector import debounce_selector
from ._sample_publisher import sample_publisher
from ._time_common import Pending as _Pending
from ._time_common import check_duration, none_refused, resolve_scheduler
from ._timed_chunks import TimedBase

__all__ = ["debounce", "sample", "throttle_first", "throttle_latest"]

T = TypeVar("T")


# ---------------------------------------------------------------------------------------------
# debounce


@final
class _DebounceSubscriber(TimedBase):
    __slots__ = ("_delay", "_index", "_pending", "_timer")

    def __init__(self, downstream: Subscriber[Any], worker: Worker, delay: float) -> None:
        super().__init__(downstream, worker, "debounce")
        self._delay = delay
        self._index = 0
        self._pending: _Pending | None = None
        self._timer: Any = None

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        if self._done:
            return
        idx = self._index + 1
        self._index = idx  # written by the upstream thread only
        t = self._timer
        if t is not None:
            t.dispose()
        p = _Pending(item, idx)
        self._pending = p
        self._timer = self._worker.schedule(lambda: self._out.run(lambda: self._emit(p)), self._delay)

    def _emit(self, p: _Pending) -> None:
        # inside the serialized section: the pending element is emitted once, if still the latest
        if p.emitted or p.index != self._index:
            return
        p.emitted = True
        self.try_emit(p.value, "the debounced element")

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        t = self._timer
        if t is not None:
            t.dispose()
        p = self._pending
        self._pending = None
        if p is not None:
            self._out.run(lambda: self._emit(p))  # race: the timer may be emitting it right now
        self._out.on_complete()
        self._worker.dispose()


@final
class _DebounceFlowable(Flowable[T]):
    __slots__ = ("_source", "_delay", "_scheduler")

    def __init__(self, source: Flowable[T], delay: float, scheduler: Scheduler) -> None:
        self._source = source
        self._delay = delay
        self._scheduler = scheduler

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(_DebounceSubscriber(subscriber, self._scheduler.create_worker(), self._delay))


def debounce(
    source: Flowable[T], duration: float | Callable[[T], Publisher[Any]], scheduler: Scheduler | None = None
) -> Flowable[T]:
    if callable(duration):
        if scheduler is not None:
            raise TypeError("debounce(): a selector takes no scheduler (its Publishers set the time)")
        return debounce_selector(source, duration)
    d = check_duration("debounce", duration)
    return _DebounceFlowable(source, d, resolve_scheduler("debounce", scheduler))


# ---------------------------------------------------------------------------------------------
# sample / throttle_last


@final
class _SampleSubscriber(TimedBase):
    __slots__ = ("_latest", "_emit_last", "_period")

    def __init__(
        self, downstream: Subscriber[Any], worker: Worker, period: float, emit_last: bool, op: str
    ) -> None:
        super().__init__(downstream, worker, op)
        self._latest: deque[Any] = deque(maxlen=1)  # atomic "latest" cell: append replaces, pop takes
        self._emit_last = emit_last
        self._period = period

    def on_subscribe(self, subscription: Subscription) -> None:
        super().on_subscribe(subscription)
        if not self._done:
            self._worker.schedule_periodic(self._tick, self._period, self._period)

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        self._latest.append(item)

    def _tick(self) -> None:
        self._out.run(self._emit_latest)

    def _emit_latest(self) -> None:
        try:
            v = self._latest.pop()
        except IndexError:
            return
        self.try_emit(v, "the sampled element")

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        self._worker.dispose()
        if self._emit_last:
            self._out.run(self._emit_latest)
        self._out.on_complete()


@final
class _SampleFlowable(Flowable[T]):
    __slots__ = ("_source", "_period", "_scheduler", "_emit_last", "_op")

    def __init__(
        self, source: Flowable[T], period: float, scheduler: Scheduler, emit_last: bool, op: str
    ) -> None:
        self._source = source
        self._period = period
        self._scheduler = scheduler
        self._emit_last = emit_last
        self._op = op

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        w = self._scheduler.create_worker()
        self._source.subscribe(_SampleSubscriber(subscriber, w, self._period, self._emit_last, self._op))


def sample(
    source: Flowable[T],
    period: float | Publisher[Any],
    scheduler: Scheduler | None = None,
    emit_last: bool = False,
    *,
    op: str = "sample",
) -> Flowable[T]:
    if not isinstance(period, int | float) and hasattr(period, "subscribe"):
        if scheduler is not None:
            raise TypeError(f"{op}(): a sampler Publisher takes no scheduler (pass emit_last= by keyword)")
        return sample_publisher(source, period, emit_last, op)
    p = check_duration(op, period, "period", positive=True)
    return _SampleFlowable(source, p, resolve_scheduler(op, scheduler), bool(emit_last), op)


# ---------------------------------------------------------------------------------------------
# throttle_first


@final
class _ThrottleFirstSubscriber(TimedBase):
    __slots__ = ("_duration", "_gate", "_timer")

    def __init__(self, downstream: Subscriber[Any], worker: Worker, duration: float) -> None:
        super().__init__(downstream, worker, "throttle_first")
        self._duration = duration
        self._gate = False  # True while a window is open; the timer clears it (one bool write)
        self._timer: Any = None

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        if self._done or self._gate:
            return
        self._gate = True
        # serialized with a rule 3.9 error signalled from the requesting thread
        self._out.run(lambda: self._first(item))

    def _first(self, item: Any) -> None:
        if self.try_emit(item, "the first element of a window"):
            t = self._timer
            if t is not None:
                t.dispose()
            self._timer = self._worker.schedule(self._open, self._duration)

    def _open(self) -> None:
        self._gate = False

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        self._worker.dispose()
        self._out.on_complete()


@final
class _ThrottleFirstFlowable(Flowable[T]):
    __slots__ = ("_source", "_duration", "_scheduler")

    def __init__(self, source: Flowable[T], duration: float, scheduler: Scheduler) -> None:
        self._source = source
        self._duration = duration
        self._scheduler = scheduler

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        w = self._scheduler.create_worker()
        self._source.subscribe(_ThrottleFirstSubscriber(subscriber, w, self._duration))


def throttle_first(source: Flowable[T], duration: float, scheduler: Scheduler | None = None) -> Flowable[T]:
    d = check_duration("throttle_first", duration, positive=True)
    return _ThrottleFirstFlowable(source, d, resolve_scheduler("throttle_first", scheduler))


# ---------------------------------------------------------------------------------------------
# throttle_latest


@final
class _ThrottleLatestSubscriber(TimedBase):
    __slots__ = ("_duration", "_latest", "_timer_running", "_emit_last")

    def __init__(self, downstream: Subscriber[Any], worker: Worker, duration: float, emit_last: bool) -> None:
        super().__init__(downstream, worker, "throttle_latest")
        self._duration = duration
        self._latest: deque[Any] = deque(maxlen=1)
        self._timer_running = False  # only touched inside SerializedOut sections
        self._emit_last = emit_last

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        if self._done:
            return
        self._latest.append(item)
        self._out.run(self._on_item)

    def _on_item(self) -> None:
        if self._timer_running:
            return
        try:
            v = self._latest.pop()
        except IndexError:
            return
        if self.try_emit(v, "the first element of a window"):
            self._timer_running = True
            self._worker.schedule(self._on_timer, self._duration)

    def _on_timer(self) -> None:
        self._out.run(self._window_end)

    def _window_end(self) -> None:
        try:
            v = self._latest.pop()
        except IndexError:
            self._timer_running = False
            return
        if self.try_emit(v, "the latest element of a window"):
            self._worker.schedule(self._on_timer, self._duration)

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        self._worker.dispose()
        if self._emit_last:
            self._out.run(self._emit_final)
        self._out.on_complete()

    def _emit_final(self) -> None:
        try:
            v = self._latest.pop()
        except IndexError:
            return
        self.try_emit(v, "the last element")


@final
class _ThrottleLatestFlowable(Flowable[T]):
    __slots__ = ("_source", "_duration", "_scheduler", "_emit_last")

    def __init__(self, source: Flowable[T], duration: float, scheduler: Scheduler, emit_last: bool) -> None:
        self._source = source
        self._duration = duration
        self._scheduler = scheduler
        self._emit_last = emit_last

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        w = self._scheduler.create_worker()
        self._source.subscribe(_ThrottleLatestSubscriber(subscriber, w, self._duration, self._emit_last))


def throttle_latest(
    source: Flowable[T], duration: float, scheduler: Scheduler | None = None, emit_last: bool = False
) -> Flowable[T]:
    d = check_duration("throttle_latest", duration, positive=True)
    return _ThrottleLatestFlowable(
        source, d, resolve_scheduler("throttle_latest", scheduler), bool(emit_last)
    )
