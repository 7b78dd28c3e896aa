"""The Flowable operator library."""

from .._internal.subscribers import Disposable
from ._enums import NOTSET, BackpressureOverflow, BackpressureStrategy
from ._flowable import Emitter, Flowable, FlowableEmitter

__all__ = [
    "NOTSET",
    "BackpressureOverflow",
    "BackpressureStrategy",
    "Disposable",
    "Emitter",
    "Flowable",
    "FlowableEmitter",
]
