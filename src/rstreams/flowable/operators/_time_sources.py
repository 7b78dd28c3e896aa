"""interval and timer: time-driven sources on a Scheduler worker.

``interval(period, initial_delay)`` emits 0, 1, 2, ... on a periodic worker task. Time cannot be
slowed down, so it does not buffer: at a tick with no outstanding demand it cancels its timer and
signals ``MissingBackpressureError`` (RxJava 3's interval). Its signals come from the worker (serial
by the Worker contract) except a rule 3.9 error, signalled from the requesting thread: a
:class:`SerializedOut` orders it after a tick being emitted (rule 1.3). The demand counter is shared
(race: request vs tick, guarded by the ``AtomicInt`` and ``produced``).

``timer(delay)`` emits 0 once after ``delay`` and completes, but waits for demand if the downstream
has not requested by then. Race: the tick vs the first request, both may want to emit. A two-bit
state ``AtomicInt`` (REQUESTED | FIRED) decides: the caller that sets the second bit emits, exactly
once.

Cancelling disposes the worker: no timer stays scheduled (rule 3.13: the downstream is dropped too).
"""

from __future__ import annotations

from typing import Any, Final, final

from ..._internal.atomics import AtomicInt
from ..._internal.requests import MAX_DEMAND, add_request, produced, validate_request
from ..._spec import Subscriber
from ...schedulers import Scheduler, Worker
from .._flowable import Flowable
from ._time_common import NOOP, SerializedOut, check_duration, missing_backpressure, resolve_scheduler

__all__ = ["interval", "timer"]


@final
class _IntervalSubscription:
    __slots__ = ("_out", "_worker", "_requested", "_count", "_cancelled", "__weakref__")

    def __init__(self, downstream: Subscriber[int], worker: Worker) -> None:
        # race: a tick's emission (worker) vs a rule 3.9 error from the requesting thread (rule 1.3)
        self._out = SerializedOut(downstream)
        self._worker = worker
        self._requested = AtomicInt(0)  # race: request (any thread) vs tick (worker)
        self._count = 0
        self._cancelled = False

    def tick(self) -> None:
        if self._cancelled:
            return
        if self._requested.get() != 0:
            c = self._count
            self._count = c + 1
            self._out.on_next(c)
            if self._requested.get() < MAX_DEMAND:
                produced(self._requested, 1)
            return
        self._stop()
        self._out.on_error(
            missing_backpressure(
                "interval",
                f"could not emit tick {self._count}",
                "apply on_backpressure_drop(), on_backpressure_latest() or on_backpressure_buffer() after "
                "interval(), or request more (time cannot be slowed down)",
            )
        )

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                # rule 3.9: stop the ticks, then signal; a tick emitting right now on the worker
                # finishes first (serialized), later ticks never run
                if not self._cancelled:
                    self._stop()
                    self._out.on_error(err)
                return
        add_request(self._requested, n)

    def _stop(self) -> None:
        self._cancelled = True
        self._worker.dispose()  # no timer survives the cancel

    def cancel(self) -> None:
        self._stop()
        self._out.release()  # rule 3.13


@final
class _IntervalFlowable(Flowable[int]):
    __slots__ = ("_period", "_initial", "_scheduler")

    def __init__(self, period: float, initial: float, scheduler: Scheduler) -> None:
        self._period = period
        self._initial = initial
        self._scheduler = scheduler

    def _subscribe_actual(self, subscriber: Subscriber[int]) -> None:
        worker = self._scheduler.create_worker()
        s = _IntervalSubscription(subscriber, worker)
        subscriber.on_subscribe(s)
        if not s._cancelled:
            worker.schedule_periodic(s.tick, self._initial, self._period)


def interval(
    period: float, initial_delay: float | None = None, scheduler: Scheduler | None = None
) -> Flowable[int]:
    p = check_duration("interval", period, "period", positive=True)
    i = p if initial_delay is None else check_duration("interval", initial_delay, "initial_delay")
    return _IntervalFlowable(p, i, resolve_scheduler("interval", scheduler))


_REQUESTED: Final = 1
_FIRED: Final = 2


@final
class _TimerSubscription:
    __slots__ = ("_downstream", "_worker", "_state", "__weakref__")

    def __init__(self, downstream: Subscriber[int], worker: Worker) -> None:
        self._downstream: Subscriber[Any] = downstream
        self._worker = worker
        self._state = AtomicInt(0)  # race: tick vs first request; the one that completes the pair emits

    def _set(self, bit: int) -> None:
        st = self._state
        while True:
            cur = st.get()
            if cur & bit or cur < 0:
                return
            if st.compare_and_set(cur, cur | bit):
                if (cur | bit) == _REQUESTED | _FIRED:
                    d = self._downstream
                    self._downstream = NOOP
                    self._worker.dispose()
                    d.on_next(0)
                    d.on_complete()
                return

    def fire(self) -> None:
        self._set(_FIRED)

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                prev = self._state.get_and_set(-1)
                if 0 <= prev < _REQUESTED | _FIRED:  # not yet emitted: the stream ends with the error
                    d = self._downstream
                    self.cancel()
                    d.on_error(err)  # rule 3.9
                return
        self._set(_REQUESTED)

    def cancel(self) -> None:
        self._state.set(-1)
        self._worker.dispose()
        self._downstream = NOOP  # rule 3.13


@final
class _TimerFlowable(Flowable[int]):
    __slots__ = ("_delay", "_scheduler")

    def __init__(self, delay: float, scheduler: Scheduler) -> None:
        self._delay = delay
        self._scheduler = scheduler

    def _subscribe_actual(self, subscriber: Subscriber[int]) -> None:
        worker = self._scheduler.create_worker()
        s = _TimerSubscription(subscriber, worker)
        subscriber.on_subscribe(s)
        if s._state.get() >= 0:
            worker.schedule(s.fire, self._delay)


def timer(delay: float, scheduler: Scheduler | None = None) -> Flowable[int]:
    d = check_duration("timer", delay, "delay")
    return _TimerFlowable(d, resolve_scheduler("timer", scheduler))
