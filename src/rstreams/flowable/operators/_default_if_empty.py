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
from typing import Any, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicFlag
from ..._internal.requests import MAX_DEMAND, validate_request
from ..._spec import Subscriber, Subscription
from ...errors import NoneElementError
from .._base import BasicSubscriber
from .._flowable import Flowable
from ._take_last import PostCompleteSubscriber

__all__ = ["default_if_empty", "ignore_elements"]

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


@final
class _IgnoreElementsSubscriber(BasicSubscriber[Any, Any]):
    __slots__ = ("_once",)

    def __init__(self, downstream: Subscriber[Any]) -> None:
        super().__init__(downstream)
        self._once = AtomicFlag()  # race: a rule 3.9 error from request vs the upstream's terminal

    def on_subscribe(self, subscription: Subscription) -> None:
        super().on_subscribe(subscription)
        if self.upstream is subscription:
            subscription.request(MAX_DEMAND)

    def on_next(self, item: Any) -> None:
        pass

    def on_error(self, error: BaseException) -> None:
        if self._once.try_set():
            self.downstream.on_error(error)
        else:
            plugins.on_error(error, "ignore_elements(): on_error after termination")

    def on_complete(self) -> None:
        if self._once.try_set():
            self.downstream.on_complete()

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                self.upstream.cancel()
                if self._once.try_set():
                    self.downstream.on_error(err)
        # valid demand is irrelevant: no element is ever emitted


@final
class _IgnoreElementsFlowable(Flowable[Any]):
    __slots__ = ("_source",)

    def __init__(self, source: Flowable[Any]) -> None:
        self._source = source

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        self._source.subscribe(_IgnoreElementsSubscriber(subscriber))


def ignore_elements(source: Flowable[T]) -> Flowable[T]:
    return _IgnoreElementsFlowable(source)
