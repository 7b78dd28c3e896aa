"""retry_when(handler) and repeat_when(handler): resubscribe as a user-built Publisher decides.

At subscription the handler is called once with a Flowable of "signals" (the source's errors for
retry_when; the running count of completions for repeat_when) and returns a Publisher; a receiver
subscribes to it. Each time the source terminates, the receiver asks for one element and the signal
is emitted. Then: an element from the handler's Publisher resubscribes the source, its completion
completes the stream, its error fails the stream. ``rstreams.retry.Retry`` policies are handlers.

Demand: the downstream's Subscription is a :class:`SubscriptionArbiter`; what a finished
subscription emitted is subtracted before the next one is subscribed, so unfulfilled demand carries
over (rule 1.1).

Races and guards:

* Recursion (rule 3.3 spirit; Python's stack): with a synchronous source and handler, the source's
  ``on_error`` runs the handler's chain, whose element would resubscribe from inside the previous
  ``subscribe`` call. The ``_trampoline`` ``AtomicInt`` turns that into a loop at constant depth.
* The handler's Publisher may signal on another thread (a backoff timer) while an element of the
  source is being delivered: elements go through a :class:`HalfSerializer`, so a terminal signal from
  the handler never overlaps an ``on_next`` (rule 1.3).
* ``_done`` (``AtomicFlag``): exactly one terminal signal, whoever sends it (source or handler).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast, final

from ..._internal import plugins
from ..._internal.atomics import AtomicFlag, AtomicInt, AtomicRef
from ..._internal.drain import HalfSerializer
from ..._internal.requests import validate_request
from ..._internal.subscriptions import SubscriptionArbiter, cancel, deferred_request, deferred_set_once
from ..._spec import Publisher, Subscriber, Subscription
from .._base import none_result_error
from .._flowable import Flowable
from ._window import UnicastWindow

__all__ = ["retry_when", "repeat_when"]

T = TypeVar("T")


@final
class _Receiver:
    """Subscribes to the handler's Publisher; asks it for one element per terminated source."""

    _rs_no_wrap = True
    __slots__ = ("_parent", "_upstream", "_missed")

    def __init__(self, parent: _WhenSubscriber) -> None:
        self._parent = parent
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)  # race: request vs on_subscribe
        self._missed = AtomicInt(0)

    def on_subscribe(self, subscription: Subscription) -> None:
        deferred_set_once(self._upstream, self._missed, subscription, "retry_when")

    def on_next(self, item: Any) -> None:
        self._parent.resubscribe()

    def on_error(self, error: BaseException) -> None:
        self._parent.terminate(error, from_handler=True)

    def on_complete(self) -> None:
        self._parent.terminate(None, from_handler=True)

    def request(self, n: int) -> None:
        deferred_request(self._upstream, self._missed, n)

    def cancel(self) -> None:
        cancel(self._upstream)


