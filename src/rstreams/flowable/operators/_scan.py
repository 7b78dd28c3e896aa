"""scan(accumulator[, seed]): the running fold (RxJava ``scan``).

Without a seed the first element passes through and becomes the accumulator; every later element
``x`` emits ``acc = accumulator(acc, x)``. With a seed, the seed is emitted first (it uses one unit
of demand), then one accumulated value per element.

Fused: over a fused source, ``scan`` folds into ``itertools.accumulate(it, fn[, initial=seed])``
(the stage is marked ``produces=True``: an accumulator returning ``None`` makes the fused driver
signal a TypeError naming ``scan``, as the unfused path does).

Unfused with a seed, the race is "request on the downstream thread vs terminal signal on the
upstream thread before the seed went out": requests are collected in ``_requested`` and a wip drain
emits the seed once demand exists; once the seed is out, requests go straight upstream. A completion
that arrives before the seed was requested is held until the seed has been emitted (as RxJava); an
error is delivered at once, without the seed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import accumulate
from typing import Any, TypeVar, final

from ..._internal import plugins
from ..._internal.arguments import check_callable
from ..._internal.atomics import AtomicInt
from ..._internal.drain import enter, leave
from ..._internal.requests import produced, request_or_error
from ..._spec import Subscriber
from ...errors import NoneElementError
from .._base import BasicSubscriber, none_result_error
from .._enums import NOTSET
from .._flowable import Flowable
from .._fused import Ahead, FusedFlowable, Sizer

__all__ = ["scan"]

T = TypeVar("T")
R = TypeVar("R")


@final
class _ScanSubscriber(BasicSubscriber[T, Any]):
    """No seed: the first element is the first accumulator."""

    __slots__ = ("_fn", "_acc")

    def __init__(self, downstream: Subscriber[Any], fn: Callable[[Any, T], Any]) -> None:
        super().__init__(downstream)
        self._fn = fn
        self._acc: Any = NOTSET

    def on_next(self, item: T) -> None:
        if self.done:
            return
        acc = self._acc
        if acc is NOTSET:
            self._acc = item
            self.downstream.on_next(item)
            return
        try:
            v = self._fn(acc, item)
        except Exception as e:
            self.fail(e)
            return
        if v is None:
            self.fail(none_result_error("scan", "the accumulator"))
            return
        self._acc = v
        self.downstream.on_next(v)

    def on_error(self, error: BaseException) -> None:
        self._acc = None
        super().on_error(error)

    def on_complete(self) -> None:
        self._acc = None
        super().on_complete()


_NO_TERMINAL: Any = object()


@final
class _ScanSeedSubscriber(BasicSubscriber[T, Any]):
    """With a seed: the seed waits for the first unit of demand (see the module docstring)."""

    __slots__ = ("_fn", "_acc", "_requested", "_wip", "_seeded", "_terminal", "_bad", "_cancelled", "_delivered")

    def __init__(self, downstream: Subscriber[Any], fn: Callable[[Any, T], Any], seed: Any) -> None:
        super().__init__(downstream)
        self._fn = fn
        self._acc: Any = seed
        self._requested = AtomicInt(0)  # demand collected until the seed is out (race: request vs drain)
        self._wip = AtomicInt(0)  # race: request thread vs upstream terminal thread in the drain
        self._seeded = False  # set by the drain owner after the seed went out; request()'s fast path
        self._terminal: Any = _NO_TERMINAL  # None = completed, else the error (set by the upstream)
        self._bad: BaseException | None = None  # a rule 3.9 request error made before the seed
        self._cancelled = False
        self._delivered = False  # the terminal went downstream (only touched by the drain owner)

    def on_next(self, item: T) -> None:
        if self.done:
            return
        try:
            v = self._fn(self._acc, item)
        except Exception as e:
            self.fail(e)
            return
        if v is None:
            self.fail(none_result_error("scan", "the accumulator"))
            return
        self._acc = v
        self.downstream.on_next(v)

    def on_error(self, error: BaseException) -> None:
        if self.done:
            plugins.on_error(error, "scan(): on_error after termination")
            return
        self.done = True
        self._terminal = error
        self._drain()

    def on_complete(self) -> None:
        if self.done:
            return
        self.done = True
        self._terminal = None
        self._drain()

    def request(self, n: int) -> None:
        if self._seeded:
            self.upstream.request(n)  # after the seed: plain pass-through (the upstream validates)
            return
        err = request_or_error(self._requested, n)
        if err is not None:
            # rule 3.9: the upstream may not have been asked for anything yet; fail from the drain
            self._bad = err
        self._drain()

    def cancel(self) -> None:
        self._cancelled = True
        self.upstream.cancel()

    def _drain(self) -> None:
        if not enter(self._wip):
            return
        missed = 1
        while True:
            if self._delivered:
                return
            if not self._seeded:
                bad = self._bad
                if bad is not None:
                    self._cancelled = True
                    self.upstream.cancel()
                    self._deliver(bad)
                    return
                if self._cancelled:
                    t = self._terminal
                    if t is not _NO_TERMINAL and t is not None:
                        self._delivered = True
                        plugins.on_error(t, "scan(): on_error after cancellation")  # never dropped
                    return
                t = self._terminal
                if t is not _NO_TERMINAL and t is not None:
                    self._deliver(t)  # an error overtakes the seed (as RxJava)
                    return
                if self._requested.get() > 0:
                    produced(self._requested, 1)  # the seed uses one unit of demand
                    self.downstream.on_next(self._acc)
                    # published only now: a request that sees it may make the upstream emit at once
                    self._seeded = True
            if self._seeded:
                t = self._terminal
                if t is not _NO_TERMINAL:
                    self._deliver(t)
                    return
                r = self._requested.get_and_set(0)  # demand that arrived before/while seeding
                if r > 0:
                    self.upstream.request(r)
            missed = leave(self._wip, missed)
            if missed == 0:
                return

    def _deliver(self, t: BaseException | None) -> None:
        self._delivered = True
        self._acc = None
        if t is None:
            if not self._cancelled:
                self.downstream.on_complete()
        else:
            self.downstream.on_error(t)


@final
class _ScanFlowable(Flowable[Any]):
    __slots__ = ("_source", "_fn", "_seed")

    def __init__(self, source: Flowable[T], fn: Callable[[Any, T], Any], seed: Any) -> None:
        self._source = source
        self._fn = fn
        self._seed = seed

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        if self._seed is NOTSET:
            self._source.subscribe(_ScanSubscriber(subscriber, self._fn))
        else:
            self._source.subscribe(_ScanSeedSubscriber(subscriber, self._fn, self._seed))


class _Seed:
    """The fused scan with a seed under stages that ask (``_fused.py``): the seed is made without
    the chain below, so the stage has nothing more only once the seed went out and the stage below
    says so (asked in any case: the source's own look-ahead at subscription goes through)."""

    __slots__ = ("_it", "_sent", "_below")

    def __init__(self, it: Iterator[Any], below: Ahead) -> None:
        self._it = it
        self._sent = False
        self._below = below

    def __iter__(self) -> _Seed:
        return self

    def __next__(self) -> Any:
        x = next(self._it)
        self._sent = True
        return x

    def done(self, early: bool) -> bool:
        below = self._below.done(early)
        return self._sent and below


def scan(source: Flowable[T], accumulator: Callable[[R, T], R], seed: R | Any = NOTSET) -> Flowable[R]:
    check_callable("scan", accumulator)
    if seed is None:
        raise NoneElementError("scan(): the seed is None; None is not a valid element (rule 2.13)")
    fz = source._fused()
    if fz is not None:
        up = fz.sizer
        if seed is NOTSET:
            return FusedFlowable(fz.then(lambda it: accumulate(it, accumulator), "scan", up, produces=True))
        sizer: Sizer | None = None
        if up is not None:

            def sizer() -> int | None:
                s = up()
                return None if s is None else s + 1

        def look(it: Iterator[Any], below: Ahead) -> tuple[Iterator[Any], Ahead]:
            k = _Seed(accumulate(it, accumulator, initial=seed), below)
            return k, k

        return FusedFlowable(
            fz.then(lambda it: accumulate(it, accumulator, initial=seed), "scan", sizer, produces=True, look=look)
        )
    return _ScanFlowable(source, accumulator, seed)
