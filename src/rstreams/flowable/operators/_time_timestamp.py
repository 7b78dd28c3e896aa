"""timestamp and time_interval: pair each element with a time read from a Scheduler's clock.

``timestamp()`` emits ``Timed(value, time)`` with ``time = scheduler.now()``; ``time_interval()``
emits ``Timed(value, time)`` with the seconds elapsed since the previous element (or since the
subscription, for the first). Both are one-to-one maps: requests pass straight through, the signals
stay on the upstream's thread, and nothing is scheduled (the Scheduler is only a clock).
"""

from __future__ import annotations

from typing import Any, Generic, NamedTuple, TypeVar, final

from ..._spec import Subscriber
from ...schedulers import Scheduler
from .._base import BasicSubscriber
from .._flowable import Flowable
from ._time_common import none_refused, resolve_scheduler

__all__ = ["Timed", "timestamp", "time_interval"]

T = TypeVar("T")


class Timed(NamedTuple, Generic[T]):
    """An element with a time in seconds: a timestamp (``timestamp``) or an interval (``time_interval``).

    Example::

        Flowable.just("a").timestamp(TestScheduler(start=5.0)).blocking_first()   # Timed(value='a', time=5.0)
    """

    value: T
    time: float


class _TimeOfSubscriber(BasicSubscriber[Any, Any]):
    """Refuses a None error at once (rule 2.13), as on_next refuses a None element."""

    __slots__ = ()

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise none_refused("on_error")  # rule 2.13
        super().on_error(error)


@final
class _TimestampSubscriber(_TimeOfSubscriber):
    __slots__ = ("_now",)

    def __init__(self, downstream: Subscriber[Any], scheduler: Scheduler) -> None:
        super().__init__(downstream)
        self._now = scheduler.now

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        if not self.done:
            self.downstream.on_next(Timed(item, self._now()))


@final
class _TimeIntervalSubscriber(_TimeOfSubscriber):
    __slots__ = ("_now", "_last")

    def __init__(self, downstream: Subscriber[Any], scheduler: Scheduler) -> None:
        super().__init__(downstream)
        self._now = scheduler.now
        self._last = scheduler.now()

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        if self.done:
            return
        t = self._now()
        last = self._last
        self._last = t
        self.downstream.on_next(Timed(item, t - last))


@final
class _TimedFlowable(Flowable[Any]):
    __slots__ = ("_source", "_scheduler", "_interval")

    def __init__(self, source: Flowable[Any], scheduler: Scheduler, interval: bool) -> None:
        self._source = source
        self._scheduler = scheduler
        self._interval = interval

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        if self._interval:
            self._source.subscribe(_TimeIntervalSubscriber(subscriber, self._scheduler))
        else:
            self._source.subscribe(_TimestampSubscriber(subscriber, self._scheduler))


def timestamp(source: Flowable[T], scheduler: Scheduler | None = None) -> Flowable[Timed[T]]:
    return _TimedFlowable(source, resolve_scheduler("timestamp", scheduler), False)


def time_interval(source: Flowable[T], scheduler: Scheduler | None = None) -> Flowable[Timed[T]]:
    return _TimedFlowable(source, resolve_scheduler("time_interval", scheduler), True)
