"""The common base of the processors, the copy-on-write subscriber set, and ``to_serialized()``.

A processor is a :class:`~rstreams.flowable.Flowable` (so every operator applies to it) and a
Subscriber: a Reactive Streams Processor (rule 4.1). Its ``on_*`` methods must be called serially
(rule 1.3), as from any Publisher; :meth:`FlowableProcessor.to_serialized` returns a wrapper whose
``on_*`` methods may be called from several threads at once.

The subscriber set (:class:`SubscriberSet`) is an immutable tuple swapped under a lock on subscribe,
cancel and termination (race: subscribe vs cancel vs terminate); the emitting thread reads the
tuple with one attribute load per signal and never takes the lock per item.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any, Final, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicInt, AtomicRef
from ..._internal.drain import enter, leave
from ..._internal.subscriptions import set_once
from ..._spec import Subscriber, Subscription, null_element_message
from ...errors import MissingBackpressureError, NoneElementError
from .._flowable import Flowable

__all__ = ["FlowableProcessor", "SerializedProcessor", "SubscriberSet", "check_item", "missing_backpressure"]

T = TypeVar("T")


def check_item(item: object, where: str = "on_next") -> None:
    """Rule 2.13: ``None`` is never an element; raise TypeError (NoneElementError)."""
    if item is None:
        raise NoneElementError(null_element_message(where))


def check_error(error: object, processor: str = "") -> None:
    """Rule 2.13: ``on_error`` takes an exception instance. ``None`` raises NoneElementError and
    anything else (a str, an exception class) TypeError, at the call: passed on, it would reach every
    subscriber as a malformed signal (``Flowable.create``'s emitter refuses it too)."""
    if error is None:
        raise NoneElementError(null_element_message("on_error"))
    if not isinstance(error, BaseException):
        where = f"{processor}.on_error" if processor else "on_error"
        raise TypeError(
            f"{where}() expects an exception instance, got {type(error).__name__} {error!r} (rule 2.13); "
            "e.g. on_error(ValueError('bad input'))"
        )


def missing_backpressure(processor: str) -> MissingBackpressureError:
    """The error a non-coordinating processor signals to a subscriber that has no demand."""
    return MissingBackpressureError(
        f"{processor}: could not emit the value due to lack of requests: the subscriber had requested 0 "
        "(no outstanding demand) when the item arrived, so it was terminated and removed. Fix: apply "
        "on_backpressure_buffer(), on_backpressure_drop() or on_backpressure_latest() between the processor "
        "and the slow subscriber, or use MulticastProcessor, which paces the source by the slowest subscriber."
    )


class FlowableProcessor(Flowable[T]):
    """A Flowable that is also a Subscriber (rule 4.1). Subclasses implement the signal methods.

    ``has_subscribers``, ``subscriber_count``, ``has_complete``, ``has_throwable`` and ``throwable``
    describe the current state (as RxJava's ``FlowableProcessor``).

    Example::

        p: FlowableProcessor[int] = PublishProcessor.create()
        ts = p.test()
        Flowable.range(0, 3).subscribe(p)          # a Subscriber of one stream, a Flowable to others
        ts.assert_result(0, 1, 2); p.has_complete  # True
    """

    #: Flowable.subscribe(processor) hands it raw signals: library upstreams are serial (rule 1.3).
    _rs_no_wrap = True
    __slots__ = ()

    def on_subscribe(self, subscription: Subscription) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def on_next(self, item: T) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def on_error(self, error: BaseException) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def on_complete(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def has_subscribers(self) -> bool:
        return self.subscriber_count != 0

    @property
    def subscriber_count(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def has_complete(self) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def has_throwable(self) -> bool:
        return self.throwable is not None

    @property
    def throwable(self) -> BaseException | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def to_serialized(self) -> FlowableProcessor[T]:
        """A wrapper whose ``on_next``/``on_error``/``on_complete``/``on_subscribe`` may be called
        from several threads concurrently; it forwards them to this processor one at a time.

        Example::

            pp = PublishProcessor.create()
            sp = pp.to_serialized()
            # threads call sp.on_next(x) concurrently; subscribers of pp (or sp) see serial signals
        """
        if isinstance(self, SerializedProcessor):
            return self
        return SerializedProcessor(self)


class SubscriberSet(FlowableProcessor[T]):
    """A processor with a copy-on-write tuple of subscriber records (race: subscribe vs cancel vs
    terminate, all from any thread, while one thread emits), and its one upstream Subscription."""

    __slots__ = ("_subs_lock", "_subscribers", "_terminated", "_done", "_error", "_upstream")

    def __init__(self) -> None:
        self._subs_lock = threading.Lock()
        self._subscribers: tuple[Any, ...] = ()
        self._terminated = False
        self._done = False
        self._error: BaseException | None = None
        # set once (rule 2.5: a second on_subscribe is cancelled); CANCELLED once disconnected
        # (race: on_subscribe from two threads, or vs a disconnect)
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)

    def _accept_upstream(self, subscription: Subscription, name: str) -> bool:
        """The processor's ``on_subscribe``: True if ``subscription`` is now its upstream. After
        termination it is cancelled; while another upstream is active it is cancelled and the
        double subscription reported (rules 2.5 and 2.12), never requested from."""
        check_item(subscription, "on_subscribe")
        if self._done:
            subscription.cancel()
            return False
        return set_once(self._upstream, subscription, name)

    def _add(self, inner: Any) -> bool:
        with self._subs_lock:  # copy-on-write swap (race: concurrent subscribe/cancel/terminate)
            if self._terminated:
                return False
            self._subscribers = (*self._subscribers, inner)
            return True

    def _remove(self, inner: Any) -> int:
        """Remove ``inner`` (rule 3.13: no reference kept); return how many subscribers remain."""
        with self._subs_lock:  # copy-on-write swap
            subs = self._subscribers
            if inner not in subs:
                return -1
            self._subscribers = tuple(s for s in subs if s is not inner)
            return len(self._subscribers)

    def _terminate_subscribers(self) -> tuple[Any, ...]:
        with self._subs_lock:  # race: terminate vs subscribe (a late one is refused by _add)
            self._terminated = True
            subs = self._subscribers
            self._subscribers = ()
            return subs

    @property
    def subscriber_count(self) -> int:
        return len(self._subscribers)

    @property
    def has_complete(self) -> bool:
        return self._done and self._error is None

    @property
    def throwable(self) -> BaseException | None:
        return self._error


@final
class _Terminal:
    """A terminal signal or an on_subscribe queued in a SerializedProcessor (never an element)."""

    __slots__ = ("kind", "payload")

    def __init__(self, kind: str, payload: Any) -> None:
        self.kind = kind
        self.payload = payload


_COMPLETE: Final = _Terminal("complete", None)


@final
class SerializedProcessor(FlowableProcessor[T]):
    """Serializes concurrent ``on_*`` calls to a processor (seed 004 fast-path queue-drain).

    The uncontended caller moves the wip counter 0 -> 1 and signals the processor directly; a caller
    that finds it non-zero appends its signal to a deque and leaves: the owner drains it before
    leaving (race: several emitting threads, one signalling at a time). No lock is held while the
    processor (and through it the subscribers) is signalled. After a terminal signal everything is
    ignored.

    Example::

        p = PublishProcessor.create().to_serialized()      # a SerializedProcessor
        ts = p.test()
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(p.on_next, range(100)))          # on_next from 4 threads at once
        p.on_complete(); ts.assert_value_count(100).assert_complete()
    """

    __slots__ = ("_actual", "_wip", "_queue", "_sdone")

    def __init__(self, actual: FlowableProcessor[T]) -> None:
        self._actual = actual
        self._wip = AtomicInt(0)  # race: concurrent on_* calls from several threads
        self._queue: deque[Any] = deque()
        self._sdone = False

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._actual._subscribe_actual(subscriber)

    def _emit(self, signal: Any) -> None:
        wip = self._wip
        if wip.compare_and_set(0, 1):  # fast path: nobody else is signalling
            self._deliver(signal)
            missed = wip.add_and_get(-1)
            if missed == 0:
                return
        else:
            self._queue.append(signal)
            if not enter(wip):
                return
            missed = 1
        q = self._queue
        while True:
            while q:
                self._deliver(q.popleft())
            missed = leave(wip, missed)
            if missed == 0:
                return

    def _deliver(self, signal: Any) -> None:
        a = self._actual
        if type(signal) is _Terminal:
            if signal.kind == "complete":
                a.on_complete()
            elif signal.kind == "error":
                a.on_error(signal.payload)
            else:
                a.on_subscribe(signal.payload)
        else:
            a.on_next(signal)

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise NoneElementError(null_element_message("on_subscribe"))
        if self._sdone:
            subscription.cancel()
            return
        self._emit(_Terminal("subscribe", subscription))

    def on_next(self, item: T) -> None:
        if item is None:
            raise NoneElementError(null_element_message("on_next"))
        if self._sdone:
            return
        self._emit(item)

    def on_error(self, error: BaseException) -> None:
        check_error(error, "SerializedProcessor")
        if self._sdone:
            plugins.on_error(error, "SerializedProcessor: on_error after the stream ended (rule 1.7)")
            return
        self._sdone = True
        self._emit(_Terminal("error", error))

    def on_complete(self) -> None:
        if self._sdone:
            return
        self._sdone = True
        self._emit(_COMPLETE)

    @property
    def subscriber_count(self) -> int:
        return self._actual.subscriber_count

    @property
    def has_complete(self) -> bool:
        return self._actual.has_complete

    @property
    def throwable(self) -> BaseException | None:
        return self._actual.throwable

    def __repr__(self) -> str:
        return f"SerializedProcessor({self._actual!r})"
