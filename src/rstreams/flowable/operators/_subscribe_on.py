"""subscribe_on: subscribe to the source on a Scheduler's worker.

Requests that arrive before the upstream Subscription exists are deferred (seed 004, "deferred
requesting"; race: request vs on_subscribe). With ``request_on=True`` (RxJava's default) a
request made from another thread is scheduled onto the worker, so a synchronous source keeps
emitting on the worker thread; requests made on the worker thread go straight up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from threading import get_ident
from typing import Any, Generic, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicInt, AtomicRef
from ..._internal.requests import validate_request
from ..._internal.subscriptions import CANCELLED, cancel, deferred_request, set_once
from ..._spec import Subscriber, Subscription
from ...schedulers import Scheduler, Worker
from .._flowable import Flowable
from .._fused import batch_sink
from .._scalar import (
    _CANCELLED,
    _HAS_REQUEST_NO_VALUE,
    _NO_REQUEST_HAS_VALUE,
    _NO_REQUEST_NO_VALUE,
    DeferredScalarSubscription,
)
from ..sources._basic import _FromCallableFlowable, call_into

__all__ = ["subscribe_on"]

T = TypeVar("T")


@final
class _SubscribeOnSubscriber(Generic[T]):
    _rs_no_wrap = True
    __slots__ = (
        "_downstream", "_worker", "_source", "_upstream", "_missed", "_thread", "_request_on", "_done", "_batch",
        "__weakref__",
    )

    def __init__(self, downstream: Subscriber[T], worker: Worker, source: Flowable[T], request_on: bool) -> None:
        self._downstream: Subscriber[T] | None = downstream
        self._worker = worker
        self._source: Flowable[T] | None = source
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)
        self._missed = AtomicInt(0)
        self._thread: int | None = None  # ident of the worker thread that subscribed
        self._request_on = request_on
        self._done = False
        # the downstream's on_next_batch (batch_sink) or None, looked up once: it never changes
        self._batch: Callable[[list[T]], Any] | None = batch_sink(downstream)

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
        batch = self._batch
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
        self._batch = None
        self._worker.dispose()
        if d is not None:
            d.on_error(error)

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        d = self._downstream
        self._downstream = None
        self._batch = None
        self._worker.dispose()
        if d is not None:
            d.on_complete()

    def _request_upstream(self, s: Subscription, n: int) -> None:
        if not self._request_on or threading.get_ident() == self._thread:
            s.request(n)
        else:
            self._worker.submit(lambda: s.request(n))

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                cancel(self._upstream)
                self.on_error(err)  # rule 3.9
                return
        s = self._upstream._value  # a plain read (see atomics)
        if s is not None:
            if s is not CANCELLED:
                # _request_upstream, spelled out for the request of every batch
                if not self._request_on or get_ident() == self._thread:
                    s.request(n)
                else:
                    self._worker.submit(lambda: s.request(n))
            return
        deferred_request(self._upstream, self._missed, n)

    def cancel(self) -> None:
        self._downstream = None  # rule 3.13
        self._batch = None
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
        worker.submit(s.run)


@final
class _CallableOnSubscription(DeferredScalarSubscription[T]):
    """``from_callable(fn).subscribe_on(s)`` in one object (Reactor's ``FluxSubscribeOnCallable``):
    the callable runs as one task on a worker of ``s`` and its value is emitted there; no
    subscribe_on subscriber and no second scalar subscription in between. The worker is disposed
    before ``on_complete`` (so a pooled thread is free again for whatever on_complete starts),
    on cancel (its pending task is dropped: the callable never runs), and after an error.

    A request made on another thread after the value is ready is scheduled onto the worker (as
    subscribe_on's ``request_on``), so the value is still emitted on the worker's thread.
    """

    __slots__ = ("_fn", "_worker", "_thread", "_request_on")

    def __init__(self, downstream: Subscriber[T], fn: Callable[[], T], worker: Worker, request_on: bool) -> None:
        super().__init__(downstream, worker.dispose)
        self._fn: Callable[[], T] | None = fn
        self._worker = worker
        self._thread: int | None = None
        self._request_on = request_on

    def run(self) -> None:
        self._thread = threading.get_ident()
        fn = self._fn
        self._fn = None
        if fn is None or self._state._value == _CANCELLED:  # a plain read (see atomics)
            return
        call_into(fn, self)  # from_callable's own call: value, error or rule 2.13 error

    def error(self, error: BaseException, cancel_upstream: bool = False) -> None:
        self._worker.dispose()
        super().error(error, cancel_upstream)

    def request(self, n: int) -> None:
        if type(n) is int and n > 0 and self._request_on:
            # race: request vs the value arriving. Either the request is registered before the
            # value (the worker emits in complete()), or the value is there and the emission is
            # scheduled onto the worker: never on this thread unless this is the worker's thread.
            state = self._state
            if state._value == _NO_REQUEST_NO_VALUE and state.compare_and_set(_NO_REQUEST_NO_VALUE, _HAS_REQUEST_NO_VALUE):
                return
            if state._value == _NO_REQUEST_HAS_VALUE and threading.get_ident() != self._thread:
                sup = super().request
                self._worker.submit(lambda: sup(n))
                return
        super().request(n)

    def _emit(self) -> None:
        d = self._downstream
        v = self._value
        self._release()
        if d is not None and v is not None and self._state._value != _CANCELLED:
            last = getattr(d, "on_last", None)  # library-internal: the value and on_complete in one
            if last is not None:
                self._worker.dispose()  # before: what the downstream starts may lease this thread
                last(v)
                return
            d.on_next(v)
            if self._state._value != _CANCELLED:
                self._worker.dispose()
                d.on_complete()
                return
        self._worker.dispose()


@final
class _SubscribeOnCallableFlowable(Flowable[T]):
    __slots__ = ("_fn", "_scheduler", "_request_on")

    def __init__(self, fn: Callable[[], T], scheduler: Scheduler, request_on: bool) -> None:
        self._fn = fn
        self._scheduler = scheduler
        self._request_on = request_on

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        worker = self._scheduler.create_worker()
        s = _CallableOnSubscription(subscriber, self._fn, worker, self._request_on)
        subscriber.on_subscribe(s)
        if s._state._value != _CANCELLED:
            worker.submit(s.run)


def subscribe_on(source: Flowable[T], scheduler: Scheduler, request_on: bool = True) -> Flowable[Any]:
    if Scheduler not in type(scheduler).__mro__ and not isinstance(scheduler, Scheduler):
        raise TypeError(f"subscribe_on(): expected a Scheduler, got {type(scheduler).__name__}")
    if type(source) is _FromCallableFlowable:
        # the callable runs as one task on the scheduler: the idiom for blocking calls
        # (flat_map(lambda x: from_callable(...).subscribe_on(io()), max_concurrency=...))
        return _SubscribeOnCallableFlowable(source._fn, scheduler, request_on)
    return _SubscribeOnFlowable(source, scheduler, request_on)
