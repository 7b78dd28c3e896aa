"""Side-effect operators (RxJava ``doOnNext``, ``doOnError``, ``doOnComplete``, ``doOnSubscribe``,
``doOnRequest``, ``doOnCancel``, ``doFinally``).

What happens when the callback raises:

* ``do_on_next``: the upstream is cancelled and the error is signalled (nothing after it);
* ``do_on_error``: the downstream gets an ``ExceptionGroup`` of the original error and the new one;
* ``do_on_complete``: the downstream gets ``on_error`` with the callback's error instead;
* ``do_on_subscribe``: the upstream is cancelled; the downstream gets an ``on_subscribe`` (rule 1.9)
  then ``on_error``;
* ``do_on_request``, ``do_on_cancel``, ``do_finally``: the error goes to the undeliverable-error hook
  (``rstreams.plugins``): ``request``/``cancel`` must return normally (rules 3.15, 3.16) and the
  stream has already terminated for ``do_finally``.

``do_on_cancel`` runs once, on the first downstream cancel that comes before the terminal signal
(a cancel after ``on_error``/``on_complete`` is a no-op, rule 2.4). ``do_finally`` runs exactly once, after
``on_error``/``on_complete`` was passed downstream or after the downstream cancelled, whichever comes
first: an :class:`~rstreams._internal.atomics.AtomicFlag` decides (race: cancel on the downstream
thread vs a terminal signal on the upstream thread).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, final

from ..._internal import plugins
from ..._internal.arguments import check_callable
from ..._internal.atomics import AtomicFlag
from ..._internal.drain import pair_errors
from ..._internal.subscriptions import CANCELLED, EMPTY
from ..._spec import Subscriber, Subscription
from .._base import BasicSubscriber, PassThroughSubscriber, transparent_subscriber
from .._flowable import Flowable

__all__ = [
    "do_on_next",
    "do_on_error",
    "do_on_complete",
    "do_on_subscribe",
    "do_on_request",
    "do_on_cancel",
    "do_finally",
]

T = TypeVar("T")


class _CallbackSubscriber(PassThroughSubscriber[T]):
    """Holds the user callback ``_fn`` of a ``do_*`` operator; elements pass through untouched."""

    __slots__ = ("_fn",)

    def __init__(self, downstream: Subscriber[T], fn: Callable[..., Any]) -> None:
        super().__init__(downstream)
        self._fn = fn


@final
class _DoOnNextSubscriber(_CallbackSubscriber[T]):
    __slots__ = ()

    def on_next(self, item: T) -> None:
        if self.done:
            return
        try:
            self._fn(item)
        except Exception as e:
            self.fail(e)
            return
        self.downstream.on_next(item)


@final
class _DoOnErrorSubscriber(_CallbackSubscriber[T]):
    __slots__ = ()


    def on_error(self, error: BaseException) -> None:
        if self.done:
            plugins.on_error(error, "do_on_error(): on_error after termination")
            return
        try:
            self._fn(error)
        except Exception as e:
            error = pair_errors(error, e, "do_on_error(): the callback failed while handling an error")
        super().on_error(error)


@final
class _DoOnCompleteSubscriber(_CallbackSubscriber[T]):
    __slots__ = ()


    def on_complete(self) -> None:
        if self.done:
            return
        try:
            self._fn()
        except Exception as e:
            super().on_error(e)  # the upstream has already terminated: nothing to cancel
            return
        super().on_complete()


@final
class _DoOnSubscribeSubscriber(_CallbackSubscriber[T]):
    __slots__ = ()

    def on_subscribe(self, subscription: Subscription) -> None:
        if self.upstream is CANCELLED and not self.done:
            try:
                self._fn(subscription)
            except Exception as e:
                subscription.cancel()
                self.done = True
                self.downstream.on_subscribe(EMPTY)  # rule 1.9: on_subscribe before on_error
                self.downstream.on_error(e)
                return
        super().on_subscribe(subscription)



@final
class _DoOnRequestSubscriber(_CallbackSubscriber[T]):
    __slots__ = ()


    def request(self, n: int) -> None:
        try:
            self._fn(n)
        except Exception as e:
            plugins.on_error(e, "do_on_request(): the callback raised")  # rule 3.15/3.16: never raise
        self.upstream.request(n)


@final
class _DoOnCancelSubscriber(_CallbackSubscriber[T]):
    __slots__ = ("_once",)

    def __init__(self, downstream: Subscriber[T], fn: Callable[[], Any]) -> None:
        super().__init__(downstream, fn)
        self._once = AtomicFlag()  # race: two cancel calls (rule 3.5: cancel is idempotent)


    def cancel(self) -> None:
        # rule 2.4: after on_error/on_complete the subscription counts as cancelled, so a late
        # cancel is a no-op for the callback (it would report a cancel that never happened)
        if not self.done and self._once.try_set():
            try:
                self._fn()
            except Exception as e:
                plugins.on_error(e, "do_on_cancel(): the callback raised")  # rule 3.15: never raise
        self.upstream.cancel()


@final
class _DoFinallySubscriber(_CallbackSubscriber[T]):
    __slots__ = ("_once",)

    def __init__(self, downstream: Subscriber[T], fn: Callable[[], Any]) -> None:
        super().__init__(downstream, fn)
        self._once = AtomicFlag()  # race: cancel (downstream thread) vs terminal (upstream thread)

    def _run(self) -> None:
        if self._once.try_set():
            try:
                self._fn()
            except Exception as e:
                plugins.on_error(e, "do_finally(): the callback raised")


    def on_error(self, error: BaseException) -> None:
        super().on_error(error)
        self._run()

    def on_complete(self) -> None:
        super().on_complete()
        self._run()

    def cancel(self) -> None:
        self.upstream.cancel()
        self._run()


@final
class _DoAfterTerminateSubscriber(_CallbackSubscriber[T]):
    """RxJava's ``doAfterTerminate``: ``fn`` runs after the downstream's on_complete/on_error
    returned (not on cancel); a raising ``fn`` goes to the plugins hook (the stream has ended)."""

    __slots__ = ()

    def _run(self) -> None:
        try:
            self._fn()
        except Exception as e:
            plugins.on_error(e, "do_after_terminate(): the callback raised")


    def on_error(self, error: BaseException) -> None:
        if self.done:
            super().on_error(error)  # the base class reports a second terminal to the hook
            return
        super().on_error(error)
        self._run()

    def on_complete(self) -> None:
        if self.done:
            return
        super().on_complete()
        self._run()


@final
class _DoOnFlowable(Flowable[T]):
    __slots__ = ("_source", "_fn", "_kind")

    def __init__(self, source: Flowable[T], fn: Callable[..., Any], kind: type[BasicSubscriber[Any, Any]]) -> None:
        self._source = source
        self._fn = fn
        self._kind = kind

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        kind = self._kind
        if kind is _DoOnNextSubscriber:  # runs user code per element: one by one
            self._source.subscribe(kind(subscriber, self._fn))
        else:  # watches signals only: keeps a batch hand-off
            self._source.subscribe(transparent_subscriber(kind, subscriber, self._fn))


def _make(name: str, kind: type[BasicSubscriber[Any, Any]], source: Flowable[T], fn: Any) -> Flowable[T]:
    check_callable(name, fn)
    return _DoOnFlowable(source, fn, kind)


def do_on_next(source: Flowable[T], fn: Callable[[T], Any]) -> Flowable[T]:
    return _make("do_on_next", _DoOnNextSubscriber, source, fn)


def do_on_error(source: Flowable[T], fn: Callable[[BaseException], Any]) -> Flowable[T]:
    return _make("do_on_error", _DoOnErrorSubscriber, source, fn)


def do_on_complete(source: Flowable[T], fn: Callable[[], Any]) -> Flowable[T]:
    return _make("do_on_complete", _DoOnCompleteSubscriber, source, fn)


def do_on_subscribe(source: Flowable[T], fn: Callable[[Subscription], Any]) -> Flowable[T]:
    return _make("do_on_subscribe", _DoOnSubscribeSubscriber, source, fn)


def do_on_request(source: Flowable[T], fn: Callable[[int], Any]) -> Flowable[T]:
    return _make("do_on_request", _DoOnRequestSubscriber, source, fn)


def do_on_cancel(source: Flowable[T], fn: Callable[[], Any]) -> Flowable[T]:
    return _make("do_on_cancel", _DoOnCancelSubscriber, source, fn)


def do_finally(source: Flowable[T], fn: Callable[[], Any]) -> Flowable[T]:
    return _make("do_finally", _DoFinallySubscriber, source, fn)


def do_after_terminate(source: Flowable[T], fn: Callable[[], Any]) -> Flowable[T]:
    return _make("do_after_terminate", _DoAfterTerminateSubscriber, source, fn)


def do_on_terminate(source: Flowable[T], fn: Callable[[], Any]) -> Flowable[T]:
    """``fn`` before on_complete or on_error goes downstream (RxJava ``doOnTerminate``): on the
    error path a raising ``fn`` joins the error (as ``do_on_error``), on completion it replaces it
    (as ``do_on_complete``). Built so that ``fn`` runs once on either path."""
    check_callable("do_on_terminate", fn)
    return do_on_complete(do_on_error(source, lambda _e: fn()), fn)


def do_on_each(
    source: Flowable[T],
    on_next: Callable[[T], Any] | None,
    on_error: Callable[[BaseException], Any] | None,
    on_complete: Callable[[], Any] | None,
) -> Flowable[T]:
    """RxJava ``doOnEach``: one callback per signal kind; a raising ``on_next`` or ``on_complete``
    callback fails the stream and its error also reaches ``on_error`` (the callbacks are stacked
    next, complete, error so that every failure passes the error callback once)."""
    if on_next is None and on_error is None and on_complete is None:
        raise TypeError("do_on_each(): give at least one of on_next, on_error, on_complete")
    f: Flowable[T] = source
    if on_next is not None:
        f = do_on_next(f, on_next)
    if on_complete is not None:
        f = do_on_complete(f, on_complete)
    if on_error is not None:
        f = do_on_error(f, on_error)
    return f