@final
class _WhenSubscriber(SubscriptionArbiter):
    _rs_no_wrap = True
    __slots__ = (
        "_hs",
        "_source",
        "_trampoline",
        "_emitted",
        "_signals",
        "_receiver",
        "_retry",
        "_done",
        "_completions",
        "__weakref__",
    )

    def __init__(self, downstream: Subscriber[Any], source: Flowable[Any], retry: bool) -> None:
        super().__init__(cancel_on_replace=False)  # the replaced upstream has terminated already
        self._hs = HalfSerializer(downstream)  # race: handler terminal vs source on_next (rule 1.3)
        self._source = source
        self._trampoline = AtomicInt(0)  # recursion: resubscription loop at constant depth
        self._emitted = 0
        self._signals: UnicastWindow[Any] = UnicastWindow(lambda: None)
        self._receiver = _Receiver(self)
        self._retry = retry
        self._done = AtomicFlag()  # one terminal signal, from the source or the handler
        self._completions = 0

    # -- source side -----------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        self.set_subscription(subscription)

    def on_next(self, item: Any) -> None:
        self._emitted += 1
        self._hs.on_next(item)

    def on_error(self, error: BaseException) -> None:
        if not self._retry:
            self.terminate(error, from_handler=False)
            return
        if self._done.is_set():  # a faulty source's error after the stream ended: not lost
            plugins.on_error(error, "retry_when: on_error after the stream ended")
            return
        self._again(error)

    def on_complete(self) -> None:
        if self._retry:
            self.terminate(None, from_handler=False)
            return
        self._completions += 1
        self._again(self._completions)

    def _again(self, signal: Any) -> None:
        if self._done.is_set():
            return
        e = self._emitted
        if e:
            self._emitted = 0
            self.produced(e)  # unfulfilled demand carries over to the next subscription
        self._receiver.request(1)
        self._signals.on_next(signal)

    def resubscribe(self) -> None:
        t = self._trampoline
        if t.get_and_increment() != 0:
            return  # the running loop subscribes again when the current subscribe() returns
        source = self._source
        while True:
            if self._done.is_set() or self.is_cancelled:
                return
            source.subscribe(self)
            if t.decrement_and_get() == 0:
                return

    def terminate(self, error: BaseException | None, *, from_handler: bool) -> None:
        if not self._done.try_set():
            if error is not None:
                plugins.on_error(error, "retry_when/repeat_when: error after the stream ended")
            return
        SubscriptionArbiter.cancel(self)
        if not from_handler:
            self._receiver.cancel()
        self._signals.on_complete()
        if error is None:
            self._hs.on_complete()
        else:
            self._hs.on_error(error)

    # -- downstream side -------------------------------------------------------------------------
    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                self.terminate(err, from_handler=False)  # rule 3.9
                return
        SubscriptionArbiter.request(self, n)

    def cancel(self) -> None:
        self._done.try_set()
        SubscriptionArbiter.cancel(self)
        self._receiver.cancel()


@final
class _WhenFlowable(Flowable[T]):
    __slots__ = ("_source", "_handler", "_retry")

    def __init__(
        self, source: Flowable[T], handler: Callable[[Flowable[Any]], Publisher[Any]], retry: bool
    ) -> None:
        self._source = source
        self._handler = handler
        self._retry = retry

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        s = _WhenSubscriber(subscriber, self._source, self._retry)
        name = "retry_when" if self._retry else "repeat_when"
        try:
            p = self._handler(s._signals)
        except Exception as e:
            from ..._internal.subscriptions import error_empty

            error_empty(cast(Any, subscriber), e)
            return
        if p is None or not callable(getattr(p, "subscribe", None)):
            from ..._internal.subscriptions import error_empty

            # a handler that returns no Publisher fails the stream (it used to hang it, the
            # AttributeError going to the plugins), as RxJava's requireNonNull does for null
            err: BaseException = (
                none_result_error(name, "the handler")
                if p is None
                else TypeError(f"{name}(): the handler returned a {type(p).__name__}, not a Publisher")
            )
            error_empty(cast(Any, subscriber), err)
            return
        if not isinstance(p, Flowable):
            from .._base import as_flowable

            # a foreign Publisher gets from_publisher's guard (rule 2.13): its None element used to
            # count as "resubscribe" (an endless retry loop) instead of failing the stream
            p = as_flowable(name, p)
        subscriber.on_subscribe(s)
        p.subscribe(s._receiver)
        s.resubscribe()


def _check(op: str, handler: object) -> None:
    if not callable(handler):
        raise TypeError(
            f"{op}(): handler must be callable (Flowable -> Publisher), got {type(handler).__name__}"
        )


def retry_when(
    source: Flowable[T], handler: Callable[[Flowable[BaseException]], Publisher[Any]]
) -> Flowable[T]:
    _check("retry_when", handler)
    return _WhenFlowable(source, handler, True)


def repeat_when(source: Flowable[T], handler: Callable[[Flowable[Any]], Publisher[Any]]) -> Flowable[T]:
    _check("repeat_when", handler)
    return _WhenFlowable(source, handler, False)
