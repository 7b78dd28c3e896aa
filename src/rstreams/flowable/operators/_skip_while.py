"""skip_while(predicate): drop elements while the predicate holds, then emit everything
(RxJava ``skipWhile``).

While dropping, each dropped element is replaced by ``request(1)`` upstream (rule 1.1: the
downstream's demand is only used by emitted elements); once the predicate failed, the predicate is
never called again and elements pass straight through. Fused: ``itertools.dropwhile``.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import dropwhile
from typing import TypeVar, final

from ..._internal.arguments import check_callable
from ..._spec import Subscriber
from .._base import BasicSubscriber
from .._flowable import Flowable
from .._fused import FusedFlowable

__all__ = ["skip_while"]

T = TypeVar("T")


@final
class _SkipWhileSubscriber(BasicSubscriber[T, T]):
    __slots__ = ("_predicate", "_passing")

    def __init__(self, downstream: Subscriber[T], predicate: Callable[[T], object]) -> None:
        super().__init__(downstream)
        self._predicate = predicate
        self._passing = False

    def on_next(self, item: T) -> None:
        if self.done:
            return  # rule 1.7: nothing after the terminal signal, even from a faulty upstream
        if self._passing:
            self.downstream.on_next(item)
            return
        try:
            drop = self._predicate(item)
        except Exception as e:
            self.fail(e)
            return
        if drop:
            self.upstream.request(1)
        else:
            self._passing = True
            self.downstream.on_next(item)


@final
class _SkipWhileFlowable(Flowable[T]):
    __slots__ = ("_source", "_predicate")

    def __init__(self, source: Flowable[T], predicate: Callable[[T], object]) -> None:
        self._source = source
        self._predicate = predicate

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(_SkipWhileSubscriber(subscriber, self._predicate))


def skip_while(source: Flowable[T], predicate: Callable[[T], object]) -> Flowable[T]:
    check_callable("skip_while", predicate)
    fz = source._fused()
    if fz is not None:
        return FusedFlowable(fz.then(lambda it: dropwhile(predicate, it), "skip_while", ahead=False))
    return _SkipWhileFlowable(source, predicate)
