"""The subscribers that sit at the edge of the library.

* :class:`StrictSubscriber` wraps every foreign Subscriber handed to ``Flowable.subscribe``. Inside
  the library, operators use RxJava's relaxed contract (seed 004, "FlowableSubscriber"): the
  upstream is trusted to be serial and to validate requests. A foreign Subscriber gets the strict
  contract: signals are serialized (rule 1.3), ``on_subscribe`` happens at most once (rule 2.12),
  a raising signal method cancels the subscription and goes to the undeliverable hook (rule 2.13),
  and ``request(n <= 0)`` ends the stream with a ValueError (rule 3.9).
* :class:`LambdaSubscriber` backs ``subscribe(on_next=..., on_error=..., on_complete=...)`` and is a
  :class:`Disposable`. A missing ``on_error`` routes the error to the hook as an
  ``OnErrorNotImplementedError``; it is never dropped silently. A raising ``on_next`` callback
  cancels the upstream and ends the stream with its error (RxJava's LambdaSubscriber); a raising
  ``on_error`` callback sends both errors to the hook. An ``on_subscribe`` callback receives the
  LambdaSubscriber itself as its Subscription, so cancelling there disposes it.

Both raise ``TypeError`` for a ``None`` element or argument (rule 2.13).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Final, Generic, Protocol, TypeVar, final, runtime_checkable

from .._spec import MAX_DEMAND, Subscriber, Subscription, null_element_message
from ..errors import NoneElementError, OnErrorNotImplementedError, ProtocolViolationError
from . import plugins
from .atomics import SEQUENTIAL_ATTRIBUTES, AtomicFlag, AtomicInt, AtomicRef
from .drain import pair_errors
from .requests import validate_request
from .subscriptions import (
    CANCELLED,
    SubscriptionArbiter,
    cancel,
    deferred_request,
    deferred_set_once,
    set_once,
)

__all__ = ["Disposable", "StrictSubscriber", "LambdaSubscriber", "NOOP_SUBSCRIBER", "ArbiterSubscriber"]

T = TypeVar("T")


@runtime_checkable
class Disposable(Protocol):
    """A handle that stops a running subscription.

    Example::

        d = Flowable.interval(0.1).subscribe(on_next=print)
        d.dispose()
    """

    def dispose(self) -> None: ...

    @property
    def is_disposed(self) -> bool: ...


class StrictSubscriber(Generic[T]):
    """Wraps a foreign Subscriber so that it receives strictly rule-abiding signals.

    Serialization (rule 1.3): ``on_next`` comes serially from the (library-internal) upstream,
    but a terminal signal may come from another thread (this wrapper's own rule 3.9 error, raised
    on the requesting thread). One lock guards two flags: ``_emitting`` (an ``on_next`` is running)
    and ``_terminal`` (a terminal signal is pending). A terminal that finds an ``on_next`` running
    is left for that ``on_next`` to deliver when it returns; otherwise it is delivered at once.
    The lock is taken twice per element (per batch for a batch), briefly, never around the
    foreign subscriber's code. ``_halt`` is ``_terminal or _done`` in one word, written right
    after either: the per-element check of a batch reads it alone.
    """

    _rs_no_wrap = True
    __slots__ = (
        "_downstream", "_upstream", "_missed", "_lock", "_emitting", "_terminal", "_error", "_done",
        "_halt", "_once", "__weakref__",
    )

    def __init__(self, actual: Subscriber[T]) -> None:
        self._downstream: Subscriber[T] | None = actual  # the foreign subscriber
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)
        self._missed = AtomicInt(0)
        self._lock = threading.Lock()  # race: on_next on the upstream thread vs a terminal from another
        self._emitting = False
        self._terminal = False
        self._error: BaseException | None = None
        self._done = False  # set once the terminal signal was handed to the subscriber (or it failed)
        # _terminal or _done: set after either is (a reader that sees it sees them), never cleared
        self._halt = False
        self._once = AtomicFlag()

    # -- Subscriber side (from the library) -----------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise NoneElementError(null_element_message("on_subscribe"))
        if not self._once.try_set():
            # rule 2.12: a second on_subscribe. Cancel it (rule 2.5) and end the stream.
            subscription.cancel()
            self._cancel_upstream()
            who = type(self._downstream).__name__ if self._downstream is not None else "a subscriber"
            self.on_error(ProtocolViolationError("2.12", f"on_subscribe was called more than once (on {who})"))
            return
        deferred_set_once(self._upstream, self._missed, subscription, "StrictSubscriber")
        actual = self._downstream
        if actual is None:
            return
        try:
            actual.on_subscribe(self)
        except BaseException as e:  # rule 2.13: the subscriber raised
            self._subscriber_raised(e, "on_subscribe")

    def _on_next_locked(self, item: T) -> None:
        if item is None:  # rule 2.13: never hand a None element to the foreign subscriber
            raise NoneElementError(null_element_message("on_next"))
        if self._done:
            return
        lock = self._lock
        lock.acquire()
        if self._terminal:
            lock.release()
            return  # a pending terminal signal is delivered by whoever set it
        self._emitting = True
        lock.release()
        self._call_next(item)
        lock.acquire()
        self._emitting = False
        pending = self._terminal
        lock.release()
        if pending:
            self._deliver_terminal()

    def _on_next_ordered(self, item: T) -> None:
        # The same protocol without the lock, for interpreters where attribute accesses are
        # sequentially consistent (SEQUENTIAL_ATTRIBUTES): "announce, then look" on both sides
        # (Dekker). The emitter writes _emitting then reads _terminal; a terminating thread writes
        # _terminal then reads _emitting: at least one of them sees the other, so the terminal is
        # never lost and never delivered while on_next runs. Delivery itself is once-guarded.
        if item is None:  # rule 2.13: never hand a None element to the foreign subscriber
            raise NoneElementError(null_element_message("on_next"))
        if self._done:
            return
        self._emitting = True
        if self._terminal:
            self._emitting = False
            self._deliver_terminal()
            return
        actual = self._downstream
        if actual is not None:
            try:
                actual.on_next(item)
            except BaseException as e:  # rule 2.13
                self._subscriber_raised(e, "on_next")
        self._emitting = False
        if self._terminal:
            self._deliver_terminal()

    on_next = _on_next_ordered if SEQUENTIAL_ATTRIBUTES else _on_next_locked

    def _on_next_batch_ordered(self, items: list[T]) -> None:
        # the protocol of _on_next_ordered, announced once per batch instead of once per element;
        # per element one read (_halt): a cancel or a terminal from inside on_next stops the batch
        # at once (rules 1.8, 3.12), one from another thread before the next element it sees
        if self._done:
            return
        self._emitting = True
        actual = self._downstream
        if actual is not None:
            on_next = actual.on_next
            try:
                for x in items:
                    if self._halt:
                        break
                    on_next(x)
            except BaseException as e:  # rule 2.13
                self._subscriber_raised(e, "on_next")
        self._emitting = False
        if self._terminal:
            self._deliver_terminal()

    def _on_next_batch_locked(self, items: list[T]) -> None:
        # the protocol of _on_next_locked, announced once per batch: _emitting is raised and
        # lowered under the lock (race: a terminal from another thread reads it under the lock,
        # and leaves its delivery to this batch while it is up); per element only _halt is read
        # (a plain read: a stop seen one element late is still "eventually", rule 3.12)
        if self._done:
            return
        lock = self._lock
        lock.acquire()
        if self._terminal:
            lock.release()
            return  # a pending terminal signal is delivered by whoever set it
        self._emitting = True
        lock.release()
        actual = self._downstream
        if actual is not None:
            on_next = actual.on_next
            try:
                for x in items:
                    if self._halt:
                        break
                    on_next(x)
            except BaseException as e:  # rule 2.13
                self._subscriber_raised(e, "on_next")
        lock.acquire()
        self._emitting = False
        pending = self._terminal
        lock.release()
        if pending:
            self._deliver_terminal()

    on_next_batch = _on_next_batch_ordered if SEQUENTIAL_ATTRIBUTES else _on_next_batch_locked

    def _call_next(self, item: T) -> None:
        actual = self._downstream
        if actual is not None:
            try:
                actual.on_next(item)
            except BaseException as e:  # rule 2.13
                self._subscriber_raised(e, "on_next")

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise NoneElementError(null_element_message("on_error"))
        self._terminate(error)

    def on_complete(self) -> None:
        self._terminate(None)

    def _terminate(self, error: BaseException | None) -> None:
        with self._lock:
            if self._terminal or self._done:
                late = True
            else:
                late = False
                self._error = error
                self._terminal = True
                self._halt = True
                emitting = self._emitting
        if late:
            if error is not None:
                plugins.on_error(error, "on_error after the stream ended (rule 1.7)")
            return
        if not emitting:
            self._deliver_terminal()

    def _deliver_terminal(self) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
            self._halt = True
            actual = self._downstream
            self._downstream = None  # rule 3.13: drop the reference once terminated
            e = self._error
            self._error = None
        self._upstream.set(CANCELLED)  # rules 1.6 / 2.4: the subscription is now cancelled
        if actual is None:
            return
        try:
            if e is None:
                actual.on_complete()
            else:
                actual.on_error(e)
        except BaseException as ex:  # rule 2.13
            # from on_error: the stream's error and the raised one both reach the hook
            plugins.on_error(
                ex if e is None else _both(e, ex, "a Subscriber's on_error raised while handling an error"),
                "a Subscriber raised from a terminal signal (rule 2.13)",
            )

    def _subscriber_raised(self, error: BaseException, where: str) -> None:
        # rule 2.13: consider the subscription cancelled, stop signalling, report the error.
        self._done = True
        self._halt = True
        self._downstream = None
        self._cancel_upstream()
        plugins.on_error(error, f"the Subscriber raised from {where} (rule 2.13); the subscription was cancelled")

    def _cancel_upstream(self) -> None:
        cancel(self._upstream)

    # -- Subscription side (from the foreign subscriber) -----------------------------------------
    def request(self, n: int) -> None:
        if self._done:
            return  # rule 3.6 / 1.6
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                self._cancel_upstream()  # rule 3.9: the stream ends with the ValueError
                self._terminate(err)
                return
        if n > MAX_DEMAND:
            n = MAX_DEMAND
        up = self._upstream._value  # a plain read (see atomics); None: deferred_request accumulates
        if up is not None:
            up.request(n)  # deferred_request's fast path, without the call (CANCELLED ignores it)
            return
        deferred_request(self._upstream, self._missed, n)

    def cancel(self) -> None:
        self._downstream = None  # rule 3.13: drop the subscriber
        self._done = True
        self._halt = True
        self._cancel_upstream()

    def __repr__(self) -> str:
        return f"StrictSubscriber({self._downstream!r})"


def _both(
    original: BaseException,
    raised: BaseException,
    msg: str = "subscribe(): the on_error callback raised while handling an error",
) -> BaseException:
    return pair_errors(original, raised, msg)


class LambdaSubscriber(Generic[T]):
    """The subscriber behind ``subscribe(on_next=..., on_error=..., on_complete=...)``.

    It requests unbounded demand (or ``request`` items at a time when ``batch`` is given) and is a
    :class:`Disposable`.
    """

    _rs_no_wrap = True
    __slots__ = ("_on_next", "_on_error", "_on_complete", "_on_subscribe", "_upstream", "_done", "__weakref__")

    def __init__(
        self,
        on_next: Callable[[T], Any] | None = None,
        on_error: Callable[[BaseException], Any] | None = None,
        on_complete: Callable[[], Any] | None = None,
        on_subscribe: Callable[[Subscription], Any] | None = None,
    ) -> None:
        self._on_next = on_next
        self._on_error = on_error
        self._on_complete = on_complete
        self._on_subscribe = on_subscribe
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)
        self._done = False

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise NoneElementError(null_element_message("on_subscribe"))
        if not set_once(self._upstream, subscription, "LambdaSubscriber"):
            return
        cb = self._on_subscribe
        if cb is not None:
            try:
                # the callback gets this subscriber as its Subscription (as RxJava's LambdaSubscriber):
                # a cancel from the callback then marks it disposed and stops the callbacks
                cb(self)
            except BaseException as e:
                cancel(self._upstream)
                self.on_error(e)
            return
        subscription.request(MAX_DEMAND)

    def on_next(self, item: T) -> None:
        if item is None:  # rule 2.13
            raise NoneElementError(null_element_message("on_next"))
        if self._done:
            return
        cb = self._on_next
        if cb is not None:
            try:
                cb(item)
            except BaseException as e:
                cancel(self._upstream)
                self.on_error(e)

    def on_next_batch(self, items: list[T]) -> None:
        """Library-internal batch protocol: the callback per element, without a call per layer."""
        cb = self._on_next
        if cb is None:
            return
        for x in items:
            if self._done:
                return
            try:
                cb(x)
            except BaseException as e:
                cancel(self._upstream)
                self.on_error(e)
                return

    def on_error(self, error: BaseException) -> None:
        if error is None:  # rule 2.13
            raise NoneElementError(null_element_message("on_error"))
        if self._done:
            plugins.on_error(error, "on_error after the stream ended")
            return
        self._done = True
        self._upstream.set(CANCELLED)
        cb = self._on_error
        self._release()
        if cb is None:
            plugins.on_error(OnErrorNotImplementedError(error))
            return
        try:
            cb(error)
        except BaseException as e:
            # both errors reach the hook (RxJava: CompositeException(original, raised))
            plugins.on_error(_both(error, e), "the on_error callback raised while handling an error")

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        self._upstream.set(CANCELLED)
        cb = self._on_complete
        self._release()
        if cb is not None:
            try:
                cb()
            except BaseException as e:
                plugins.on_error(e, "the on_complete callback raised")

    def _release(self) -> None:
        self._on_next = None
        self._on_error = None
        self._on_complete = None
        self._on_subscribe = None

    # -- Subscription side, for the on_subscribe callback -------------------------------------
    def request(self, n: int) -> None:
        """Forward ``request(n)`` upstream (a bad ``n`` is the upstream's rule 3.9 error to signal)."""
        s = self._upstream.get()
        if s is not None:
            s.request(n)  # CANCELLED ignores it (rule 3.6)

    def cancel(self) -> None:
        """The same as :meth:`dispose` (rules 3.5, 3.7: idempotent)."""
        self.dispose()

    def dispose(self) -> None:
        """Cancel the subscription; no callback runs afterwards (best effort across threads)."""
        self._done = True
        cancel(self._upstream)
        self._release()

    @property
    def is_disposed(self) -> bool:
        return self._upstream.get() is CANCELLED


# ---------------------------------------------------------------------------------------------
# Shared by the operators


@final
class _NoopSubscriber:
    """Stands in for the downstream after cancellation or termination (rule 3.13: the real one is
    released). Late elements are dropped; late errors go to the undeliverable-error hook."""

    __slots__ = ()
    _rs_no_wrap = True

    def on_subscribe(self, subscription: Subscription) -> None:
        subscription.cancel()

    def on_next(self, item: Any) -> None:
        pass

    def on_error(self, error: BaseException) -> None:
        plugins.on_error(error, "error after cancellation or termination")

    def on_complete(self) -> None:
        pass


#: The released downstream (rule 3.13): an operator assigns it to its downstream field on cancel
#: or after its terminal signal, so the real subscriber can be collected.
NOOP_SUBSCRIBER: Final = _NoopSubscriber()


class ArbiterSubscriber(SubscriptionArbiter):
    """An operator subscriber that is the downstream's Subscription and switches upstreams
    (``concat``, ``switch_if_empty``, ``on_error_resume_next``, ``retry``, ``repeat``).

    ``on_next`` counts elements (a plain int: only the upstream's serial signals touch it) and
    :meth:`account` hands that count to the arbiter before the next upstream is subscribed.
    ``request`` validates the amount (rule 3.9) here, because a bad amount forwarded upstream
    would come back as an *upstream* error, which ``retry``/``on_error_resume_next`` would swallow.
    """

    _rs_no_wrap = True
    __slots__ = ("downstream", "_emitted", "_terminated")

    def __init__(self, downstream: Subscriber[Any]) -> None:
        super().__init__(cancel_on_replace=False)  # the replaced upstream has terminated already
        self.downstream: Subscriber[Any] = downstream
        self._emitted = 0
        self._terminated = False

    # upstream side -------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        self.set_subscription(subscription)

    def on_next(self, item: Any) -> None:
        self._emitted += 1
        self.downstream.on_next(item)

    def on_error(self, error: BaseException) -> None:
        self.error_downstream(error)

    def on_complete(self) -> None:
        self.complete_downstream()

    def account(self) -> None:
        """Subtract what the finished upstream emitted from the outstanding demand.

        Called just before the next upstream is subscribed: the count is queued as "missed
        produced" without running the arbiter's drain, because the next ``set_subscription``
        (or any ``request``) applies it; this saves a drain pass per switched source. When demand
        is unbounded (sticky) there is nothing to account.
        """
        e = self._emitted
        if e:
            self._emitted = 0
            if self._requested < MAX_DEMAND:
                with self._lock:  # race: the downstream's request() queues missed demand concurrently
                    self._missed_produced += e

    def error_downstream(self, error: BaseException) -> None:
        if self._terminated:
            plugins.on_error(error, f"{type(self).__name__}: on_error after termination")
            return
        self._terminated = True
        d = self.downstream
        self.downstream = NOOP_SUBSCRIBER  # rule 3.13
        d.on_error(error)

    def complete_downstream(self) -> None:
        if self._terminated:
            return
        self._terminated = True
        d = self.downstream
        self.downstream = NOOP_SUBSCRIBER  # rule 3.13
        d.on_complete()

    # downstream side -----------------------------------------------------------------------
    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                # rule 3.9: cancel the upstream, then signal the error
                SubscriptionArbiter.cancel(self)
                self.error_downstream(err)
                return
        SubscriptionArbiter.request(self, n)

    def cancel(self) -> None:
        SubscriptionArbiter.cancel(self)
        self.downstream = NOOP_SUBSCRIBER  # rule 3.13
