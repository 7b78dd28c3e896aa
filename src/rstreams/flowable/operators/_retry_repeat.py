"""retry(times, predicate) and repeat(times): resubscribe to the source on error / on completion.

Both run on a :class:`SubscriptionArbiter` (via ``ArbiterSubscriber``) so that demand the finished
subscription did not fulfil carries over to the next one (``account()`` before resubscribing).

Resubscription is **trampolined** with a wip counter. Recursion: a synchronous source terminates
from inside ``subscribe``; its ``on_complete``/``on_error`` would resubscribe from inside that call,
growing the stack by a few frames per round. Instead the terminal signal only increments the
counter when a resubscription loop is already running (further up the stack or on another thread),
and that loop subscribes again when the current ``subscribe`` returns: ``just(1).repeat(10**6)``
runs at constant stack depth. The same counter also serializes resubscription when the source
terminates on another thread while the previous ``subscribe`` call is still returning (race:
terminal signal vs the resubscribing loop).

``repeat(times)`` over a synchronous fused source with a finite count folds at assembly time into
``itertools.chain.from_iterable`` of fresh iterators (same signals, no per-round subscription).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import chain
from itertools import repeat as _times
from typing import Any, Final, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicInt
from ..._internal.subscribers import ArbiterSubscriber
from ..._spec import Subscriber
from .._flowable import Flowable
from .._fused import FusedFlowable, Fusion, Sizer
from ._concat import ChainedLook

__all__ = ["retry", "repeat"]

T = TypeVar("T")

_FOREVER: Final = -1


def _check_times(op: str, times: object) -> int:
    if times is None:
        return _FOREVER
    if not isinstance(times, int) or isinstance(times, bool):
        raise TypeError(f"{op}(): times must be an int or None, got {type(times).__name__}")
    if times < 0:
        raise ValueError(f"{op}(): times must be >= 0, got {times}")
    return times


class _ResubscribeSubscriber(ArbiterSubscriber):
    __slots__ = ("_source", "_remaining", "_trampoline")

    def __init__(self, downstream: Subscriber[Any], source: Flowable[Any], remaining: int) -> None:
        super().__init__(downstream)
        self._source = source
        self._remaining = remaining  # resubscriptions left; _FOREVER = no limit
        self._trampoline = AtomicInt(0)  # recursion + race: terminal signal vs resubscribing loop

    def subscribe_next(self) -> None:
        t = self._trampoline
        if t.get_and_increment() != 0:
            return  # the running loop resubscribes when the current subscribe() returns
        source = self._source
        while True:
            if self.is_cancelled:
                return
            self.account()
            source.subscribe(self)
            if t.decrement_and_get() == 0:
                return

    def _use_one(self) -> bool:
        """Consume one resubscription; False when none are left."""
        r = self._remaining
        if r == _FOREVER:
            return True
        if r == 0:
            return False
        self._remaining = r - 1
        return True


@final
class _RetrySubscriber(_ResubscribeSubscriber):
    __slots__ = ("_predicate",)

    def __init__(
        self,
        downstream: Subscriber[Any],
        source: Flowable[Any],
        remaining: int,
        predicate: Callable[[BaseException], object] | None,
    ) -> None:
        super().__init__(downstream, source, remaining)
        self._predicate = predicate

    def on_error(self, error: BaseException) -> None:
        if self._terminated:  # a faulty upstream's error after its completion: never resubscribe
            plugins.on_error(error, "retry: on_error after termination")
            return
        if self.is_cancelled or not self._use_one():
            self.error_downstream(error)
            return
        p = self._predicate
        if p is not None:
            try:
                ok = p(error)
            except Exception as ex:
                from ._on_error import _both

                self.error_downstream(_both("retry", error, ex))
                return
            if not ok:
                self.error_downstream(error)
                return
        self.subscribe_next()


@final
class _RepeatSubscriber(_ResubscribeSubscriber):
    __slots__ = ()

    def on_complete(self) -> None:
        if self._terminated:
            return  # a faulty upstream completing twice: the stream has ended
        if self.is_cancelled or not self._use_one():
            self.complete_downstream()
            return
        self.subscribe_next()


@final
class _RetryFlowable(Flowable[T]):
    __slots__ = ("_source", "_times", "_predicate")

    def __init__(self, source: Flowable[T], times: int, predicate: Callable[[BaseException], object] | None) -> None:
        self._source = source
        self._times = times
        self._predicate = predicate

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        s = _RetrySubscriber(subscriber, self._source, self._times, self._predicate)
        subscriber.on_subscribe(s)
        s.subscribe_next()


@final
class _RepeatFlowable(Flowable[T]):
    __slots__ = ("_source", "_times")

    def __init__(self, source: Flowable[T], times: int) -> None:
        self._source = source
        self._times = times

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        # times == _FOREVER stays _FOREVER; otherwise the first subscription is one of the times
        s = _RepeatSubscriber(subscriber, self._source, self._times if self._times == _FOREVER else self._times - 1)
        subscriber.on_subscribe(s)
        s.subscribe_next()


def retry(
    source: Flowable[T], times: int | None = None, predicate: Callable[[BaseException], object] | None = None
) -> Flowable[T]:
    n = _check_times("retry", times)
    if predicate is not None and not callable(predicate):
        raise TypeError(f"retry(): predicate must be callable, got {type(predicate).__name__}")
    if n == 0:
        return source
    return _RetryFlowable(source, n, predicate)


def _repeat_fusion(fz: Fusion[Any], times: int) -> Fusion[Any]:
    factory = fz.factory
    up = fz.sizer

    def make() -> Iterator[Any]:
        return chain.from_iterable(factory() for _ in range(times))

    sizer: Sizer | None = None
    if up is not None:
        def sizer() -> int | None:  # noqa: E306
            s = up()
            return None if s is None else s * times
    return Fusion(
        make,
        sizer,
        fz.producers,
        fz.names + ("repeat",),
        fz.eager,
        fz.none_free,
        fz.user,
        pure=fz.pure,
        look=lambda: ChainedLook.open(_times(fz, times)),
    )


def repeat(source: Flowable[T], times: int | None = None) -> Flowable[T]:
    n = _check_times("repeat", times)
    if n == 0:
        from ..sources._basic import empty

        return empty()
    if n == 1:
        return source
    fz = source._fused()
    if fz is not None and n != _FOREVER:
        return FusedFlowable(_repeat_fusion(fz, n))
    return _RepeatFlowable(source, n)
