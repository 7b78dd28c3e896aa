"""take(n) and skip(n). Over a fused source they fold into ``itertools.islice``."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import Any, TypeVar, final

from ..._internal.arguments import non_negative_int
from ..._internal.atomics import AtomicInt
from ..._internal.subscriptions import complete_empty
from ..._spec import Subscriber, Subscription
from .._base import BasicSubscriber
from .._flowable import Flowable
from .._fused import Ahead, FusedFlowable, Sizer

__all__ = ["take", "skip"]

T = TypeVar("T")



@final
class _TakeSubscriber(BasicSubscriber[T, T]):
    __slots__ = ("_remaining", "_limit", "_asked", "_cancelled")

    def __init__(self, downstream: Subscriber[T], limit: int) -> None:
        super().__init__(downstream)
        self._remaining = limit
        self._limit = limit
        self._asked = AtomicInt(0)  # total forwarded upstream (race: concurrent request calls)
        # the downstream cancelled (maybe inside the last on_next); a plain flag: a stale read on
        # another thread only delays the stop, which rule 1.8 allows ("eventually")
        self._cancelled = False

    def on_subscribe(self, subscription: Subscription) -> None:
        if self._limit == 0 and not self.done:
            subscription.cancel()
            self.done = True
            complete_empty(self.downstream)
            return
        super().on_subscribe(subscription)

    def on_next(self, item: T) -> None:
        if self.done:
            return
        r = self._remaining - 1
        self._remaining = r
        if r < 0:
            return  # the upstream over-delivered: it is already cancelled
        self.downstream.on_next(item)
        if r == 0:
            self.upstream.cancel()
            if self._cancelled:
                self.done = True  # rule 1.8: cancelled inside the last on_next: no completion
            else:
                self.on_complete()

    def cancel(self) -> None:
        self._cancelled = True
        self.upstream.cancel()

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            self.upstream.request(n)  # let the upstream signal the rule 3.9 error
            return
        asked = self._asked
        limit = self._limit
        with asked._lock:  # never forward more than `limit` in total
            old = asked._value
            if old >= limit:
                return
            new = old + n
            if new > limit:
                new = limit
            asked._value = new
        self.upstream.request(new - old)


@final
class _TakeFlowable(Flowable[T]):
    __slots__ = ("_source", "_n")

    def __init__(self, source: Flowable[T], n: int) -> None:
        self._source = source
        self._n = n

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(_TakeSubscriber(subscriber, self._n))


class _Take:
    """The fused take(n) under stages that ask (``_fused.py``): it has given its n, or the stage
    below has nothing more. Its own count first: a bound reached needs no pull below."""

    __slots__ = ("_it", "_left", "_below")

    def __init__(self, it: Iterator[Any], n: int, below: Ahead) -> None:
        self._it = it
        self._left = n
        self._below = below

    def __iter__(self) -> _Take:
        return self

    def __next__(self) -> Any:
        if self._left <= 0:
            raise StopIteration  # never pulls more than n from below (as islice)
        x = next(self._it)
        self._left -= 1
        return x

    def done(self, early: bool) -> bool:
        return self._left <= 0 or self._below.done(early)


def take(source: Flowable[T], n: int) -> Flowable[T]:
    n = non_negative_int("take", "count", n)
    fz = source._fused()
    if fz is not None:
        up = fz.sizer

        def take_sizer() -> int | None:
            if not n:
                return 0
            s = up() if up is not None else None
            return None if s is None else min(n, s)  # over an unknown size n is only a bound

        def look(it: Iterator[Any], below: Ahead) -> tuple[Iterator[Any], Ahead]:
            t = _Take(it, n, below)
            return t, t

        # islice never pulls more than n: the fused chain never asks its source for more than n
        return FusedFlowable(fz.then(lambda it: islice(it, n), "take", take_sizer, look=look))
    return _TakeFlowable(source, n)


@final
class _SkipSubscriber(BasicSubscriber[T, T]):
    __slots__ = ("_remaining",)

    def __init__(self, downstream: Subscriber[T], n: int) -> None:
        super().__init__(downstream)
        self._remaining = n

    def on_subscribe(self, subscription: Subscription) -> None:
        n = self._remaining  # read first: the downstream's request may emit (and skip) synchronously
        super().on_subscribe(subscription)
        if n > 0 and self.upstream is subscription:
            subscription.request(n)  # the skipped elements are asked for once, up front

    def on_next(self, item: T) -> None:
        if self._remaining > 0:
            self._remaining -= 1
            return
        if self.done:
            return  # rule 1.7: nothing after the terminal signal, even from a faulty upstream
        self.downstream.on_next(item)


@final
class _SkipFlowable(Flowable[T]):
    __slots__ = ("_source", "_n")

    def __init__(self, source: Flowable[T], n: int) -> None:
        self._source = source
        self._n = n

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(_SkipSubscriber(subscriber, self._n))


class _Skip:
    """The fused skip(n) under stages that ask (``_fused.py``): asked after on_subscribe, it
    skips its n first (the unfused skip requests them then, as RxJava's), so their end or error
    is known; then it has nothing more if the chain below ended while skipping or says so."""

    __slots__ = ("_it", "_n", "_below", "_ended")

    def __init__(self, it: Iterator[Any], n: int, below: Ahead) -> None:
        self._it = it
        self._n = n
        self._below = below
        self._ended = False  # the chain below ended while skipping (take_while stopped it)

    def __iter__(self) -> _Skip:
        return self

    def _skip(self) -> None:
        n = self._n
        self._n = 0
        if sum(1 for _ in islice(self._it, n)) < n:
            self._ended = True  # the probes below may not know (a stage ended on its own)

    def __next__(self) -> Any:
        if self._n:
            self._skip()
        return next(self._it)

    def done(self, early: bool) -> bool:
        if self._n:
            if early:
                return self._below.done(True)  # before on_subscribe: nothing skipped yet
            self._skip()
        return self._ended or self._below.done(early)


def skip(source: Flowable[T], n: int) -> Flowable[T]:
    n = non_negative_int("skip", "count", n)
    if n == 0:
        return source
    fz = source._fused()
    if fz is not None:
        up = fz.sizer
        sizer: Sizer | None = None
        # Skipping every element must still run the user code below (a mapper that raises): the
        # unfused skip requests those elements and signals that error. A size of 0 ends the stream
        # without pulling anything, so it is told only where pulling runs no user code.
        pure = fz.pure
        if up is not None:
            def sizer() -> int | None:  # noqa: E306
                s = up()
                if s is None or (s <= n and s and not pure):
                    return None
                return max(s - n, 0)

        def look(it: Iterator[Any], below: Ahead) -> tuple[Iterator[Any], Ahead]:
            k = _Skip(it, n, below)
            return k, k

        return FusedFlowable(fz.then(lambda it: islice(it, n, None), "skip", sizer, look=look))
    return _SkipFlowable(source, n)
