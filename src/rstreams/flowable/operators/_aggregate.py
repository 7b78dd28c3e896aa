"""Aggregates: reduce, collect, to_list, to_dict, count, all, any, contains.

Each consumes its upstream unbounded and emits one value through a
:class:`~rstreams.flowable._scalar.DeferredScalarSubscription` (held until requested). Over a fused
source the whole fold runs as one C loop (``sum``, ``functools.reduce``, ``list.extend``) in chunks,
with the ``None`` check done per chunk (by identity, at C speed), so fused and unfused results agree.

The batch a boundary hands on (``observe_on``, ``subscribe_on``: the library-internal
``on_next_batch``) is folded in one step as well: ``reduce`` is one ``functools.reduce`` (one
``sum`` for ``operator.add`` over ints), ``to_list`` one ``extend``, ``count`` one ``len``;
``collect``, ``to_dict``, ``all``/``any`` call the user's function in one local loop (no method
call per element around it). Signals are those of the one-by-one path: a user function's error is
the one it raised for that element (the elements after it are not folded), a short-circuit
(``all``/``any``/``contains``) stops at its element, and a cancel that lands while a batch is
folded stops the user's calls at the next element (``_live`` below; folds without user code have
nothing to stop).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Hashable
from itertools import islice
from typing import Any, Final, Generic, Protocol, TypeVar, final

from ..._internal.subscriptions import CANCELLED
from ..._spec import MAX_DEMAND, Subscriber, Subscription
from ...errors import NoneElementError
from .._base import none_result_error
from .._enums import NOTSET
from .._flowable import Flowable
from .._fused import Fusion, none_index
from .._scalar import DeferredScalarSubscription

__all__ = ["reduce", "collect", "to_list", "to_dict", "count", "all_", "any_", "contains"]

T = TypeVar("T")
A = TypeVar("A")
R = TypeVar("R")

_CHUNK: Final = 4096


class _Folder(Generic[T, A]):
    """How to fold: ``start()`` -> acc, ``step(acc, x)`` -> acc or STOP, ``finish(acc)`` -> value or
    NOTSET (complete empty). ``chunk(acc, list)`` folds a whole list at C speed where possible."""

    name = "aggregate"

    def start(self) -> Any:
        return None

    def step(self, acc: Any, item: T) -> Any:
        raise NotImplementedError

    def chunk(self, acc: Any, items: list[T], live: _Live | None = None) -> Any:
        """Fold a whole list; ``live`` (the subscriber, when a cancel may land meanwhile) stops the
        calls of user code at the first element after the cancel (the result is then discarded)."""
        step = self.step
        for x in items:
            if live is not None and live._done:
                return acc
            acc = step(acc, x)
            if acc is _STOP:
                return _STOP
        return acc

    def finish(self, acc: Any) -> Any:
        return acc


class _StopSignal:
    """Returned by a folder's step to stop early (all/any short-circuit)."""

    __slots__ = ()


_STOP: Final = _StopSignal()


class _Live(Protocol):
    """What a folder reads of its subscriber while folding a batch: the cancelled/terminated flag."""

    _done: bool


class _Halt(Exception):
    """Raised inside a C-level fold (``functools.reduce``) to stop it at a cancel; never escapes."""


