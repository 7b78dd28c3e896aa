"""timeout(duration, fallback) and timeout_selector(first_timeout, item_timeout, fallback).

A timeout is armed at subscription and re-armed after every element: by a timer on a Scheduler worker
(``timeout``) or by subscribing to a Publisher that the user computes per element (``timeout_selector``;
its first element or completion means "timed out"). When it fires, the source is cancelled and the
stream ends with ``TimeoutError``, or, given a ``fallback`` Publisher, continues with it; the
downstream's unfulfilled demand is carried over by a :class:`SubscriptionArbiter`.

Race: timeout vs on_next/on_complete/on_error (RxJava's index protocol). ``_index`` (an
``AtomicInt``) counts elements; ``on_next`` moves it ``i -> i + 1`` with a compare-and-set *before*
emitting, a timer armed for index ``i`` fires only if it moves ``i -> DONE``, and a terminal signal
swaps in ``DONE``. Exactly one side wins, so an element is never emitted after the TimeoutError (or
the switch to the fallback), and a completion racing a timeout produces exactly one terminal signal
(rule 1.7). The next timer is armed only after the downstream's ``on_next`` returned, so a timeout
never overlaps an element (rule 1.3).

Race: a rule 3.9 error, signalled from the requesting thread, vs an element being emitted: every
downstream signal goes through a :class:`SerializedOut` (rule 1.3).

Race: a timeout before the source's ``on_subscribe`` arrived: the main Subscription is kept in an
``AtomicRef`` that the timeout moves to CANCELLED, so a late ``on_subscribe`` is cancelled at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicInt, AtomicRef
from ..._internal.requests import validate_request
from ..._internal.subscriptions import SubscriptionArbiter, cancel, set_once
from ..._spec import Publisher, Subscriber, Subscription
from ...schedulers import Scheduler, Worker
from .._base import none_result_error
from .._flowable import Flowable
from ._time_common import SerializedOut, check_duration, none_refused, resolve_scheduler

__all__ = ["timeout", "timeout_selector"]

T = TypeVar("T")

_DONE: Final = -1


class _TimeoutSubscriber(SubscriptionArbiter):
    _rs_no_wrap = True
    __slots__ = ("_out", "_main", "_index", "_fallback", "_emitted", "_op", "__weakref__")

    def __init__(self, downstream: Subscriber[Any], fallback: Publisher[Any] | None, op: str) -> None:
        super().__init__(cancel_on_replace=True)
        # race: a rule 3.9 error from the requesting thread vs an element being emitted by the
        # source or the fallback (the index protocol orders everything else): rule 1.3
        self._out = SerializedOut(downstream)
        self._main: AtomicRef[Subscription | None] = AtomicRef(None)  # race: timeout vs late on_subscribe
        self._index = AtomicInt(0)  # race: timeout vs on_next / terminal (see module docstring)
        self._fallback = fallback
        self._emitted = 0  # written by the upstream thread only; read after it lost the index
        self._op = op

    # -- timers (subclasses) -----------------------------------------------------------------
    def _arm(self, index: int, item: Any) -> bool:
        raise NotImplementedError

    def _disarm(self) -> None:
        raise NotImplementedError

    # -- main source -----------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise none_refused("on_subscribe")  # rule 2.13
        if set_once(self._main, subscription, self._op):
            self.set_subscription(subscription)

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        ix = self._index
        i = ix.get()
        if i == _DONE or not ix.compare_and_set(i, i + 1):
            return  # the timeout won: the element is dropped (the source is being cancelled)
        self._disarm()
        self._emitted += 1
        self._out.on_next(item)
        self._arm(i + 1, item)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise none_refused("on_error")  # rule 2.13
        if self._index.get_and_set(_DONE) == _DONE:
            plugins.on_error(error, f"{self._op}: on_error after the timeout")
            return
        self._disarm()
        self._terminate(error)

    def on_complete(self) -> None:
        if self._index.get_and_set(_DONE) == _DONE:
            return
        self._disarm()
        self._terminate(None)

    def _terminate(self, error: BaseException | None) -> None:
        self._dispose()
        if error is None:
            self._out.on_complete()  # drops the downstream (rule 3.13)
        else:
            self._out.on_error(error)

    def _dispose(self) -> None:
        pass

    # -- the timeout fires -----------------------------------------------------------------------
    def timed_out(self, index: int, what: str) -> None:
        if not self._index.compare_and_set(index, _DONE):
            return  # an element or a terminal signal came first
        cancel(self._main)
        self._dispose()
        fb = self._fallback
        if fb is None:
            self._out.on_error(
                TimeoutError(f"{self._op}(): {what}; pass fallback= to switch to another source instead")
            )
            return
        e = self._emitted
        if e:
            self.produced(e)
        fb.subscribe(_FallbackSubscriber(self))

    def timeout_failed(self, index: int, error: BaseException) -> None:
        """The timeout Publisher itself failed (timeout_selector): the stream fails with its error."""
        if not self._index.compare_and_set(index, _DONE):
            plugins.on_error(error, f"{self._op}: the timeout publisher failed after the stream ended")
            return
        cancel(self._main)
        self._terminate(error)

    # -- downstream side -------------------------------------------------------------------------
    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                self._index.set(_DONE)
                self._stop()
                self._out.on_error(err)  # rule 3.9 (to the hook if the stream had already ended)
                return
        SubscriptionArbiter.request(self, n)

    def _stop(self) -> None:
        SubscriptionArbiter.cancel(self)
        cancel(self._main)
        self._disarm()
        self._dispose()

    def cancel(self) -> None:
        self._stop()
        self._out.release()  # rule 3.13


@final
class _FallbackSubscriber:
    _rs_no_wrap = True
    __slots__ = ("_parent",)

    def __init__(self, parent: _TimeoutSubscriber) -> None:
        self._parent = parent

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise none_refused("on_subscribe")  # rule 2.13
        self._parent.set_subscription(subscription)

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        self._parent._out.on_next(item)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise none_refused("on_error")  # rule 2.13
        self._parent._terminate(error)

    def on_complete(self) -> None:
        self._parent._terminate(None)


# ---------------------------------------------------------------------------------------------
# timed


@final
class _TimedTimeoutSubscriber(_TimeoutSubscriber):
    __slots__ = ("_worker", "_duration", "_task")

    def __init__(
        self, downstream: Subscriber[Any], fallback: Publisher[Any] | None, worker: Worker, duration: float
    ) -> None:
        super().__init__(downstream, fallback, "timeout")
        self._worker = worker
        self._duration = duration
        self._task: Any = None

    def _arm(self, index: int, item: Any) -> bool:
        what = "no element within" if index == 0 else f"no element after element #{index} within"
        msg = f"{what} {self._duration} s"
        self._task = self._worker.schedule(lambda: self.timed_out(index, msg), self._duration)
        return True

    def _disarm(self) -> None:
        t = self._task
        if t is not None:
            t.dispose()

    def _dispose(self) -> None:
        self._worker.dispose()


@final
class _TimedTimeoutFlowable(Flowable[T]):
    __slots__ = ("_source", "_duration", "_fallback", "_scheduler")

    def __init__(
        self, source: Flowable[T], duration: float, fallback: Publisher[T] | None, scheduler: Scheduler
    ) -> None:
        self._source = source
        self._duration = duration
        self._fallback = fallback
        self._scheduler = scheduler

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        s = _TimedTimeoutSubscriber(
            subscriber, self._fallback, self._scheduler.create_worker(), self._duration
        )
        subscriber.on_subscribe(s)
        s._arm(0, None)
        self._source.subscribe(s)


def _check_fallback(op: str, fallback: object) -> None:
    if fallback is not None and not hasattr(fallback, "subscribe"):
        raise TypeError(f"{op}(): fallback must be a Publisher, got {type(fallback).__name__}")


def timeout(
    source: Flowable[T],
    duration: float,
    fallback: Publisher[T] | None = None,
    scheduler: Scheduler | None = None,
) -> Flowable[T]:
    d = check_duration("timeout", duration)
    _check_fallback("timeout", fallback)
    return _TimedTimeoutFlowable(source, d, fallback, resolve_scheduler("timeout", scheduler))


# ---------------------------------------------------------------------------------------------
# selector


@final
class _TimeoutInner:
    """Subscribes to one timeout Publisher; its first signal fires the timeout for ``index``."""

    _rs_no_wrap = True
    __slots__ = ("_parent", "_index", "_upstream", "_fired")

    def __init__(self, parent: _SelectorTimeoutSubscriber, index: int) -> None:
        self._parent = parent
        self._index = index
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)  # race: dispose vs on_subscribe
        self._fired = False

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise none_refused("on_subscribe")  # rule 2.13
        if set_once(self._upstream, subscription, "timeout_selector"):
            subscription.request(1)

    def on_next(self, item: Any) -> None:
        if not self._fired:
            self._fired = True
            cancel(self._upstream)
            self._parent.timed_out(self._index, self._parent.describe(self._index))

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise none_refused("on_error")  # rule 2.13
        if self._fired:
            plugins.on_error(error, "timeout_selector: the timeout publisher failed after firing")
            return
        self._fired = True
        self._parent.timeout_failed(self._index, error)

    def on_complete(self) -> None:
        if not self._fired:
            self._fired = True
            self._parent.timed_out(self._index, self._parent.describe(self._index))

    def dispose(self) -> None:
        cancel(self._upstream)


@final
class _SelectorTimeoutSubscriber(_TimeoutSubscriber):
    __slots__ = ("_item_timeout", "_inner")

    def __init__(
        self,
        downstream: Subscriber[Any],
        fallback: Publisher[Any] | None,
        item_timeout: Callable[[Any], Publisher[Any]],
    ) -> None:
        super().__init__(downstream, fallback, "timeout_selector")
        self._item_timeout = item_timeout
        self._inner: AtomicRef[_TimeoutInner | None] = AtomicRef(None)  # race: cancel vs re-arm

    def describe(self, index: int) -> str:
        if index == 0:
            return "the first-element timeout publisher signalled before the first element"
        return f"the item timeout publisher signalled before element #{index + 1}"

    def arm_with(self, index: int, publisher: Publisher[Any]) -> None:
        inner = _TimeoutInner(self, index)
        old = self._inner.get()
        if old is _CANCELLED_INNER or not self._inner.compare_and_set(old, inner):
            return
        publisher.subscribe(inner)

    def _arm(self, index: int, item: Any) -> bool:
        try:
            p = self._item_timeout(item)
        except Exception as e:
            self._fail(index, e)
            return False
        if p is None:
            self._fail(index, none_result_error("timeout_selector", "item_timeout"))
            return False
        self.arm_with(index, p)
        return True

    def _fail(self, index: int, error: BaseException) -> None:
        if self._index.compare_and_set(index, _DONE):
            cancel(self._main)
            self._terminate(error)
        else:
            plugins.on_error(error, "timeout_selector: item_timeout failed after the stream ended")

    def _disarm(self) -> None:
        i = self._inner.get()
        if i is not None and i is not _CANCELLED_INNER:
            i.dispose()

    def _dispose(self) -> None:
        i = self._inner.get_and_set(_CANCELLED_INNER)
        if i is not None and i is not _CANCELLED_INNER:
            i.dispose()


_CANCELLED_INNER: Final[Any] = object()


@final
class _SelectorTimeoutFlowable(Flowable[T]):
    __slots__ = ("_source", "_first", "_item_timeout", "_fallback")

    def __init__(
        self,
        source: Flowable[T],
        first: Publisher[Any] | None,
        item_timeout: Callable[[T], Publisher[Any]],
        fallback: Publisher[T] | None,
    ) -> None:
        self._source = source
        self._first = first
        self._item_timeout = item_timeout
        self._fallback = fallback

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        s = _SelectorTimeoutSubscriber(subscriber, self._fallback, self._item_timeout)
        subscriber.on_subscribe(s)
        if self._first is not None:
            s.arm_with(0, self._first)
        self._source.subscribe(s)


def timeout_selector(
    source: Flowable[T],
    first_timeout: Publisher[Any] | None,
    item_timeout: Callable[[T], Publisher[Any]],
    fallback: Publisher[T] | None = None,
) -> Flowable[T]:
    if first_timeout is not None and not hasattr(first_timeout, "subscribe"):
        raise TypeError(
            f"timeout_selector(): first_timeout must be a Publisher or None, got {type(first_timeout).__name__}"
        )
    if not callable(item_timeout):
        raise TypeError(
            f"timeout_selector(): item_timeout must be callable, got {type(item_timeout).__name__}"
        )
    _check_fallback("timeout_selector", fallback)
    return _SelectorTimeoutFlowable(source, first_timeout, item_timeout, fallback)
