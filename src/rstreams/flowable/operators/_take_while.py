"""take_while(predicate) (RxJava ``takeWhile``): emit while the predicate holds; at the first
element that fails it, cancel the upstream and complete (that element is not emitted). Fused:
``itertools.takewhile``. (``take_until`` is in ``_take_until.py``.)
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import takewhile
from typing import TypeVar, final

from ..._internal.arguments import check_callable
from ..._spec import Subscriber
from .._base import BasicSubscriber
from .._flowable import Flowable
from .._fused import FusedFlowable

__all__ = ["take_while"]

T = TypeVar("T")


# ----------------------------------------------------------------------------------------------
# take_while


@final
class _TakeWhileSubscriber(BasicSubscriber[T, T]):
    __slots__ = ("_predicate",)

    def __init__(self, downstream: Subscriber[T], predicate: Callable[[T], object]) -> None:
        super().__init__(downstream)
        self._predicate = predicate

    def on_next(self, item: T) -> None:
        if self.done:
            return
        try:
            ok = self._predicate(item)
        except Exception as e:
            self.fail(e)
            return
        if ok:
            self.downstream.on_next(item)
        else:
            self.upstream.cancel()
            self.on_complete()


@final
class _TakeWhileFlowable(Flowable[T]):
    __slots__ = ("_source", "_predicate")

    def __init__(self, source: Flowable[T], predicate: Callable[[T], object]) -> None:
        self._source = source
        self._predicate = predicate

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(_TakeWhileSubscriber(subscriber, self._predicate))


def take_while(source: Flowable[T], predicate: Callable[[T], object]) -> Flowable[T]:
    check_callable("take_while", predicate)
    fz = source._fused()
    if fz is not None:
        return FusedFlowable(fz.then(lambda it: takewhile(predicate, it), "take_while", ahead=False))
    return _TakeWhileFlowable(source, predicate)