class _AggregateSubscriber(Generic[T]):
    """Consumes upstream unbounded, folds, and emits the result through a deferred scalar."""

    _rs_no_wrap = True
    __slots__ = ("_folder", "_step", "_acc", "_upstream", "_scalar", "_done", "__weakref__")

    def __init__(self, downstream: Subscriber[Any], folder: _Folder[T, Any]) -> None:
        self._folder = folder
        self._step = folder.step
        self._acc: Any = NOTSET
        self._upstream: Subscription = CANCELLED
        self._done = False
        self._scalar: DeferredScalarSubscription[Any] = DeferredScalarSubscription(downstream, self._cancel_upstream)

    def _cancel_upstream(self) -> None:
        self._done = True
        self._acc = None
        self._upstream.cancel()

    def on_subscribe(self, subscription: Subscription) -> None:
        if self._upstream is not CANCELLED:
            subscription.cancel()
            return
        self._upstream = subscription
        try:
            self._acc = self._folder.start()
        except Exception as e:
            self._done = True
            subscription.cancel()
            d = self._scalar._downstream
            if d is not None:
                d.on_subscribe(self._scalar)
            self._scalar.error(e)
            return
        d = self._scalar._downstream
        if d is not None:
            d.on_subscribe(self._scalar)
        if not self._done:
            subscription.request(MAX_DEMAND)

    def on_next(self, item: T) -> None:
        if self._done:
            return
        try:
            acc = self._step(self._acc, item)
        except Exception as e:
            self._done = True
            self._upstream.cancel()
            self._scalar.error(e)
            return
        if acc is _STOP:
            self._done = True
            self._upstream.cancel()
            self._emit(self._folder.finish(_stop_value(self._folder)))
            return
        self._acc = acc

    def on_next_batch(self, items: list[T]) -> None:
        """Library-internal batch protocol: the folder's C-speed ``chunk`` (sum, reduce, extend)."""
        if self._done:
            return
        try:
            acc = self._folder.chunk(self._acc, items, self)
        except _Halt:
            return  # cancelled while folding: the scalar is cancelled, nothing to signal
        except Exception as e:
            self._done = True
            self._upstream.cancel()
            self._scalar.error(e)
            return
        if self._done:
            return  # cancelled while folding (race: cancel vs fold; the partial acc is dropped)
        if acc is _STOP:
            self._done = True
            self._upstream.cancel()
            self._emit(self._folder.finish(_stop_value(self._folder)))
            return
        self._acc = acc

    def _emit(self, value: Any) -> None:
        if value is NOTSET:
            self._scalar.complete_empty()
        elif value is None:
            self._scalar.error(none_result_error(self._folder.name, "the accumulator"))
        else:
            self._scalar.complete(value)

    def on_error(self, error: BaseException) -> None:
        if self._done:
            from ..._internal import plugins

            plugins.on_error(error, f"{self._folder.name}(): error after termination")
            return
        self._done = True
        self._acc = None
        self._scalar.error(error)

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        acc = self._acc
        self._acc = None
        try:
            value = self._folder.finish(acc)
        except Exception as e:
            self._scalar.error(e)
            return
        self._emit(value)


class _ReduceSubscriber(_AggregateSubscriber[T]):
    """reduce's hot path inlined (one Python frame per element instead of two)."""

    __slots__ = ("_fn",)

    def __init__(self, downstream: Subscriber[Any], folder: _Reduce[T]) -> None:
        super().__init__(downstream, folder)
        self._fn = folder.fn

    def on_next(self, item: T) -> None:
        if self._done:
            return
        acc = self._acc
        if acc is NOTSET:
            self._acc = item
            return
        try:
            v = self._fn(acc, item)
        except Exception as e:
            self._done = True
            self._upstream.cancel()
            self._scalar.error(e)
            return
        if v is None:
            self._done = True
            self._upstream.cancel()
            self._scalar.error(none_result_error("reduce", "the reducer"))
            return
        self._acc = v


def _stop_value(folder: _Folder[Any, Any]) -> Any:
    return getattr(folder, "stop_value", NOTSET)


@final
class _AggregateFlowable(Flowable[R]):
    __slots__ = ("_source", "_make")

    def __init__(self, source: Flowable[Any], make: Callable[[], _Folder[Any, Any]]) -> None:
        self._source = source
        self._make = make

    def _subscribe_actual(self, subscriber: Subscriber[R]) -> None:
        folder = self._make()
        fz = self._source._fused()
        if fz is not None:
            _fold_fused(fz, folder, subscriber)
            return
        if isinstance(folder, _Reduce):
            self._source.subscribe(_ReduceSubscriber(subscriber, folder))
        else:
            self._source.subscribe(_AggregateSubscriber(subscriber, folder))


