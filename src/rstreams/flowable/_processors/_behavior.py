"""``BehaviorProcessor``: a PublishProcessor that also hands each new subscriber the latest value.

The latest value is kept with a sequence number as one ``(index, value)`` tuple: a single attribute
store, so readers always see a consistent pair. A new subscriber is added to the subscriber tuple
*before* it reads the latest value: an item emitted concurrently is then either read as the latest
value or delivered by the emitter, and the sequence number drops the duplicate when it is both
(race: subscribe vs on_next).

A new subscription starts on a slow path where every delivery takes the subscription's own lock
and a small queue serializes the first value (delivered by the subscribing or requesting thread)
with live items (delivered by the emitting thread) (race: first value vs live items, rule 1.3).
When the first value has been delivered and nothing is pending, the subscription switches to the
fast path of ``PublishProcessor`` (no lock per item) for good.

Demand for the first value: it waits for the subscriber's first request (RxJava signals
MissingBackpressureError when the subscriber has not requested inside ``on_subscribe``). Until the
first value is delivered, a newer item replaces it (it is still "the latest"); after that, the
PublishProcessor rules apply (no demand for a live item -> MissingBackpressureError).
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any, Final, TypeVar, final

from ..._internal import plugins
from ..._internal.requests import MAX_DEMAND, request_or_error
from ..._spec import Subscriber, Subscription
from .._enums import NOTSET
from ._base import SubscriberSet, check_error, check_item, missing_backpressure
from ._publish import PublishSubscription

__all__ = ["BehaviorProcessor"]

T = TypeVar("T")

_NAME: Final = "BehaviorProcessor"


class _Complete:
    __slots__ = ()


_COMPLETE: Final = _Complete()


@final
class _BehaviorSubscription(PublishSubscription[T]):
    __slots__ = ("lock", "queue", "index", "emitting", "first_offered", "first_delivered", "terminal")

    def __init__(self, downstream: Subscriber[T], parent: SubscriberSet[T]) -> None:
        super().__init__(downstream, parent)
        self.fast = False
        self.lock = threading.Lock()  # slow path only (race: first value vs live items)
        self.queue: deque[Any] = deque()
        self.index = 0
        self.emitting = False
        self.first_offered = False
        self.first_delivered = False
        self.terminal: Any = None  # _COMPLETE or an exception, pending on the slow path

    def request(self, n: int) -> None:
        err = request_or_error(self.requested, n)
        if err is not None:
            self._bad_request(err)
            return
        if not self.fast:
            self._drain()

    def _bad_request(self, err: BaseException) -> None:
        if not self.fast:
            with self.lock:
                slow = not self.fast
                if slow:
                    self.bad = err
                    self.terminal = err
                    self.queue.clear()
            if slow:
                p = self.parent
                if p is not None:
                    p._remove(self)
                self._drain()
                return
        super()._bad_request(err)

    # -- slow path, from the emitting thread -------------------------------------------------------
    def offer_live(self, item: T, index: int) -> bool:
        """Queue a live item on the slow path; False if the subscription went fast meanwhile."""
        with self.lock:
            if self.fast:
                return False
            if index <= self.index:
                return True  # already delivered as the first value
            self.index = index
            if self.emitting or self.first_delivered:
                self.queue.append(item)
            else:
                self.queue.clear()  # the latest value replaces a first value not yet delivered
                self.queue.append(item)
        self._drain()
        return True

    def offer_first(self, current: tuple[int, Any] | None) -> None:
        """From the subscribing thread, after the subscription was added."""
        with self.lock:
            self.first_offered = True
            if current is not None and current[0] > self.index and not self.first_delivered:
                self.index = current[0]
                self.queue.clear()
                self.queue.append(current[1])
        self._drain()

    def offer_terminal(self, error: BaseException | None) -> bool:
        with self.lock:
            if self.fast:
                return False
            self.terminal = _COMPLETE if error is None else error
            if not self.first_delivered and not self.emitting:
                self.queue.clear()  # the replayed latest value is dropped at termination
        self._drain()
        return True

    def _drain(self) -> None:
        while True:
            item: Any = NOTSET
            term: Any = None
            mbe = False
            with self.lock:
                if self.emitting or self.fast:
                    return
                d = self.downstream
                if d is None:
                    return
                q = self.queue
                if q:
                    if self.requested._value > self.emitted:
                        item = q.popleft()
                        self.emitted += 1
                    elif self.first_delivered:
                        mbe = True  # a live item without demand (PublishProcessor rule)
                        q.clear()
                    elif self.terminal is None:
                        return  # the first value waits for the first request
                    else:
                        q.clear()
                if item is NOTSET and not mbe:
                    term = self.terminal
                    if term is None:
                        if self.first_offered:
                            self.fast = True  # nothing pending: the emitter owns delivery from now on
                        return
                self.emitting = True
            if item is not NOTSET:
                d.on_next(item)
                with self.lock:
                    self.emitting = False
                    self.first_delivered = True
                continue
            if mbe:
                p = self.parent
                if p is not None:
                    p._remove(self)
                term = missing_backpressure(_NAME)
            if self.once.try_set():
                self.downstream = None  # rule 3.13
                self.parent = None
                if term is _COMPLETE:
                    d.on_complete()
                else:
                    d.on_error(term)
            return


@final
class BehaviorProcessor(SubscriberSet[T]):
    """Like :class:`PublishProcessor`, and each new subscriber first receives the latest value.

    Example::

        bp = BehaviorProcessor.create(default=0)
        bp.on_next(1)
        bp.test().assert_values(1)       # the latest value, then live items

    Backpressure: as PublishProcessor (a live item for a subscriber without demand terminates that
    subscriber with ``MissingBackpressureError``; :meth:`offer` emits only if all have demand). The
    replayed latest value waits for the subscriber's first request; until it is delivered a newer
    item replaces it. As a Subscriber it requests unbounded demand. The value is cleared when the
    processor terminates; late subscribers then receive only the terminal signal.

    Scheduler: live signals are delivered on the emitting thread; the replayed value on the thread
    that subscribes or requests.

    TCK: passes the Publisher verification "AsPublisher" (as RxJava's
    ``BehaviorProcessorAsPublisherTckTest``) and the Subscriber blackbox verification (rule 2.5: a
    second ``on_subscribe`` while an upstream is active is cancelled). Not the IdentityProcessor
    verification, for PublishProcessor's reasons: no coordination (a subscriber without demand gets
    ``MissingBackpressureError``, rules 1.1, 1.5, 4.2) and its upstream outlives its subscribers
    (rule 2.6).
    """

    __slots__ = ("_current", "_seq")

    def __init__(self, default: Any = NOTSET) -> None:
        super().__init__()
        self._seq = 0
        self._current: tuple[int, T] | None = None  # (sequence number, latest value): one store
        if default is not NOTSET:
            check_item(default, "create(default)")
            self._seq = 1
            self._current = (1, default)

    @staticmethod  # shadows the static Flowable.create(emitter_fn) factory, as in RxJava
    def create(default: Any = NOTSET) -> BehaviorProcessor[Any]:  # type: ignore[override]
        """A BehaviorProcessor, optionally with an initial ``default`` value (None is refused)."""
        return BehaviorProcessor(default)

    @staticmethod
    def create_default(default: Any) -> BehaviorProcessor[Any]:
        """A BehaviorProcessor with the initial value ``default`` (RxJava ``createDefault``).

        Example::

            BehaviorProcessor.create_default(0).test().assert_values(0)
        """
        if default is NOTSET:
            raise TypeError("BehaviorProcessor.create_default(): give the initial value")
        return BehaviorProcessor(default)

    @property
    def value(self) -> T | None:
        """The latest value, or None if there is none (or the processor terminated)."""
        cur = self._current
        return None if cur is None else cur[1]

    @property
    def has_value(self) -> bool:
        return self._current is not None

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        bs: _BehaviorSubscription[T] = _BehaviorSubscription(subscriber, self)
        subscriber.on_subscribe(bs)
        if bs.downstream is None:
            if bs.bad is not None:
                bs._drain()
            return
        if self._add(bs):
            if bs.downstream is None:
                self._remove(bs)
                return
            bs.offer_first(self._current)  # read after the add (race: subscribe vs on_next)
            return
        bs.first_offered = True
        bs.offer_terminal(self._error)

    # -- Subscriber side -------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if self._accept_upstream(subscription, "BehaviorProcessor"):  # rule 2.5
            subscription.request(MAX_DEMAND)

    def _set_current(self, item: T) -> int:
        seq = self._seq + 1
        self._seq = seq
        self._current = (seq, item)  # one atomic store (before the subscribers are read)
        return seq

    def _emit(self, bs: _BehaviorSubscription[T], item: T, seq: int) -> None:
        if bs.fast or not bs.offer_live(item, seq):
            if not bs.emit(item):
                bs.missing(_NAME)

    def on_next(self, item: T) -> None:
        if item is None:
            check_item(item)
        if self._done:
            return
        seq = self._set_current(item)
        for bs in self._subscribers:
            self._emit(bs, item, seq)

    def offer(self, item: T) -> bool:
        """Emit ``item`` only if every current subscriber has demand; else return False."""
        check_item(item, "offer")
        if self._done:
            return False
        subs = self._subscribers
        for bs in subs:
            if not bs.has_demand():
                return False
        seq = self._set_current(item)
        for bs in subs:
            self._emit(bs, item, seq)
        return True

    def _terminate(self, error: BaseException | None) -> None:
        self._current = None
        for bs in self._terminate_subscribers():
            if bs.fast or not bs.offer_terminal(error):
                bs.terminate(error)

    def on_error(self, error: BaseException) -> None:
        check_error(error, "BehaviorProcessor")
        if self._done:
            plugins.on_error(error, "BehaviorProcessor: on_error after termination (rule 1.7)")
            return
        self._error = error
        self._done = True
        self._terminate(error)

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        self._terminate(None)

    def __repr__(self) -> str:
        return f"BehaviorProcessor(value={self.value!r}, subscribers={self.subscriber_count})"
