"""pairwise(): emit ``(previous, current)`` for every element after the first.

Not an RxJava 3 operator (RxJS ``pairwise``; RxJava spells it ``buffer(2, 1)`` plus dropping the
trailing one-element list). One upstream element in, one tuple out, except the first: so the
first downstream request asks the upstream for one more (``n + 1``, capped at unbounded) and every
later request passes straight through. The held element is touched only by the serial upstream
signals (rule 1.3) and requests are serial (rule 2.7), so no lock is needed.

Over a fused source it folds into :func:`itertools.pairwise` (exact size: the source's minus one).
"""

from __future__ import annotations

from itertools import pairwise as _it_pairwise
from typing import Any, Final, TypeVar, final

from ..._internal.requests import MAX_DEMAND
from ..._spec import Subscriber
from .._base import BasicSubscriber
from .._flowable import Flowable
from .._fused import FusedFlowable, Sizer

__all__ = ["pairwise"]

T = TypeVar("T")

_NOTHING: Final = object()


@final
class _PairwiseSubscriber(BasicSubscriber[T, "tuple[T, T]"]):
    __slots__ = ("_prev", "_first_request")

    def __init__(self, downstream: Subscriber[tuple[T, T]]) -> None:
        super().__init__(downstream)
        self._prev: Any = _NOTHING
        self._first_request = True

    def on_next(self, item: T) -> None:
        if self.done:
            return
        p = self._prev
        self._prev = item
        if p is not _NOTHING:
            self.downstream.on_next((p, item))

    def on_error(self, error: BaseException) -> None:
        self._prev = _NOTHING
        super().on_error(error)

    def on_complete(self) -> None:
        self._prev = _NOTHING
        super().on_complete()

    def request(self, n: int) -> None:
        if self._first_request and type(n) is int and n > 0:
            self._first_request = False
            n = MAX_DEMAND if n >= MAX_DEMAND - 1 else n + 1  # the first element makes no pair
        self.upstream.request(n)  # invalid amounts reach the upstream, which signals rule 3.9


@final
class _PairwiseFlowable(Flowable["tuple[T, T]"]):
    __slots__ = ("_source",)

    def __init__(self, source: Flowable[T]) -> None:
        self._source = source

    def _subscribe_actual(self, subscriber: Subscriber[tuple[T, T]]) -> None:
        self._source.subscribe(_PairwiseSubscriber(subscriber))


def pairwise(source: Flowable[T]) -> Flowable[tuple[T, T]]:
    fz = source._fused()
    if fz is not None:
        up = fz.sizer
        return FusedFlowable(fz.then(_it_pairwise, "pairwise", None if up is None else _one_less(up)))
    return _PairwiseFlowable(source)


def _one_less(up: Sizer) -> Sizer:
    """The fused chain's exact size: one pair less than the elements (none for 0 or 1)."""

    def sizer() -> int | None:
        size = up()
        return None if size is None else max(size - 1, 0)

    return sizer
