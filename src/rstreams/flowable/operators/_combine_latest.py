"""combine_latest and with_latest_from.

combine_latest: every source is prefetched (``prefetch``, replenished at 75%); each arrival
updates a "latest" array and, once every source has produced a value, queues a combined row. One
wip drain emits rows up to demand (race: sources signalling from different threads; rule 1.3).
It completes when every source has completed, or as soon as a source completes without ever
producing a value (no row can ever be made).

with_latest_from: the main source drives; the others are consumed unbounded and only their
latest value is kept. A main element that arrives before every other has a value is dropped (and
one more is requested). An error from another source ends the stream, serialized with the main
source's signals by a half-serializer (race: other thread's error vs main on_next).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Final, final

from ..._internal import plugins
from ..._internal.arguments import positive_int
from ..._internal.atomics import AtomicInt, AtomicRef
from ..._internal.drain import ErrorCollector, enter, leave
from ..._internal.requests import DEFAULT_PREFETCH, MAX_DEMAND, produced, request_or_error
from ..._internal.subscriptions import cancel, set_once
from ..._spec import Publisher, Subscriber, Subscription
from .._base import MainWithOthersSubscriber, none_result_error, variadic_sources
from .._flowable import Flowable

__all__ = ["combine_latest", "with_latest_from"]

_NONE: Final = object()


@final
class _CombineInner:
    _rs_no_wrap = True
    __slots__ = ("_parent", "_index", "_upstream", "_prefetch", "_limit", "_consumed", "__weakref__")

    def __init__(self, parent: _CombineMain, index: int, prefetch: int) -> None:
        self._parent: _CombineMain | None = parent
        self._index = index
        # race: cancel (downstream cancel, another source's terminal) before on_subscribe arrives
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)
        self._prefetch = prefetch
        self._limit = prefetch - (prefetch >> 2)
        self._consumed = 0

    def on_subscribe(self, subscription: Subscription) -> None:
        if set_once(self._upstream, subscription, "combine_latest"):  # rule 2.5; cancelled if cancelled
            subscription.request(self._prefetch)

    def on_next(self, item: Any) -> None:
        p = self._parent
        if p is not None:
            p._inner_next(self._index, item)

    def on_error(self, error: BaseException) -> None:
        p = self._parent
        if p is not None:
            p._inner_error(error)
        else:
            plugins.on_error(error)

    def on_complete(self) -> None:
        p = self._parent
        if p is not None:
            p._inner_complete(self._index)

    def consumed(self) -> None:
        c = self._consumed + 1
        if c >= self._limit:
            self._consumed = 0
            up = self._upstream.get()
            if up is not None:
                up.request(c)
        else:
            self._consumed = c

    def cancel(self) -> None:
        self._parent = None
        cancel(self._upstream)


@final
class _CombineMain:
    __slots__ = (
        "_downstream", "_combiner", "_inners", "_latest", "_missing", "_active", "_lock", "_queue",
        "_requested", "_wip", "_errors", "_done", "_cancelled",
    )

    def __init__(self, downstream: Subscriber[Any], combiner: Callable[..., Any], n: int, prefetch: int) -> None:
        self._downstream: Subscriber[Any] | None = downstream
        self._combiner = combiner
        self._inners = [_CombineInner(self, i, prefetch) for i in range(n)]
        self._latest: list[Any] = [_NONE] * n
        self._missing = n  # sources without a value yet
        self._active = n  # sources not completed yet
        self._lock = threading.Lock()  # guards _latest/_missing/_active and row order in _queue
        self._queue: deque[tuple[_CombineInner, tuple[Any, ...] | None]] = deque()
        self._requested = AtomicInt(0)
        self._wip = AtomicInt(0)
        self._errors = ErrorCollector()
        self._done = False
        self._cancelled = False

    def subscribe_all(self, sources: Sequence[Publisher[Any]]) -> None:
        for inner, src in zip(self._inners, sources, strict=True):
            if self._done or self._cancelled:
                break
            src.subscribe(inner)

    def _inner_next(self, index: int, item: Any) -> None:
        with self._lock:
            if self._done:
                return
            latest = self._latest
            if latest[index] is _NONE:
                self._missing -= 1
            latest[index] = item
            # no row yet: the entry only tells the drain to replenish that source (all replenishing
            # happens in the drain, so the per-source counters have a single writer)
            row = tuple(latest) if self._missing == 0 else None
            self._queue.append((self._inners[index], row))
        self._drain()

    def _inner_error(self, error: BaseException) -> None:
        if self._errors.has_error() or not self._errors.add(error):  # the first error wins
            plugins.on_error(error)
            return
        self._done = True
        self._drain()

    def _inner_complete(self, index: int) -> None:
        with self._lock:
            self._active -= 1
            if self._latest[index] is _NONE or self._active == 0:
                self._done = True  # no further row can be made
        self._drain()

    def request(self, n: int) -> None:
        err = request_or_error(self._requested, n)
        if err is not None:
            self._errors.add(err)
            self._done = True
        self._drain()

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        for inner in self._inners:
            inner.cancel()
        if enter(self._wip):
            self._queue.clear()
        self._downstream = None

    def _drain(self) -> None:
        if not enter(self._wip):
            return
        missed = 1
        q = self._queue
        while True:
            d = self._downstream
            if self._cancelled or d is None:
                q.clear()
                return
            if self._errors.has_error():
                self._terminate(d)
                return
            while q and q[0][1] is None:  # elements that made no row: just replenish
                q.popleft()[0].consumed()
            r = self._requested.get()
            e = 0
            while e != r and q:
                inner, row = q.popleft()
                if row is None:
                    inner.consumed()
                    continue
                try:
                    v = self._combiner(*row)
                except Exception as ex:
                    self._errors.add(ex)
                    self._terminate(d)
                    return
                if v is None:
                    self._errors.add(none_result_error("combine_latest", "the combiner"))
                    self._terminate(d)
                    return
                d.on_next(v)
                inner.consumed()
                e += 1
                if self._cancelled:
                    q.clear()
                    return
            if e and r < MAX_DEMAND:
                produced(self._requested, e)
            if self._done and not q:
                self._terminate(d)
                return
            missed = leave(self._wip, missed)
            if missed == 0:
                return

    def _terminate(self, d: Subscriber[Any]) -> None:
        self._cancelled = True
        self._downstream = None
        for inner in self._inners:
            inner.cancel()
        self._queue.clear()
        self._errors.terminate_into(d)


@final
class _CombineLatestFlowable(Flowable[Any]):
    __slots__ = ("_sources", "_combiner", "_prefetch")

    def __init__(self, sources: tuple[Publisher[Any], ...], combiner: Callable[..., Any], prefetch: int) -> None:
        self._sources = sources
        self._combiner = combiner
        self._prefetch = prefetch

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        from ..._internal.subscriptions import complete_empty

        if not self._sources:
            complete_empty(subscriber)
            return
        main = _CombineMain(subscriber, self._combiner, len(self._sources), self._prefetch)
        subscriber.on_subscribe(main)
        main.subscribe_all(self._sources)


def _split_sources(name: str, args: tuple[Any, ...]) -> tuple[tuple[Publisher[Any], ...], Callable[..., Any]]:
    items = list(args)
    fn: Callable[..., Any] = lambda *xs: tuple(xs)  # noqa: E731
    if items and callable(items[-1]) and not hasattr(items[-1], "subscribe"):
        fn = items.pop()
    items = list(variadic_sources(tuple(items)))  # combine_latest([a, b], fn): combineLatest(Iterable, combiner)
    for s in items:
        if not hasattr(s, "subscribe"):
            raise TypeError(f"{name}(): expected Publishers (and an optional trailing combiner), got {type(s).__name__}")
    return tuple(items), fn


def combine_latest(*args: Any, prefetch: int = DEFAULT_PREFETCH) -> Flowable[Any]:
    sources, fn = _split_sources("combine_latest", args)
    positive_int("combine_latest", "prefetch", prefetch)
    return _CombineLatestFlowable(sources, fn, prefetch)


# ---------------------------------------------------------------------------------------------
@final
class _OtherSubscriber:
    _rs_no_wrap = True
    __slots__ = ("_parent", "_index", "_upstream", "__weakref__")

    def __init__(self, parent: _WithLatestSubscriber, index: int) -> None:
        self._parent: _WithLatestSubscriber | None = parent
        self._index = index
        # race: the main side cancels (downstream cancel, main terminal) before on_subscribe arrives
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)

    def on_subscribe(self, subscription: Subscription) -> None:
        if set_once(self._upstream, subscription, "with_latest_from"):  # rule 2.5; cancelled if cancelled
            subscription.request(MAX_DEMAND)

    def on_next(self, item: Any) -> None:
        p = self._parent
        if p is not None:
            p._latest[self._index] = item  # a single reference store: readers see old or new

    def on_error(self, error: BaseException) -> None:
        p = self._parent
        if p is not None:
            p._other_error(error)
        else:
            plugins.on_error(error)

    def on_complete(self) -> None:
        pass  # the last value stays usable

    def cancel(self) -> None:
        self._parent = None
        cancel(self._upstream)


@final
class _WithLatestSubscriber(MainWithOthersSubscriber):
    __slots__ = ("_combiner", "_latest", "_others")

    def __init__(self, downstream: Subscriber[Any], combiner: Callable[..., Any], n: int) -> None:
        super().__init__(downstream)
        self._combiner = combiner
        self._latest: list[Any] = [_NONE] * n
        self._others = [_OtherSubscriber(self, i) for i in range(n)]

    def on_next(self, item: Any) -> None:
        if self.done:
            return
        latest = list(self._latest)
        if _NONE in latest:
            self.upstream.request(1)  # not every other source has a value yet: drop it
            return
        try:
            v = self._combiner(item, *latest)
        except Exception as e:
            self.fail(e)
            return
        if v is None:
            self.fail(none_result_error("with_latest_from", "the combiner"))
            return
        self._serializer.on_next(v)

    def _cancel_others(self) -> None:
        for o in self._others:
            o.cancel()


@final
class _WithLatestFromFlowable(Flowable[Any]):
    __slots__ = ("_source", "_others", "_combiner")

    def __init__(self, source: Flowable[Any], others: tuple[Publisher[Any], ...], combiner: Callable[..., Any]) -> None:
        self._source = source
        self._others = others
        self._combiner = combiner

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        main = _WithLatestSubscriber(subscriber, self._combiner, len(self._others))
        subscriber.on_subscribe(main)
        for o, src in zip(main._others, self._others, strict=True):
            src.subscribe(o)
        self._source.subscribe(main)


def with_latest_from(source: Flowable[Any], *args: Any) -> Flowable[Any]:
    others, fn = _split_sources("with_latest_from", args)
    if not others:
        raise TypeError("with_latest_from(): give at least one other Publisher")
    return _WithLatestFromFlowable(source, others, fn)
