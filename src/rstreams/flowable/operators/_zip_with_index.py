"""zip_with_index(start=0) (alias ``enumerate``): emit ``(index, element)`` tuples.

Not an RxJava 3 operator (Reactor's ``index()`` and Kotlin's ``withIndex()`` are the nearest; this
pairs index first, as Python's :func:`enumerate` and Reactor's ``index()`` do). One element in,
one tuple out: requests pass straight through. The counter belongs to one subscription and is
touched only by the serial upstream signals (rule 1.3).

Over a fused source it folds into ``zip(itertools.count(start), it)`` (a fresh counter per
subscription; same size as the source).
"""

from __future__ import annotations

from itertools import count
from typing import Any, TypeVar, final

from ..._spec import Subscriber
from .._base import BasicSubscriber
from .._flowable import Flowable
from .._fused import FusedFlowable

__all__ = ["zip_with_index"]

T = TypeVar("T")


@final
class _ZipWithIndexSubscriber(BasicSubscriber[T, "tuple[int, T]"]):
    __slots__ = ("_index",)

    def __init__(self, downstream: Subscriber[tuple[int, T]], start: int) -> None:
        super().__init__(downstream)
        self._index = start

    def on_next(self, item: T) -> None:
        if self.done:
            return
        i = self._index
        self._index = i + 1
        self.downstream.on_next((i, item))


@final
class _ZipWithIndexFlowable(Flowable["tuple[int, T]"]):
    __slots__ = ("_source", "_start")

    def __init__(self, source: Flowable[T], start: int) -> None:
        self._source = source
        self._start = start

    def _subscribe_actual(self, subscriber: Subscriber[tuple[int, T]]) -> None:
        self._source.subscribe(_ZipWithIndexSubscriber(subscriber, self._start))


def zip_with_index(source: Flowable[T], start: int = 0, op: str = "zip_with_index") -> Flowable[tuple[int, T]]:
    if not isinstance(start, int) or isinstance(start, bool):
        raise TypeError(f"{op}(): start must be an int, got {type(start).__name__}")
    fz = source._fused()
    if fz is not None:

        def indexed(it: Any) -> Any:
            return zip(count(start), it)

        return FusedFlowable(fz.then(indexed, op, fz.sizer))
    return _ZipWithIndexFlowable(source, start)
