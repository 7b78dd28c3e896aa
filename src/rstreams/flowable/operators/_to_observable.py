"""``to_observable(prefetch)``: a Flowable as a reactivex (RxPY) Observable, as RxJava's
``Flowable.toObservable()``.

An Observer takes whatever comes, so each Observer subscription subscribes the Flowable with a
:class:`~rstreams._internal.subscribers.LambdaSubscriber` forwarding ``on_next``/``on_error``/
``on_complete`` to it. By default it requests unbounded (RxJava's choice); with ``prefetch=n`` it
requests ``n`` first, then ``n - n // 4`` each time that many were delivered: the upstream never
runs more than ``n`` elements ahead of the Observer, which bounds the queues of asynchronous
stages (``observe_on``, ``flat_map``) when the Observer is slow. Disposing the Observer's
Disposable cancels the subscription.

The Flowable is subscribed on reactivex's ``CurrentThreadScheduler`` (the trampoline its own
synchronous sources use): still synchronously, on the subscribing thread, but after reactivex has
connected the returned Disposable, so an operator such as ``take(3)`` after ``to_observable()`` of
a synchronous Flowable cancels it after three elements instead of letting it run to its end.

The replenishing counter is touched only on the serial ``on_next`` path (rule 1.3): no lock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._internal.subscribers import LambdaSubscriber
from ..sources._from_observable import require_reactivex

if TYPE_CHECKING:
    from .._flowable import Flowable

__all__ = ["to_observable"]


class _Replenish:
    """``on_next`` for a prefetching subscription: deliver, then request in batches."""

    __slots__ = ("_observer_next", "_limit", "_count", "subscriber")

    def __init__(self, observer_next: Any, prefetch: int) -> None:
        self._observer_next = observer_next
        self._limit = prefetch - prefetch // 4
        self._count = 0
        self.subscriber: LambdaSubscriber[Any] | None = None

    def __call__(self, item: Any) -> None:
        self._observer_next(item)
        c = self._count + 1
        if c == self._limit:
            self._count = 0
            s = self.subscriber
            if s is not None:
                s.request(c)
        else:
            self._count = c


def to_observable(source: Flowable[Any], prefetch: int | None) -> Any:
    rx = require_reactivex("Flowable.to_observable()")
    if prefetch is not None:
        if isinstance(prefetch, bool) or not isinstance(prefetch, int):
            raise TypeError(f"to_observable(): prefetch must be a positive int or None, got {prefetch!r}")
        if prefetch <= 0:
            raise ValueError(f"to_observable(): prefetch must be >= 1, got {prefetch}")
    from reactivex.disposable import Disposable
    from reactivex.scheduler import CurrentThreadScheduler

    def subscribe(observer: Any, scheduler: Any = None) -> Any:
        if prefetch is None:
            ls: LambdaSubscriber[Any] = LambdaSubscriber(observer.on_next, observer.on_error, observer.on_completed)
        else:
            first = prefetch
            on_next = _Replenish(observer.on_next, prefetch)
            ls = LambdaSubscriber(
                on_next, observer.on_error, observer.on_completed, on_subscribe=lambda s: s.request(first)
            )
            on_next.subscriber = ls
        # subscribe on reactivex's trampoline: inside Observable.subscribe it runs only after the
        # Disposable below is wired into the Observer chain, so a downstream take() can cancel a
        # synchronous Flowable mid-way (as reactivex's own synchronous sources can be)
        def start(_scheduler: Any, _state: Any = None) -> None:
            source.subscribe(ls)

        CurrentThreadScheduler.singleton().schedule(start)
        return Disposable(ls.dispose)

    return rx.create(subscribe)