def _fold_fused(fz: Fusion[Any], folder: _Folder[Any, Any], subscriber: Subscriber[Any]) -> None:
    """Run the whole fused chain as C loops over chunks; the result waits for demand."""
    cancelled = [False]

    def on_cancel() -> None:
        cancelled[0] = True

    scalar: DeferredScalarSubscription[Any] = DeferredScalarSubscription(subscriber, on_cancel)
    subscriber.on_subscribe(scalar)
    try:
        acc = folder.start()
        it = fz.factory()
        stop = False
        while not cancelled[0]:
            chunk: list[Any] = []
            failure: Exception | None = None
            try:
                chunk.extend(islice(it, _CHUNK))  # extend keeps what it got if the chain raises
            except Exception as e:
                failure = e
            i = none_index(chunk)
            if i >= 0 or failure is not None:
                # the elements before the failure (or the None) are folded first: a short-circuit
                # (all, any, contains) decided by one of them wins, as on the one-by-one path
                acc = folder.chunk(acc, chunk[:i] if i >= 0 else chunk)
                if acc is _STOP:
                    stop = True
                    break
                raise fz.none_error() if i >= 0 else failure  # type: ignore[misc]
            if not chunk:
                break
            acc = folder.chunk(acc, chunk)
            if acc is _STOP:
                stop = True
                break
            if len(chunk) < _CHUNK:
                break
        if cancelled[0]:
            return
        value = folder.finish(_stop_value(folder) if stop else acc)
    except Exception as e:
        if not cancelled[0]:
            scalar.error(e)
        return
    if value is NOTSET:
        scalar.complete_empty()
    elif value is None:
        scalar.error(none_result_error(folder.name, "the accumulator"))
    else:
        scalar.complete(value)


# --------------------------------------------------------------------------------------------
# Folders


class _Reduce(_Folder[T, Any]):
    name = "reduce"

    def __init__(self, fn: Callable[[Any, T], Any], seed: Any) -> None:
        self.fn = fn
        self.seed = seed
        self.use_sum = fn is operator.add

    def start(self) -> Any:
        return self.seed

    def step(self, acc: Any, item: T) -> Any:
        if acc is NOTSET:
            return item
        v = self.fn(acc, item)
        if v is None:
            raise none_result_error("reduce", "the reducer")
        return v

    def chunk(self, acc: Any, items: list[T], live: _Live | None = None) -> Any:
        if not items:
            return acc
        if acc is NOTSET:
            acc = items[0]
            items = items[1:]
        fn = self.fn
        if self.use_sum and type(acc) is int:
            # only exact (int) sums: from Python 3.12 sum() adds floats with compensated
            # (Neumaier) summation, so a float result would differ from the element-by-element
            # fold of the unfused path (0.1 * 10 gives 1.0, not 0.9999999999999999)
            total = sum(items, acc)  # type: ignore[arg-type]
            if type(total) is int:
                return total
        if self.use_sum:
            return functools.reduce(fn, items, acc)  # operator.add never returns None for numbers

        if not _may_return_none(fn):
            return functools.reduce(fn, items, acc)  # a builtin operator: no user code to stop
        if live is None:

            def checked(a: Any, b: T) -> Any:
                v = fn(a, b)
                if v is None:
                    raise none_result_error("reduce", "the reducer")
                return v

            return functools.reduce(checked, items, acc)

        def checked_live(a: Any, b: T) -> Any:
            if live._done:
                raise _Halt  # rule 3.12: a cancel stops the reducer's calls at this element
            v = fn(a, b)
            if v is None:
                raise none_result_error("reduce", "the reducer")
            return v

        return functools.reduce(checked_live, items, acc)


def _may_return_none(fn: object) -> bool:
    # builtin operators never return None for non-None operands; everything else is checked.
    return not (isinstance(fn, type(operator.add)) and getattr(fn, "__module__", "") in ("_operator", "operator"))


class _Collect(_Folder[T, Any]):
    name = "collect"

    def __init__(self, supplier: Callable[[], Any], accumulator: Callable[[Any, T], Any]) -> None:
        self.supplier = supplier
        self.accumulator = accumulator

    def start(self) -> Any:
        c = self.supplier()
        if c is None:
            raise none_result_error("collect", "the supplier")
        return c

    def step(self, acc: Any, item: T) -> Any:
        self.accumulator(acc, item)
        return acc

    def chunk(self, acc: Any, items: list[T], live: _Live | None = None) -> Any:
        fn = self.accumulator
        if live is None:
            for x in items:
                fn(acc, x)
            return acc
        for x in items:
            if live._done:
                break
            fn(acc, x)
        return acc


class _ToList(_Folder[T, list[T]]):
    name = "to_list"

    def start(self) -> list[T]:
        return []

    def step(self, acc: list[T], item: T) -> list[T]:
        acc.append(item)
        return acc

    def chunk(self, acc: list[T], items: list[T], live: _Live | None = None) -> list[T]:
        acc.extend(items)
        return acc


