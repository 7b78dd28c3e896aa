"""publish(selector): the selector sees one shared view of the source per subscription (RxJava 3
``publish(Function<Flowable<T>, Publisher<R>>, prefetch)``).

Per subscriber: a fresh lockstep :class:`~rstreams.processors.MulticastProcessor` (``prefetch``
buffered, replenished at 75%) is the shared view handed to ``selector``; the selector's result is
subscribed by the downstream first, then the source is subscribed to the processor, so every part
of the selector's pipeline that subscribed at assembly sees the first element. The source runs
once however often the view is subscribed; a part that subscribes late joins the stream where it
is (items wait while the view has no subscribers).

When the result terminates or the downstream cancels, the processor disconnects: the source is
cancelled and the view's remaining subscribers are dropped without a signal (RxJava's
``OutputCanceller``). An error from the source reaches every part of the pipeline through the view.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, final

from ..._internal.arguments import positive_int
from ..._internal.requests import DEFAULT_PREFETCH
from ..._internal.subscriptions import error_empty
from ..._spec import Publisher, Subscriber
from .._base import PassThroughSubscriber, none_result_error
from .._flowable import Flowable

__all__ = ["publish_selector"]

T = TypeVar("T")
R = TypeVar("R")


@final
class _View(Flowable[T]):
    """The shared view the selector sees: subscribes to the processor (hides its Subscriber side)."""

    __slots__ = ("_processor",)

    def __init__(self, processor: Any) -> None:
        self._processor = processor

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._processor._subscribe_actual(subscriber)

    def __repr__(self) -> str:
        return "Flowable<publish(selector) view>"


@final
class _OutputSubscriber(PassThroughSubscriber[R]):
    """The selector result's subscriber: a terminal signal or a cancel disconnects the source."""

    __slots__ = ("_processor",)

    def __init__(self, downstream: Subscriber[R], processor: Any) -> None:
        super().__init__(downstream)
        self._processor = processor

    def on_error(self, error: BaseException) -> None:
        self._processor._disconnect()
        super().on_error(error)

    def on_complete(self) -> None:
        self._processor._disconnect()
        super().on_complete()

    def cancel(self) -> None:
        self.upstream.cancel()
        self._processor._disconnect()  # idempotent (race: cancel vs terminal on another thread)


@final
class _PublishSelectorFlowable(Flowable[R]):
    __slots__ = ("_source", "_selector", "_prefetch", "_processor_type")

    def __init__(self, source: Flowable[T], selector: Callable[[Flowable[T]], Publisher[R]], prefetch: int) -> None:
        from .._processors._multicast import MulticastProcessor  # loaded on first use

        self._source = source
        self._selector = selector
        self._prefetch = prefetch
        self._processor_type = MulticastProcessor  # imported once per assembly, not per subscription

    def _subscribe_actual(self, subscriber: Subscriber[R]) -> None:
        processor: Any = self._processor_type(self._prefetch)
        try:
            out = self._selector(_View(processor))
        except Exception as e:
            error_empty(subscriber, e)
            return
        if out is None:
            error_empty(subscriber, none_result_error("publish", "the selector"))
            return
        if not callable(getattr(out, "subscribe", None)):
            error_empty(subscriber, TypeError(f"publish(): the selector returned a {type(out).__name__}, not a Publisher"))
            return
        out.subscribe(_OutputSubscriber(subscriber, processor))
        self._source.subscribe(processor)


def publish_selector(
    source: Flowable[T], selector: Callable[[Flowable[T]], Publisher[R]], prefetch: int = DEFAULT_PREFETCH
) -> Flowable[R]:
    if not callable(selector):
        raise TypeError(f"publish(): selector must be callable, got {type(selector).__name__}")
    positive_int("publish", "prefetch", prefetch)
    return _PublishSelectorFlowable(source, selector, prefetch)
