"""take_for(duration) and skip_for(duration): take or skip the elements of a time window that
starts at subscription.

``take_for`` relays elements until a timer on a Scheduler worker fires, then cancels the upstream
and completes. Race: the timer's on_complete vs an on_next in flight on the upstream thread: a
:class:`HalfSerializer` delivers the completion after the element, never during it (rule 1.3), and
nothing after it. Requests pass straight through.

``skip_for`` drops elements until the timer fires; the timer only flips one bool (read by the
upstream thread), and every dropped element is replaced by ``request(1)`` upstream so the
downstream's demand is not lost (rule 1.1 / 3.3: the request is issued from inside on_next, and the
upstream's own queue-drain keeps the recursion depth at 1).

Both dispose their worker on termination and cancel: no timer survives (rule 3.13).
"""

from __future__ import annotations

from typing import Any, TypeVar, final

from ..._internal.drain import HalfSerializer
from ..._spec import Subscriber, Subscription
from ...schedulers import Scheduler, Worker
from .._base import BasicSubscriber
from .._flowable import Flowable
from ._time_common import check_duration, none_refused, resolve_scheduler

__all__ = ["take_for", "skip_for"]

T = TypeVar("T")


@final
class _TakeForSubscriber(BasicSubscriber[Any, Any]):
    __slots__ = ("_hs", "_worker", "_duration")

    def __init__(self, downstream: Subscriber[Any], worker: Worker, duration: float) -> None:
        super().__init__(downstream)
        self._hs = HalfSerializer(downstream)  # race: timer completion vs on_next (rule 1.3)
        self._worker = worker
        self._duration = duration

    def on_subscribe(self, subscription: Subscription) -> None:
        super().on_subscribe(subscription)
        if self.upstream is subscription:
            self._worker.schedule(self._time_up, self._duration)

    def _time_up(self) -> None:
        self.upstream.cancel()
        self._worker.dispose()
        self._hs.on_complete()

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        self._hs.on_next(item)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise none_refused("on_error")  # rule 2.13
        self._worker.dispose()
        self._hs.on_error(error)

    def on_complete(self) -> None:
        self._worker.dispose()
        self._hs.on_complete()

    def cancel(self) -> None:
        self.upstream.cancel()
        self._worker.dispose()


@final
class _SkipForSubscriber(BasicSubscriber[Any, Any]):
    __slots__ = ("_open", "_worker", "_duration")

    def __init__(self, downstream: Subscriber[Any], worker: Worker, duration: float) -> None:
        super().__init__(downstream)
        self._open = False  # written once by the timer, read by the upstream thread
        self._worker = worker
        self._duration = duration

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise none_refused("on_subscribe")  # rule 2.13
        if self._duration <= 0:
            self._open = True
        else:
            self._worker.schedule(self._time_up, self._duration)
        super().on_subscribe(subscription)

    def _time_up(self) -> None:
        self._open = True
        self._worker.dispose()

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        if self._open:
            self.downstream.on_next(item)
        elif not self.done:
            self.upstream.request(1)  # replace the dropped element (demand is not lost)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise none_refused("on_error")  # rule 2.13
        self._worker.dispose()
        super().on_error(error)

    def on_complete(self) -> None:
        self._worker.dispose()
        super().on_complete()

    def cancel(self) -> None:
        self.upstream.cancel()
        self._worker.dispose()


@final
class _TimedTakeSkipFlowable(Flowable[T]):
    __slots__ = ("_source", "_duration", "_scheduler", "_take")

    def __init__(self, source: Flowable[T], duration: float, scheduler: Scheduler, take: bool) -> None:
        self._source = source
        self._duration = duration
        self._scheduler = scheduler
        self._take = take

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        w = self._scheduler.create_worker()
        if self._take:
            self._source.subscribe(_TakeForSubscriber(subscriber, w, self._duration))
        else:
            self._source.subscribe(_SkipForSubscriber(subscriber, w, self._duration))


def take_for(source: Flowable[T], duration: float, scheduler: Scheduler | None = None) -> Flowable[T]:
    d = check_duration("take_for", duration)
    return _TimedTakeSkipFlowable(source, d, resolve_scheduler("take_for", scheduler), True)


def skip_for(source: Flowable[T], duration: float, scheduler: Scheduler | None = None) -> Flowable[T]:
    d = check_duration("skip_for", duration)
    return _TimedTakeSkipFlowable(source, d, resolve_scheduler("skip_for", scheduler), False)
