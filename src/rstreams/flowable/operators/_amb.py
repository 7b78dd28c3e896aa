"""amb (first source to signal wins) and skip_until(other)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, final

from ..._internal import plugins
from ..._internal.atomics import AtomicInt, AtomicRef
from ..._internal.requests import validate_request
from ..._internal.subscriptions import cancel, deferred_request, set_once
from ..._spec import Publisher, Subscriber, Subscription
from .._base import as_flowable, variadic_sources
from .._flowable import Flowable

__all__ = ["amb"]

_NO_WINNER: Final = -1


@final
class _AmbInner:
    _rs_no_wrap = True
    __slots__ = ("_parent", "_index", "_upstream", "_missed", "_won", "__weakref__")

    def __init__(self, parent: _AmbCoordinator, index: int) -> None:
        self._parent = parent
        self._index = index
        # race: a cancel (lost, or the downstream cancelled) or a request before on_subscribe arrives
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)
        self._missed = AtomicInt(0)  # demand requested before on_subscribe (deferred_request)
        self._won = False

    def on_subscribe(self, subscription: Subscription) -> None:
        if not set_once(self._upstream, subscription, "amb"):
            return  # rule 2.5 (or cancelled before it arrived: cancelled by set_once)
        w = self._parent._winner.get()
        if w != _NO_WINNER and w != self._index:
            cancel(self._upstream)  # another source won (or the downstream cancelled) meanwhile
            return
        r = self._missed.get_and_set(0)
        if r:
            subscription.request(r)

    def _win(self) -> bool:
        if self._won:
            return True
        if self._parent._try_win(self._index):
            self._won = True
            return True
        cancel(self._upstream)
        return False

    def on_next(self, item: Any) -> None:
        if self._win():
            d = self._parent._downstream
            if d is not None:
                d.on_next(item)

    def on_error(self, error: BaseException) -> None:
        if self._win():
            d = self._parent._downstream
            if d is not None:
                d.on_error(error)
        else:
            plugins.on_error(error, "amb: error from a losing source")

    def on_complete(self) -> None:
        if self._win():
            d = self._parent._downstream
            if d is not None:
                d.on_complete()

    def request(self, n: int) -> None:
        deferred_request(self._upstream, self._missed, n)  # race: request vs a late on_subscribe

    def cancel(self) -> None:
        cancel(self._upstream)


@final
class _AmbCoordinator:
    """Race: several sources signal first at once; the winner index is set by one CAS."""

    __slots__ = ("_downstream", "_inners", "_winner")

    def __init__(self, downstream: Subscriber[Any], n: int) -> None:
        self._downstream: Subscriber[Any] | None = downstream
        self._inners = [_AmbInner(self, i) for i in range(n)]
        self._winner = AtomicInt(_NO_WINNER)  # an index, or len(inners) once cancelled

    def _try_win(self, index: int) -> bool:
        w = self._winner.get()
        if w == _NO_WINNER and self._winner.compare_and_set(_NO_WINNER, index):
            for i, inner in enumerate(self._inners):
                if i != index:
                    inner.cancel()
            return True
        return self._winner.get() == index

    def subscribe_all(self, sources: Sequence[Publisher[Any]]) -> None:
        for inner, src in zip(self._inners, sources, strict=True):
            if self._winner.get() != _NO_WINNER:
                break
            src.subscribe(inner)

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                d = self._downstream  # taken before cancel() drops it (rule 3.13)
                self.cancel()
                if d is not None:
                    d.on_error(err)  # rule 3.9
                return
        w = self._winner.get()
        if w != _NO_WINNER:
            if w < len(self._inners):  # else cancelled: a request after cancel is a no-op (rule 3.6)
                self._inners[w].request(n)
            return
        for inner in self._inners:  # requests before a winner go to every source
            inner.request(n)

    def cancel(self) -> None:
        self._winner.compare_and_set(_NO_WINNER, len(self._inners))
        for inner in self._inners:
            inner.cancel()
        self._downstream = None


@final
class _AmbFlowable(Flowable[Any]):
    __slots__ = ("_sources",)

    def __init__(self, sources: tuple[Publisher[Any], ...]) -> None:
        self._sources = sources

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        from ..._internal.subscriptions import complete_empty

        if not self._sources:
            complete_empty(subscriber)
            return
        if len(self._sources) == 1:
            self._sources[0].subscribe(subscriber)
            return
        c = _AmbCoordinator(subscriber, len(self._sources))
        subscriber.on_subscribe(c)
        c.subscribe_all(self._sources)


def amb(*sources: Publisher[Any]) -> Flowable[Any]:
    return _AmbFlowable(tuple(as_flowable("amb", s) for s in variadic_sources(sources)))
