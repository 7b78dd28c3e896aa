"""lift(operator): a custom operator given as ``downstream Subscriber -> upstream Subscriber``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, final

from ..._internal.subscribers import StrictSubscriber
from ..._internal.subscriptions import error_empty
from ..._spec import Subscriber
from ...errors import NoneElementError
from .._flowable import Flowable

__all__ = ["lift"]

T = TypeVar("T")
R = TypeVar("R")

_SIGNALS = ("on_subscribe", "on_next", "on_error", "on_complete")


@final
class _LiftFlowable(Flowable[R]):
    __slots__ = ("_source", "_operator")

    def __init__(self, source: Flowable[T], operator: Callable[[Subscriber[R]], Subscriber[T]]) -> None:
        self._source = source
        self._operator = operator

    def _subscribe_actual(self, subscriber: Subscriber[R]) -> None:
        try:
            upstream_subscriber: Any = self._operator(subscriber)
        except Exception as e:
            error_empty(subscriber, e)
            return
        if upstream_subscriber is None:
            error_empty(subscriber, NoneElementError("lift(): the operator returned None instead of a Subscriber"))
            return
        missing = [m for m in _SIGNALS if not callable(getattr(upstream_subscriber, m, None))]
        if missing:  # it could never call on_subscribe downstream: the subscriber would hang (rule 1.9)
            error_empty(
                subscriber,
                TypeError(
                    f"lift(): the operator returned {type(upstream_subscriber).__name__}, not a Subscriber "
                    f"(missing {', '.join(missing)}); it must return the Subscriber to subscribe upstream"
                ),
            )
            return
        if not getattr(upstream_subscriber, "_rs_no_wrap", False):
            upstream_subscriber = StrictSubscriber(upstream_subscriber)
        self._source.subscribe(upstream_subscriber)


def lift(source: Flowable[T], operator: Callable[[Subscriber[R]], Subscriber[T]]) -> Flowable[R]:
    if not callable(operator):
        raise TypeError("lift(): operator must be callable (downstream Subscriber -> upstream Subscriber)")
    return _LiftFlowable(source, operator)
