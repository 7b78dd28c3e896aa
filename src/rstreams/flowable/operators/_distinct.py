"""distinct([key_fn]) and distinct_until_changed([key_fn, comparer]) (RxJava ``distinct``,
``distinctUntilChanged``).

* ``distinct``: drop an element whose key (default: the element) was seen before. Keys must be
  hashable (an unhashable key fails the stream with the TypeError). Each subscription has its own
  set of seen keys. Fused: ``filter`` with the ``set.add``-returns-None trick over a per-subscription
  set (created in the iterator factory).
* ``distinct_until_changed``: drop an element equal to its predecessor, by ``==`` on the key, or by
  ``comparer(previous_key, key)``. Fused without a comparer: ``itertools.groupby`` (the first
  element of each run); with a comparer: a small generator.

Dropped elements are replaced by ``request(1)`` upstream in the unfused path (rule 1.1). State is
touched only by the serial upstream signals (rule 1.3): no locks.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from itertools import groupby
from operator import itemgetter
from typing import Any, TypeVar, final

from ..._internal.arguments import check_callable
from ..._spec import Subscriber
from .._base import BasicSubscriber
from .._enums import NOTSET
from .._flowable import Flowable
from .._fused import FusedFlowable

__all__ = ["distinct", "distinct_until_changed"]

T = TypeVar("T")


# ----------------------------------------------------------------------------------------------
# distinct


@final
class _DistinctSubscriber(BasicSubscriber[T, T]):
    __slots__ = ("_key_fn", "_seen")

    def __init__(self, downstream: Subscriber[T], key_fn: Callable[[T], Hashable] | None) -> None:
        super().__init__(downstream)
        self._key_fn = key_fn
        self._seen: set[Any] = set()

    def on_next(self, item: T) -> None:
        if self.done:
            return
        seen = self._seen
        try:
            k = item if self._key_fn is None else self._key_fn(item)
            new = k not in seen
            if new:
                seen.add(k)
        except Exception as e:
            self.fail(e)
            return
        if new:
            self.downstream.on_next(item)
        else:
            self.upstream.request(1)

    def on_error(self, error: BaseException) -> None:
        self._seen = set()
        super().on_error(error)

    def on_complete(self) -> None:
        self._seen = set()
        super().on_complete()


@final
class _DistinctFlowable(Flowable[T]):
    __slots__ = ("_source", "_key_fn")

    def __init__(self, source: Flowable[T], key_fn: Callable[[T], Hashable] | None) -> None:
        self._source = source
        self._key_fn = key_fn

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(_DistinctSubscriber(subscriber, self._key_fn))


def _distinct_iter(it: Iterator[Any], key_fn: Callable[[Any], Hashable] | None) -> Iterator[Any]:
    seen: set[Any] = set()  # one set per subscription: this runs in the iterator factory
    add = seen.add
    if key_fn is None:
        return filter(lambda x: not (x in seen or add(x)), it)
    kf = key_fn

    def fresh(x: Any) -> bool:
        k = kf(x)
        return not (k in seen or add(k))

    return filter(fresh, it)


def distinct(source: Flowable[T], key_fn: Callable[[T], Hashable] | None = None) -> Flowable[T]:
    if key_fn is not None:
        check_callable("distinct", key_fn)
    fz = source._fused()
    if fz is not None:
        # a filter (ahead=False): looking ahead through it would pull a run of duplicates from the
        # source without demand (forever for an endless one); the unfused operator requests one
        # replacement per dropped duplicate
        return FusedFlowable(fz.then(lambda it: _distinct_iter(it, key_fn), "distinct", ahead=False))
    return _DistinctFlowable(source, key_fn)


# ----------------------------------------------------------------------------------------------
# distinct_until_changed


@final
class _DistinctUntilChangedSubscriber(BasicSubscriber[T, T]):
    __slots__ = ("_key_fn", "_comparer", "_last")

    def __init__(
        self,
        downstream: Subscriber[T],
        key_fn: Callable[[T], Any] | None,
        comparer: Callable[[Any, Any], bool] | None,
    ) -> None:
        super().__init__(downstream)
        self._key_fn = key_fn
        self._comparer = comparer
        self._last: Any = NOTSET

    def on_next(self, item: T) -> None:
        if self.done:
            return
        last = self._last
        try:
            k = item if self._key_fn is None else self._key_fn(item)
            if last is NOTSET:
                same = False
            elif self._comparer is None:
                # identity first, as RxJava's Objects.equals (and the fused groupby): the same
                # NaN object twice in a row is a repeat
                same = last is k or bool(last == k)
            else:
                same = bool(self._comparer(last, k))
        except Exception as e:
            self.fail(e)
            return
        self._last = k
        if same:
            self.upstream.request(1)
        else:
            self.downstream.on_next(item)

    def on_error(self, error: BaseException) -> None:
        self._last = None
        super().on_error(error)

    def on_complete(self) -> None:
        self._last = None
        super().on_complete()


@final
class _DistinctUntilChangedFlowable(Flowable[T]):
    __slots__ = ("_source", "_key_fn", "_comparer")

    def __init__(
        self,
        source: Flowable[T],
        key_fn: Callable[[T], Any] | None,
        comparer: Callable[[Any, Any], bool] | None,
    ) -> None:
        self._source = source
        self._key_fn = key_fn
        self._comparer = comparer

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(_DistinctUntilChangedSubscriber(subscriber, self._key_fn, self._comparer))


def _changed_with_comparer(
    it: Iterator[Any], key_fn: Callable[[Any], Any] | None, comparer: Callable[[Any, Any], bool]
) -> Iterator[Any]:
    last: Any = NOTSET
    for x in it:
        k = x if key_fn is None else key_fn(x)
        same = last is not NOTSET and bool(comparer(last, k))
        last = k
        if not same:
            yield x


def _first_of_run(kg: tuple[Any, Iterator[Any]]) -> Any:
    return next(kg[1])


def distinct_until_changed(
    source: Flowable[T],
    key_fn: Callable[[T], Any] | None = None,
    comparer: Callable[[Any, Any], bool] | None = None,
) -> Flowable[T]:
    if key_fn is not None:
        check_callable("distinct_until_changed", key_fn)
    if comparer is not None:
        check_callable("distinct_until_changed", comparer)
    fz = source._fused()
    if fz is not None:
        if comparer is not None:
            cmp = comparer
            return FusedFlowable(
                fz.then(lambda it: _changed_with_comparer(it, key_fn, cmp), "distinct_until_changed", ahead=False)
            )
        if key_fn is None:
            # a filter (see distinct above)
            return FusedFlowable(fz.then(lambda it: map(itemgetter(0), groupby(it)), "distinct_until_changed", ahead=False))
        kf = key_fn
        return FusedFlowable(fz.then(lambda it: map(_first_of_run, groupby(it, kf)), "distinct_until_changed", ahead=False))
    return _DistinctUntilChangedFlowable(source, key_fn, comparer)
