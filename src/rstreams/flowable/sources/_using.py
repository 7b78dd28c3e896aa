"""``using(resource_fn, source_fn, dispose_fn, eager)``: a resource scoped to one subscription.

Per subscriber: ``resource = resource_fn()``, then the Publisher ``source_fn(resource)`` is
subscribed, and ``dispose_fn(resource)`` runs exactly once: on completion, on error, or on cancel
(RxJava ``Flowable.using`` semantics).

* ``eager=True``: the resource is disposed *before* the terminal signal is passed downstream (and
  before the upstream is cancelled on cancel). A failing ``dispose_fn`` turns a completion into
  that error, and is combined with an upstream error into an ``ExceptionGroup``.
* ``eager=False``: the terminal signal goes downstream first, then the resource is disposed (after
  the upstream is cancelled on cancel). A failing ``dispose_fn`` can no longer be delivered: it
  goes to the undeliverable-error hook (:mod:`rstreams.plugins`).

If ``source_fn`` raises, the resource is disposed (errors combined) and the error is signalled.

Race guarded: cancel (from the downstream's thread) vs a terminal signal (from the upstream's
thread) both want to dispose; an :class:`AtomicFlag` lets exactly one of them run ``dispose_fn``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast, final

from ..._internal import plugins
from ..._internal.atomics import AtomicFlag
from ..._internal.subscriptions import CANCELLED, error_empty, report_double_subscription
from ..._spec import Publisher, Subscriber, Subscription, null_element_message
from ...errors import NoneElementError
from .._flowable import Flowable
from ._basic import check_sync_callable, from_publisher

__all__ = ["using"]

T = TypeVar("T")
S = TypeVar("S")


def _combine(first: BaseException, second: BaseException) -> BaseException:
    if isinstance(first, Exception) and isinstance(second, Exception):
        return ExceptionGroup("using(): the stream failed and dispose_fn raised", [first, second])
    return BaseExceptionGroup("using(): the stream failed and dispose_fn raised", [first, second])


@final
class _UsingSubscriber(Generic[T, S]):
    """Passes signals through and disposes the resource once (also the downstream's Subscription)."""

    _rs_no_wrap = True
    __slots__ = (
        "_downstream",
        "_upstream",
        "_resource",
        "_dispose_fn",
        "_eager",
        "_once",
        "_done",
        "__weakref__",
    )

    def __init__(
        self, downstream: Subscriber[T], resource: S, dispose_fn: Callable[[S], Any], eager: bool
    ) -> None:
        self._downstream: Subscriber[T] | None = downstream
        self._upstream: Subscription = CANCELLED
        self._resource: S | None = resource
        self._dispose_fn = dispose_fn
        self._eager = eager
        self._once = AtomicFlag()  # race: cancel vs terminal signal, dispose exactly once
        self._done = False

    def _dispose(self) -> BaseException | None:
        """Dispose once; return what dispose_fn raised (None if it did not, or if already done)."""
        if not self._once.try_set():
            return None
        resource = self._resource
        self._resource = None
        try:
            self._dispose_fn(resource)  # type: ignore[arg-type]
        except Exception as e:
            return e
        return None

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise NoneElementError(null_element_message("on_subscribe"))
        if self._upstream is not CANCELLED:
            subscription.cancel()  # rule 2.5
            report_double_subscription("using")
            return
        self._upstream = subscription
        d = self._downstream
        if d is not None:
            d.on_subscribe(self)

    def on_next(self, item: T) -> None:
        d = self._downstream
        if d is not None and not self._done:
            d.on_next(item)

    def on_error(self, error: BaseException) -> None:
        d = self._downstream
        if self._done or d is None:
            plugins.on_error(error, "using(): on_error after termination or cancel")
            return
        self._done = True
        self._downstream = None  # rule 3.13
        if self._eager:
            de = self._dispose()
            d.on_error(error if de is None else _combine(error, de))
        else:
            d.on_error(error)
            de = self._dispose()
            if de is not None:
                plugins.on_error(de, "using(): dispose_fn raised (non-eager)")

    def on_complete(self) -> None:
        d = self._downstream
        if self._done or d is None:
            return
        self._done = True
        self._downstream = None
        if self._eager:
            de = self._dispose()
            if de is None:
                d.on_complete()
            else:
                d.on_error(de)
        else:
            d.on_complete()
            de = self._dispose()
            if de is not None:
                plugins.on_error(de, "using(): dispose_fn raised (non-eager)")

    def request(self, n: int) -> None:
        self._upstream.request(n)

    def cancel(self) -> None:
        self._downstream = None  # rule 3.13
        if self._eager:
            de = self._dispose()
            self._upstream.cancel()
        else:
            self._upstream.cancel()
            de = self._dispose()
        if de is not None:
            plugins.on_error(de, "using(): dispose_fn raised on cancel")


@final
class _UsingFlowable(Flowable[T], Generic[T, S]):
    __slots__ = ("_resource_fn", "_source_fn", "_dispose_fn", "_eager")

    def __init__(
        self,
        resource_fn: Callable[[], S],
        source_fn: Callable[[S], Publisher[T]],
        dispose_fn: Callable[[S], Any],
        eager: bool,
    ) -> None:
        self._resource_fn = resource_fn
        self._source_fn = source_fn
        self._dispose_fn = dispose_fn
        self._eager = eager

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        try:
            resource = self._resource_fn()
        except Exception as e:
            error_empty(cast("Subscriber[Any]", subscriber), e)
            return
        try:
            source = self._source_fn(resource)
            if source is None:
                raise NoneElementError("using(): source_fn returned None instead of a Publisher")
            if not callable(getattr(source, "subscribe", None)):
                raise TypeError(f"using(): source_fn returned a {type(source).__name__}, not a Publisher")
        except Exception as e:
            err: BaseException = e
            try:
                self._dispose_fn(resource)
            except Exception as de:
                err = _combine(e, de)
            error_empty(cast("Subscriber[Any]", subscriber), err)
            return
        # a foreign Publisher gets from_publisher's rule 2.13 guard (a None element or error would
        # otherwise reach the subscriber); a Flowable is subscribed as it is
        from_publisher(source).subscribe(_UsingSubscriber(subscriber, resource, self._dispose_fn, self._eager))


def using(
    resource_fn: Callable[[], S],
    source_fn: Callable[[S], Publisher[T]],
    dispose_fn: Callable[[S], Any],
    eager: bool,
) -> Flowable[T]:
    for name, fn in (("resource_fn", resource_fn), ("source_fn", source_fn), ("dispose_fn", dispose_fn)):
        check_sync_callable("using", name, fn, generator=name == "dispose_fn")
    return _UsingFlowable(resource_fn, source_fn, dispose_fn, bool(eager))
