"""sample(sampler): emit the latest element at each signal of a sampler Publisher (RxJava 3
``sample(Publisher, emitLast)``).

At each element of ``sampler`` the latest element not yet sampled (if any) is emitted. When the
source completes, the sampler is cancelled and, with ``emit_last``, the latest unsampled element is
emitted first; when the sampler completes, the source is cancelled and the stream completes (with
``emit_last``, after the latest unsampled element). An error of either fails the stream.

Backpressure (RxJava 3): the source and the sampler are requested unbounded; a sample that finds no
downstream demand cancels both and signals ``MissingBackpressureError``.

Races and guards: the latest element lives in a ``deque(maxlen=1)`` (``append`` replaces and
``pop`` takes atomically: no lock per element); the samples and terminal signals are serialized by
:meth:`SerializedOut.run` (race: sampler thread vs source thread, rule 1.3).
"""

from __future__ import annotations

from collections import deque
from typing import Any, TypeVar, final

from ..._internal.arguments import check_bool
from ..._internal.requests import MAX_DEMAND
from ..._spec import Publisher, Subscriber, Subscription
from .._flowable import Flowable
from ._boundary_common import DrivenBase, OtherSubscriber, check_publisher
from ._time_common import none_refused

__all__ = ["sample_publisher"]

T = TypeVar("T")


@final
class _SamplePublisherSubscriber(DrivenBase):
    __slots__ = ("_sampler", "_other", "_latest", "_emit_last")

    def __init__(self, downstream: Subscriber[Any], sampler: Publisher[Any], emit_last: bool, op: str) -> None:
        super().__init__(downstream, op)
        self._sampler = sampler
        self._other = OtherSubscriber(self)
        self._latest: deque[Any] = deque(maxlen=1)  # atomic "latest" cell: append replaces, pop takes
        self._emit_last = emit_last

    def _dispose_others(self) -> None:
        self._other.dispose()

    # -- source ----------------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if not self.set_upstream(subscription):
            return
        self.subscribe_downstream()
        # the sampler first, then the source (RxJava's order: a synchronous source meets a live
        # sampler; a sampler that completes at once cancels the source before it is requested)
        self._sampler.subscribe(self._other)
        subscription.request(MAX_DEMAND)

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        self._latest.append(item)

    def on_next_batch(self, items: list[Any]) -> None:
        """Library-internal batch protocol (elements already checked): only the last one counts."""
        if items:
            self._latest.append(items[-1])

    # -- inside serialized sections (DrivenBase runs the hooks at the terminal and sampler signals;
    # an error of either fails the stream: DrivenBase._at_error)
    def _at_signal(self) -> None:
        if self._done:
            return
        try:
            v = self._latest.pop()
        except IndexError:
            return
        self.try_emit(v, "the sampled element")

    def _at_end(self) -> None:
        if self._done:
            return
        self.cancel_all()  # the source or the sampler is done; the other one stops
        if self._emit_last:
            try:
                v = self._latest.pop()
            except IndexError:
                pass
            else:
                if not self.try_emit(v, "the last element"):
                    return
        self._done = True
        self._latest.clear()
        self._out.emit_complete()


@final
class _SamplePublisherFlowable(Flowable[T]):
    __slots__ = ("_source", "_sampler", "_emit_last", "_op")

    def __init__(self, source: Flowable[T], sampler: Publisher[Any], emit_last: bool, op: str) -> None:
        self._source = source
        self._sampler = sampler
        self._emit_last = emit_last
        self._op = op

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(_SamplePublisherSubscriber(subscriber, self._sampler, self._emit_last, self._op))


def sample_publisher(
    source: Flowable[T], sampler: Publisher[Any], emit_last: bool = False, op: str = "sample"
) -> Flowable[T]:
    check_publisher(op, "sampler", sampler)
    check_bool(op, "emit_last", emit_last)
    return _SamplePublisherFlowable(source, sampler, emit_last, op)
