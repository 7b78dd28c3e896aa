"""``AsyncProcessor``: emits only the last value, when the upstream completes (or only the error).

Each subscriber gets a :class:`~rstreams.flowable._scalar.DeferredScalarSubscription`, whose state
machine emits the value exactly once when it is both available and requested (race: completion on
the emitting thread vs the first request on the subscriber's thread). Subscribers are kept in the
copy-on-write tuple of ``SubscriberSet`` (race: subscribe/cancel vs termination).
"""

from __future__ import annotations

from typing import Any, TypeVar, final

from ..._internal import plugins
from ..._internal.requests import MAX_DEMAND
from ..._spec import Subscriber, Subscription
from .._scalar import DeferredScalarSubscription
from ._base import SubscriberSet, check_error, check_item

__all__ = ["AsyncProcessor"]

T = TypeVar("T")


@final
class AsyncProcessor(SubscriberSet[T]):
    """Emits the last value it received (then completes) once it completes, or only the error.

    Example::

        ap = AsyncProcessor.create()
        ts = ap.test()
        ap.on_next(1); ap.on_next(2); ap.on_complete()
        ts.assert_result(2)

    Backpressure: the value is emitted only when requested; as a Subscriber it requests unbounded
    demand. Late subscribers receive the same outcome.

    Scheduler: the value is delivered on the completing thread or the requesting thread.

    TCK: passes the Publisher verification "AsPublisher" (as RxJava's
    ``AsyncProcessorAsPublisherTckTest``), for streams of at most one element, and the Subscriber
    blackbox verification (rule 2.5: a second ``on_subscribe`` while an upstream is active is
    cancelled). Not the IdentityProcessor verification: it emits the last value only, at completion.
    """

    __slots__ = ("_value",)

    def __init__(self) -> None:
        super().__init__()
        self._value: T | None = None

    @staticmethod  # shadows the static Flowable.create(emitter_fn) factory, as in RxJava
    def create() -> AsyncProcessor[Any]:  # type: ignore[override]
        return AsyncProcessor()

    @property
    def value(self) -> T | None:
        """The final value once completed with one, else None."""
        return self._value if self._done and self._error is None else None

    @property
    def has_value(self) -> bool:
        return self._done and self._error is None and self._value is not None

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        holder: list[DeferredScalarSubscription[T]] = []

        def remove() -> None:
            if holder:
                self._remove(holder[0])  # rule 3.13

        ds: DeferredScalarSubscription[T] = DeferredScalarSubscription(subscriber, remove)
        holder.append(ds)
        subscriber.on_subscribe(ds)
        if ds.is_cancelled:
            return
        if self._add(ds):
            if ds.is_cancelled:
                self._remove(ds)
            return
        self._deliver(ds)

    def _deliver(self, ds: DeferredScalarSubscription[T]) -> None:
        e = self._error
        if e is not None:
            ds.error(e)
        elif self._value is not None:
            ds.complete(self._value)
        else:
            ds.complete_empty()

    # -- Subscriber side -------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if self._accept_upstream(subscription, "AsyncProcessor"):  # rule 2.5
            subscription.request(MAX_DEMAND)

    def on_next(self, item: T) -> None:
        if item is None:
            check_item(item)
        if self._done:
            return
        self._value = item

    def on_error(self, error: BaseException) -> None:
        check_error(error, "AsyncProcessor")
        if self._done:
            plugins.on_error(error, "AsyncProcessor: on_error after termination (rule 1.7)")
            return
        self._value = None
        self._error = error
        self._done = True
        for ds in self._terminate_subscribers():
            ds.error(error)

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        for ds in self._terminate_subscribers():
            self._deliver(ds)

    def __repr__(self) -> str:
        return f"AsyncProcessor(done={self._done}, subscribers={self.subscriber_count})"
