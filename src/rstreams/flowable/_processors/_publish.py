"""``PublishProcessor``: multicasts live items to the current subscribers, without coordination.

Each subscriber has its own demand: ``requested`` (an :class:`AtomicInt`, only ever increased by
``request``) and ``emitted`` (a plain int written only by the emitting thread). The emitter compares
them with two attribute loads per item and subscriber: no lock on the per-item path. A subscriber
with no outstanding demand when an item arrives is terminated alone with
:class:`~rstreams.errors.MissingBackpressureError` and removed (RxJava semantics); ``offer(x)``
emits only if every subscriber has demand.

Races and their guards:

* subscribe/cancel vs emission: the subscriber tuple is copy-on-write (``SubscriberSet``); a
  subscriber is added only after its ``on_subscribe`` returned, so the emitter never signals it
  during ``on_subscribe`` (rule 1.3); cancel clears ``downstream`` (rule 3.13) and the emitter skips
  a record whose ``downstream`` is None.
* rule 3.9 error (``request(0)`` from another thread) vs an ``on_next`` in flight: the emitter
  raises ``busy`` around the call and re-checks ``bad`` afterwards; the requester stores ``bad`` and
  then reads ``busy``. Whoever sees the other delivers the error, and ``once`` (an AtomicFlag) lets
  exactly one of them do it (Dekker's pattern: it relies on attribute stores and loads being
  sequentially consistent, as they are in CPython; the flag decides the rare tie).
* terminal vs rule 3.9 error: both go through ``once``.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicFlag, AtomicInt
from ..._internal.requests import MAX_DEMAND, request_or_error
from ..._spec import Subscriber, Subscription
from ._base import SubscriberSet, check_error, check_item, missing_backpressure

__all__ = ["PublishProcessor", "PublishSubscription"]

T = TypeVar("T")


class PublishSubscription(Generic[T]):
    """One subscriber of a Publish/Behavior processor; also the Subscription it sees."""

    __slots__ = ("downstream", "parent", "requested", "emitted", "busy", "bad", "once", "fast")

    def __init__(self, downstream: Subscriber[T], parent: SubscriberSet[T]) -> None:
        self.downstream: Subscriber[T] | None = downstream
        self.parent: SubscriberSet[T] | None = parent
        self.requested = AtomicInt(0)  # rule 1.1: increased by request, read by the emitter
        self.emitted = 0  # written by the emitting thread only
        self.busy = False  # the emitter is inside downstream.on_next (race: rule 3.9 error vs on_next)
        self.bad: BaseException | None = None
        self.once = AtomicFlag()  # exactly one terminal signal (rule 1.7)
        self.fast = True  # Behavior subscriptions start on a locked slow path

    # -- Subscription ---------------------------------------------------------------------------
    def request(self, n: int) -> None:
        err = request_or_error(self.requested, n)
        if err is not None:
            self._bad_request(err)
            return

    def cancel(self) -> None:
        if self.downstream is not None:
            self.downstream = None  # rule 3.13: drop the subscriber
            p = self.parent
            self.parent = None
            if p is not None:
                p._remove(self)

    # -- helpers for the processor -----------------------------------------------------------------
    def _bad_request(self, err: BaseException) -> None:
        # rule 3.9: the stream ends with the error; the subscription is cancelled
        self.bad = err
        p = self.parent
        if p is not None:
            p._remove(self)
        if not self.busy:
            self._deliver_bad()

    def _deliver_bad(self) -> None:
        d = self.downstream
        err = self.bad
        if d is not None and err is not None and self.once.try_set():
            self.downstream = None
            self.parent = None
            d.on_error(err)

    def emit(self, item: T) -> bool:
        """Emit from the emitting thread; False (and nothing emitted) when there is no demand."""
        d = self.downstream
        if d is None:
            return True
        e = self.emitted
        if self.requested._value > e:  # plain read: requested only grows (rule 1.1)
            self.busy = True
            if self.bad is None:
                self.emitted = e + 1
                d.on_next(item)
            self.busy = False
            if self.bad is not None:
                self._deliver_bad()
            return True
        return False

    def has_demand(self) -> bool:
        return self.downstream is None or self.requested._value > self.emitted

    def terminate(self, error: BaseException | None) -> None:
        d = self.downstream
        if d is not None and self.once.try_set():
            self.downstream = None  # rule 3.13
            self.parent = None
            if error is None:
                d.on_complete()
            else:
                d.on_error(error)

    def missing(self, processor: str) -> None:
        """No demand for a live item: terminate this subscriber alone with MissingBackpressureError."""
        p = self.parent
        if p is not None:
            p._remove(self)
        self.terminate(missing_backpressure(processor))

    @property
    def is_cancelled(self) -> bool:
        return self.downstream is None


@final
class PublishProcessor(SubscriberSet[T]):
    """Multicasts live items to the subscribers present when each item arrives.

    Example::

        pp = PublishProcessor.create()
        ts = pp.test()
        pp.on_next(1); pp.on_next(2); pp.on_complete()
        ts.assert_result(1, 2)

    Backpressure: does not coordinate. As a Subscriber it requests unbounded demand. A subscriber
    with no outstanding demand when an item arrives is terminated alone with
    ``MissingBackpressureError`` and removed; :meth:`offer` emits only if every subscriber has
    demand. Late subscribers after termination receive only the terminal signal.

    Scheduler: signals are delivered on the thread that calls ``on_next``/``on_complete``/
    ``on_error`` (serially, rule 1.3; use :meth:`to_serialized` for several emitting threads).

    TCK: passes the Publisher verification "AsPublisher" (fed by a thread calling :meth:`offer`),
    as RxJava's ``PublishProcessorAsPublisherTckTest``, and the Subscriber blackbox verification
    (rule 2.5: a second ``on_subscribe`` while an upstream is active is cancelled; RxJava's requests
    from it). Not the IdentityProcessor verification: it does not coordinate, so a subscriber without
    demand gets ``MissingBackpressureError`` instead of a buffer (rules 1.1, 1.5, 4.2), and it keeps
    its upstream when its subscribers leave (rule 2.6: the whitebox happy path and 2.8).
    """

    __slots__ = ()

    @staticmethod  # shadows the static Flowable.create(emitter_fn) factory, as in RxJava
    def create() -> PublishProcessor[Any]:  # type: ignore[override]
        return PublishProcessor()

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        ps: PublishSubscription[T] = PublishSubscription(subscriber, self)
        subscriber.on_subscribe(ps)
        if ps.downstream is None:
            return  # cancelled or failed (rule 3.9) inside on_subscribe
        if self._add(ps):
            if ps.downstream is None:
                self._remove(ps)  # race: cancel vs add
            return
        ps.terminate(self._error)

    # -- Subscriber side -------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if self._accept_upstream(subscription, "PublishProcessor"):  # rule 2.5
            subscription.request(MAX_DEMAND)

    def on_next(self, item: T) -> None:
        if item is None:
            check_item(item)
        if self._done:
            return
        for ps in self._subscribers:
            if not ps.emit(item):
                ps.missing("PublishProcessor")

    def offer(self, item: T) -> bool:
        """Emit ``item`` only if every current subscriber has demand; else emit nothing, return False.

        Must be called serially with ``on_next``/``on_complete``/``on_error``.
        """
        check_item(item, "offer")
        if self._done:
            return False
        subs = self._subscribers
        for ps in subs:
            if not ps.has_demand():
                return False
        for ps in subs:
            if not ps.emit(item):
                ps.missing("PublishProcessor")
        return True

    def on_error(self, error: BaseException) -> None:
        check_error(error, "PublishProcessor")
        if self._done:
            plugins.on_error(error, "PublishProcessor: on_error after termination (rule 1.7)")
            return
        self._error = error
        self._done = True
        for ps in self._terminate_subscribers():
            ps.terminate(error)

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        for ps in self._terminate_subscribers():
            ps.terminate(None)

    def __repr__(self) -> str:
        return f"PublishProcessor(subscribers={self.subscriber_count}, done={self._done})"
