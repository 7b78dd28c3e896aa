"""rstreams: Reactive Streams for Python.

Backpressured ``Publisher``/``Subscriber``/``Subscription``/``Processor`` (rules 1.1-4.2), a TCK, and
``Flowable``, a fast operator library in the tradition of RxJava 3.

Example::

    from rstreams import Flowable
    total = Flowable.range(0, 10).map(lambda x: x * x).filter(lambda x: x % 2 == 0).reduce(
        lambda a, b: a + b).blocking_first()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import errors, plugins
from ._spec import MAX_DEMAND, RULES, Processor, Publisher, Subscriber, Subscription, rule_text
from .errors import (
    BadRequestError,
    LateElementError,
    MissingBackpressureError,
    NoneElementError,
    NoSuchElementError,
    OnErrorNotImplementedError,
    OneShotIteratorError,
    ProtocolViolationError,
    UndeliverableError,
)

if TYPE_CHECKING:
    from .flowable import (
        Aggregator,
        BackpressureOverflow,
        BackpressureStrategy,
        ConnectableFlowable,
        Disposable,
        Flowable,
        GroupedFlowable,
        Notification,
        ParallelFlowable,
        Timed,
        Window,
    )

__version__ = "0.1.0"

__all__ = [
    "MAX_DEMAND",
    "RULES",
    "Aggregator",
    "BackpressureOverflow",
    "BackpressureStrategy",
    "BadRequestError",
    "ConnectableFlowable",
    "Disposable",
    "Flowable",
    "GroupedFlowable",
    "LateElementError",
    "MissingBackpressureError",
    "NoSuchElementError",
    "NoneElementError",
    "Notification",
    "OnErrorNotImplementedError",
    "OneShotIteratorError",
    "ParallelFlowable",
    "Processor",
    "ProtocolViolationError",
    "Publisher",
    "Subscriber",
    "Subscription",
    "Timed",
    "UndeliverableError",
    "Window",
    "errors",
    "plugins",
    "rule_text",
]

_LAZY = {
    "Flowable",
    "BackpressureStrategy",
    "BackpressureOverflow",
    "Disposable",
    "ConnectableFlowable",
    "GroupedFlowable",
    "ParallelFlowable",
    "Timed",
    "Aggregator",
    "Notification",
    "Window",
}


def __getattr__(name: str) -> Any:
    # Flowable is loaded on first use so `import rstreams` stays light (no operator modules).
    if name in _LAZY:
        from . import flowable

        return getattr(flowable, name)
    raise AttributeError(f"module 'rstreams' has no attribute {name!r}")


def _tracing_from_environment() -> None:
    import os

    if os.environ.get("RSTREAMS_ASSEMBLY_TRACING", "").strip().lower() in ("1", "true", "yes", "on"):
        plugins.enable_assembly_tracing()


_tracing_from_environment()
