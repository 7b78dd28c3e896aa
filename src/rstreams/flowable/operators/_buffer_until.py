"""buffer_until(predicate, cut_before) and buffer_while(predicate): lists cut by a predicate
(Reactor's ``bufferUntil``/``bufferWhile``; RxJava 3 has no such operator).

* ``buffer_until``: an element for which the predicate is true closes the current list and is its
  last element; with ``cut_before=True`` it opens the next list instead (the list before it is
  emitted first, unless it is empty).
* ``buffer_while``: elements for which the predicate is true are collected; the first one for which
  it is false closes the list and is dropped (a separator). Two separators in a row, or a leading
  one, produce no empty list.

A non-empty last list is emitted when the upstream completes; an upstream error drops it.

Backpressure: one list costs one or more elements, so ``request(n)`` lists asks the upstream for
``n`` elements, and every element that does not close a list (absorbed into a list, or a dropped
separator) asks for one more (as filter does; nothing when the demand is unbounded). So the
outstanding upstream demand always equals the outstanding demand for lists (rule 1.1). The last
list on completion may find no demand: it waits for the next request with the post-complete idiom
(:class:`~._take_last.PostCompleteSubscriber`; race: request vs on_complete share one atomic).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Final, TypeVar, final

from ..._internal.requests import MAX_DEMAND
from ..._spec import Subscriber
from .._base import PostCompleteSubscriber
from .._flowable import Flowable

__all__ = ["buffer_until", "buffer_while"]

T = TypeVar("T")

_UNTIL: Final = 0
_CUT_BEFORE: Final = 1
_WHILE: Final = 2


@final
class _BufferPredicateSubscriber(PostCompleteSubscriber[T]):
    __slots__ = ("_predicate", "_mode", "_buf", "_produced", "_unbounded")

    def __init__(self, downstream: Subscriber[list[T]], predicate: Callable[[T], object], mode: int) -> None:
        super().__init__(downstream, deque())
        self._predicate = predicate
        self._mode = mode
        self._buf: list[T] = []
        self._produced = 0  # lists emitted before completion (upstream thread)
        # unbounded demand is sticky: an absorbed element then needs no request(1); a stale False
        # read on the upstream thread only costs a request that add_cap absorbs
        self._unbounded = False

    def on_next(self, item: T) -> None:
        if self.done:
            return
        try:
            match = self._predicate(item)
        except Exception as e:
            self.fail(e)
            return
        b = self._buf
        mode = self._mode
        if mode == _UNTIL:
            b.append(item)
            if match:
                self._buf = []
                self._emit(b)
                return
        elif mode == _CUT_BEFORE:
            if match and b:
                self._buf = [item]
                self._emit(b)
                return
            b.append(item)
        elif match:
            b.append(item)
        elif b:
            self._buf = []
            self._emit(b)  # the separator is dropped; its unit of demand goes to the list
            return
        if not self._unbounded:
            self.upstream.request(1)  # the element did not close a list: replace it (rule 1.1)

    def on_next_batch(self, items: list[T]) -> None:
        """Library-internal batch protocol: the same steps as :meth:`on_next` in one loop; the
        replacements for absorbed elements are requested once per batch. A cancel from inside an
        emission stops the loop (no predicate runs for the rest)."""
        if self.done:
            return
        pred = self._predicate
        mode = self._mode
        b = self._buf
        absorbed = 0
        for item in items:
            try:
                match = pred(item)
            except Exception as e:
                self._buf = b
                self.fail(e)
                return
            out: list[T] | None = None
            if mode == _UNTIL:
                b.append(item)
                if match:
                    out = b
                    b = []
            elif mode == _CUT_BEFORE:
                if match and b:
                    out = b
                    b = [item]
                else:
                    b.append(item)
            elif match:
                b.append(item)
            elif b:
                out = b
                b = []
            if out is None:
                absorbed += 1
                continue
            self._buf = b
            self._emit(out)
            if self.cancelled or self.done:
                return
        self._buf = b
        if absorbed and not self._unbounded:
            self.upstream.request(absorbed)  # replacements for the elements that closed no list

    def _emit(self, b: list[T]) -> None:
        self._produced += 1
        self.downstream.on_next(b)

    def on_error(self, error: BaseException) -> None:
        self._buf = []
        super().on_error(error)

    def on_complete(self) -> None:
        if self.done:
            return
        b = self._buf
        self._buf = []
        if b:
            self.queue.append(b)
        super().on_complete()

    def before_complete(self) -> None:
        p = self._produced
        if p:
            # the post-complete counter tracked requests only: subtract what was already emitted
            with self.requested._lock:
                r = self.requested._value
                if r < MAX_DEMAND:
                    self.requested._value = max(r - p, 0)

    def forward_request(self, n: int) -> None:
        if n >= MAX_DEMAND:
            self._unbounded = True
        self.upstream.request(n)


@final
class _BufferPredicateFlowable(Flowable[list[T]]):
    __slots__ = ("_source", "_predicate", "_mode")

    def __init__(self, source: Flowable[T], predicate: Callable[[T], object], mode: int) -> None:
        self._source = source
        self._predicate = predicate
        self._mode = mode

    def _subscribe_actual(self, subscriber: Subscriber[list[T]]) -> None:
        self._source.subscribe(_BufferPredicateSubscriber(subscriber, self._predicate, self._mode))


def _check_predicate(op: str, predicate: object) -> None:
    if not callable(predicate):
        raise TypeError(f"{op}(): predicate must be callable, got {type(predicate).__name__}")


def buffer_until(
    source: Flowable[T], predicate: Callable[[T], object], cut_before: bool = False
) -> Flowable[list[T]]:
    _check_predicate("buffer_until", predicate)
    if not isinstance(cut_before, bool):
        raise TypeError(f"buffer_until(): cut_before must be a bool, got {type(cut_before).__name__}")
    return _BufferPredicateFlowable(source, predicate, _CUT_BEFORE if cut_before else _UNTIL)


def buffer_while(source: Flowable[T], predicate: Callable[[T], object]) -> Flowable[list[T]]:
    _check_predicate("buffer_while", predicate)
    return _BufferPredicateFlowable(source, predicate, _WHILE)
