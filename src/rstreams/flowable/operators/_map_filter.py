"""map, filter and hide. map and filter fold into builtin ``map``/``filter`` over a fused source."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from functools import partial
from operator import is_not
from typing import Any, Final, TypeVar, final

from ..._internal.arguments import check_callable
from ..._spec import MAX_DEMAND, Subscriber
from .._base import BasicSubscriber, none_result_error
from .._flowable import Flowable
from .._fused import FusedFlowable, batch_sink, none_index

__all__ = ["map_", "filter_", "map_not_none", "hide"]

T = TypeVar("T")
R = TypeVar("R")


def emit_batch(downstream_batch: Callable[[list[Any]], None] | None, on_next: Callable[[Any], None], items: list[Any]) -> None:
    """Pass ``items`` on: as one batch to a batch-capable (library-internal) downstream, else one by one."""
    if downstream_batch is not None:
        downstream_batch(items)
    else:
        for x in items:
            on_next(x)


@final
class _MapSubscriber(BasicSubscriber[T, R]):
    __slots__ = ("_mapper", "_next", "_next_batch", "accepts_batches", "_cancelled")

    def __init__(self, downstream: Subscriber[R], mapper: Callable[[T], R]) -> None:
        super().__init__(downstream)
        self._cancelled = False  # see cancel()
        self._mapper = mapper
        self._next = downstream.on_next  # hot path: one slot load instead of two lookups
        self._next_batch = batch_sink(downstream)
        self.accepts_batches = self._next_batch is not None

    def on_next_batch(self, items: list[T]) -> None:
        """Library-internal batch protocol: one C-level ``map`` per batch. The results before a
        failing element are still passed on (``list.extend`` keeps what it consumed), as the
        one-by-one path would have done."""
        if self.done:
            return
        out: list[Any] = []
        err: BaseException | None = None
        try:
            out.extend(map(self._mapper, items))
        except Exception as e:
            err = e
        i = none_index(out)
        if i >= 0:
            out = out[:i]
            err = none_result_error("map")
        if out:
            emit_batch(self._next_batch, self._next, out)
        if err is not None:
            if self._cancelled:
                # the batch made the downstream cancel (first, take, contains) before the failing
                # element: the one-by-one path never maps that element, so there is no error
                self.done = True
                return
            self.fail(err)

    def cancel(self) -> None:
        # a plain flag: a cancel from another thread read late only lets the error through to
        # the cancelled downstream (which reports it as undeliverable), as before
        self._cancelled = True
        self.upstream.cancel()

    def on_next(self, item: T) -> None:
        if self.done:
            return
        try:
            v = self._mapper(item)
        except Exception as e:
            self.fail(e)
            return
        if v is None:
            self.fail(none_result_error("map"))
            return
        self._next(v)


@final
class _MapFlowable(Flowable[R]):
    __slots__ = ("_source", "_mapper")

    def __init__(self, source: Flowable[T], mapper: Callable[[T], R]) -> None:
        self._source = source
        self._mapper = mapper

    def _subscribe_actual(self, subscriber: Subscriber[R]) -> None:
        self._source.subscribe(_MapSubscriber(subscriber, self._mapper))


def map_(source: Flowable[T], mapper: Callable[[T], R]) -> Flowable[R]:
    check_callable("map", mapper)
    fz = source._fused()
    if fz is not None:
        return FusedFlowable(fz.then(lambda it: builtins.map(mapper, it), "map", fz.sizer, produces=True))
    return _MapFlowable(source, mapper)


@final
class _FilterSubscriber(BasicSubscriber[T, T]):
    __slots__ = ("_predicate", "_next", "_next_batch", "_unbounded", "accepts_batches", "_cancelled")

    def __init__(self, downstream: Subscriber[T], predicate: Callable[[T], object]) -> None:
        super().__init__(downstream)
        self._cancelled = False  # see _MapSubscriber.cancel
        self._predicate = predicate
        self._next = downstream.on_next
        self._next_batch = batch_sink(downstream)
        self.accepts_batches = self._next_batch is not None
        # Once the downstream asked for unbounded demand the upstream's demand is unbounded too
        # (2**63-1 is sticky), so a dropped element needs no replacement request(1).
        self._unbounded = False

    def on_next(self, item: T) -> None:
        if self.done:
            return
        try:
            ok = self._predicate(item)
        except Exception as e:
            self.fail(e)
            return
        if ok:
            self._next(item)
        elif not self._unbounded:
            self.upstream.request(1)

    def request(self, n: int) -> None:
        if type(n) is int and n >= MAX_DEMAND:
            self._unbounded = True
        self.upstream.request(n)

    def cancel(self) -> None:
        self._cancelled = True  # as in _MapSubscriber.cancel
        self.upstream.cancel()

    def on_next_batch(self, items: list[T]) -> None:
        """Library-internal batch protocol: one C-level ``filter`` per batch; passing elements
        before a failing predicate are still passed on; dropped ones are re-requested."""
        if self.done:
            return
        out: list[Any] = []
        err: BaseException | None = None
        try:
            out.extend(filter(self._predicate, items))
        except Exception as e:
            err = e
        if out:
            emit_batch(self._next_batch, self._next, out)
        if err is not None:
            if self._cancelled:  # as in _MapSubscriber.on_next_batch
                self.done = True
                return
            self.fail(err)
            return
        dropped = len(items) - len(out)
        if dropped and not self._unbounded:
            self.upstream.request(dropped)  # replacements for the dropped elements

    def try_on_next(self, item: T) -> bool:
        """Conditional path: True if the element was passed on (and so used one unit of demand)."""
        if self.done:
            return False
        try:
            ok = self._predicate(item)
        except Exception as e:
            self.fail(e)
            return False
        if ok:
            self._next(item)
            return True
        return False


@final
class _FilterFlowable(Flowable[T]):
    __slots__ = ("_source", "_predicate")

    def __init__(self, source: Flowable[T], predicate: Callable[[T], object]) -> None:
        self._source = source
        self._predicate = predicate

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(_FilterSubscriber(subscriber, self._predicate))


def filter_(source: Flowable[T], predicate: Callable[[T], object]) -> Flowable[T]:
    check_callable("filter", predicate)
    fz = source._fused()
    if fz is not None:
        return FusedFlowable(fz.then(lambda it: builtins.filter(predicate, it), "filter", ahead=False))
    return _FilterFlowable(source, predicate)


@final
class _MapNotNoneSubscriber(BasicSubscriber[T, R]):
    """map_not_none: map, and drop the ``None`` results (RxJava 3's mapOptional, empty = None)."""

    __slots__ = ("_mapper", "_next", "_unbounded")

    def __init__(self, downstream: Subscriber[R], mapper: Callable[[T], R | None]) -> None:
        super().__init__(downstream)
        self._mapper = mapper
        self._next = downstream.on_next
        # as _FilterSubscriber: unbounded demand is sticky, a dropped element needs no request(1)
        self._unbounded = False

    def on_next(self, item: T) -> None:
        if self.done:
            return
        try:
            v = self._mapper(item)
        except Exception as e:
            self.fail(e)
            return
        if v is not None:
            self._next(v)
        elif not self._unbounded:
            self.upstream.request(1)  # a replacement for the dropped element

    def request(self, n: int) -> None:
        if type(n) is int and n >= MAX_DEMAND:
            self._unbounded = True
        self.upstream.request(n)


@final
class _MapNotNoneFlowable(Flowable[R]):
    __slots__ = ("_source", "_mapper")

    def __init__(self, source: Flowable[T], mapper: Callable[[T], R | None]) -> None:
        self._source = source
        self._mapper = mapper

    def _subscribe_actual(self, subscriber: Subscriber[R]) -> None:
        self._source.subscribe(_MapNotNoneSubscriber(subscriber, self._mapper))


_NOT_NONE: Final = partial(is_not, None)  # C-level "x is not None"


def map_not_none(source: Flowable[T], mapper: Callable[[T], R | None]) -> Flowable[R]:
    check_callable("map_not_none", mapper)
    fz = source._fused()
    if fz is not None:
        # a builtin filter over a builtin map: no Python frame per element besides the mapper's;
        # it drops elements and runs user code, so it asks the stage below (ahead=False)
        return FusedFlowable(
            fz.then(lambda it: builtins.filter(_NOT_NONE, builtins.map(mapper, it)), "map_not_none", ahead=False)
        )
    return _MapNotNoneFlowable(source, mapper)


@final
class _HideFlowable(Flowable[T]):
    """Hides the source's type: nothing fuses across it (fusion happens at assembly time, so the
    subscriber can be passed straight through with no per-element cost)."""

    __slots__ = ("_source",)

    def __init__(self, source: Flowable[T]) -> None:
        self._source = source

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(subscriber)

    def __repr__(self) -> str:
        return f"{self._source!r}.hide()"


def hide(source: Flowable[Any]) -> Flowable[Any]:
    return _HideFlowable(source)
