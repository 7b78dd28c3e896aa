"""delay and delay_subscription.

``delay(duration)`` shifts every signal by ``duration`` on one Scheduler worker. The worker runs its
tasks one at a time in due-time order (FIFO for equal times), so the downstream sees the signals
serially and in order. An error is delivered at the worker's next turn (jumping ahead of the delayed
elements, which are dropped by disposing the worker) unless ``delay_error=True``; then it is shifted
like the rest. Valid requests pass straight upstream: every element is delayed, never dropped, so the
downstream's demand bounds what can be in flight (rule 1.1). A bad request (rule 3.9) fails the
stream at once, from the requesting thread.

Race: that rule 3.9 error vs an emission running on the worker, and an element delayed briefly vs the
downstream's ``on_subscribe`` still running (its first request made a synchronous source emit): every
signal, ``on_subscribe`` included, goes through a :class:`SerializedOut` (rule 1.3; uncontended, it
costs two atomic steps per element, next to the scheduling every element pays anyway).

Race: cancel vs a delayed task already due. ``cancel`` disposes the worker (pending tasks never
run) and releases the downstream (rule 3.13); a task already running finishes.

``delay(selector)``, a delay Publisher per element, is ``_delay_selector.py`` (dispatched from here).

``delay_subscription(duration)`` subscribes to the source only after ``duration``; requests and a
cancel made before that are remembered by a :class:`DeferredSubscription` (race: request/cancel vs
the late on_subscribe). Its signals go through a :class:`SerializedOut` too (race: a rule 3.9 error
from the requesting thread vs the source emitting).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, final

from ..._internal.requests import validate_request
from ..._internal.subscriptions import CANCELLED, DeferredSubscription
from ..._spec import Publisher, Subscriber, Subscription
from ...schedulers import Scheduler, Worker
from .._flowable import Flowable
from ._boundary_common import GONE
from ._delay_selector import delay_selector
from ._time_common import SerializedOut, check_duration, none_refused, resolve_scheduler

__all__ = ["delay", "delay_subscription"]

T = TypeVar("T")


@final
class _DelaySubscriber:
    _rs_no_wrap = True
    __slots__ = ("_out", "_downstream_ref", "_upstream", "_worker", "_delay", "_delay_error", "_done", "__weakref__")

    def __init__(self, downstream: Subscriber[Any], worker: Worker, delay: float, delay_error: bool) -> None:
        # race: the worker's emissions vs a rule 3.9 error signalled from the requesting thread
        # (the only signal that does not come from the worker): serialized, rule 1.3
        self._out = SerializedOut(downstream)
        self._downstream_ref: Subscriber[Any] = downstream  # for on_subscribe only
        self._upstream: Subscription = CANCELLED
        self._worker = worker
        self._delay = delay
        self._delay_error = delay_error
        self._done = False

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise none_refused("on_subscribe")  # rule 2.13
        if self._upstream is not CANCELLED:
            subscription.cancel()  # rule 2.5
            return
        self._upstream = subscription
        d = self._downstream_ref
        self._downstream_ref = GONE  # SerializedOut holds it (rule 3.13 after cancel)
        # inside the serialized section: the downstream's first request can make a synchronous
        # source emit at once, and a short delay then fires on the worker's thread while
        # on_subscribe still runs; that element waits for on_subscribe to return (rule 1.3)
        self._out.run(lambda: d.on_subscribe(self))

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        if self._done:
            return
        self._worker.schedule(lambda: self._out.on_next(item), self._delay)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise none_refused("on_error")  # rule 2.13
        if self._done:
            return
        self._done = True
        self._worker.schedule(lambda: self._terminate(error), self._delay if self._delay_error else 0.0)

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        self._worker.schedule(lambda: self._terminate(None), self._delay)

    def _terminate(self, error: BaseException | None) -> None:
        self._worker.dispose()  # drops the elements still delayed when an error jumps ahead
        if error is None:
            self._out.on_complete()
        else:
            self._out.on_error(error)

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                # rule 3.9 at once, not after the delay (nor at the worker's next turn): stop the
                # source and the pending elements, then fail (serialized with an emission in flight)
                self._done = True
                self._upstream.cancel()
                self._worker.dispose()
                self._out.on_error(err)
                return
        self._upstream.request(n)

    def cancel(self) -> None:
        self._upstream.cancel()
        self._worker.dispose()
        self._out.release()  # rule 3.13


@final
class _DelayFlowable(Flowable[T]):
    __slots__ = ("_source", "_delay", "_scheduler", "_delay_error")

    def __init__(self, source: Flowable[T], delay: float, scheduler: Scheduler, delay_error: bool) -> None:
        self._source = source
        self._delay = delay
        self._scheduler = scheduler
        self._delay_error = delay_error

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        w = self._scheduler.create_worker()
        self._source.subscribe(_DelaySubscriber(subscriber, w, self._delay, self._delay_error))


def delay(
    source: Flowable[T],
    duration: float | Callable[[T], Publisher[Any]],
    scheduler: Scheduler | None = None,
    delay_error: bool = False,
) -> Flowable[T]:
    if callable(duration):
        if scheduler is not None:
            raise TypeError("delay(): a selector takes no scheduler (its Publishers set the time)")
        return delay_selector(source, duration, delay_error)
    d = check_duration("delay", duration)
    return _DelayFlowable(source, d, resolve_scheduler("delay", scheduler), bool(delay_error))


@final
class _DelaySubscriptionSubscriber(DeferredSubscription):
    _rs_no_wrap = True
    __slots__ = ("_out", "_worker", "_source")

    def __init__(self, downstream: Subscriber[Any], worker: Worker, source: Flowable[Any]) -> None:
        super().__init__()
        # race: a rule 3.9 error from the requesting thread vs the source emitting on its own
        # thread (the worker's, after the delay): rule 1.3
        self._out = SerializedOut(downstream)
        self._worker = worker
        self._source = source

    def start(self) -> None:
        self._worker.dispose()
        if not self.is_cancelled:
            self._source.subscribe(self)

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise none_refused("on_subscribe")  # rule 2.13
        self.set_upstream(subscription)

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        self._out.on_next(item)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise none_refused("on_error")  # rule 2.13
        self._out.on_error(error)

    def on_complete(self) -> None:
        self._out.on_complete()

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:  # rule 3.9: validated here, the upstream may not exist yet
                super().cancel()
                self._worker.dispose()
                self._out.on_error(err)
                return
        super().request(n)

    def cancel(self) -> None:
        super().cancel()
        self._worker.dispose()
        self._out.release()  # rule 3.13


@final
class _DelaySubscriptionFlowable(Flowable[T]):
    __slots__ = ("_source", "_delay", "_scheduler")

    def __init__(self, source: Flowable[T], delay: float, scheduler: Scheduler) -> None:
        self._source = source
        self._delay = delay
        self._scheduler = scheduler

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        w = self._scheduler.create_worker()
        s = _DelaySubscriptionSubscriber(subscriber, w, self._source)
        subscriber.on_subscribe(s)
        if not s.is_cancelled:
            w.schedule(s.start, self._delay)


def delay_subscription(
    source: Flowable[T], duration: float, scheduler: Scheduler | None = None
) -> Flowable[T]:
    d = check_duration("delay_subscription", duration)
    return _DelaySubscriptionFlowable(source, d, resolve_scheduler("delay_subscription", scheduler))
