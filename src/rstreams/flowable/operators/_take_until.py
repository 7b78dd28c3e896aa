"""take_until(stop) (RxJava ``takeUntil``).

* ``take_until(predicate)``: emit each element, then complete (cancelling the upstream) after the
  first one for which the predicate holds. Fused: a small generator (emit, then test).
* ``take_until(publisher)``: mirror the main source until ``publisher`` signals an element or
  completes (then complete); an error from it is signalled. The other publisher may signal from
  another thread while the main one is inside ``on_next``: every downstream signal goes through a
  :class:`~rstreams._internal.drain.HalfSerializer` (race: main on_next vs other's terminal). The
  main upstream is a deferred subscription because the other may terminate before it arrives
  (race: cancel vs on_subscribe).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicFlag, AtomicInt, AtomicRef
from ..._internal.drain import HalfSerializer
from ..._internal.requests import MAX_DEMAND, validate_request
from ..._internal.subscriptions import cancel as cancel_ref
from ..._internal.subscriptions import deferred_request, deferred_set_once, set_once
from ..._spec import Publisher, Subscriber, Subscription
from ...errors import NoneElementError
from .._base import BasicSubscriber
from .._flowable import Flowable
from .._fused import FusedFlowable

__all__ = ["take_until"]

T = TypeVar("T")


# ----------------------------------------------------------------------------------------------
# take_until(predicate)


@final
class _TakeUntilPredicateSubscriber(BasicSubscriber[T, T]):
    __slots__ = ("_stop", "_cancelled")

    def __init__(self, downstream: Subscriber[T], stop: Callable[[T], object]) -> None:
        super().__init__(downstream)
        self._stop = stop
        self._cancelled = False  # the downstream cancelled (maybe inside on_next)

    def cancel(self) -> None:
        self._cancelled = True
        self.upstream.cancel()

    def on_next(self, item: T) -> None:
        if self.done:
            return
        self.downstream.on_next(item)
        if self._cancelled:
            self.done = True  # rule 1.8: cancelled inside on_next: no further signal
            return
        try:
            b = self._stop(item)
        except Exception as e:
            self.fail(e)
            return
        if b:
            self.upstream.cancel()
            self.on_complete()


@final
class _TakeUntilPredicateFlowable(Flowable[T]):
    __slots__ = ("_source", "_stop")

    def __init__(self, source: Flowable[T], stop: Callable[[T], object]) -> None:
        self._source = source
        self._stop = stop

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(_TakeUntilPredicateSubscriber(subscriber, self._stop))


def _until(stop: Callable[[Any], object], it: Iterator[Any]) -> Iterator[Any]:
    for x in it:
        yield x  # emitted first, then tested (as the unfused path)
        if stop(x):
            return


# ----------------------------------------------------------------------------------------------
# take_until(publisher)


@final
class _TakeUntilMainSubscriber:
    """The main subscriber; also the downstream's Subscription."""

    _rs_no_wrap = True
    __slots__ = ("_hs", "_upstream", "_requested", "_other", "__weakref__")

    def __init__(self, downstream: Subscriber[Any]) -> None:
        self._hs = HalfSerializer(downstream)
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)  # race: cancel vs on_subscribe
        self._requested = AtomicInt(0)  # demand made before the main upstream arrived
        self._other = _TakeUntilOtherSubscriber(self)

    def on_subscribe(self, subscription: Subscription) -> None:
        deferred_set_once(self._upstream, self._requested, subscription, "take_until")

    def on_next(self, item: Any) -> None:
        self._hs.on_next(item)

    def on_error(self, error: BaseException) -> None:
        self._other.dispose()
        self._hs.on_error(error)

    def on_complete(self) -> None:
        self._other.dispose()
        self._hs.on_complete()

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                # rule 3.9: the main upstream may not be there yet; signal through the serializer
                self.cancel()
                self._hs.on_error(err)
                return
        deferred_request(self._upstream, self._requested, n)

    def cancel(self) -> None:
        cancel_ref(self._upstream)
        self._other.dispose()

    # called by the other subscriber
    def other_signalled(self, error: BaseException | None) -> None:
        cancel_ref(self._upstream)
        if error is None:
            self._hs.on_complete()
        else:
            self._hs.on_error(error)


@final
class _TakeUntilOtherSubscriber:
    _rs_no_wrap = True
    __slots__ = ("_main", "_upstream", "_done", "__weakref__")

    def __init__(self, main: _TakeUntilMainSubscriber) -> None:
        self._main = main
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)  # race: dispose vs on_subscribe
        self._done = AtomicFlag()  # once: the other signals the main at most once

    def on_subscribe(self, subscription: Subscription) -> None:
        if set_once(self._upstream, subscription, "take_until (other)"):
            subscription.request(MAX_DEMAND)

    def on_next(self, item: Any) -> None:
        if self._done.try_set():
            cancel_ref(self._upstream)
            self._main.other_signalled(None)

    def on_error(self, error: BaseException) -> None:
        if self._done.try_set():
            self._main.other_signalled(error)
        else:
            plugins.on_error(error, "take_until(): the other publisher failed after termination")

    def on_complete(self) -> None:
        if self._done.try_set():
            self._main.other_signalled(None)

    def dispose(self) -> None:
        self._done.try_set()
        cancel_ref(self._upstream)


@final
class _TakeUntilPublisherFlowable(Flowable[T]):
    __slots__ = ("_source", "_other")

    def __init__(self, source: Flowable[T], other: Flowable[Any]) -> None:
        self._source = source
        self._other = other

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        main = _TakeUntilMainSubscriber(subscriber)
        subscriber.on_subscribe(main)
        self._other.subscribe(main._other)
        self._source.subscribe(main)


def take_until(source: Flowable[T], stop: Callable[[T], object] | Publisher[Any]) -> Flowable[T]:
    if stop is None:
        raise NoneElementError("take_until(): stop is None; give a predicate or a Publisher")
    if isinstance(stop, Flowable) or callable(getattr(stop, "subscribe", None)):
        from ..sources._basic import from_publisher

        return _TakeUntilPublisherFlowable(source, from_publisher(stop))  # type: ignore[arg-type]
    if not callable(stop):
        raise TypeError(f"take_until(): expected a predicate or a Publisher, got {type(stop).__name__}")
    fz = source._fused()
    # Fused only over a chain without per-element user code: the driver learns that take_until
    # stopped by pulling once more (looking ahead), which must not run an upstream user function
    # for an element nobody requested. Otherwise the operator completes right after the element
    # that satisfied ``stop`` (as RxJava), over the fused upstream.
    if fz is not None and not fz.user:
        pred = stop
        return FusedFlowable(fz.then(lambda it: _until(pred, it), "take_until"))
    return _TakeUntilPredicateFlowable(source, stop)
