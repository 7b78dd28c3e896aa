"""default_if_empty(default) and ignore_elements() (RxJava ``defaultIfEmpty``, ``ignoreElements``).

* ``default_if_empty``: elements pass through with their requests; if the upstream completes
  without any, ``default`` is emitted, but only once it is requested. That is the single-element
  post-complete idiom (:class:`~._take_last.PostCompleteSubscriber`): the demand and the completed
  flag share one atomic counter (race: request on the downstream thread vs on_complete on the
  upstream thread), so the default goes out exactly once, under demand.
* ``ignore_elements``: requests the upstream unbounded and passes on only its terminal signal. A
  bad request (rule 3.9) is signalled from the downstream thread, so a once-flag decides between it
  and the upstream's terminal (race: request(0) vs on_complete).
"""

from __future__ import annotations

from collections import deque
from typing import TypeVar, final

from ..._spec import Subscriber
from ...errors import NoneElementError
from .._base import PostCompleteSubscriber
from .._flowable import Flowable

__all__ = ["default_if_empty"]

T = TypeVar("T")


@final
class _DefaultIfEmptySubscriber(PostCompleteSubscriber[T]):
    __slots__ = ("_default", "_has_value")

    def __init__(self, downstream: Subscriber[T], default: T) -> None:
        super().__init__(downstream, deque())
        self._default = default
        self._has_value = False

    def on_next(self, item: T) -> None:
        if self.done:
            return
        self._has_value = True
        self.downstream.on_next(item)

    def on_complete(self) -> None:
        if not self.done and not self._has_value:
            self.queue.append(self._default)  # the tail of one, emitted when requested
        super().on_complete()


@final
class _DefaultIfEmptyFlowable(Flowable[T]):
    __slots__ = ("_source", "_default")

    def __init__(self, source: Flowable[T], default: T) -> None:
        self._source = source
        self._default = default

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(_DefaultIfEmptySubscriber(subscriber, self._default))


def default_if_empty(source: Flowable[T], default: T) -> Flowable[T]:
    if default is None:
        raise NoneElementError("default_if_empty(): the default is None; None is not a valid element (rule 2.13)")
    return _DefaultIfEmptyFlowable(source, default)
