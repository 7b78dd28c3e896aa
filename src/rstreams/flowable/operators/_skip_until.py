"""skip_until(other) (RxJava ``skipUntil``): drop the source's elements until ``other`` emits an
element or completes. The other publisher may signal on another thread while the source is inside
``on_next``: a half-serializer orders every downstream signal.
"""

from __future__ import annotations

from typing import Any, final

from ..._internal import plugins
from ..._internal.atomics import AtomicRef
from ..._internal.subscriptions import CANCELLED, cancel, set_once
from ..._spec import Publisher, Subscriber, Subscription
from .._base import MainWithOthersSubscriber
from .._flowable import Flowable

__all__ = ["skip_until"]


@final
class _SkipUntilOther:
    _rs_no_wrap = True
    __slots__ = ("_parent", "_upstream", "__weakref__")

    def __init__(self, parent: _SkipUntilSubscriber) -> None:
        self._parent: _SkipUntilSubscriber | None = parent
        # race: the main side cancels (downstream cancel, main terminal) before on_subscribe arrives
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)

    def on_subscribe(self, subscription: Subscription) -> None:
        if set_once(self._upstream, subscription, "skip_until"):  # rule 2.5; cancelled if already cancelled
            subscription.request(1)

    def on_next(self, item: Any) -> None:
        p = self._parent
        if p is not None:
            p._gate = True
        self.cancel()

    def on_error(self, error: BaseException) -> None:
        self._upstream.set(CANCELLED)  # rule 2.4: terminated; the parent's cancel of the others skips it
        p = self._parent
        if p is not None:
            p._other_error(error)
        else:
            plugins.on_error(error)

    def on_complete(self) -> None:
        p = self._parent
        if p is not None:
            p._gate = True  # RxJava: completion of the other opens the gate too
        self._parent = None

    def cancel(self) -> None:
        self._parent = None
        cancel(self._upstream)


@final
class _SkipUntilSubscriber(MainWithOthersSubscriber):
    __slots__ = ("_gate", "_other")

    def __init__(self, downstream: Subscriber[Any]) -> None:
        super().__init__(downstream)
        self._gate = False
        self._other = _SkipUntilOther(self)

    def _cancel_others(self) -> None:
        self._other.cancel()

    def on_next(self, item: Any) -> None:
        if self.done:
            return
        if self._gate:
            self._serializer.on_next(item)
        else:
            self.upstream.request(1)


@final
class _SkipUntilFlowable(Flowable[Any]):
    __slots__ = ("_source", "_other")

    def __init__(self, source: Flowable[Any], other: Publisher[Any]) -> None:
        self._source = source
        self._other = other

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        s = _SkipUntilSubscriber(subscriber)
        subscriber.on_subscribe(s)
        self._other.subscribe(s._other)
        self._source.subscribe(s)


def skip_until(source: Flowable[Any], other: Publisher[Any]) -> Flowable[Any]:
    if not hasattr(other, "subscribe"):
        raise TypeError(f"skip_until(): expected a Publisher, got {type(other).__name__}")
    return _SkipUntilFlowable(source, other)
