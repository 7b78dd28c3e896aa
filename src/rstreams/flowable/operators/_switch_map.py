"""switch_map: map each element to a Publisher and mirror only the latest one.

A new outer element cancels the current inner and subscribes the next one. Each inner gets an
increasing generation number; the drain emits only from the inner that is current when it looks
(race: a cancelled inner still delivering vs the switch; stale elements are dropped). The outer
completes the stream only after the last inner completes. Demand lives at the main level and
carries over to the next inner; each inner is prefetched with ``prefetch`` (replenished at 75%).

Batches (library-internal protocol): an inner takes a batch from a batch-capable source in one
``extend``; the drain hands the current inner's queued run, bounded by the demand, to a
batch-capable downstream in one call, after checking once that the inner is still current (a
switch racing with that call lands after it, as it would after a single element); otherwise one
``on_next`` per element, with the currency check before each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, final

from ..._internal import plugins
from ..._internal.arguments import check_callable_arg, positive_int
from ..._internal.atomics import AtomicRef
from ..._internal.drain import enter, leave
from ..._internal.requests import DEFAULT_PREFETCH, MAX_DEMAND, produced, request_or_error
from ..._internal.subscriptions import EMPTY
from ..._spec import Publisher, Subscriber
from .._base import MappedInnersMain
from .._flowable import Flowable
from .._fused import batch_sink
from ..sources._basic import NOTHING, scalar_value
from ._inner import PrefetchInner, pop_run

__all__ = ["switch_map"]

T = TypeVar("T")
R = TypeVar("R")


@final
class _SwitchMapMain(MappedInnersMain):
    _op = "switch_map"
    __slots__ = ("_delay_error", "_active")

    def __init__(self, downstream: Subscriber[Any], mapper: Callable[[Any], Publisher[Any]], prefetch: int, delay_error: bool) -> None:
        super().__init__(downstream, mapper, prefetch)
        self._delay_error = delay_error
        self._active: AtomicRef[PrefetchInner | None] = AtomicRef(None)  # race: switch vs drain

    def _outer_request(self) -> int:
        return MAX_DEMAND  # every element switches: the outer is never backpressured

    def on_next(self, item: Any) -> None:
        if self._done or self._cancelled:
            return
        p = self._inner_publisher(item)
        if p is None:
            return
        inner = PrefetchInner(self, self._prefetch, "switch_map")
        is_scalar, value = scalar_value(p)
        if is_scalar:
            # scalar shortcut: a pre-filled, already completed inner (no subscription)
            if value is not NOTHING:
                inner.queue.append(value)
            inner.done = True
            self._switch_to(inner)
            self._drain()
            return
        self._switch_to(inner)
        p.subscribe(inner)

    def _switch_to(self, inner: PrefetchInner) -> None:
        old = self._active.get_and_set(inner)  # from now on the drain ignores the old inner
        if old is not None:
            old.cancel()

    def on_error(self, error: BaseException) -> None:
        if self._done or self._cancelled or (not self._delay_error and self._errors.has_error()):
            # after a cancel nobody will deliver it: to the hook, never lost
            plugins.on_error(error, "switch_map: on_error after termination")
            return
        if not self._errors.add(error):
            plugins.on_error(error)
            return
        self._done = True
        self._upstream = EMPTY  # the outer terminated: nothing left to cancel there (rule 2.4)
        if not self._delay_error:
            inner = self._active.get()
            if inner is not None:
                inner.cancel()
        self._drain()

    def _inner_error(self, inner: PrefetchInner, error: BaseException) -> None:
        if self._active.get() is not inner or (not self._delay_error and self._errors.has_error()) or not self._errors.add(error):
            plugins.on_error(error, "switch_map: error from a replaced inner")
            return
        inner.done = True
        if not self._delay_error:
            self._done = True
            self._upstream.cancel()
        self._drain()

    def request(self, n: int) -> None:
        err = request_or_error(self._requested, n)
        if err is not None:
            self._upstream.cancel()
            inner = self._active.get()
            if inner is not None:
                inner.cancel()
            self._errors.add(err)
            self._done = True
            self._delay_error = False
            self._drain()
            return
        self._drain()

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        self._upstream.cancel()
        inner = self._active.get_and_set(None)
        if inner is not None:
            inner.cancel()
        self._downstream = None  # rule 3.13

    def _drain(self) -> None:
        if not enter(self._wip):
            return
        missed = 1
        requested = self._requested
        while True:
            d = self._downstream
            if self._cancelled or d is None:
                return
            if self._errors.has_error() and not self._delay_error:
                self._terminate(d)
                return
            inner = self._active.get()
            if inner is None:
                if self._done:
                    self._terminate(d)
                    return
            else:
                q = inner.queue
                r = requested.get()
                e = 0
                if r and len(q) > 1 and (on_batch := batch_sink(d)) is not None:
                    # a batch-capable downstream gets the current inner's run (current as read just
                    # above) in one call; looked up only when a run is queued
                    e = len(q) if r >= MAX_DEMAND else min(len(q), r)  # rule 1.1: within demand
                    on_batch(pop_run(q, e))
                while e != r and q:
                    if self._active.get() is not inner or self._cancelled:
                        break  # switched meanwhile: the stale elements are dropped
                    d.on_next(q.popleft())
                    e += 1
                if e:
                    if r < MAX_DEMAND:
                        produced(requested, e)
                    if not inner.done:
                        inner.consumed(e)
                if inner.done and not q and self._active.compare_and_set(inner, None):
                    continue  # the current inner finished: look again (maybe the outer too)
            missed = leave(self._wip, missed)
            if missed == 0:
                return

    def _terminate(self, d: Subscriber[Any]) -> None:
        self._cancelled = True
        self._downstream = None
        self._upstream.cancel()
        inner = self._active.get_and_set(None)
        if inner is not None:
            inner.cancel()
        self._errors.terminate_into(d)


@final
class _SwitchMapFlowable(Flowable[R]):
    __slots__ = ("_source", "_mapper", "_prefetch", "_delay_error")

    def __init__(self, source: Flowable[T], mapper: Callable[[T], Publisher[R]], prefetch: int, delay_error: bool) -> None:
        self._source = source
        self._mapper = mapper
        self._prefetch = prefetch
        self._delay_error = delay_error

    def _subscribe_actual(self, subscriber: Subscriber[R]) -> None:
        self._source.subscribe(_SwitchMapMain(subscriber, self._mapper, self._prefetch, self._delay_error))


def switch_map(source: Flowable[T], mapper: Callable[[T], Publisher[R]], prefetch: int = DEFAULT_PREFETCH, delay_error: bool = False) -> Flowable[R]:
    check_callable_arg("switch_map", "mapper", mapper)
    positive_int("switch_map", "prefetch", prefetch)
    return _SwitchMapFlowable(source, mapper, prefetch, delay_error)
