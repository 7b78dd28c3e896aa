"""subscribe_on: subscribe to the source on a Scheduler's worker.

Requests that arrive before the upstream Subscription exists are deferred (seed 004, "deferred
requesting"; race: request vs on_subscribe). With ``request_on=True`` (RxJava's default) a
request made from another thread is scheduled onto the worker, so a synchronous source keeps
emitting on the worker thread; requests made on the worker thread go straight up.
"""

from __future__ import annotations

import threading
from typing import Any, Generic, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicInt, AtomicRef
from ..._internal.requests import validate_request
from ..._internal.subscriptions import CANCELLED, cancel, deferred_request, set_once
from ..._spec import Subscriber, Subscription
from ...schedulers import Scheduler, Worker
from .._flowable import Flowable
from .._fused import batch_sink

__all__ = ["subscribe_on"]

T = TypeVar("T")


@final
class _SubscribeOnSubscriber(Generic[T]):
    _rs_no_wrap = True
    __slots__ = ("_downstream", "_worker", "_source", "_upstream", "_missed", "_thread", "_request_on", "_done", "__weakref__")

    def __init__(self, downstream: Subscriber[T], worker: Worker, source: Flowable[T], request_on: bool) -> None:
        self._downstream: Subscriber[T] | None = downstream
        self._worker = worker
        self._source: Flowable[T] | None = source
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)
        self._missed = AtomicInt(0)
        self._thread: int | None = None  # ident of the worker thread that subscribed
        self._request_on = request_on
        self._done = False

    def run(self) -> None:
        self._thread = threading.get_ident()
        src = self._source
        self._source = None
        if src is not None:
            src.subscribe(self)

    def on_subscribe(self, subscription: Subscription) -> None:
        if set_once(self._upstream, subscription, "subscribe_on"):
            r = self._missed.get_and_set(0)
            if r != 0:
                self._request_upstream(subscription, r)

    def on_next(self, item: T) -> None:
        d = self._downstream
        if d is not None:
            d.on_next(item)

    def on_next_batch(self, items: list[T]) -> None:
        """Library-internal batch hand-off, passed on (or unrolled for a downstream without it)."""
        d = self._downstream
        if d is None:
            return
        batch = batch_sink(d)
        if batch is not None:
            batch(items)
        else:
            on_next = d.on_next
            for x in items:
                if self._downstream is None:
                    return  # cancelled meanwhile (rule 3.12)
                on_next(x)

    def on_error(self, error: BaseException) -> None:
        if self._done:
            plugins.on_error(error, "subscribe_on: on_error after termination")
            return
        self._done = True
        d = self._downstream
        self._downstream = None
        self._worker.dispose()
        if d is not None:
            d.on_error(error)

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        d = self._downstream
        self._downstream = None
        self._worker.dispose()
        if d is not None:
            d.on_complete()

    def _request_upstream(self, s: Subscription, n: int) -> None:
        if not self._request_on or threading.get_ident() == self._thread:
            s.request(n)
        else:
            self._worker.schedule(lambda: s.request(n))

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                cancel(self._upstream)
                self.on_error(err)  # rule 3.9
                return
        s = self._upstream.get()
        if s is not None:
            if s is not CANCELLED:
                self._request_upstream(s, n)
            return
        deferred_request(self._upstream, self._missed, n)

    def cancel(self) -> None:
        self._downstream = None  # rule 3.13
        self._source = None
        cancel(self._upstream)
        self._worker.dispose()


@final
class _SubscribeOnFlowable(Flowable[T]):
    __slots__ = ("_source", "_scheduler", "_request_on")

    def __init__(self, source: Flowable[T], scheduler: Scheduler, request_on: bool) -> None:
        self._source = source
        self._scheduler = scheduler
        self._request_on = request_on

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        worker = self._scheduler.create_worker()
        s = _SubscribeOnSubscriber(subscriber, worker, self._source, self._request_on)
        subscriber.on_subscribe(s)
        worker.schedule(s.run)


def subscribe_on(source: Flowable[T], scheduler: Scheduler, request_on: bool = True) -> Flowable[Any]:
    if not isinstance(scheduler, Scheduler):
        raise TypeError(f"subscribe_on(): expected a Scheduler, got {type(scheduler).__name__}")
    return _SubscribeOnFlowable(source, scheduler, request_on)
