"""The Flowable operator library."""

from typing import TYPE_CHECKING, Any

from .._internal.subscribers import Disposable
from ._enums import NOTSET, BackpressureOverflow, BackpressureStrategy
from ._flowable import Emitter, Flowable, FlowableEmitter

if TYPE_CHECKING:
    from ._parallel import ParallelFlowable
    from .operators._event_time_window import Aggregator, Window
    from .operators._group_by import GroupedFlowable
    from .operators._materialize import Notification
    from .operators._multicast import ConnectableFlowable
    from .operators._time_timestamp import Timed

__all__ = [
    "NOTSET",
    "Aggregator",
    "BackpressureOverflow",
    "BackpressureStrategy",
    "ConnectableFlowable",
    "Disposable",
    "Emitter",
    "Flowable",
    "FlowableEmitter",
    "GroupedFlowable",
    "Notification",
    "ParallelFlowable",
    "Timed",
    "Window",
]

# Types that live with their operator modules, loaded on first use (importing the facade stays cheap).
_LAZY = {
    "Aggregator": ".operators._event_time_window",
    "Window": ".operators._event_time_window",
    "ConnectableFlowable": ".operators._multicast",
    "GroupedFlowable": ".operators._group_by",
    "Notification": ".operators._materialize",
    "ParallelFlowable": "._parallel",
    "Timed": ".operators._time_timestamp",
}


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'rstreams.flowable' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(mod, __name__), name)
