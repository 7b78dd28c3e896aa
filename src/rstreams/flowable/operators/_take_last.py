"""take_last(n): emit the last ``n`` elements after the upstream completes (RxJava ``takeLast``).

The upstream is consumed unbounded into a ``deque(maxlen=n)``; on completion the kept tail is
emitted under downstream demand with the post-complete idiom (seed 004): the completed flag and the
demand share one atomic counter, so "request vs on_complete" (race: downstream thread vs upstream
thread) hands the tail to exactly one drain owner.

:class:`~rstreams.flowable._base.PostCompleteSubscriber` is the shared base of the post-complete
operators (``take_last``, the overlapping ``buffer``, ``buffer_until``, ``default_if_empty``). It also handles a bad request (rule 3.9): before
completion it is forwarded to the trusted upstream, which signals the error through ``on_error``
(serial with its other signals); after completion the error is parked and delivered by the drain
owner (``is_cancelled`` is called only by the owner), so it never overlaps an ``on_next``.

Fused: over a fused source the tail is taken with C loops (``deque.extend`` of chunks, a ``None``
check per chunk) when the first request arrives; the tail is then emitted by the fused driver.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Iterator
from itertools import islice
from typing import Any, Final, TypeVar, final

from ..._internal.arguments import non_negative_int
from ..._internal.requests import MAX_DEMAND
from ..._spec import Subscriber, Subscription
from .._base import PostCompleteSubscriber
from .._flowable import Flowable
from .._fused import FusedFlowable, Fusion, Sizer, none_index

__all__ = ["take_last", "fused_chunks"]

T = TypeVar("T")

_CHUNK: Final = 4096


@final
class _TakeLastSubscriber(PostCompleteSubscriber[T]):
    __slots__ = ()

    def on_subscribe(self, subscription: Subscription) -> None:
        super().on_subscribe(subscription)
        if self.upstream is subscription and not self.cancelled:
            subscription.request(MAX_DEMAND)  # consumes upstream unbounded

    def on_next(self, item: T) -> None:
        if self.done:
            return  # a faulty upstream's late element must not change the tail being emitted
        self.queue.append(item)  # deque(maxlen=n) drops the oldest

    def forward_request(self, n: int) -> None:
        pass  # the upstream is already unbounded; demand only paces the tail


@final
class _TakeLastFlowable(Flowable[T]):
    __slots__ = ("_source", "_n")

    def __init__(self, source: Flowable[T], n: int) -> None:
        self._source = source
        self._n = n

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(_TakeLastSubscriber(subscriber, deque(maxlen=_maxlen(self._n))))


def _maxlen(n: int) -> int | None:
    """``deque(maxlen=)`` for a count: above ``sys.maxsize`` (a C ssize_t; no sequence is that long)
    it means "keep everything"; deque itself raised OverflowError out of subscribe (rule 1.9)."""
    return n if n <= sys.maxsize else None


def fused_chunks(it: Iterator[Any], fz: Fusion[Any]) -> Iterator[list[Any]]:
    """Chunks of a fused iterator, each checked for ``None`` at C speed (blamed as the driver does)."""
    while True:
        chunk = list(islice(it, _CHUNK))
        if not chunk:
            return
        if none_index(chunk) >= 0:
            raise fz.none_error()
        yield chunk
        if len(chunk) < _CHUNK:
            return


def _fused_tail(it: Iterator[Any], n: int, fz: Fusion[Any]) -> Iterator[Any]:
    tail: deque[Any] = deque(maxlen=_maxlen(n))
    for chunk in fused_chunks(it, fz):
        tail.extend(chunk)
    yield from tail


def take_last(source: Flowable[T], count: int) -> Flowable[T]:
    n = non_negative_int("take_last", "count", count)
    if n == 0:
        from ._ignore_elements import ignore_elements

        return ignore_elements(source)
    fz = source._fused()
    if fz is not None:
        up = fz.sizer
        sizer: Sizer | None = None
        # The unfused take_last consumes its upstream unbounded at subscription, so an upstream
        # error (a raising mapper, a None element) arrives with no demand. A known size would make
        # the driver skip that look-ahead and run the whole upstream at the first request; only
        # an upstream that can neither fail nor run user code (a range) keeps its size here.
        if up is not None and fz.none_free and fz.pure:

            def sizer() -> int | None:
                s = up()
                return None if s is None else min(s, n)

        f = fz
        factory = fz.factory

        def make() -> Iterator[Any]:
            return _fused_tail(factory(), n, f)

        # A new root, not a stage: the unfused take_last consumes its upstream at subscription,
        # so the tail may be pulled ahead (computed, meeting an upstream error) then, whatever
        # follows; before on_subscribe only if that runs no user code (``pure``).
        return FusedFlowable(
            Fusion(make, sizer, fz.producers, (*fz.names, "take_last"), fz.eager, fz.none_free, pure=fz.pure)
        )
    return _TakeLastFlowable(source, n)
