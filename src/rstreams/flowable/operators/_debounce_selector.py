"""debounce(selector): emit an element only if its debounce Publisher, ``selector(element)``,
signals (its first element or its completion) before the next element arrives (RxJava 3
``debounce(Function)``).

Each element cancels the previous element's debounce Publisher and subscribes to its own. When the
source completes, the pending element (if any) is emitted at once, then the completion. An error of
the source, of a debounce Publisher, or of ``selector`` fails the stream; ``selector`` returning
``None`` fails it with ``NoneElementError`` (rule 2.13).

Backpressure (RxJava 3): the source is requested unbounded (it drops elements by design); an element
due while the downstream has no demand cancels everything and signals ``MissingBackpressureError``.

Races and guards: an element's debounce Publisher may signal on another thread while the next
element arrives. ``_index`` is written by the source's thread only; the "is it still the latest,
was it emitted" check and the emission run inside :meth:`SerializedOut.run` (race: debouncer thread
vs source thread vs ``on_complete``), so an element is emitted at most once and before the
completion (rule 1.3). The current debouncer is an ``AtomicRef`` (race: a new element replacing it
vs ``cancel`` from the downstream's thread: a debouncer set after the cancel is disposed at once).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar, final

from ..._internal.atomics import AtomicRef
from ..._internal.requests import MAX_DEMAND
from ..._spec import Publisher, Subscriber, Subscription
from .._base import none_result_error
from .._flowable import Flowable
from ._boundary_common import DrivenBase, OtherSubscriber
from ._time_common import Pending as _Pending
from ._time_common import none_refused

__all__ = ["debounce_selector"]

T = TypeVar("T")


_DISPOSED: Final[Any] = object()


@final
class _DebounceSelectorSubscriber(DrivenBase):
    __slots__ = ("_selector", "_index", "_pending", "_inner")

    def __init__(self, downstream: Subscriber[Any], selector: Callable[[Any], Publisher[Any]]) -> None:
        super().__init__(downstream, "debounce")
        self._selector = selector
        self._index = 0  # written by the source's thread only
        self._pending: _Pending | None = None  # the source's thread, and sections
        self._inner: AtomicRef[Any] = AtomicRef(None)  # race: replace vs cancel

    def _dispose_others(self) -> None:
        old = self._inner.get_and_set(_DISPOSED)
        if old is not None and old is not _DISPOSED:
            old.dispose()

    # -- source ----------------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if not self.set_upstream(subscription):
            return
        self.subscribe_downstream()
        subscription.request(MAX_DEMAND)

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        idx = self._index + 1
        self._index = idx
        old = self._inner.get()
        if old is _DISPOSED:
            return
        if old is not None:
            old.dispose()
        try:
            p = self._selector(item)
            if p is None:
                raise none_result_error("debounce", "the selector")
            if not hasattr(p, "subscribe"):
                raise TypeError(f"debounce(): the selector must return a Publisher, got {type(p).__name__}")
        except Exception as e:
            err: BaseException = e  # ``e`` is unset after the block; the section may run later
            self._out.run(lambda: self.fail(err))
            return
        pending = _Pending(item, idx)
        self._pending = pending
        inner = OtherSubscriber(self, pending)
        if not self._inner.compare_and_set(old, inner):
            return  # cancelled meanwhile (the only other writer)
        p.subscribe(inner)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise none_refused("on_error")  # rule 2.13
        self._out.run(lambda: self.fail(error))

    def on_complete(self) -> None:
        p = self._pending
        self._pending = None
        self._out.run(lambda: self._finish(p))

    # -- debouncers ------------------------------------------------------------------------------
    def other_next(self, other: OtherSubscriber, item: Any) -> None:
        other.dispose()
        p = other.kind
        self._out.run(lambda: self._emit(p))

    def other_complete(self, other: OtherSubscriber) -> None:
        p = other.kind
        self._out.run(lambda: self._emit(p))

    def other_error(self, other: OtherSubscriber, error: BaseException) -> None:
        self._out.run(lambda: self.fail(error))

    # -- inside serialized sections ------------------------------------------------------------
    def _emit(self, p: _Pending) -> None:
        if self._done or p.emitted or p.index != self._index:
            return  # a newer element replaced it, or it was emitted at completion
        p.emitted = True
        self.try_emit(p.value, "the debounced element")

    def _finish(self, p: _Pending | None) -> None:
        if self._done:
            return
        self.cancel_all()
        if p is not None and not p.emitted:
            p.emitted = True
            if not self.try_emit(p.value, "the last element"):
                return
        self._done = True
        self._out.emit_complete()


@final
class _DebounceSelectorFlowable(Flowable[T]):
    __slots__ = ("_source", "_selector")

    def __init__(self, source: Flowable[T], selector: Callable[[T], Publisher[Any]]) -> None:
        self._source = source
        self._selector = selector

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(_DebounceSelectorSubscriber(subscriber, self._selector))


def debounce_selector(source: Flowable[T], selector: Callable[[T], Publisher[Any]]) -> Flowable[T]:
    if not callable(selector):
        raise TypeError(f"debounce(): selector must be callable, got {type(selector).__name__}")
    return _DebounceSelectorFlowable(source, selector)