class _ToDict(_Folder[T, dict[Any, Any]]):
    name = "to_dict"

    def __init__(self, key_fn: Callable[[T], Any], value_fn: Callable[[T], Any] | None) -> None:
        self.key_fn = key_fn
        self.value_fn = value_fn

    def start(self) -> dict[Any, Any]:
        return {}

    def step(self, acc: dict[Any, Any], item: T) -> dict[Any, Any]:
        vf = self.value_fn
        acc[self.key_fn(item)] = item if vf is None else vf(item)
        return acc

    def chunk(self, acc: dict[Any, Any], items: list[T], live: _Live | None = None) -> dict[Any, Any]:
        kf = self.key_fn
        vf = self.value_fn
        # the same call order as step (the value is evaluated before the key)
        if vf is None:
            for x in items:
                if live is not None and live._done:
                    break
                acc[kf(x)] = x
        else:
            for x in items:
                if live is not None and live._done:
                    break
                acc[kf(x)] = vf(x)
        return acc


class _Count(_Folder[T, int]):
    name = "count"

    def start(self) -> int:
        return 0

    def step(self, acc: int, item: T) -> int:
        return acc + 1

    def chunk(self, acc: int, items: list[T], live: _Live | None = None) -> int:
        return acc + len(items)


class _All(_Folder[T, bool]):
    name = "all"
    stop_value = False

    def __init__(self, predicate: Callable[[T], object]) -> None:
        self.predicate = predicate

    def start(self) -> bool:
        return True

    def step(self, acc: bool, item: T) -> Any:
        return acc if self.predicate(item) else _STOP

    def chunk(self, acc: bool, items: list[T], live: _Live | None = None) -> Any:
        p = self.predicate
        for x in items:
            if live is not None and live._done:
                break
            if not p(x):
                return _STOP
        return acc


class _Any(_Folder[T, bool]):
    name = "any"
    stop_value = True

    def __init__(self, predicate: Callable[[T], object]) -> None:
        self.predicate = predicate

    def start(self) -> bool:
        return False

    def step(self, acc: bool, item: T) -> Any:
        return _STOP if self.predicate(item) else acc

    def chunk(self, acc: bool, items: list[T], live: _Live | None = None) -> Any:
        p = self.predicate
        for x in items:
            if live is not None and live._done:
                break
            if p(x):
                return _STOP
        return acc


def _callable(name: str, fn: object) -> None:
    if not callable(fn):
        raise TypeError(f"{name}(): expected a callable, got {type(fn).__name__}")


def reduce(source: Flowable[T], reducer: Callable[[Any, T], Any], seed: Any = NOTSET) -> Flowable[Any]:
    _callable("reduce", reducer)
    if seed is None:
        raise NoneElementError("reduce(): seed must not be None (rule 2.13: None is not an element)")
    return _AggregateFlowable(source, lambda: _Reduce(reducer, seed))


def collect(source: Flowable[T], supplier: Callable[[], A], accumulator: Callable[[A, T], Any]) -> Flowable[A]:
    _callable("collect", supplier)
    _callable("collect", accumulator)
    return _AggregateFlowable(source, lambda: _Collect(supplier, accumulator))


def to_list(source: Flowable[T]) -> Flowable[list[T]]:
    return _AggregateFlowable(source, _ToList)


def to_dict(source: Flowable[T], key_fn: Callable[[T], Hashable], value_fn: Callable[[T], Any] | None = None) -> Flowable[dict[Any, Any]]:
    _callable("to_dict", key_fn)
    if value_fn is not None:
        _callable("to_dict", value_fn)
    return _AggregateFlowable(source, lambda: _ToDict(key_fn, value_fn))


def count(source: Flowable[T]) -> Flowable[int]:
    return _AggregateFlowable(source, _Count)


def all_(source: Flowable[T], predicate: Callable[[T], object]) -> Flowable[bool]:
    _callable("all", predicate)
    return _AggregateFlowable(source, lambda: _All(predicate))


def any_(source: Flowable[T], predicate: Callable[[T], object]) -> Flowable[bool]:
    _callable("any", predicate)
    return _AggregateFlowable(source, lambda: _Any(predicate))


def contains(source: Flowable[T], item: object) -> Flowable[bool]:
    if item is None:
        raise NoneElementError("contains(None): None is never an element (rule 2.13)")
    # identity first, as RxJava's ObjectHelper.equals (and Python's own ``in``)
    return _AggregateFlowable(source, lambda: _Any(lambda x: x is item or x == item))
