"""ignore_elements() (RxJava ``ignoreElements``): requests the upstream unbounded and passes on only
its terminal signal. A bad request (rule 3.9) is signalled from the downstream thread, so a
once-flag decides between it and the upstream's terminal (race: request(0) vs on_complete).
"""

from __future__ import annotations

from typing import Any, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicFlag
from ..._internal.requests import MAX_DEMAND, validate_request
from ..._spec import Subscriber, Subscription
from .._base import BasicSubscriber
from .._flowable import Flowable

__all__ = ["ignore_elements"]

T = TypeVar("T")


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
