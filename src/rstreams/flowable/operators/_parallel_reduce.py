"""The joins that end a ``ParallelFlowable`` in one result: ``reduce``, ``sorted``,
``to_sorted_list`` (RxJava ``ParallelReduceFull``, ``ParallelSortedJoin`` and ``toSortedList``).

Each rail is first folded on its own thread by an ordinary aggregate (``reduce`` or
``to_sorted_list`` per rail, built by the caller); :class:`_RailsJoin` then subscribes the ``n``
folded rails, keeps each rail's at most one value in that rail's own slot, and when the last rail
completes, combines the slots (``finish``) into the one value it emits through a
:class:`~rstreams.flowable._scalar.DeferredScalarSubscription` (held until requested).

Races, all on state shared across rails (the rails complete on their own workers):

- "which rail completes last": ``_remaining`` is an :class:`AtomicInt`; only the caller that takes
  it to 0 reads the slots and runs ``finish``. Each rail writes its slot before its decrement,
  and the decrement is lock-backed, so the last one sees every slot (no GIL needed).
- "error vs error": ``_error`` (:class:`AtomicRef`, compare-and-set from ``None``) keeps the first
  error; it cancels the other rails and is signalled once; the same error object arriving from
  every rail (an upstream error reaches each rail) is dropped, a different later one goes to the
  undeliverable-error hook (rule 1.7). ``_terminated`` (:class:`AtomicFlag`) lets exactly one
  terminal signal through.
- "downstream cancel vs rails subscribing": every rail's Subscription field is an
  :class:`AtomicRef` made before any rail is subscribed, so a cancel that comes first is
  remembered and the rail's Subscription is cancelled the moment it arrives.

``sorted`` is the join of the per-rail sorted lists followed by ``flat_map_iterable`` over
``heapq.merge`` (a lazy k-way merge): elements leave as the downstream requests them, the merge
advancing on the requesting thread.
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Callable
from typing import Any, Final, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicFlag, AtomicInt, AtomicRef
from ..._internal.requests import MAX_DEMAND
from ..._internal.subscriptions import cancel as cancel_ref
from ..._internal.subscriptions import error_empty, set_once
from ..._spec import Subscriber, Subscription
from .._base import none_result_error
from .._enums import NOTSET
from .._flowable import Flowable
from .._scalar import DeferredScalarSubscription

__all__ = ["join_rails", "reduce_rails_full", "sorted_rails", "to_sorted_list_rails"]

T = TypeVar("T")
R = TypeVar("R")

#: builds the (already folded) rails for one subscription
RailsBuilder = Callable[[], list[Flowable[Any]]]
#: combines the values of the rails that emitted one (in rail order) into the result, or NOTSET
Finish = Callable[[list[Any]], Any]

_EMPTY: Final[Any] = NOTSET


@final
class _JoinRail:
    """Subscriber of one folded rail: at most one value, kept in its own slot."""

    __slots__ = ("_parent", "upstream", "value")

    def __init__(self, parent: _JoinParent) -> None:
        self._parent = parent
        self.upstream: AtomicRef[Subscription | None] = AtomicRef(None)
        self.value: Any = _EMPTY

    def on_subscribe(self, subscription: Subscription) -> None:
        if set_once(self.upstream, subscription, "parallel join"):
            subscription.request(MAX_DEMAND)  # a folded rail emits at most one value

    def on_next(self, item: Any) -> None:
        self.value = item  # this rail's slot: written only here, read by the last completer

    def on_error(self, error: BaseException) -> None:
        self._parent.rail_failed(error)

    def on_complete(self) -> None:
        self._parent.rail_completed()


@final
class _JoinParent:
    __slots__ = ("_name", "_finish", "_rails", "_remaining", "_terminated", "_error", "scalar")

    def __init__(self, name: str, downstream: Subscriber[Any], n: int, finish: Finish) -> None:
        self._name = name
        self._finish = finish
        self._rails = [_JoinRail(self) for _ in range(n)]
        self._remaining = AtomicInt(n)
        # one terminal signal: the last completion or the first error (they cannot both happen:
        # a failed rail never completes, so the count of completions never reaches 0)
        self._terminated = AtomicFlag()
        # race: rails failing at once (an upstream error reaches every rail, on their own workers):
        # the first one set wins; set before anything else is decided, so a rail failing a moment
        # later with the same error object always sees it and stays silent
        self._error: AtomicRef[BaseException | None] = AtomicRef(None)
        self.scalar: DeferredScalarSubscription[Any] = DeferredScalarSubscription(downstream, self.cancel_rails)

    @property
    def rails(self) -> list[_JoinRail]:
        return self._rails

    def cancel_rails(self) -> None:
        # race: cancel vs a rail's on_subscribe (cancel_ref remembers it for a late Subscription)
        for r in self._rails:
            cancel_ref(r.upstream)

    def rail_failed(self, error: BaseException) -> None:
        if self._error.compare_and_set(None, error):
            if self._terminated.try_set():
                self.cancel_rails()  # errors from one rail cancel the others
                self.scalar.error(error)  # after a downstream cancel: to the undeliverable hook
            return
        if self._error.get() is not error:
            plugins.on_error(error, f"{self._name}: a second rail error (the first one was signalled)")

    def rail_completed(self) -> None:
        # race: rails completing on their own workers; the lock-backed decrement orders every
        # rail's slot write before the last completer's reads
        if self._remaining.decrement_and_get() != 0:
            return
        if not self._terminated.try_set():
            return  # a rail failed first (it cancelled us)
        values = [r.value for r in self._rails if r.value is not _EMPTY]
        for r in self._rails:
            r.value = _EMPTY  # rule 3.13: drop references
        try:
            result = self._finish(values)
        except BaseException as e:  # noqa: BLE001 - a raising user function ends the stream
            self.scalar.error(e)
            return
        if result is NOTSET:
            self.scalar.complete_empty()
        elif result is None:
            self.scalar.error(none_result_error(self._name, "the reducer"))
        else:
            self.scalar.complete(result)


@final
class _RailsJoin(Flowable[Any]):
    __slots__ = ("_name", "_build", "_finish")

    def __init__(self, name: str, build: RailsBuilder, finish: Finish) -> None:
        self._name = name
        self._build = build
        self._finish = finish

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        try:
            rails = self._build()  # runs the per-rail stage builders (compose functions, ...)
        except Exception as e:  # noqa: BLE001 - a raising user function fails this subscription
            error_empty(subscriber, e)
            return
        parent = _JoinParent(self._name, subscriber, len(rails), self._finish)
        subscriber.on_subscribe(parent.scalar)
        # every rail is subscribed even after an early cancel: its Subscription is then cancelled
        # on arrival, and the source (subscribed with the last rail) sees every rail cancelled
        for rail, sub in zip(rails, parent.rails, strict=True):
            rail.subscribe(sub)


def join_rails(name: str, build: RailsBuilder, finish: Finish) -> Flowable[Any]:
    """A Flowable of the one value ``finish`` makes of the folded rails' values (rail order)."""
    return _RailsJoin(name, build, finish)


