"""element_at, element_at_or_error, first and last (RxJava ``elementAt``, ``elementAtOrError``,
``first``, ``last``): single-valued results.

Each consumes the upstream unbounded and holds its one value in a
:class:`~rstreams.flowable._scalar.DeferredScalarSubscription` until it is requested (race: value
arrives on the upstream thread vs demand arrives on the downstream thread; the scalar's state
machine emits exactly once, and validates requests: rule 3.9). ``element_at``/``first`` cancel the
upstream as soon as the element is found.

When nothing is found: ``default`` if given; else ``element_at`` completes empty while
``element_at_or_error``, ``first`` and ``last`` signal :class:`~rstreams.errors.NoSuchElementError`.

Fused: over a fused source the search runs as C loops over chunks (``islice`` to skip, a ``deque``
of one for ``last``), with a ``None`` check per chunk so that fused and unfused signals agree.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import Any, Final, TypeVar, final

from ..._internal import plugins
from ..._internal.requests import MAX_DEMAND
from ..._internal.subscriptions import CANCELLED
from ..._spec import Subscriber, Subscription
from ...errors import NoneElementError, NoSuchElementError
from .._enums import NOTSET
from .._flowable import Flowable
from .._fused import Fusion, none_index
from .._scalar import DeferredScalarSubscription

__all__ = ["element_at", "element_at_or_error", "first", "last"]

T = TypeVar("T")

_CHUNK: Final = 4096
_ERROR: Final = object()  # "no element and no default": signal NoSuchElementError
_LAST: Final = -1  # the index that means "the last element"


def _missing(op: str, index: int) -> NoSuchElementError:
    if index in (0, _LAST):  # first, last and their *_or_error forms
        return NoSuchElementError(f"{op}(): the stream completed without any element")
    return NoSuchElementError(f"{op}(): the stream completed with fewer than {index + 1} elements")


class _ElementAtSubscriber:
    """Counts to ``index`` (or keeps the latest element for ``last``)."""

    _rs_no_wrap = True
    __slots__ = ("_scalar", "_upstream", "_index", "_count", "_value", "_default", "_op", "_done", "__weakref__")

    def __init__(self, downstream: Subscriber[Any], index: int, default: Any, op: str) -> None:
        self._scalar: DeferredScalarSubscription[Any] = DeferredScalarSubscription(downstream, self._cancel_upstream)
        self._upstream: Subscription = CANCELLED
        self._index = index
        self._count = 0
        self._value: Any = NOTSET
        self._default = default
        self._op = op
        self._done = False

    def _cancel_upstream(self) -> None:
        self._done = True
        self._value = NOTSET
        self._upstream.cancel()

    def on_subscribe(self, subscription: Subscription) -> None:
        if self._upstream is not CANCELLED:
            subscription.cancel()  # rule 2.5
            from ..._internal.subscriptions import report_double_subscription

            report_double_subscription(self._op)
            return
        self._upstream = subscription
        d = self._scalar._downstream
        if d is not None:
            d.on_subscribe(self._scalar)
        if not self._done:
            subscription.request(MAX_DEMAND)

    def on_next(self, item: Any) -> None:
        if self._done:
            return
        if self._index == _LAST:
            self._value = item
            return
        c = self._count
        if c == self._index:
            self._done = True
            self._upstream.cancel()
            self._scalar.complete(item)
            return
        self._count = c + 1

    def on_error(self, error: BaseException) -> None:
        if self._done:
            plugins.on_error(error, f"{self._op}(): on_error after termination")
            return
        self._done = True
        self._value = NOTSET
        self._scalar.error(error)

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        v = self._value
        self._value = NOTSET
        _finish(self._scalar, v, self._default, self._op, self._index)


def _finish(scalar: DeferredScalarSubscription[Any], value: Any, default: Any, op: str, index: int) -> None:
    if value is not NOTSET:
        scalar.complete(value)
    elif default is _ERROR:
        scalar.error(_missing(op, index))
    elif default is NOTSET:
        scalar.complete_empty()
    else:
        scalar.complete(default)


def _search_fused(fz: Fusion[Any], index: int, subscriber: Subscriber[Any], default: Any, op: str) -> None:
    """The whole search as C loops over chunks; the result waits for demand."""
    cancelled = [False]

    def on_cancel() -> None:
        cancelled[0] = True

    scalar: DeferredScalarSubscription[Any] = DeferredScalarSubscription(subscriber, on_cancel)
    subscriber.on_subscribe(scalar)
    value: Any = NOTSET
    try:
        it: Iterator[Any] = fz.factory()
        left = index  # elements still to skip (unused for last)
        while not cancelled[0]:
            n = _CHUNK if index == _LAST else min(_CHUNK, left + 1)
            chunk = list(islice(it, n))
            if not chunk:
                break
            i = none_index(chunk)
            if i >= 0:
                if index != _LAST and left < i:
                    value = chunk[left]  # the element asked for comes before the None
                    break
                raise fz.none_error()
            if index == _LAST:
                value = chunk[-1]
            elif len(chunk) > left:
                value = chunk[left]
                break
            else:
                left -= len(chunk)
            if len(chunk) < n:
                break
    except Exception as e:
        if not cancelled[0]:
            scalar.error(e)
        return
    if cancelled[0]:
        return
    _finish(scalar, value, default, op, index)


@final
class _ElementAtFlowable(Flowable[Any]):
    __slots__ = ("_source", "_index", "_default", "_op")

    def __init__(self, source: Flowable[Any], index: int, default: Any, op: str) -> None:
        self._source = source
        self._index = index
        self._default = default
        self._op = op

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        fz = self._source._fused()
        if fz is not None:
            _search_fused(fz, self._index, subscriber, self._default, self._op)
            return
        self._source.subscribe(_ElementAtSubscriber(subscriber, self._index, self._default, self._op))


def _check_index(op: str, index: object) -> int:
    if not isinstance(index, int) or isinstance(index, bool):
        raise TypeError(f"{op}(): index must be an int, got {type(index).__name__}")
    if index < 0:
        raise ValueError(f"{op}(): index must be >= 0, got {index}")
    return index


def _check_default(op: str, default: Any) -> None:
    if default is None:
        raise NoneElementError(f"{op}(): the default is None; None is not a valid element (rule 2.13)")


def element_at(source: Flowable[T], index: int, default: T | Any = NOTSET) -> Flowable[T]:
    i = _check_index("element_at", index)
    _check_default("element_at", default)
    return _ElementAtFlowable(source, i, default, "element_at")


def element_at_or_error(source: Flowable[T], index: int) -> Flowable[T]:
    i = _check_index("element_at_or_error", index)
    return _ElementAtFlowable(source, i, _ERROR, "element_at_or_error")


def first(source: Flowable[T], default: T | Any = NOTSET, name: str = "first") -> Flowable[T]:
    _check_default(name, default)
    return _ElementAtFlowable(source, 0, _ERROR if default is NOTSET else default, name)


def last(source: Flowable[T], default: T | Any = NOTSET, name: str = "last") -> Flowable[T]:
    _check_default(name, default)
    return _ElementAtFlowable(source, _LAST, _ERROR if default is NOTSET else default, name)
