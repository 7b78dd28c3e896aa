"""buffer(count[, skip]): emit lists of ``count`` elements, a new list starting every ``skip``
elements (RxJava ``buffer(count, skip)``). The last list may be short.

Three shapes, as RxJava, each translating downstream demand for *lists* into upstream demand for
*elements* (rule 1.1: never more lists than requested):

* exact (``skip == count``): ``request(n)`` asks for ``n * count`` elements. A short last list on
  completion always has outstanding demand (fewer than ``n * count`` elements came).
* skip (``skip > count``, gaps): the first ``request(n)`` asks for ``n * count + (n - 1) * (skip -
  count)`` (the gap after the n-th list is not needed yet), later ones for ``n * skip``. "First" is a
  once-flag (race: two first requests from two threads).
* overlapping (``skip < count``): the first ``request(n)`` asks for ``count + (n - 1) * skip``, later
  ones for ``n * skip``. On completion the open lists are a tail emitted with the post-complete idiom
  (:class:`~._take_last.PostCompleteSubscriber`): request vs on_complete share one atomic counter.

``buffer(boundary)`` (a Publisher as the first argument) is ``_buffer_boundary.py``;
``buffer(openings, closing_selector)`` is ``_buffer_openings.py``.

Demand arithmetic uses ``mul_cap``/``add_cap`` (capped at ``2**63 - 1``).

Fused (``skip == count`` over a fused source): batches built by ``list(islice(it, count))`` at C
speed, a ``None`` check per batch; the sizer is ``ceil(size / count)``.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any, TypeVar, final

from ..._internal.arguments import positive_int
from ..._internal.atomics import AtomicFlag
from ..._internal.requests import add_cap, mul_cap
from ..._spec import Publisher, Subscriber
from .._base import BasicSubscriber, PostCompleteSubscriber
from .._flowable import Flowable
from .._fused import Ahead, FusedFlowable, Fusion, Sizer, none_index
from ._buffer_boundary import buffer_boundary
from ._buffer_openings import buffer_openings

__all__ = ["buffer"]

T = TypeVar("T")


def _is_bad(n: int) -> bool:
    return type(n) is not int or n <= 0


@final
class _BufferExactSubscriber(BasicSubscriber[T, list[T]]):
    __slots__ = ("_count", "_buf")

    def __init__(self, downstream: Subscriber[list[T]], count: int) -> None:
        super().__init__(downstream)
        self._count = count
        self._buf: list[T] = []

    def on_next(self, item: T) -> None:
        if self.done:
            return
        b = self._buf
        b.append(item)
        if len(b) == self._count:
            self._buf = []
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
            self.downstream.on_next(b)  # demand exists: fewer than n * count elements arrived
        super().on_complete()

    def request(self, n: int) -> None:
        if _is_bad(n):
            self.upstream.request(n)  # rule 3.9: the upstream signals the error
            return
        self.upstream.request(mul_cap(n, self._count))


@final
class _BufferSkipSubscriber(BasicSubscriber[T, list[T]]):
    __slots__ = ("_count", "_skip", "_buf", "_index", "_first")

    def __init__(self, downstream: Subscriber[list[T]], count: int, skip: int) -> None:
        super().__init__(downstream)
        self._count = count
        self._skip = skip
        self._buf: list[T] | None = None
        self._index = 0
        self._first = AtomicFlag()  # race: two "first" requests from two threads

    def on_next(self, item: T) -> None:
        if self.done:
            return
        i = self._index
        b = self._buf
        if i == 0:
            b = self._buf = []
        if b is not None:
            b.append(item)
            if len(b) == self._count:
                self._buf = None
                self.downstream.on_next(b)
        i += 1
        self._index = 0 if i == self._skip else i

    def on_error(self, error: BaseException) -> None:
        self._buf = None
        super().on_error(error)

    def on_complete(self) -> None:
        if self.done:
            return
        b = self._buf
        self._buf = None
        if b:
            self.downstream.on_next(b)
        super().on_complete()

    def request(self, n: int) -> None:
        if _is_bad(n):
            self.upstream.request(n)  # rule 3.9: the upstream signals the error
            return
        if not self._first.is_set() and self._first.try_set():
            u = mul_cap(n, self._count)
            v = mul_cap(self._skip - self._count, n - 1)
            self.upstream.request(add_cap(u, v))
        else:
            self.upstream.request(mul_cap(self._skip, n))


@final
class _BufferOverlappingSubscriber(PostCompleteSubscriber[T]):
    __slots__ = ("_count", "_skip", "_index", "_produced", "_first")

    def __init__(self, downstream: Subscriber[list[T]], count: int, skip: int) -> None:
        super().__init__(downstream, deque())
        self._count = count
        self._skip = skip
        self._index = 0
        self._produced = 0  # lists emitted before completion (settled once, in before_complete)
        self._first = AtomicFlag()  # race: two "first" requests from two threads

    def on_next(self, item: T) -> None:
        if self.done:
            return
        bufs = self.queue
        i = self._index
        if i == 0:
            bufs.append([])
        i += 1
        self._index = 0 if i == self._skip else i
        for b in bufs:
            b.append(item)
        if len(bufs[0]) == self._count:
            self._produced += 1
            self.downstream.on_next(bufs.popleft())

    def before_complete(self) -> None:
        p = self._produced
        if p:
            # the post-complete counter tracked requests only: subtract what was already emitted
            with self.requested._lock:
                r = self.requested._value
                if r < 2**63 - 1:
                    self.requested._value = max(r - p, 0)

    def forward_request(self, n: int) -> None:
        if not self._first.is_set() and self._first.try_set():
            self.upstream.request(add_cap(self._count, mul_cap(self._skip, n - 1)))
        else:
            self.upstream.request(mul_cap(self._skip, n))


@final
class _BufferFlowable(Flowable[list[T]]):
    __slots__ = ("_source", "_count", "_skip")

    def __init__(self, source: Flowable[T], count: int, skip: int) -> None:
        self._source = source
        self._count = count
        self._skip = skip

    def _subscribe_actual(self, subscriber: Subscriber[list[T]]) -> None:
        c, s = self._count, self._skip
        if c == s:
            self._source.subscribe(_BufferExactSubscriber(subscriber, c))
        elif s > c:
            self._source.subscribe(_BufferSkipSubscriber(subscriber, c, s))
        else:
            self._source.subscribe(_BufferOverlappingSubscriber(subscriber, c, s))


def _batches(it: Iterator[Any], n: int, fz: Fusion[Any]) -> Iterator[list[Any]]:
    """``batched`` (3.11 has none): one C-speed ``list(islice)`` and one ``None`` check per list."""
    # islice's stop must fit a C ssize_t; no list is longer than sys.maxsize anyway
    n = min(n, sys.maxsize)
    while True:
        b = list(islice(it, n))
        if not b:
            return
        if none_index(b) >= 0:
            raise fz.none_error()
        yield b
        if len(b) < n:
            return


class _Buffers:
    """The fused buffer(n) under stages that ask (``_fused.py``): a short list means the stage
    below ended while it was filled (a take_while that stopped), so the stage has nothing more,
    whatever the source still holds: the unfused buffer emits that list on the upstream's
    completion and completes with it."""

    __slots__ = ("_it", "_n", "_fz", "_below", "_ended")

    def __init__(self, it: Iterator[Any], n: int, fz: Fusion[Any], below: Ahead) -> None:
        self._it = it
        self._n = min(n, sys.maxsize)
        self._fz = fz
        self._below = below
        self._ended = False

    def __iter__(self) -> _Buffers:
        return self

    def __next__(self) -> list[Any]:
        if self._ended:
            raise StopIteration
        b = list(islice(self._it, self._n))
        if len(b) < self._n:
            self._ended = True
            if not b:
                raise StopIteration
        if none_index(b) >= 0:
            raise self._fz.none_error()
        return b

    def done(self, early: bool) -> bool:
        return self._ended or self._below.done(early)


def buffer(
    source: Flowable[T],
    count: int | Publisher[Any],
    skip: int | Callable[[Any], Publisher[Any]] | None = None,
) -> Flowable[list[T]]:
    if not isinstance(count, int) and hasattr(count, "subscribe"):
        if skip is None:
            return buffer_boundary(source, count)
        if callable(skip):
            return buffer_openings(source, count, skip)
        raise TypeError(
            f"buffer(): with an openings Publisher the second argument must be a closing selector "
            f"(callable), got {type(skip).__name__}"
        )
    if callable(skip):
        raise TypeError("buffer(): a closing selector needs an openings Publisher as the first argument")
    c = positive_int("buffer", "count", count)
    s = c if skip is None else positive_int("buffer", "skip", skip)
    fz = source._fused()
    if fz is not None and s == c:
        up = fz.sizer
        sizer: Sizer | None = None
        if up is not None:

            def lists() -> int | None:
                size = up()
                return None if size is None else -(-size // c)

            sizer = lists

        f = fz

        def look(it: Iterator[Any], below: Ahead) -> tuple[Iterator[Any], Ahead]:
            k = _Buffers(it, c, f, below)
            return k, k

        return FusedFlowable(fz.then(lambda it: _batches(it, c, f), "buffer", sizer, look=look))
    return _BufferFlowable(source, c, s)