def reduce_rails_full(build: RailsBuilder, reducer: Callable[[T, T], T]) -> Flowable[T]:
    """Each rail reduced (``build`` folds them), then the rails' values with the same reducer."""

    def finish(values: list[Any]) -> Any:
        if not values:
            return NOTSET  # every rail was empty: complete empty, as Flowable.reduce without seed
        return functools.reduce(reducer, values)

    return join_rails("parallel().reduce", build, finish)


def _merge_lists(lists: list[list[Any]], key: Callable[[Any], Any] | None, reverse: bool) -> Any:
    if len(lists) == 1:
        return iter(lists[0])
    return heapq.merge(*lists, key=key, reverse=reverse)


def sorted_rails(build: RailsBuilder, key: Callable[[T], Any] | None, reverse: bool) -> Flowable[T]:
    """The per-rail sorted lists (``build`` sorts them) merged lazily, as requested."""
    joined = join_rails("parallel().sorted", build, lambda lists: lists)
    return joined.flat_map_iterable(lambda lists: _merge_lists(lists, key, reverse))


def to_sorted_list_rails(build: RailsBuilder, key: Callable[[T], Any] | None, reverse: bool) -> Flowable[list[T]]:
    """The per-rail sorted lists (``build`` sorts them) merged into one list."""

    def finish(lists: list[list[Any]]) -> list[Any]:
        if len(lists) == 1:
            return lists[0]
        return list(heapq.merge(*lists, key=key, reverse=reverse))

    return join_rails("parallel().to_sorted_list", build, finish)
