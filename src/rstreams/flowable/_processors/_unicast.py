"""``UnicastProcessor``: buffers items for its single subscriber and honours that subscriber's demand.

Queue-drain (seed 004): the emitting thread appends to a deque and enters the wip loop; ``request``
and ``cancel`` from the subscriber's thread enter it too. Whoever moves wip from 0 delivers everything
available up to the demand, with ``emitted`` kept in a local and published once per pass (race:
on_next vs request vs cancel, from different threads). The subscriber is stored only after its
``on_subscribe`` returned, so nothing is delivered during ``on_subscribe`` (rule 1.3). A second
subscriber is refused with ``on_error`` after ``on_subscribe`` (rules 1.9, 1.11); an AtomicFlag makes
exactly one subscriber the owner (race: two concurrent subscribers).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar, cast, final

from ..._internal import plugins
from ..._internal.atomics import AtomicFlag, AtomicInt, AtomicRef
from ..._internal.drain import enter
from ..._internal.requests import MAX_DEMAND, request_or_error
from ..._internal.subscriptions import cancel, error_empty, set_once
from ..._spec import Subscriber, Subscription
from ...errors import ProtocolViolationError
from ._base import FlowableProcessor, check_error, check_item

__all__ = ["UnicastProcessor"]

T = TypeVar("T")


@final
class UnicastProcessor(FlowableProcessor[T]):
    """Buffers everything (unbounded) until its single subscriber arrives and while it lags.

    Example::

        up = UnicastProcessor.create()
        up.on_next(1); up.on_next(2); up.on_complete()
        up.test(1).assert_values(1).request(1).assert_result(1, 2)

    Backpressure: honours the subscriber's demand with an unbounded buffer; as a Subscriber it
    requests unbounded demand from its (single) upstream, and cancels that upstream when the
    subscriber cancels (rule 3.14; RxJava keeps it running). ``on_terminate`` runs once, on the
    upstream's terminal signal or on the subscriber's cancel. With ``delay_error=True`` an error is delivered after the buffered
    items; otherwise at once (buffered items are dropped). A second subscriber receives
    ``on_error(ProtocolViolationError)`` (RxJava: IllegalStateException).

    Scheduler: items are delivered on the emitting thread or the requesting thread, one at a time.

    TCK: passes the full IdentityProcessor verification (as RxJava's ``UnicastProcessorTckTest``:
    the Publisher tests and the whitebox Subscriber tests, with one subscriber) and the Subscriber
    blackbox verification (rule 2.5: a second ``on_subscribe`` is cancelled).
    """

    __slots__ = (
        "_queue",
        "_downstream",
        "_once",
        "_wip",
        "_requested",
        "_emitted",
        "_done",
        "_error",
        "_cancelled",
        "_on_terminate",
        "_terminate_once",
        "_delay_error",
        "_bad",
        "_has_subscriber",
        "_upstream",
    )

    def __init__(self, on_terminate: Callable[[], Any] | None = None, delay_error: bool = False) -> None:
        if on_terminate is not None and not callable(on_terminate):
            raise TypeError(f"UnicastProcessor.create(): on_terminate must be callable, got {on_terminate!r}")
        self._queue: deque[T] = deque()
        self._downstream: Subscriber[T] | None = None
        self._once = AtomicFlag()  # race: two subscribers at once; one wins
        self._wip = AtomicInt(0)  # race: on_next vs request vs cancel (queue-drain)
        self._requested = AtomicInt(0)  # rule 1.1
        self._emitted = 0
        self._done = False
        self._error: BaseException | None = None
        self._cancelled = False
        self._on_terminate = on_terminate
        self._terminate_once = AtomicFlag()  # on_terminate runs once (race: terminal vs cancel)
        self._delay_error = bool(delay_error)
        self._bad: BaseException | None = None
        self._has_subscriber = False
        # set once; cancelled when the subscriber cancels (rule 3.14; race: cancel vs on_subscribe)
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)

    @staticmethod  # shadows the static Flowable.create(emitter_fn) factory, as in RxJava
    def create(  # type: ignore[override]
        on_terminate: Callable[[], Any] | None = None, delay_error: bool = False
    ) -> UnicastProcessor[Any]:
        return UnicastProcessor(on_terminate, delay_error)

    def _do_terminate(self) -> None:
        cb = self._on_terminate
        if cb is not None and self._terminate_once.try_set():
            self._on_terminate = None
            try:
                cb()
            except Exception as e:
                plugins.on_error(e, "UnicastProcessor: on_terminate raised")

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        if not self._once.try_set():
            error_empty(
                cast("Subscriber[object]", subscriber),
                ProtocolViolationError(
                    "1.11",
                    "UnicastProcessor allows only a single Subscriber; this one was refused with on_error "
                    "after on_subscribe (rule 1.9). Use publish()/share() or a MulticastProcessor to share a stream",
                ),
            )
            return
        subscriber.on_subscribe(self)
        self._has_subscriber = True
        if self._cancelled:
            return
        self._downstream = subscriber  # only after on_subscribe returned (rule 1.3)
        self._drain()

    # -- Subscription (the single subscriber's) -----------------------------------------------------
    def request(self, n: int) -> None:
        err = request_or_error(self._requested, n)
        if err is not None:
            self._bad = err  # rule 3.9: delivered by the drain
        self._drain()

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        self._do_terminate()
        cancel(self._upstream)  # the only subscriber left: nobody can consume any more (rule 3.14)
        if enter(self._wip):  # race: cancel vs drain; the owner clears
            self._queue.clear()
            self._downstream = None  # rule 3.13

    # -- Subscriber side -------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        check_item(subscription, "on_subscribe")
        if self._done or self._cancelled:
            subscription.cancel()
        elif set_once(
            self._upstream, subscription, "UnicastProcessor"
        ):  # rule 2.5: a second one is cancelled
            subscription.request(MAX_DEMAND)

    def on_next(self, item: T) -> None:
        if item is None:
            check_item(item)
        if self._done or self._cancelled:
            return
        self._queue.append(item)
        self._drain()

    def on_error(self, error: BaseException) -> None:
        check_error(error, "UnicastProcessor")
        if self._done or self._cancelled:
            plugins.on_error(error, "UnicastProcessor: on_error after termination or cancel")
            return
        self._error = error
        self._done = True
        self._do_terminate()
        self._drain()

    def on_complete(self) -> None:
        if self._done or self._cancelled:
            return
        self._done = True
        self._do_terminate()
        self._drain()

    def _drain(self) -> None:
        wip = self._wip
        # drain.enter/leave written out on the atomic's lock: this drain runs once per item (and per
        # subscriber), where the two calls cost about 8% of the processor's per-item time (measured)
        lock = wip._lock
        with lock:  # enter (race: several signalling threads, one drainer)
            w = wip._value
            wip._value = w + 1
        if w != 0:
            return
        missed = 1
        q = self._queue
        while True:
            d = self._downstream
            if self._cancelled:
                q.clear()
                self._downstream = None
                return
            if d is not None:
                if self._bad is not None:
                    self._cancelled = True
                    cancel(self._upstream)
                    q.clear()
                    self._downstream = None
                    self._do_terminate()
                    d.on_error(self._bad)
                    return
                r = self._requested._value
                e = self._emitted
                while e != r:
                    done = self._done
                    if done and self._error is not None and not self._delay_error:
                        self._finish(d)
                        return
                    if not q:
                        if done:
                            self._finish(d)
                            return
                        break
                    d.on_next(q.popleft())
                    e += 1
                    if self._cancelled:
                        q.clear()
                        self._downstream = None
                        return
                if e == r and self._done and (not q or (self._error is not None and not self._delay_error)):
                    self._finish(d)
                    return
                self._emitted = e
            with lock:  # leave: 0 means no work was signalled meanwhile
                missed = wip._value - missed
                wip._value = missed
            if missed == 0:
                return

    def _finish(self, d: Subscriber[T]) -> None:
        self._queue.clear()
        self._downstream = None  # rule 3.13
        self._cancelled = True  # nothing more is delivered
        e = self._error
        if e is None:
            d.on_complete()
        else:
            d.on_error(e)

    @property
    def subscriber_count(self) -> int:
        return 1 if self._downstream is not None else 0

    @property
    def has_complete(self) -> bool:
        return self._done and self._error is None

    @property
    def throwable(self) -> BaseException | None:
        return self._error

    def __repr__(self) -> str:
        return f"UnicastProcessor(buffered={len(self._queue)}, done={self._done})"
