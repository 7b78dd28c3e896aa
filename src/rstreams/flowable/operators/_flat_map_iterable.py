"""flat_map_iterable(mapper): map each element to an iterable and emit its elements in order
(RxJava ``flatMapIterable``).

Fused: over a fused source it folds into ``chain.from_iterable(map(checked_mapper, it))``; the only
Python call added per *upstream* element is the check that the mapper returned an iterable (a
``None`` or a non-iterable signals a TypeError naming ``flat_map_iterable``). ``None`` elements inside
the inner iterables are caught by the fused driver (the stage is marked ``produces=True``).

Unfused: upstream elements are prefetched (``DEFAULT_PREFETCH``, replenished in batches of
``limit = prefetch - prefetch // 4``) into a single-producer/single-consumer queue, and a wip
queue-drain walks the current inner iterator under downstream demand. Races the drain solves:
request (downstream thread) vs on_next/on_complete (upstream thread) vs cancel; whoever moves
``_wip`` from 0 drains, the others only leave work behind (``missed``). Demand is read once per
batch and published with one ``produced`` call. The drain looks one element ahead when demand runs
out, so that completion is signalled eagerly (as the fused driver does). In front of a batch
consumer (``batch_sink``: an aggregate, ``observe_on``, an iterator bridge) the drain hands over up
to the demand (at most ``_BATCH``) of an inner iterable's elements as one library-internal batch.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from itertools import chain, islice
from typing import Any, Final, TypeVar, final

from ..._internal import plugins
from ..._internal.arguments import check_callable
from ..._internal.atomics import AtomicInt
from ..._internal.drain import enter, leave
from ..._internal.requests import DEFAULT_PREFETCH, MAX_DEMAND, produced, request_or_error
from ..._internal.subscriptions import CANCELLED
from ..._spec import Subscriber, Subscription
from .._base import accept_upstream, none_result_error
from .._flowable import Flowable
from .._fused import FusedFlowable, batch_sink, none_index

__all__ = ["flat_map_iterable"]

T = TypeVar("T")
R = TypeVar("R")

_END: Final = object()
_BATCH: Final = 1024  # elements per batch handed to a batch consumer


def _iter_of(mapper: Callable[[Any], Iterable[Any]], item: Any) -> Iterator[Any]:
    """``iter(mapper(item))`` with the errors naming the operator (shared by both paths)."""
    r = mapper(item)
    if r is None:
        raise none_result_error("flat_map_iterable")
    try:
        return iter(r)
    except TypeError:
        raise TypeError(
            f"flat_map_iterable(): the mapper returned an object of type {type(r).__name__!r}, which is not iterable"
        ) from None


@final
class _FlattenSubscriber:
    """Queue-drain over a prefetched upstream and the current inner iterator."""

    _rs_no_wrap = True
    __slots__ = (
        "_downstream",
        "_mapper",
        "_upstream",
        "_queue",
        "_wip",
        "_requested",
        "_cancelled",
        "_done",
        "_error",
        "_bad",
        "_current",
        "_consumed",
        "_limit",
        "_batch",
        "__weakref__",
    )

    def __init__(self, downstream: Subscriber[Any], mapper: Callable[[Any], Iterable[Any]]) -> None:
        self._downstream: Subscriber[Any] | None = downstream
        self._mapper = mapper
        self._upstream: Subscription = CANCELLED
        self._queue: deque[Any] = deque()  # SPSC: upstream thread appends, drain owner pops
        self._wip = AtomicInt(0)  # race: request vs on_next vs cancel in the drain
        self._requested = AtomicInt(0)  # race: concurrent request vs produced in the drain
        self._cancelled = False
        self._done = False
        self._error: BaseException | None = None
        self._bad: BaseException | None = None  # a rule 3.9 request error, delivered by the drain
        self._current: Iterator[Any] | None = None  # only touched by the drain owner
        self._consumed = 0  # only touched by the drain owner
        self._limit = DEFAULT_PREFETCH - DEFAULT_PREFETCH // 4
        self._batch: Callable[[list[Any]], None] | None = batch_sink(downstream)

    # Subscriber side (upstream thread) --------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        accept_upstream(self, subscription, DEFAULT_PREFETCH, "flat_map_iterable")

    def on_next(self, item: Any) -> None:
        if self._done:
            return
        self._queue.append(item)
        self._drain()

    def on_error(self, error: BaseException) -> None:
        if self._done or self._cancelled:  # undeliverable: never dropped silently
            plugins.on_error(error, "flat_map_iterable(): on_error after termination or cancellation")
            return
        self._error = error
        self._done = True
        self._drain()

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        self._drain()

    # Subscription side (downstream thread) ----------------------------------------------------

    def request(self, n: int) -> None:
        err = request_or_error(self._requested, n)
        if err is not None:
            # rule 3.9: route through the drain so the error is serialized with emissions
            self._bad = err
        self._drain()

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        self._upstream.cancel()
        self._drain()  # the owner (or we) clears the state: rule 3.13

    # Drain -------------------------------------------------------------------------------------

    def _clear(self) -> None:
        self._queue.clear()
        self._current = None
        self._downstream = None

    def _fail(self, d: Subscriber[Any], error: BaseException) -> None:
        self._cancelled = True
        self._upstream.cancel()
        self._clear()
        d.on_error(error)

    def _drain(self) -> None:
        wip = self._wip
        if not enter(wip):  # queue-drain: someone else drains and will see our work
            return
        missed = 1
        d = self._downstream
        q = self._queue
        requested = self._requested
        while True:
            # Terminal states leave wip above 0 on purpose: no later drain may start (as RxJava).
            if self._cancelled or d is None:
                self._clear()
                return
            bad = self._bad
            if bad is not None:
                self._fail(d, bad)  # rule 3.9
                return
            if self._done:
                err = self._error
                if err is not None:  # errors are not delayed: buffered elements are dropped
                    self._cancelled = True
                    self._clear()
                    d.on_error(err)
                    return
            it = self._current
            if it is None:
                done = self._done
                if q:
                    item = q.popleft()
                    c = self._consumed + 1
                    if c == self._limit:
                        c = 0
                        self._upstream.request(self._limit)  # replenish in batches
                    self._consumed = c
                    try:
                        it = _iter_of(self._mapper, item)
                    except Exception as ex:
                        self._fail(d, ex)
                        return
                    self._current = it
                elif done:
                    self._cancelled = True
                    self._clear()
                    d.on_complete()
                    return
            if it is not None:
                r = requested.get()
                e = 0
                nb = self._batch
                try:
                    if nb is not None:
                        # a batch consumer: hand over what is demanded, _BATCH at a time (rule 1.1:
                        # never more than r - e); an inner shorter than that is finished
                        while e != r:
                            want = r - e if r - e < _BATCH else _BATCH
                            chunk: list[Any] = []
                            failure: Exception | None = None
                            try:
                                chunk.extend(islice(it, want))  # keeps what it took if the inner raises
                            except Exception as ex:
                                failure = ex
                            i = none_index(chunk)
                            if i >= 0:
                                chunk = chunk[:i]
                                failure = none_result_error("flat_map_iterable", "an inner iterable")
                            if chunk:
                                # what the inner gave before it failed goes first, as one by one
                                if r < MAX_DEMAND:
                                    e += len(chunk)
                                nb(chunk)
                            if failure is not None:
                                if self._cancelled:  # the batch made the consumer cancel: never pulled
                                    it = None
                                    break
                                raise failure
                            if len(chunk) < want:
                                it = None
                                break
                            if self._cancelled:
                                break
                        if it is not None and e == r and not self._cancelled:
                            v = next(it, _END)  # demand exhausted: look ahead, as below
                            it = None if v is _END else chain((v,), it)
                    elif r >= MAX_DEMAND:
                        # unbounded fast path: no accounting, only the cancelled check (rule 3.12)
                        on_next = d.on_next
                        for v in it:
                            if v is None:
                                raise none_result_error("flat_map_iterable", "an inner iterable")
                            on_next(v)
                            if self._cancelled:
                                break
                        else:
                            it = None
                    else:
                        while e != r:
                            v = next(it, _END)
                            if v is _END:
                                it = None
                                break
                            if v is None:
                                raise none_result_error("flat_map_iterable", "an inner iterable")
                            d.on_next(v)
                            e += 1
                            if self._cancelled:
                                break
                        if it is not None and e == r and not self._cancelled:
                            # demand exhausted: look ahead so an exhausted inner is noticed eagerly
                            v = next(it, _END)
                            it = None if v is _END else chain((v,), it)
                except Exception as ex:
                    self._fail(d, ex)
                    return
                self._current = it
                if e != 0:
                    produced(requested, e)
                if it is None or self._cancelled:
                    continue  # take the next upstream element, or terminate
            missed = leave(wip, missed)
            if missed == 0:
                return


@final
class _FlatMapIterableFlowable(Flowable[Any]):
    __slots__ = ("_source", "_mapper")

    def __init__(self, source: Flowable[Any], mapper: Callable[[Any], Iterable[Any]]) -> None:
        self._source = source
        self._mapper = mapper

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        self._source.subscribe(_FlattenSubscriber(subscriber, self._mapper))


def flat_map_iterable(source: Flowable[T], mapper: Callable[[T], Iterable[R]]) -> Flowable[R]:
    check_callable("flat_map_iterable", mapper)
    fz = source._fused()
    if fz is not None:
        checked = partial(_iter_of, mapper)
        return FusedFlowable(
            # ahead=True: looking ahead maps the next upstream element and pulls its iterable, which
            # the unfused operator (as RxJava's) does too: it prefetches and checks hasNext eagerly
            fz.then(
                lambda it: chain.from_iterable(map(checked, it)),
                "flat_map_iterable",
                None,
                produces=True,
                ahead=True,
            )
        )
    return _FlatMapIterableFlowable(source, mapper)
