"""delay(selector): delay each element until its own delay Publisher, ``selector(element)``,
signals its first element or completes (RxJava 3 ``delay(Function itemDelayIndicator)``).

As RxJava, this is ``flat_map`` over one Publisher per element that emits the element when its
delay Publisher signals (RxJava composes ``take(1).map(...).defaultIfEmpty(...)``; here one small
Flowable, :class:`_ItemDelay`, does the same for a fraction of the assembly cost), so:

* elements are emitted in the order their delays end, not necessarily the source order;
* the completion waits for every pending delay; an error of the source, of a delay Publisher or of
  ``selector`` fails the stream at once (dropping pending elements), unless ``delay_error``;
* ``selector`` returning ``None`` (or not a Publisher) fails the stream (rule 2.13).

Backpressure: as ``flat_map``: at most ``max_concurrency`` (default 128, RxJava's buffer size)
elements are waiting for their delays; the source is requested as they finish, and an element goes
out only when requested. A delay Publisher is asked for one element (its first signal is enough)
and cancelled after it. Concurrency and races are ``flat_map``'s; within one element, the delay's
signal vs the request of flat_map's inner is a :class:`DeferredScalarSubscription` (emitted once).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicRef
from ..._internal.requests import DEFAULT_PREFETCH
from ..._internal.subscriptions import cancel, set_once
from ..._spec import Publisher, Subscriber, Subscription
from .._base import none_result_error
from .._flowable import Flowable
from .._scalar import DeferredScalarSubscription
from ._time_common import none_refused

__all__ = ["delay_selector"]

T = TypeVar("T")


@final
class _ItemDelaySubscriber:
    """Subscribes to one element's delay Publisher; its first signal releases the element."""

    _rs_no_wrap = True
    __slots__ = ("out", "_value", "_upstream", "_done", "__weakref__")

    def __init__(self, downstream: Subscriber[Any], value: Any) -> None:
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)  # race: cancel vs on_subscribe
        self.out: DeferredScalarSubscription[Any] = DeferredScalarSubscription(downstream, self._cancel_upstream)
        self._value = value
        self._done = False  # the delay Publisher signals serially (rule 1.3)

    def _cancel_upstream(self) -> None:
        cancel(self._upstream)

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise none_refused("on_subscribe")  # rule 2.13
        if set_once(self._upstream, subscription, "delay"):
            subscription.request(1)

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        if self._done:
            return
        self._done = True
        cancel(self._upstream)
        self.out.complete(self._value)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise none_refused("on_error")  # rule 2.13
        if self._done:
            plugins.on_error(error, "delay: a delay publisher failed after it signalled")
            return
        self._done = True
        self.out.error(error)

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        self.out.complete(self._value)


@final
class _ItemDelay(Flowable[T]):
    """Emits ``value`` when ``indicator`` signals its first element or completes."""

    __slots__ = ("_indicator", "_value")

    def __init__(self, indicator: Publisher[Any], value: T) -> None:
        self._indicator = indicator
        self._value = value

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        s = _ItemDelaySubscriber(subscriber, self._value)
        subscriber.on_subscribe(s.out)
        if not s.out.is_cancelled:
            self._indicator.subscribe(s)


def delay_selector(
    source: Flowable[T],
    selector: Callable[[T], Publisher[Any]],
    delay_error: bool = False,
    max_concurrency: int = DEFAULT_PREFETCH,
) -> Flowable[T]:
    if not callable(selector):
        raise TypeError(f"delay(): selector must be callable, got {type(selector).__name__}")
    if not isinstance(delay_error, bool):
        raise TypeError(f"delay(): delay_error must be a bool, got {type(delay_error).__name__}")

    def item_delay(x: T) -> Flowable[T]:
        p = selector(x)
        if p is None:
            raise none_result_error("delay", "the selector")
        if not hasattr(p, "subscribe"):
            raise TypeError(f"delay(): the selector must return a Publisher, got {type(p).__name__}")
        return _ItemDelay(p, x)

    return source.flat_map(item_delay, max_concurrency, delay_error=delay_error)
